//! `encode --input-format text --separator STRING`: concatenated documents, each ended by a
//! string, encode as the same texts given one per JSON line.

use crate::cli;

use cli::{data, simdtok, stderr};

fn ids(args: &[&str], stdin: &[u8]) -> String {
    let out = simdtok(args, stdin);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn separated_texts_encode_as_json_lines_of_the_same_texts() {
    let model = data("sentencepiece/botchan_en_unigram_1000.model");
    let texts = [
        "First document.\nIt has two lines.",
        "",
        "Second one, with a <|endoftext without its end",
        "Third — non-ASCII: é, 漢字.\n\n",
    ];
    let sep = "<|endoftext|>";
    let mut joined = texts.join(sep);
    joined.push_str(sep);
    let jsonl: String = texts
        .iter()
        .map(|t| format!("{}\n", serde_json::json!({ "text": t })))
        .collect();
    let want = ids(
        &["encode", "--model", &model, "--input-format", "jsonl"],
        jsonl.as_bytes(),
    );
    for threads in ["1", "2"] {
        let got = ids(
            &[
                "encode",
                "--model",
                &model,
                "--input-format",
                "text",
                "--separator",
                sep,
                "--threads",
                threads,
            ],
            joined.as_bytes(),
        );
        assert_eq!(got, want, "threads {threads}");
    }
    // Without the last separator, the same texts.
    let unended = texts.join(sep);
    let got = ids(
        &[
            "encode",
            "--model",
            &model,
            "--input-format",
            "text",
            "--separator",
            sep,
        ],
        unended.as_bytes(),
    );
    assert_eq!(got, want);
}

#[test]
fn the_separator_goes_with_the_text_format_only() {
    let model = data("sentencepiece/botchan_en_unigram_1000.model");
    let cases: [(&[&str], &str); 3] = [
        (&["--input-format", "text"], "--separator"),
        (&["--input-format", "text", "--separator", ""], "not empty"),
        (&["--separator", "|"], "--separator applies only"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["encode", "--model", &model];
        args.extend_from_slice(extra);
        let out = simdtok(&args, b"a|b");
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(says), "{extra:?}: {}", stderr(&out));
    }
}

#[test]
fn a_bad_byte_names_the_text() {
    let model = data("sentencepiece/botchan_en_unigram_1000.model");
    let out = simdtok(
        &[
            "encode",
            "--model",
            &model,
            "--input-format",
            "text",
            "--separator",
            "|",
        ],
        b"fine|also fine|bad \xff here|after",
    );
    assert_eq!(out.status.code(), Some(1));
    // The third text.
    assert!(stderr(&out).contains(":3:"), "{}", stderr(&out));
}
