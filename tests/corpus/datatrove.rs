//! datatrove's tokenized files (`simdtok::corpus::datatrove`, `encode --output-format
//! datatrove`): read back as datatrove reads them (`.ds` tokens, `.ds.index` document ends in
//! `uint64`), every document equals the ids of its text, with and without an end-of-document
//! id, on several threads and for a raw text in parts; the metadata is datatrove's three lines;
//! the token size follows datatrove's rule; nothing is left behind on failure.
//! (`scripts/check-datatrove.py` checks the files byte for byte against datatrove's own
//! `TokenizedFile` writer.)

use crate::cli;
use crate::datasets;

use std::path::Path;

use cli::{data, encode_to, ids_per_line, scratch, simdtok, stderr};
use simdtok::corpus::DocumentWriter;
use simdtok::corpus::datatrove::DatatroveWriter;

#[test]
fn the_writer_writes_what_datatrove_reads_back() {
    for size in [2, 4] {
        let dir = scratch("datatrove", &format!("writer-{size}"));
        let path = dir.join("000_tokens.ds");
        let docs: Vec<Vec<u32>> = vec![
            vec![5, 6, 7],
            vec![],
            vec![65_535],
            (0..5000).map(|i| i % 1000).collect(),
        ];
        let mut w = DatatroveWriter::create(&path, size, "gpt2").unwrap();
        for d in &docs {
            w.push_document(d).unwrap();
        }
        let totals = w.finish().unwrap();
        assert_eq!((totals.documents, totals.tokens), (4, 5004));
        let (got, metadata) = datasets::datatrove(&path, size);
        assert_eq!(got, docs);
        assert_eq!(metadata, format!("gpt2|{size}\n5004\n5.00 kT"));
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "000_tokens.ds",
                "000_tokens.ds.index",
                "000_tokens.ds.metadata"
            ]
        );
    }
    let dir = scratch("datatrove", "dropped");
    let mut w = DatatroveWriter::create(&dir.join("x.ds"), 2, "m").unwrap();
    assert!(w.push_document(&[1, 70_000]).is_err());
    drop(w);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left");
}

#[test]
fn encode_writes_a_document_per_text() {
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    let text: String = corpus.lines().take(300).map(|l| format!("{l}\n")).collect();
    let text = format!("{text}\n\nthe end");
    let model = data("bpe/encoder.json");
    let want = ids_per_line(&model, text.as_bytes(), &[]);
    for (threads, separator) in [("1", None), ("3", Some(50_256u32))] {
        let dir = scratch("datatrove", &format!("encode-{threads}"));
        let path = dir.join("out.ds").display().to_string();
        let sep = separator.map(|s| s.to_string());
        let mut extra = vec!["--threads", threads];
        if let Some(s) = &sep {
            extra.extend(["--separator-id", s]);
        }
        let out = encode_to(&model, "datatrove", &path, &extra, text.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        let (got, metadata) = datasets::datatrove(Path::new(&path), 2);
        let want: Vec<Vec<u32>> = want
            .iter()
            .map(|ids| ids.iter().copied().chain(separator).collect())
            .collect();
        assert_eq!(got, want, "{threads}");
        let tokens: usize = want.iter().map(Vec::len).sum();
        let mut lines = metadata.lines();
        assert_eq!(lines.next(), Some(format!("{model}|2").as_str()));
        assert_eq!(lines.next(), Some(tokens.to_string().as_str()));
    }
    // A raw text (more than one block of the reader) is one document.
    let text = std::fs::read_to_string(data("corpus/en_kjv_bible.head.txt"))
        .unwrap()
        .repeat(3);
    let dir = scratch("datatrove", "raw");
    let path = dir.join("raw.ds").display().to_string();
    let raw = ["--input-format", "raw"];
    let out = encode_to(&model, "datatrove", &path, &raw, text.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = simdtok(
        &["encode", "--model", &model, "--input-format", "raw"],
        text.as_bytes(),
    );
    let want: Vec<u32> = String::from_utf8(whole.stdout)
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(datasets::datatrove(Path::new(&path), 2).0, [want]);
    // Without --output it is a usage error.
    let out = simdtok(
        &["encode", "--model", &model, "--output-format", "datatrove"],
        b"x\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--output NAME.ds"),
        "{}",
        stderr(&out)
    );
}
