//! Document boundaries: the beginning- and end-of-sequence tokens each model's reference library
//! reports (`tests/golden/document_tokens.json`, made by `tests/golden/gen_document_tokens.py`),
//! and `encode --prepend-bos --append-eos` putting them (or `--bos-id` / `--eos-id`) around each
//! text. Models under `../shared/data` are skipped, with a line saying so, when it is absent.

use crate::cli;

use cli::{data, encode_to, ids_per_line, scratch, shared_file, simdtok, stderr};
use simdtok::Tokenizer;

const GOLDEN: &str = include_str!("../golden/document_tokens.json");

/// The path of a golden row's model, if present.
fn model_path(rel: &str) -> Option<String> {
    match rel.strip_prefix("shared/") {
        Some(shared) => shared_file(shared),
        None => Some(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(rel)
                .display()
                .to_string(),
        ),
    }
}

#[test]
fn every_model_reports_the_references_tokens() {
    let rows: Vec<serde_json::Value> = serde_json::from_str(GOLDEN).unwrap();
    assert!(rows.len() >= 7);
    for row in rows {
        let rel = row["model"].as_str().unwrap();
        let Some(path) = model_path(rel) else {
            continue;
        };
        let tok = Tokenizer::from_file(&path).unwrap();
        let named = tok.document_tokens();
        let want = |k: &str| row[k].as_u64().map(|id| id as u32);
        assert_eq!(named.bos.as_ref().map(|t| t.id), want("bos"), "{rel} bos");
        assert_eq!(named.eos.as_ref().map(|t| t.id), want("eos"), "{rel} eos");
        for t in named.bos.iter().chain(&named.eos) {
            // The content is the token's own text, and the source names a file.
            assert_eq!(tok.id_to_piece(t.id), Some(&t.content[..]), "{rel}");
            assert!(!t.source.is_empty());
        }
    }
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const TEXTS: &str = "It was a fine day.\n\nThe cat sat on the mat.\nend\n";

#[test]
fn the_models_tokens_go_around_each_text() {
    let model = data("sentencepiece/botchan_en_bpe_1000.model");
    let lines = ids_per_line(&model, TEXTS.as_bytes(), &[]);
    let dir = scratch("document_boundaries", "around");
    let out = dir.join("out.u32");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], Option<u32>, Option<u32>); 5] = [
        (&["--prepend-bos"], Some(1), None),
        (&["--append-eos"], None, Some(2)),
        (&["--prepend-bos", "--append-eos"], Some(1), Some(2)),
        (&["--append-eos", "--eos-id", "7"], None, Some(7)),
        (
            &["--prepend-bos", "--bos-id", "9", "--append-eos"],
            Some(9),
            Some(2),
        ),
    ];
    for (extra, bos, eos) in cases {
        for threads in ["1", "2"] {
            let index = dir.join("out.index");
            let mut args = extra.to_vec();
            args.extend(["--threads", threads, "--index", index.to_str().unwrap()]);
            let run = encode_to(&model, "u32", out, &args, TEXTS.as_bytes());
            assert!(run.status.success(), "{extra:?}: {}", stderr(&run));
            let want: Vec<u32> = lines
                .iter()
                .flat_map(|l| bos.into_iter().chain(l.iter().copied()).chain(eos))
                .collect();
            assert_eq!(u32s(&std::fs::read(out).unwrap()), want, "{extra:?}");
            // The offsets count the added ids as the text's.
            let offsets: Vec<i64> = std::fs::read(&index)
                .unwrap()
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let mut at = 0;
            let mut expected = vec![0];
            for l in &lines {
                at += (l.len() + usize::from(bos.is_some()) + usize::from(eos.is_some())) as i64;
                expected.push(at);
            }
            assert_eq!(offsets, expected, "{extra:?}");
        }
    }
}

