//! Malformed, truncated and hostile BPE model files — tiktoken rank files, GPT-2's
//! `encoder.json` + `vocab.bpe`, `tokenizer.json` with a BPE model — give a clear error naming
//! the file (never a panic, an abort on a huge allocation, or a silent difference), and what
//! still loads encodes without panicking.

#[path = "common/bad_files.rs"]
mod bad_files;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use simdtok::{Error, Tokenizer};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bpe");
const SAMPLE: &str = "Hello world! It's 2024: naïve café, 日本語 🎉\r\n\t  end<|endoftext|>";

fn load_files(files: &[(&str, &[u8])]) -> Result<Tokenizer, Error> {
    bad_files::load_checked(&bad_files::write("bpe_bad_input", files))
}

fn load(name: &str, bytes: &[u8]) -> Result<Tokenizer, Error> {
    load_files(&[(name, bytes)])
}

/// Encodes and decodes with `tok`; fails the test on a panic.
fn exercise(what: &str, tok: &Tokenizer) {
    catch_unwind(AssertUnwindSafe(|| {
        let ids = tok.encode(SAMPLE);
        let full = tok.encode_full(SAMPLE);
        assert_eq!(full.ids, ids);
        let _ = tok.decode(&ids);
        let _ = tok.decode(&[u32::MAX]);
    }))
    .unwrap_or_else(|_| panic!("encoding with {what} panicked"));
}

/// A small rank file: the 256 bytes (in a shuffled order of ranks), then merged tokens built
/// from earlier ones, as a BPE trainer lists them.
fn rank_lines() -> Vec<(Vec<u8>, u32)> {
    let mut lines: Vec<(Vec<u8>, u32)> = (0..=255u8)
        .map(|b| (vec![b], u32::from(b.wrapping_mul(37).wrapping_add(11))))
        .collect();
    let merged = [
        "th", "he", "the", " t", " the", "in", "ing", " a", "an", "and", " and", "er", "re", " w",
        " wor", "or", "ld", "orld", " world", "He", "ll", "llo", "Hello", "'s", " 2", "20", "24",
        "é", "日本",
    ];
    for (i, token) in merged.iter().enumerate() {
        lines.push((token.as_bytes().to_vec(), 256 + i as u32));
    }
    lines
}

