//! Malformed, truncated and foreign model files: a clear error naming the file, never a panic
//! (and when a damaged file still parses, encoding with it must not panic either).

#[path = "common/bad_files.rs"]
mod bad_files;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use simdtok::{Error, Tokenizer};

const MODELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sentencepiece");
const SAMPLE: &str = "Hello world! naïve café ｶﾀｶﾅ 日本語 🎉 \t end";

/// Loads `bytes` as a model named `name`; panics (failing the test) only if the library
/// panicked, or if an error does not name the file.
fn load(name: &str, bytes: &[u8]) -> Result<Tokenizer, Error> {
    bad_files::load_checked(&bad_files::write("spm_bad_models", &[(name, bytes)]))
}

fn exercise(name: &str, tok: &Tokenizer) {
    catch_unwind(AssertUnwindSafe(|| {
        let ids = tok.encode(SAMPLE);
        let _ = tok.encode_full(SAMPLE);
        let _ = tok.decode(&ids);
        let _ = tok.decode(&[u32::MAX]);
    }))
    .unwrap_or_else(|_| panic!("encoding with {name} panicked"));
}

fn model_bytes(stem: &str) -> Vec<u8> {
    std::fs::read(Path::new(MODELS).join(format!("{stem}.model"))).unwrap()
}

#[test]
fn empty_and_foreign_files_are_clear_errors() {
    let e = load("empty.model", b"").unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = load("json.model", b"{\"model\": {\"type\": \"BPE\"}}").unwrap_err();
    assert!(matches!(e, Error::Model { .. }), "{e}");
    let e = load("tokenizer.json", b"{\"model\": {\"type\": \"BPE\"}}").unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let e = load("text.model", b"hello world\nthis is not a model\n").unwrap_err();
    assert!(matches!(e, Error::Model { .. }), "{e}");
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("does-not-exist.model");
    let e = Tokenizer::from_file(&missing).unwrap_err();
    assert!(
        matches!(e, Error::Io { .. }) && e.to_string().contains("does-not-exist"),
        "{e}"
    );
}

#[test]
fn truncated_models_never_panic() {
    for stem in ["botchan_en_unigram_1000", "botchan_en_bpe_1000"] {
        let bytes = model_bytes(stem);
        let mut errors = 0;
        for cut in (0..bytes.len())
            .step_by(bytes.len() / 97 + 1)
            .chain([bytes.len() - 1, 1, 2, 3])
        {
            match load(&format!("{stem}.cut{cut}.model"), &bytes[..cut]) {
                Ok(tok) => exercise(&format!("{stem} cut at {cut}"), &tok),
                Err(_) => errors += 1,
            }
        }
        assert!(errors > 0, "some truncations of {stem} must be refused");
    }
}

#[test]
fn corrupted_models_never_panic() {
    for stem in [
        "botchan_en_unigram_1000",
        "botchan_en_bpe_1000",
        "kyoto_ja_unigram_8000",
    ] {
        let damaged = bad_files::damaged(&model_bytes(stem), 60, 0x2545_F491_4F6C_DD1D);
        for (round, bytes) in damaged.iter().enumerate() {
            if let Ok(tok) = load(&format!("{stem}.corrupt{round}.model"), bytes) {
                exercise(&format!("{stem} corruption {round}"), &tok);
            }
        }
    }
}

#[test]
fn out_of_range_ids_are_errors() {
    let tok =
        Tokenizer::from_file(Path::new(MODELS).join("botchan_en_unigram_1000.model")).unwrap();
    let e = tok.decode(&[5, 1000]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IdOutOfRange {
                id: 1000,
                size: 1000
            }
        ),
        "{e}"
    );
}
