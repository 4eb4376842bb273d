//! Malformed, truncated and hostile `tokenizer.json` files with a `Unigram` model give a clear
//! error naming the file (never a panic, a huge allocation or a silent difference), and what
//! still loads encodes without panicking — on every tier.

#[path = "common/bad_files.rs"]
mod bad_files;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use serde_json::{Value, json};
use simdtok::kernels::{Kernels, Tier};
use simdtok::{Error, LoadOptions, Tokenizer};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/unigram");
const SAMPLE: &str =
    "Hello world! It's 2024: naïve café, 日本語 🎉\r\n\t  end<s></s><unk> <0x41> <mask>";

fn tokenizer_json(name: &str) -> Value {
    let bytes = std::fs::read(Path::new(DATA).join(name)).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn load(bytes: &[u8]) -> Result<Tokenizer, Error> {
    bad_files::load_checked(&bad_files::write(
        "unigram_bad_input",
        &[("tokenizer.json", bytes)],
    ))
}

fn load_json(value: &Value) -> Result<Tokenizer, Error> {
    load(value.to_string().as_bytes())
}

/// Encodes and decodes with `tok` on every tier; fails the test on a panic.
fn exercise(what: &str, path_bytes: &[u8]) {
    let path = bad_files::write("unigram_bad_input", &[("tokenizer.json", path_bytes)]);
    for tier in Tier::ALL {
        let Some(kernels) = Kernels::for_tier(tier) else {
            continue;
        };
        let Ok(tok) = Tokenizer::from_file_with_options(&path, kernels, &LoadOptions::default())
        else {
            continue;
        };
        catch_unwind(AssertUnwindSafe(|| {
            let ids = tok.encode(SAMPLE);
            let full = tok.encode_full(SAMPLE);
            assert_eq!(full.ids, ids);
            let _ = tok.decode(&ids);
            let _ = tok.decode(&[u32::MAX]);
        }))
        .unwrap_or_else(|_| panic!("encoding with {what} on {tier:?} panicked"));
    }
}

const FILES: [&str; 4] = [
    "botchan-t5.tokenizer.json",
    "botchan-spm.tokenizer.json",
    "botchan-bytes.tokenizer.json",
    "kyoto-xlmr.tokenizer.json",
];

#[test]
fn the_committed_files_load_and_encode() {
    for file in FILES {
        let bytes = std::fs::read(Path::new(DATA).join(file)).unwrap();
        load(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        exercise(file, &bytes);
    }
}

#[test]
fn malformed_unigram_fields_are_errors() {
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit, &str); 13] = [
        (
            "vocab missing",
            |j| {
                j["model"].as_object_mut().unwrap().remove("vocab");
            },
            "model.vocab",
        ),
        (
            "vocab an object",
            |j| j["model"]["vocab"] = json!({"a": 1}),
            "model.vocab",
        ),
        (
            "an entry of one item",
            |j| j["model"]["vocab"][5] = json!(["a"]),
            "model.vocab[5]",
        ),
        (
            "a score that is a string",
            |j| j["model"]["vocab"][5][1] = json!("-1.5"),
            "score",
        ),
        (
            "a piece that is a number",
            |j| j["model"]["vocab"][5][0] = json!(7),
            "model.vocab[5]",
        ),
        (
            "unk_id missing",
            |j| {
                j["model"].as_object_mut().unwrap().remove("unk_id");
            },
            "unk_id",
        ),
        (
            "unk_id past the vocabulary",
            |j| j["model"]["unk_id"] = json!(4_000_000_000u32),
            "unk_id",
        ),
        (
            "unk_id a string",
            |j| j["model"]["unk_id"] = json!("0"),
            "unk_id",
        ),
        (
            "byte_fallback a string",
            |j| j["model"]["byte_fallback"] = json!("yes"),
            "byte_fallback",
        ),
        (
            "an added token id far past the vocabulary",
            |j| {
                j["added_tokens"] = json!([{"id": 4_000_000_000u32, "content": "<x>",
                "single_word": false, "lstrip": false, "rstrip": false, "normalized": false,
                "special": true}])
            },
            "4000000000",
        ),
        (
            "a charsmap that is not base64",
            |j| j["normalizer"]["normalizers"][0]["precompiled_charsmap"] = json!("not base64!"),
            "base64",
        ),
        (
            "a truncated charsmap",
            |j| j["normalizer"]["normalizers"][0]["precompiled_charsmap"] = json!("AQID"),
            "Precompiled",
        ),
        (
            "a template naming an unknown token",
            |j| j["post_processor"]["special_tokens"] = json!({}),
            "special_tokens",
        ),
    ];
    for (what, edit, named) in edits {
        let mut json = tokenizer_json("botchan-t5.tokenizer.json");
        edit(&mut json);
        let e = load_json(&json).expect_err(what);
        let msg = e.to_string();
        assert!(
            matches!(e, Error::Model { .. } | Error::Unsupported { .. }) && msg.contains(named),
            "{what}: {msg}"
        );
    }
}

#[test]
fn unsupported_components_are_named() {
    let cases: [(&str, Value, &str); 5] = [
        (
            "normalizer",
            json!({"type": "BertNormalizer"}),
            "BertNormalizer",
        ),
        (
            "pre_tokenizer",
            json!({"type": "Sequence", "pretokenizers": [{"type": "Punctuation"}]}),
            "Punctuation",
        ),
        ("decoder", json!({"type": "CTC"}), "CTC"),
        (
            "post_processor",
            json!({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}),
            "RobertaProcessing",
        ),
        (
            "added_tokens",
            json!([{"id": 3, "content": "<x>", "normalized": true, "special": false}]),
            "normalized",
        ),
    ];
    for (component, value, name) in cases {
        let mut json = tokenizer_json("botchan-t5.tokenizer.json");
        json[component] = value;
        let e = load_json(&json).expect_err(name);
        let msg = e.to_string();
        assert!(
            matches!(e, Error::Model { .. } | Error::Unsupported { .. }) && msg.contains(name),
            "{component}: {msg}"
        );
    }
}

#[test]
fn damaged_files_are_errors_or_encode() {
    let original = std::fs::read(Path::new(DATA).join("botchan-bytes.tokenizer.json")).unwrap();
    for (i, bytes) in bad_files::damaged(&original, 60, 0x5eed_u64)
        .into_iter()
        .enumerate()
    {
        if load(&bytes).is_ok() {
            exercise(&format!("damaged copy {i}"), &bytes);
        }
    }
    // Truncated anywhere: an error (the JSON is cut), never a panic.
    for cut in [0, 1, 100, original.len() / 2, original.len() - 2] {
        assert!(load(&original[..cut]).is_err(), "cut at {cut}");
    }
}
