//! Megatron-LM's indexed dataset (`simdtok::corpus::megatron`, `encode --output-format
//! megatron`): every document read back, by a reader that follows Megatron-LM's
//! `megatron/core/datasets/indexed_dataset.py` step by step (`_IndexReader`, then
//! `IndexedDataset.__getitem__`), equals the ids of its text — lines, JSON lines and one raw
//! text cut into parts, on several threads, with and without an end-of-document id; empty
//! texts become empty documents as `preprocess_data.py` writes them; the dtype follows
//! Megatron's `DType.optimal_dtype`; nothing is left behind on failure.

use crate::cli;
use crate::datasets;

use std::path::Path;

use cli::{data, encode_to, ids_per_line, scratch, shared_file, simdtok, stderr};
use simdtok::corpus::DocumentWriter;
use simdtok::corpus::megatron::{MegatronDtype, MegatronWriter};

#[test]
fn the_writer_writes_what_megatrons_reader_reads_back() {
    for dtype in [MegatronDtype::U16, MegatronDtype::I32] {
        let dir = scratch("megatron", &format!("writer-{dtype:?}"));
        let prefix = dir.join("data_text_document");
        let docs: Vec<Vec<u32>> = vec![
            vec![5, 6, 7],
            vec![],
            vec![65_535],
            (0..10_000).map(|i| i % 1000).collect(),
            vec![],
            vec![1],
        ];
        let mut w = MegatronWriter::create(&prefix, dtype).unwrap();
        for (i, d) in docs.iter().enumerate() {
            if i == 3 {
                // A long text in parts.
                for part in d.chunks(777) {
                    w.extend_document(part).unwrap();
                }
                w.end_document().unwrap();
            } else {
                w.push_document(d).unwrap();
            }
        }
        assert_eq!(w.sequences(), 4);
        let totals = w.finish().unwrap();
        assert_eq!(totals.documents, 6);
        assert_eq!(totals.tokens, 10_005);
        let got = datasets::megatron(&prefix);
        assert_eq!(got.dtype_code, dtype.code());
        assert_eq!(got.sequence_lengths, [3, 1, 10_000, 1]);
        let size = dtype.width().bytes as i64;
        assert_eq!(
            got.sequence_pointers,
            [0, 3 * size, 4 * size, 10_004 * size]
        );
        // `preprocess_data.py`'s document indices: 0, then the sequences after each document
        // (an empty document adds none).
        assert_eq!(got.document_indices, [0, 1, 1, 2, 3, 3, 4]);
        assert_eq!(datasets::megatron_documents(&got), docs);
        // Only the two files: no temporary file left.
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["data_text_document.bin", "data_text_document.idx"]);
    }
    // An id the dtype cannot hold is an error naming it.
    let dir = scratch("megatron", "too-large");
    let mut w = MegatronWriter::create(&dir.join("x"), MegatronDtype::U16).unwrap();
    let e = w.push_document(&[1, 70_000]).unwrap_err();
    assert!(e.to_string().contains("70000"), "{e}");
}

#[test]
fn encode_writes_a_document_per_text_on_every_thread_count() {
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    // Lines in many scripts, with empty ones among them.
    let text: String = corpus.lines().take(400).map(|l| format!("{l}\n")).collect();
    let text = format!("{text}\n\nlast line without an end");
    for model in [
        data("bpe/encoder.json"),
        data("sentencepiece/botchan_en_unigram_1000.model"),
        data("wordpiece/bert-base-uncased.vocab.txt"),
    ] {
        let want = ids_per_line(&model, text.as_bytes(), &[]);
        for threads in ["1", "3"] {
            for separator in [None, Some("7")] {
                let dir = scratch("megatron", &format!("encode-{threads}-{separator:?}"));
                let prefix = dir.join("out").display().to_string();
                let mut extra = vec!["--threads", threads];
                if let Some(id) = separator {
                    extra.extend(["--separator-id", id]);
                }
                let out = encode_to(&model, "megatron", &prefix, &extra, text.as_bytes());
                assert!(out.status.success(), "{}", stderr(&out));
                let got = datasets::megatron(Path::new(&prefix));
                assert_eq!(got.dtype_code, 8, "small vocabularies: uint16");
                let want: Vec<Vec<u32>> = want
                    .iter()
                    .map(|ids| {
                        let mut ids = ids.clone();
                        ids.extend(separator.map(|s| s.parse::<u32>().unwrap()));
                        ids
                    })
                    .collect();
                assert_eq!(
                    datasets::megatron_documents(&got),
                    want,
                    "{model} {threads} {separator:?}"
                );
            }
        }
    }
}

#[test]
fn a_raw_text_in_parts_is_one_document() {
    let model = data("bpe/encoder.json");
    // 600 kB: more than one block of the reader, so in parts.
    let text = std::fs::read_to_string(data("corpus/en_kjv_bible.head.txt"))
        .unwrap()
        .repeat(3);
    let whole = simdtok(
        &["encode", "--model", &model, "--input-format", "raw"],
        text.as_bytes(),
    );
    assert!(whole.status.success(), "{}", stderr(&whole));
    let want: Vec<u32> = String::from_utf8(whole.stdout)
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let dir = scratch("megatron", "raw");
    let prefix = dir.join("raw").display().to_string();
    let extra = [
        "--input-format",
        "raw",
        "--threads",
        "2",
        "--separator-id",
        "50256",
    ];
    let out = encode_to(&model, "megatron", &prefix, &extra, text.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = datasets::megatron(Path::new(&prefix));
    let mut want = want;
    want.push(50256);
    assert_eq!(datasets::megatron_documents(&got), [want]);
}

#[test]
fn megatron_needs_a_prefix_and_ids_that_fit() {
    let model = data("bpe/encoder.json");
    let out = simdtok(
        &["encode", "--model", &model, "--output-format", "megatron"],
        b"hi\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--output PREFIX"), "{}", stderr(&out));
    let dir = scratch("megatron", "bad-separator");
    let prefix = dir.join("x").display().to_string();
    let out = encode_to(
        &model,
        "megatron",
        &prefix,
        &["--separator-id", "70000"],
        b"hi\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("70000"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
}

/// A vocabulary of 65 500 ids or more gets `int32` tokens (cl100k, from `../shared/data`).
#[test]
fn a_large_vocabulary_gets_int32_tokens() {
    let Some(model) = shared_file("models/tiktoken/cl100k_base.tiktoken") else {
        return;
    };
    let text = "Hello world\nunseen text, tokens above 65535 — 日本語\n";
    let want = ids_per_line(&model, text.as_bytes(), &[]);
    assert!(want.iter().flatten().any(|&id| id > 65_535));
    let dir = scratch("megatron", "int32");
    let prefix = dir.join("big").display().to_string();
    let out = encode_to(&model, "megatron", &prefix, &[], text.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = datasets::megatron(Path::new(&prefix));
    assert_eq!(got.dtype_code, 4);
    assert_eq!(datasets::megatron_documents(&got), want);
}
