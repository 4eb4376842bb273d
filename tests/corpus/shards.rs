//! `encode --shard-tokens N`: a dataset cut into numbered shards at document ends, each read
//! back as its ecosystem reads it. The shards' documents, in order, are the unsharded dataset's;
//! every shard but the last holds at least N tokens and would hold fewer without its last
//! document; no temporary file is left.

use crate::cli;
use crate::datasets;

use std::path::{Path, PathBuf};

use cli::{data, encode_to, entries, scratch, stderr};

/// Texts of varied lengths (some empty), several hundred tokens in all.
fn corpus() -> String {
    (0..120)
        .map(|i| match i % 7 {
            0 => "\n".to_owned(),
            k => format!(
                "Document {i} has {k} sentences. {}\n",
                "And one more. ".repeat(k)
            ),
        })
        .collect()
}

/// The documents of one dataset of `format` at `path`, as its reader sees them (llm.c's
/// shards have no document index: their tokens as one document).
fn documents(format: &str, path: &Path) -> Vec<Vec<u32>> {
    match format {
        "megatron" => datasets::megatron_documents(&datasets::megatron(path)),
        "datatrove" => datasets::datatrove(path, 2).0,
        _ => vec![datasets::llmc(path).2],
    }
}

#[test]
fn shards_hold_the_documents_in_order_cut_at_document_ends() {
    let model = data("sentencepiece/botchan_en_unigram_1000.model");
    let text = corpus();
    for (format, name) in [
        ("megatron", "train"),
        ("datatrove", "train.ds"),
        ("llmc", "train.bin"),
    ] {
        let whole_dir = scratch("shards", &format!("{format}-whole"));
        let whole = whole_dir.join(name);
        let run = encode_to(
            &model,
            format,
            whole.to_str().unwrap(),
            &["--append-eos"],
            text.as_bytes(),
        );
        assert!(run.status.success(), "{format}: {}", stderr(&run));
        let want: Vec<u32> = documents(format, &whole).concat();
        for (n, threads) in [(1u64, "1"), (97, "2"), (400, "1"), (1_000_000, "2")] {
            let dir = scratch("shards", &format!("{format}-{n}"));
            let out = dir.join(name);
            let args = [
                "--append-eos",
                "--shard-tokens",
                &n.to_string(),
                "--threads",
                threads,
            ];
            let run = encode_to(
                &model,
                format,
                out.to_str().unwrap(),
                &args,
                text.as_bytes(),
            );
            assert!(run.status.success(), "{format} {n}: {}", stderr(&run));
            let mut shard_paths: Vec<PathBuf> = Vec::new();
            for k in 0.. {
                let path = simdtok::corpus::shards::shard_path(&out, k, format != "megatron");
                let first = match format {
                    "megatron" => simdtok::corpus::with_extension(&path, ".bin"),
                    _ => path.clone(),
                };
                if !first.exists() {
                    break;
                }
                shard_paths.push(path);
            }
            assert!(!shard_paths.is_empty(), "{format} {n}: {:?}", entries(&dir));
            let per_file = match format {
                "megatron" => 2,
                "datatrove" => 3,
                _ => 1,
            };
            // The shards' files and the run's manifest, which says it is complete.
            let names = entries(&dir);
            assert_eq!(names.len(), shard_paths.len() * per_file + 1, "{names:?}");
            let manifest = simdtok::corpus::manifest::Manifest::path_for(&out);
            let manifest: serde_json::Value =
                serde_json::from_slice(&std::fs::read(manifest).unwrap()).unwrap();
            assert_eq!(manifest["complete"], true);
            assert_eq!(
                manifest["shards"].as_array().unwrap().len(),
                shard_paths.len()
            );
            let mut got = Vec::new();
            for (k, path) in shard_paths.iter().enumerate() {
                let docs = documents(format, path);
                let tokens: u64 = docs.iter().map(|d| d.len() as u64).sum();
                got.extend(docs.iter().flatten().copied());
                if k + 1 < shard_paths.len() {
                    assert!(tokens >= n, "{format} {n}: shard {k} holds {tokens}");
                    if format != "llmc" {
                        let last = docs.last().map_or(0, |d| d.len() as u64);
                        assert!(tokens - last < n, "{format} {n}: shard {k} closed late");
                    }
                }
            }
            assert_eq!(got, want, "{format} {n}");
            if n == 1_000_000 {
                assert_eq!(shard_paths.len(), 1);
            }
        }
    }
}

#[test]
fn shards_are_for_datasets_and_need_a_positive_size() {
    let model = data("sentencepiece/botchan_en_unigram_1000.model");
    let dir = scratch("shards", "usage");
    let out = dir.join("out.u32");
    let run = encode_to(
        &model,
        "u32",
        out.to_str().unwrap(),
        &["--shard-tokens", "10"],
        b"x\n",
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("--shard-tokens applies only"),
        "{}",
        stderr(&run)
    );
    let out = dir.join("d.ds");
    let run = encode_to(
        &model,
        "datatrove",
        out.to_str().unwrap(),
        &["--shard-tokens", "0"],
        b"x\n",
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
}