fn rank_file(lines: &[(Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = String::new();
    for (bytes, rank) in lines {
        out += &format!("{} {rank}\n", STANDARD.encode(bytes));
    }
    out.into_bytes()
}

const RANK_NAME: &str = "cl100k_base.tiktoken";

#[test]
fn the_small_rank_file_loads_and_encodes() {
    // The file the other tests damage is itself a model.
    let tok = load(RANK_NAME, &rank_file(&rank_lines())).unwrap();
    exercise("the small rank file", &tok);
    let ids = tok.encode(" the world");
    assert_eq!(ids, [256 + 4, 256 + 18]);
}

#[test]
fn malformed_rank_files_are_errors() {
    let good = rank_lines();
    type Edit = fn(&mut Vec<(Vec<u8>, u32)>, &mut String);
    let cases: [(&str, Edit, &str); 6] = [
        ("a byte without a token", |l, _| drop(l.remove(200)), "byte"),
        (
            "a token listed twice",
            |l, _| l.push((b"the".to_vec(), 9000)),
            "twice",
        ),
        (
            "a rank given twice",
            |l, _| l.push((b"xyz".to_vec(), 257)),
            "two tokens",
        ),
        // An empty token is an empty base64 field: the line has one field.
        ("an empty token", |l, _| l.push((Vec::new(), 9001)), "line"),
        (
            "a bad base64 token",
            |_, s| s.push_str("!!!! 9002\n"),
            "base64",
        ),
        ("a line without a rank", |_, s| s.push_str("dGhl\n"), "line"),
    ];
    for (what, edit, says) in cases {
        let mut lines = good.clone();
        let mut extra = String::new();
        edit(&mut lines, &mut extra);
        let mut bytes = rank_file(&lines);
        bytes.extend_from_slice(extra.as_bytes());
        let e = load(RANK_NAME, &bytes).expect_err(what);
        assert!(
            matches!(e, Error::Model { .. }) && e.to_string().contains(says),
            "{what}: {e}"
        );
    }
    for (what, bytes) in [
        ("empty", &b""[..]),
        ("blank lines", b"\n\n  \n"),
        ("a negative rank", b"IQ== -1\n"),
        ("a rank past 32 bits", b"IQ== 4294967296\n"),
        ("a rank that is not a number", b"IQ== one\n"),
        ("three fields", b"IQ== 1 2\n"),
        ("invalid UTF-8", b"IQ== 1\n\xff\xfe 2\n"),
    ] {
        let e = load(RANK_NAME, bytes).expect_err(what);
        assert!(matches!(e, Error::Model { .. }), "{what}: {e}");
    }
}

#[test]
fn sparse_ranks_are_refused_not_allocated() {
    // A rank of four billion in a file of 285 tokens: tables indexed by rank would take tens of
    // gigabytes. The loader must refuse it, not abort on the allocation.
    for rank in [u32::MAX - 1, 4_000_000_000, 1 << 31] {
        let mut lines = rank_lines();
        lines.push((b"xyzzy".to_vec(), rank));
        let e = load(RANK_NAME, &rank_file(&lines)).expect_err("a rank far past the vocabulary");
        assert!(
            matches!(e, Error::Model { .. }) && e.to_string().contains(&rank.to_string()),
            "{e}"
        );
    }
    // Gaps of a reasonable size are fine (tiktoken allows them, and so do real files).
    let mut lines = rank_lines();
    lines.push((b"xyzzy".to_vec(), 100_000));
    let tok = load(RANK_NAME, &rank_file(&lines)).unwrap();
    exercise("a rank file with a gap", &tok);
}

#[test]
fn truncated_rank_files_never_panic() {
    let bytes = rank_file(&rank_lines());
    let mut loaded = 0;
    for i in 0..=200 {
        let cut = bytes.len() * i / 200;
        match load(RANK_NAME, &bytes[..cut]) {
            Ok(tok) => {
                loaded += 1;
                exercise(&format!("the rank file cut at {cut}"), &tok);
            }
            Err(e) => assert!(matches!(e, Error::Model { .. }), "cut at {cut}: {e}"),
        }
    }
    // Cuts inside the merged tokens (after all 256 bytes) still make models.
    assert!(loaded > 0);
}

#[test]
fn gpt2_files_damaged_are_errors() {
    let encoder = std::fs::read(Path::new(DATA).join("encoder.json")).unwrap();
    let merges = std::fs::read(Path::new(DATA).join("vocab.bpe")).unwrap();
    // Truncated either file, anywhere: an error or a model, never a panic.
    for i in 0..=40 {
        for (which, enc, mer) in [
            (
                "encoder.json",
                &encoder[..encoder.len() * i / 40],
                &merges[..],
            ),
            ("vocab.bpe", &encoder[..], &merges[..merges.len() * i / 40]),
        ] {
            match load_files(&[("encoder.json", enc), ("vocab.bpe", mer)]) {
                Ok(tok) => exercise(&format!("{which} cut at {i}/40"), &tok),
                Err(e) => assert!(matches!(e, Error::Model { .. }), "{which} {i}/40: {e}"),
            }
        }
    }
    // A merge of tokens the encoder does not have.
    let mut bad = merges.clone();
    bad.extend_from_slice("nosuch token\n".as_bytes());
    let e = load_files(&[("encoder.json", &encoder), ("vocab.bpe", &bad)]).unwrap_err();
    assert!(matches!(e, Error::Model { .. }), "{e}");
    // An encoder that is not an object of ids.
    let e = load_files(&[("encoder.json", b"[1, 2, 3]"), ("vocab.bpe", &merges)]).unwrap_err();
    assert!(matches!(e, Error::Model { .. }), "{e}");
}

fn tokenizer_json(name: &str) -> Value {
    let bytes = std::fs::read(Path::new(DATA).join(name)).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn load_json(value: &Value) -> Result<Tokenizer, Error> {
    load("tokenizer.json", value.to_string().as_bytes())
}

/// A byte-level file (GPT-2 cut to 2000 merges) and a SentencePiece-style one (trained on KJV).
const BYTE_LEVEL: &str = "gpt2-2k-behaviors.tokenizer.json";
const SPM_STYLE: &str = "kjv-spm-first.tokenizer.json";

#[test]
fn unsupported_bpe_components_are_named() {
    let cases: [(&str, &str, Value, &str); 6] = [
        (BYTE_LEVEL, "model", json!(0.1), "dropout"),
        (SPM_STYLE, "model", json!(0.1), "dropout"),
        (
            BYTE_LEVEL,
            "normalizer",
            json!({"type": "BertNormalizer"}),
            "BertNormalizer",
        ),
        (
            BYTE_LEVEL,
            "pre_tokenizer",
            json!({"type": "Sequence", "pretokenizers": [{"type": "Punctuation"}, {"type": "ByteLevel"}]}),
            "Punctuation",
        ),
        (BYTE_LEVEL, "decoder", json!({"type": "CTC"}), "CTC"),
        (
            BYTE_LEVEL,
            "post_processor",
            json!({"type": "BertProcessing", "sep": ["x", 1], "cls": ["y", 2]}),
            "BertProcessing",
        ),
    ];
    for (file, component, value, name) in cases {
        let mut json = tokenizer_json(file);
        if name == "dropout" {
            json["model"]["dropout"] = value;
        } else {
            json[component] = value;
        }
        let e = load_json(&json).expect_err(name);
        let msg = e.to_string();
        assert!(
            matches!(e, Error::Model { .. } | Error::Unsupported { .. }) && msg.contains(name),
            "{file} {component}: {msg}"
        );
    }
}

#[test]
fn malformed_bpe_fields_are_errors() {
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 9] = [
        ("vocab a list", |j| j["model"]["vocab"] = json!([1, 2])),
        ("vocab missing", |j| {
            j["model"].as_object_mut().unwrap().remove("vocab");
        }),
        ("negative id", |j| j["model"]["vocab"]["the"] = json!(-3)),
        ("id a string", |j| j["model"]["vocab"]["the"] = json!("3")),
        ("merges not a list", |j| j["model"]["merges"] = json!("a b")),
        ("a merge of one token", |j| {
            j["model"]["merges"][0] = json!("abc")
        }),
        ("a merge of unknown tokens", |j| {
            j["model"]["merges"][0] = json!("nosuch token")
        }),
        ("an added token without an id", |j| {
            j["added_tokens"] = json!([{"content": "<x>", "special": true}])
        }),
        ("a Split with a bad regex", |j| {
            j["pre_tokenizer"] = json!({"type": "Split", "pattern": {"Regex": "(unclosed"},
                                       "behavior": "Isolated", "invert": false})
        }),
    ];
    for file in [BYTE_LEVEL, SPM_STYLE] {
        for (what, edit) in edits {
            if file == SPM_STYLE && what == "a Split with a bad regex" {
                continue;
            }
            let mut json = tokenizer_json(file);
            edit(&mut json);
            let e = load_json(&json).expect_err(what);
            assert!(
                matches!(e, Error::Model { .. } | Error::Unsupported { .. }),
                "{file}, {what}: {e}"
            );
        }
    }
}

#[test]
fn sparse_ids_in_a_tokenizer_json_are_refused_not_allocated() {
    for file in [BYTE_LEVEL, SPM_STYLE] {
        let mut json = tokenizer_json(file);
        json["model"]["vocab"]["xyzzy"] = json!(4_000_000_000u32);
        let e = load_json(&json).expect_err("an id far past the vocabulary");
        assert!(e.to_string().contains("4000000000"), "{file}: {e}");
        let mut json = tokenizer_json(file);
        json["added_tokens"] = json!([{"id": 4_000_000_000u32, "content": "<x>",
            "single_word": false, "lstrip": false, "rstrip": false, "normalized": false,
            "special": true}]);
        let e = load_json(&json).expect_err("an added id far past the vocabulary");
        assert!(e.to_string().contains("4000000000"), "{file}: {e}");
    }
}

#[test]
fn truncated_tokenizer_jsons_never_panic() {
    for file in [
        BYTE_LEVEL,
        SPM_STYLE,
        "kjv-1500-suffix.tokenizer.json",
        "gpt2-2k-deepseek.tokenizer.json",
    ] {
        let bytes = std::fs::read(Path::new(DATA).join(file)).unwrap();
        for i in 0..100 {
            let cut = bytes.len() * i / 100;
            match load("tokenizer.json", &bytes[..cut]) {
                Ok(tok) => exercise(&format!("{file} cut at {cut}"), &tok),
                Err(e) => assert!(matches!(e, Error::Model { .. }), "{file} cut at {cut}: {e}"),
            }
        }
    }
}

#[test]
fn corrupted_files_never_panic() {
    // Bytes overwritten at random: most damage is an error (bad base64, bad JSON), some still
    // loads (a token's bytes changed), and then encodes.
    let files = [
        (RANK_NAME, rank_file(&rank_lines())),
        (
            "tokenizer.json",
            std::fs::read(Path::new(DATA).join(BYTE_LEVEL)).unwrap(),
        ),
        (
            "tokenizer.json",
            std::fs::read(Path::new(DATA).join(SPM_STYLE)).unwrap(),
        ),
    ];
    for (name, original) in &files {
        for (round, bytes) in bad_files::damaged(original, 60, 0x9E37_79B9_7F4A_7C15)
            .iter()
            .enumerate()
        {
            if let Ok(tok) = load(name, bytes) {
                exercise(&format!("{name} corruption {round}"), &tok);
            }
        }
    }
}

#[test]
fn pathological_texts_encode_like_their_parts() {
    // Long runs and repetitions give a result (no panic, no hang), with offsets in order.
    let rank_path = bad_files::write("bpe_bad_input", &[(RANK_NAME, &rank_file(&rank_lines()))]);
    let models = [
        rank_path,
        Path::new(DATA).join(BYTE_LEVEL),
        Path::new(DATA).join(SPM_STYLE),
    ];
    let texts: Vec<String> = vec![
        "a".repeat(1 << 18),
        " ".repeat(1 << 18),
        "\n".repeat(1 << 18),
        "ab ".repeat(1 << 16),
        "中".repeat(1 << 16),
        "\u{301}".repeat(1 << 17),
        "😀".repeat(1 << 16),
        "'s".repeat(1 << 17),
        "1".repeat(1 << 18),
        "<|endoftext|>".repeat(1 << 14),
    ];
    for path in &models {
        let tok = Tokenizer::from_file(path).unwrap();
        for text in &texts {
            let full = tok.encode_full(text);
            assert_eq!(full.ids, tok.encode(text), "{}", path.display());
            assert_eq!(full.ids.len(), full.offsets.len());
            let mut last = 0;
            for &(s, e) in &full.offsets {
                let (s, e) = (s as usize, e as usize);
                assert!(last <= s && s <= e && e <= text.len(), "{}", path.display());
                last = s;
            }
        }
    }
}
