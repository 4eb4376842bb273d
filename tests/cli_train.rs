//! `simdtok train-bpe` through the built binary (docs/cli.md, `train-bpe`): the same model for
//! any number of threads and however the texts are laid out, files that simdtok loads back,
//! special tokens kept out of the words, and clear errors naming file and line for bad input.

#[path = "common/cli.rs"]
mod cli;

use std::path::{Path, PathBuf};

use cli::{simdtok, stderr};

use simdtok::train::{self, Counter, PreTokenizer, Settings};
use simdtok::{LoadOptions, TiktokenEncoding, Tokenizer};

const KJV: &str = "tests/data/corpus/en_kjv_bible.head.txt";

/// `simdtok train-bpe args...`, which must succeed; its stdout.
fn train_ok(args: &[&str]) -> Vec<u8> {
    let mut all = vec!["train-bpe", "--no-progress"];
    all.extend_from_slice(args);
    let out = simdtok(&all, b"");
    assert!(
        out.status.success(),
        "{args:?}: status {:?}, stderr: {}",
        out.status,
        stderr(&out)
    );
    out.stdout
}

/// `simdtok train-bpe args...` on `stdin`, which must fail with `status` and a message holding
/// every one of `needles`.
fn train_fails(args: &[&str], stdin: &[u8], status: i32, needles: &[&str]) {
    let mut all = vec!["train-bpe", "--no-progress"];
    all.extend_from_slice(args);
    let out = simdtok(&all, stdin);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(status), "{args:?}: stderr: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: {needle:?} not in: {err}");
    }
}

fn temp_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("a temporary file");
    path
}

#[test]
fn the_model_is_the_same_for_any_number_of_threads() {
    let base = [
        "--input",
        KJV,
        "--vocab-size",
        "1200",
        "--special-token",
        "<|endoftext|>",
        "--output",
        "-",
    ];
    let one = train_ok(&[&base[..], &["--threads", "1"]].concat());
    for threads in ["2", "3", "0"] {
        let many = train_ok(&[&base[..], &["--threads", threads]].concat());
        assert!(one == many, "--threads {threads} gave another model");
    }
}

#[test]
fn lines_jsonl_and_several_inputs_give_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(KJV).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (first, second) = lines.split_at(lines.len() / 2);
    let a = temp_file(dir.path(), "a.txt", (first.join("\n") + "\n").as_bytes());
    let b = temp_file(dir.path(), "b.txt", second.join("\n").as_bytes());
    let jsonl: String = lines
        .iter()
        .map(|l| serde_json::json!({"id": 1, "body": l}).to_string() + "\n")
        .collect();
    let j = temp_file(dir.path(), "c.jsonl", jsonl.as_bytes());
    let common = [
        "--vocab-size",
        "900",
        "--pre-tokenizer",
        "gpt2",
        "--output",
        "-",
    ];
    let whole = train_ok(&[&["--input", KJV][..], &common].concat());
    let split = train_ok(
        &[
            &[
                "--input",
                a.to_str().unwrap(),
                "--input",
                b.to_str().unwrap(),
            ][..],
            &common,
        ]
        .concat(),
    );
    let json = train_ok(
        &[
            &[
                "--input",
                j.to_str().unwrap(),
                "--input-format",
                "jsonl",
                "--field",
                "body",
            ][..],
            &common,
        ]
        .concat(),
    );
    assert!(whole == split, "two inputs gave another model than one");
    assert!(whole == json, "JSON lines gave another model than lines");
}

