//! Malformed WordPiece model files give clear errors (never a panic), and pathological texts
//! give results (never a panic or a hang).

#[path = "common/bad_files.rs"]
mod bad_files;

use std::path::Path;

use simdtok::kernels::Kernels;
use simdtok::{Error, LoadOptions, Tokenizer, WordPieceAlgorithm};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wordpiece");

/// Loads `bytes` as a file named `name` (the name decides detection); fails the test if the
/// library panicked, or if an error does not name the file.
fn load(name: &str, bytes: &[u8]) -> Result<Tokenizer, Error> {
    bad_files::load_checked(&bad_files::write("wordpiece_bad_input", &[(name, bytes)]))
}

fn minilm() -> serde_json::Value {
    let text = std::fs::read(Path::new(DATA).join("all-MiniLM-L6-v2.bert-uncased.tokenizer.json"));
    serde_json::from_slice(&text.unwrap()).unwrap()
}

fn load_json(value: &serde_json::Value) -> Result<Tokenizer, Error> {
    load("tokenizer.json", value.to_string().as_bytes())
}

#[test]
fn unsupported_components_are_named() {
    let cases = [
        ("normalizer", serde_json::json!({"type": "NFKC"}), "NFKC"),
        (
            "pre_tokenizer",
            serde_json::json!({"type": "Whitespace"}),
            "Whitespace",
        ),
        (
            "post_processor",
            serde_json::json!({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]}),
            "RobertaProcessing",
        ),
        (
            "decoder",
            serde_json::json!({"type": "ByteLevel"}),
            "ByteLevel",
        ),
    ];
    for (component, value, name) in cases {
        let mut json = minilm();
        json[component] = value;
        let e = load_json(&json).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, Error::Model { .. }) && msg.contains(component) && msg.contains(name),
            "{msg}"
        );
    }
    let mut json = minilm();
    json["added_tokens"][0]["normalized"] = true.into();
    let msg = load_json(&json).unwrap_err().to_string();
    assert!(msg.contains("[PAD]") && msg.contains("normalized"), "{msg}");
    let mut json = minilm();
    json["model"]["type"] = "WordLevel".into();
    let e = load_json(&json).unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { .. }) && e.to_string().contains("WordLevel"),
        "{e}"
    );
    // A Unigram model is read now: WordPiece's vocabulary (an object) is not its list of
    // `[piece, score]` pairs.
    let mut json = minilm();
    json["model"]["type"] = "Unigram".into();
    let e = load_json(&json).unwrap_err();
    assert!(
        matches!(e, Error::Model { .. }) && e.to_string().contains("model.vocab"),
        "{e}"
    );
}

#[test]
fn malformed_fields_are_errors() {
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 7] = [
        ("vocab", |j| j["model"]["vocab"] = serde_json::json!([1, 2])),
        // Far past the vocabulary: a table indexed by id would take 64 GB.
        ("sparse id", |j| {
            j["model"]["vocab"]["hello"] = serde_json::json!(4_000_000_000u32)
        }),
        ("unk", |j| j["model"]["unk_token"] = "<nope>".into()),
        ("id", |j| {
            j["model"]["vocab"]["hello"] = serde_json::json!(-3)
        }),
        ("max_input", |j| {
            j["model"]["max_input_chars_per_word"] = "many".into()
        }),
        ("single", |j| {
            j["post_processor"]["single"] = serde_json::json!(7)
        }),
        ("added", |j| {
            j["added_tokens"][1]["id"] = serde_json::json!("x")
        }),
    ];
    for (what, edit) in edits {
        let mut json = minilm();
        edit(&mut json);
        let e = load_json(&json).unwrap_err();
        assert!(matches!(e, Error::Model { .. }), "{what}: {e}");
    }
}

/// The two files the damage tests start from, by the names that get them detected.
fn model_files() -> [(&'static str, Vec<u8>); 2] {
    let read = |file: &str| std::fs::read(Path::new(DATA).join(file)).unwrap();
    [
        (
            "tokenizer.json",
            read("all-MiniLM-L6-v2.bert-uncased.tokenizer.json"),
        ),
        ("vocab.txt", read("bert-base-uncased.vocab.txt")),
    ]
}

#[test]
fn truncated_files_never_panic() {
    for (name, bytes) in &model_files() {
        for i in 0..200 {
            let cut = bytes.len() * i / 200;
            if let Ok(tok) = load(name, &bytes[..cut]) {
                // A vocab.txt cut anywhere is still a vocabulary (with [UNK] in its first lines).
                let _ = tok.encode_full("Hello, wörld! 中文 [CLS]");
            }
        }
    }
}

#[test]
fn corrupted_files_never_panic() {
    for (name, original) in &model_files() {
        for bytes in bad_files::damaged(original, 60, 0xD1B5_4A32_D192_ED03) {
            if let Ok(tok) = load(name, &bytes) {
                let _ = tok.encode_full("Hello, wörld! 中文 [CLS]");
            }
        }
    }
}

#[test]
fn bad_vocab_txt() {
    let e = load("vocab.txt", b"[PAD]\n[UNK]\nab\xffc\n").unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
    let e = load("vocab.txt", b"[PAD]\nhello\n").unwrap_err();
    assert!(e.to_string().contains("[UNK]"), "{e}");
    // Options that do not apply are refused, naming the option.
    let path = Path::new(DATA).join("all-MiniLM-L6-v2.bert-uncased.tokenizer.json");
    let options = LoadOptions {
        lowercase: Some(false),
        ..LoadOptions::default()
    };
    let e = Tokenizer::from_file_with_options(&path, Kernels::scalar(), &options).unwrap_err();
    assert!(
        matches!(e, Error::Option { .. }) && e.to_string().contains("lowercase"),
        "{e}"
    );
}

#[test]
fn pathological_texts() {
    let path = Path::new(DATA).join("bert-base-uncased.vocab.txt");
    let texts: Vec<String> = vec![
        "a".repeat(1 << 20),
        "ab ".repeat(1 << 18),
        ".".repeat(1 << 20),
        " ".repeat(1 << 20),
        "中".repeat(1 << 18),
        "é".repeat(1 << 19),
        "\u{301}".repeat(1 << 19),
        "\u{1}".repeat(1 << 20),
        "a\u{1}".repeat(1 << 19),
        "😀".repeat(1 << 18),
        "[CLS]".repeat(1 << 18),
        "[CLS".repeat(1 << 18),
    ];
    for algorithm in [WordPieceAlgorithm::Fast, WordPieceAlgorithm::Linear] {
        let options = LoadOptions {
            wordpiece_algorithm: Some(algorithm),
            ..LoadOptions::default()
        };
        let tok =
            Tokenizer::from_file_with_options(&path, Kernels::active().unwrap(), &options).unwrap();
        for text in &texts {
            let full = tok.encode_full(text);
            assert_eq!(full.ids, tok.encode(text));
            assert_eq!(full.ids.len(), full.offsets.len());
            // Offsets are in order, within the text, on character boundaries.
            let mut last = 0;
            for &(s, e) in &full.offsets {
                let (s, e) = (s as usize, e as usize);
                assert!(last <= s && s <= e && e <= text.len());
                assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
                last = s;
            }
        }
    }
}