#[test]
fn a_raw_text_in_parts_gets_one_of_each() {
    // A long raw text is read in parts; the tokens go before the first and after the last.
    let model = data("sentencepiece/botchan_en_bpe_1000.model");
    let text: String = (0..4000)
        .map(|i| format!("word{} and more words. ", i % 97))
        .collect();
    let whole = {
        let run = simdtok(
            &["encode", "--model", &model, "--input-format", "raw"],
            text.as_bytes(),
        );
        assert!(run.status.success(), "{}", stderr(&run));
        let ids: Vec<u32> = String::from_utf8(run.stdout)
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        ids
    };
    let dir = scratch("document_boundaries", "raw");
    let out = dir.join("out.u32");
    let out = out.to_str().unwrap();
    let args = ["--input-format", "raw", "--prepend-bos", "--append-eos"];
    let run = encode_to(&model, "u32", out, &args, text.as_bytes());
    assert!(run.status.success(), "{}", stderr(&run));
    let want: Vec<u32> = [1].into_iter().chain(whole).chain([2]).collect();
    assert_eq!(u32s(&std::fs::read(out).unwrap()), want);
}

#[test]
fn a_dataset_ends_each_document_with_the_eos() {
    let model = data("sentencepiece/botchan_en_unigram_1000.model");
    let lines = ids_per_line(&model, TEXTS.as_bytes(), &[]);
    let dir = scratch("document_boundaries", "llmc");
    let out = dir.join("shard.bin");
    let run = encode_to(
        &model,
        "llmc",
        out.to_str().unwrap(),
        &["--append-eos", "--prepend-bos"],
        TEXTS.as_bytes(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let bytes = std::fs::read(&out).unwrap();
    // llm.c's header is 256 int32s; its tokens are uint16 for this vocabulary.
    let tokens: Vec<u32> = bytes[1024..]
        .chunks_exact(2)
        .map(|c| u32::from(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    let want: Vec<u32> = lines
        .iter()
        .flat_map(|l| [1].into_iter().chain(l.iter().copied()).chain([2]))
        .collect();
    assert_eq!(tokens, want);
}

#[test]
fn a_model_without_the_token_asks_for_an_id() {
    let model = data("wordpiece/bert-base-uncased.vocab.txt");
    let dir = scratch("document_boundaries", "none");
    let out = dir.join("out.u32");
    let out = out.to_str().unwrap();
    for (flag, option) in [("--append-eos", "--eos-id"), ("--prepend-bos", "--bos-id")] {
        let _ = std::fs::remove_file(out);
        let run = encode_to(&model, "u32", out, &[flag], b"hello\n");
        assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
        let err = stderr(&run);
        assert!(err.contains(flag) && err.contains(option), "{err}");
        assert!(!std::path::Path::new(out).exists(), "nothing written");
        let run = encode_to(&model, "u32", out, &[flag, option, "102"], b"hello\n");
        assert!(run.status.success(), "{}", stderr(&run));
    }
}

#[test]
fn misused_options_are_usage_errors() {
    let model = data("sentencepiece/botchan_en_bpe_1000.model");
    let dir = scratch("document_boundaries", "usage");
    let out = dir.join("out.u32");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--eos-id", "2"], "--append-eos"),
        (&["--bos-id", "1"], "--prepend-bos"),
        (&["--append-eos", "--separator-id", "2"], "--separator-id"),
        (
            &["--append-eos", "--eos-id", "1000"],
            "not an id of the model",
        ),
        (
            &["--prepend-bos", "--bos-id", "5000"],
            "not an id of the model",
        ),
    ];
    for (args, says) in cases {
        let run = encode_to(&model, "u32", out, args, b"hello\n");
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(stderr(&run).contains(says), "{args:?}: {}", stderr(&run));
    }
    for format in ["ids", "jsonl", "pieces"] {
        let run = simdtok(
            &[
                "encode",
                "--model",
                &model,
                "--output-format",
                format,
                "--append-eos",
            ],
            b"hello\n",
        );
        assert_eq!(run.status.code(), Some(2), "{format}");
        assert!(
            stderr(&run).contains("--append-eos applies only"),
            "{}",
            stderr(&run)
        );
    }
    // u16 output refuses an id that does not fit, before writing anything.
    if let Some(cl100k) = shared_file("models/tiktoken/cl100k_base.tiktoken") {
        let run = encode_to(&cl100k, "u16", out, &["--append-eos"], b"hello\n");
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    }
}