#[test]
fn a_raw_input_read_in_parts_gives_the_whole_texts_model() {
    // 3 MB: read in parts, cut after line ends before letters; the model must be the one of
    // the text counted whole.
    let dir = tempfile::tempdir().unwrap();
    let kjv = std::fs::read_to_string(KJV).unwrap();
    let text = kjv.repeat(3_000_000 / kjv.len() + 1);
    let raw = temp_file(dir.path(), "raw.txt", text.as_bytes());
    let got = train_ok(&[
        "--input",
        raw.to_str().unwrap(),
        "--input-format",
        "raw",
        "--vocab-size",
        "1000",
        "--output",
        "-",
    ]);
    let kernels = simdtok::kernels::Kernels::active().unwrap();
    let mut counter = Counter::new(PreTokenizer::Cl100k, &[], kernels);
    counter.add(&text);
    let settings = Settings {
        vocab_size: 1000,
        min_frequency: 0,
        max_token_length: None,
        counting: train::Counting::Windows,
    };
    let model = train::train(
        &counter.into_counts(),
        PreTokenizer::Cl100k,
        &[],
        &settings,
        &mut |_| {},
    )
    .unwrap();
    assert!(got == (model.tokenizer_json() + "\n").into_bytes());
}

#[test]
fn written_files_load_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("trained.json");
    let ranks = dir.path().join("trained.tiktoken");
    for (path, format) in [(&json, "tokenizer.json"), (&ranks, "tiktoken")] {
        train_ok(&[
            "--input",
            KJV,
            "--vocab-size",
            "1500",
            "--pre-tokenizer",
            "cl100k",
            "--format",
            format,
            "--output",
            path.to_str().unwrap(),
        ]);
    }
    let from_json = Tokenizer::from_file(&json).expect("the tokenizer.json loads");
    let options = LoadOptions {
        tiktoken_encoding: Some(TiktokenEncoding::Cl100k),
        ..Default::default()
    };
    let kernels = simdtok::kernels::Kernels::active().unwrap();
    let from_ranks =
        Tokenizer::from_file_with_options(&ranks, kernels, &options).expect("the rank file loads");
    let text = std::fs::read_to_string("tests/data/corpus/python311_stdlib.head.py.txt").unwrap();
    for line in text.lines().take(400) {
        let ids = from_json.encode(line);
        assert_eq!(from_json.decode(&ids).unwrap(), line);
        let ranked = from_ranks.encode(line);
        assert_eq!(from_ranks.decode(&ranked).unwrap(), line);
    }
}

#[test]
fn special_tokens_are_never_merged_with_or_inside() {
    // A special token in the text cuts it: the model equals the one trained on the pieces as
    // separate texts, and no token holds a part of the special token with its neighbours.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(KJV).unwrap();
    let lines: Vec<&str> = text.lines().take(3000).collect();
    let joined: String = lines
        .chunks(3)
        .map(|c| c.join("<|endoftext|>") + "\n")
        .collect();
    let cut: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let joined = temp_file(dir.path(), "joined.txt", joined.as_bytes());
    let cut = temp_file(dir.path(), "cut.txt", cut.as_bytes());
    let common = [
        "--vocab-size",
        "800",
        "--special-token",
        "<|endoftext|>",
        "--output",
        "-",
    ];
    let a = train_ok(&[&["--input", joined.to_str().unwrap()][..], &common].concat());
    let b = train_ok(&[&["--input", cut.to_str().unwrap()][..], &common].concat());
    assert!(a == b, "a special token in the text changed the model");
    let model: serde_json::Value = serde_json::from_slice(&a).unwrap();
    let vocab = model["model"]["vocab"].as_object().unwrap();
    assert!(
        vocab
            .keys()
            .all(|t| t == "<|endoftext|>" || !t.contains("endoftext"))
    );
}

#[test]
fn bad_input_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad_utf8 = temp_file(dir.path(), "bad.txt", b"fine\nalso fine\nnot \xff fine\n");
    train_fails(
        &[
            "--input",
            bad_utf8.to_str().unwrap(),
            "--vocab-size",
            "300",
            "--output",
            "-",
        ],
        b"",
        1,
        &["bad.txt:3", "UTF-8"],
    );
    let bad_json = temp_file(dir.path(), "bad.jsonl", b"{\"text\": \"a\"}\n{\"text\": \n");
    train_fails(
        &[
            "--input",
            bad_json.to_str().unwrap(),
            "--input-format",
            "jsonl",
            "--vocab-size",
            "300",
            "--output",
            "-",
        ],
        b"",
        1,
        &["bad.jsonl:2"],
    );
}

