//! llm.c's token shards (`simdtok::corpus::llmc`, `encode --output-format llmc`): read as
//! llm.c's data loader reads them (`dataloader.h`: 256 `int32`s of header, the magic and version
//! checked, the token count in the third, then exactly that many tokens), the tokens are the
//! texts' ids one after another, each text's followed by `--separator-id` when given: lines on
//! several threads, a raw text in parts; `uint16` for GPT-2's vocabulary, the `llama-3` layout
//! (`uint32`) for a larger one.

use crate::cli;
use crate::datasets;

use std::path::Path;

use cli::{data, encode_to, ids_per_line, scratch, shared_file, simdtok, stderr};

/// `encode --output-format llmc --output PATH EXTRA…` of `text` under `model`: the shard.
fn shard(model: &str, text: &str, extra: &[&str], name: &str) -> (i32, i32, Vec<u32>) {
    let dir = scratch("llmc", name);
    let path = dir.join("shard_000000.bin").display().to_string();
    let out = encode_to(model, "llmc", &path, extra, text.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary left"
    );
    datasets::llmc(Path::new(&path))
}

#[test]
fn a_shard_holds_the_texts_ids_in_order() {
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    let text: String = corpus.lines().take(300).map(|l| format!("{l}\n")).collect();
    let model = data("bpe/encoder.json");
    let per_line = ids_per_line(&model, text.as_bytes(), &[]);
    let (magic, version, tokens) = shard(&model, &text, &["--threads", "3"], "plain");
    assert_eq!((magic, version), (20_240_520, 1));
    assert_eq!(tokens, per_line.concat());
    let (_, _, tokens) = shard(&model, &text, &["--separator-id", "50256"], "eot");
    let want: Vec<u32> = per_line
        .iter()
        .flat_map(|ids| ids.iter().copied().chain([50256]))
        .collect();
    assert_eq!(tokens, want);
    // A raw text of several blocks, in parts.
    let long = std::fs::read_to_string(data("corpus/en_kjv_bible.head.txt"))
        .unwrap()
        .repeat(3);
    let whole: Vec<u32> =
        ids_per_line(&model, long.as_bytes(), &["--input-format", "raw"]).concat();
    let (_, _, tokens) = shard(&model, &long, &["--input-format", "raw"], "raw");
    assert_eq!(tokens, whole);
}

/// A vocabulary of more than 65 536 ids gets the `llama-3` layout (cl100k, from
/// `../shared/data`).
#[test]
fn a_large_vocabulary_gets_the_llama_3_layout() {
    let Some(model) = shared_file("models/tiktoken/cl100k_base.tiktoken") else {
        return;
    };
    let text = "Hello world\nids above 65535 — 日本語のテキスト\n";
    let want = ids_per_line(&model, text.as_bytes(), &[]).concat();
    assert!(want.iter().any(|&id| id > 65_535));
    let (magic, version, tokens) = shard(&model, text, &[], "llama3");
    assert_eq!((magic, version), (20_240_801, 7));
    assert_eq!(tokens, want);
}

#[test]
fn llmc_needs_a_path() {
    let model = data("bpe/encoder.json");
    let out = simdtok(
        &["encode", "--model", &model, "--output-format", "llmc"],
        b"hi\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--output PATH"), "{}", stderr(&out));
}