#[test]
fn impossible_requests_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let empty = temp_file(dir.path(), "empty.txt", b"\n\n\n");
    train_fails(
        &[
            "--input",
            empty.to_str().unwrap(),
            "--vocab-size",
            "300",
            "--output",
            "-",
        ],
        b"",
        1,
        &["no text to train on"],
    );
    train_fails(
        &[
            "--input",
            KJV,
            "--vocab-size",
            "100",
            "--special-token",
            "<s>",
            "--output",
            "-",
        ],
        b"",
        1,
        &["--vocab-size 100", "1 special token", "256", "257"],
    );
    train_fails(
        &[
            "--input",
            KJV,
            "--vocab-size",
            "300",
            "--pre-tokenizer",
            "whitespace",
            "--format",
            "tiktoken",
            "--output",
            "-",
        ],
        b"",
        2,
        &["byte-level"],
    );
    train_fails(
        &["--input", KJV, "--vocab-size", "300"],
        b"",
        2,
        &["--output"],
    );
    train_fails(
        &[
            "--input",
            KJV,
            "--vocab-size",
            "300",
            "--special-token",
            "",
            "--output",
            "-",
        ],
        b"",
        2,
        &["special token is empty"],
    );
    train_fails(
        &[
            "--input",
            "no/such/file.txt",
            "--vocab-size",
            "300",
            "--output",
            "-",
        ],
        b"",
        1,
        &["no/such/file.txt"],
    );
}

#[test]
fn a_long_text_without_whitespace_trains_in_linear_time() {
    // One word of 4 MB (letters drawn at random from four): the reference's word merge is
    // quadratic in the word's length; here each merge touches its own occurrences only. Not
    // timed (tests do not measure); a quadratic trainer would take hours here.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let text: String = (0..4_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (b'a' + (state % 4) as u8) as char
        })
        .collect();
    let kernels = simdtok::kernels::Kernels::active().unwrap();
    let mut counter = Counter::new(PreTokenizer::Cl100k, &[], kernels);
    counter.add(&text);
    let counts = counter.into_counts();
    assert_eq!(counts.len(), 1);
    for counting in [train::Counting::Windows, train::Counting::NonOverlapping] {
        let settings = Settings {
            vocab_size: 2000,
            min_frequency: 0,
            max_token_length: None,
            counting,
        };
        let model = train::train(&counts, PreTokenizer::Cl100k, &[], &settings, &mut |_| {})
            .expect("trains");
        assert_eq!(model.trained.tokens.len(), 2000, "{counting:?}");
    }
}

#[test]
fn exact_prints_the_optimal_and_the_greedy_utility_and_refuses_large_inputs() {
    let tiny = "abababcabab\nbcbcbcab\n";
    let out = simdtok(
        &[
            "train-bpe",
            "--exact",
            "--merges",
            "4",
            "--input",
            "-",
            "--pre-tokenizer",
            "whitespace",
        ],
        tiny.as_bytes(),
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let report = String::from_utf8(out.stdout).unwrap();
    // The figures printed are the library's on the same words (a, b, c are ids 0, 1, 2).
    let words = vec![
        (vec![0, 1, 0, 1, 0, 1, 2, 0, 1, 0, 1], 1),
        (vec![1, 2, 1, 2, 1, 2, 0, 1], 1),
    ];
    let want = train::exact::compare(
        &words,
        3,
        4,
        train::Counting::Windows,
        &train::exact::Limits::default(),
    )
    .unwrap();
    assert!(
        report.contains(&format!("optimal utility: {} ", want.optimal.utility)),
        "{report}"
    );
    assert!(
        report.contains(&format!("greedy utility:  {} ", want.greedy.utility)),
        "{report}"
    );
    train_fails(
        &["--exact", "--merges", "4", "--input", KJV],
        b"",
        1,
        &["at most 64 symbols"],
    );
    train_fails(&["--exact", "--input", KJV], b"", 2, &["--merges"]);
}
