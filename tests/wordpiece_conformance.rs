//! Conformance with Hugging Face `tokenizers` 0.23.3 for WordPiece (BERT): every golden case of
//! every configuration (tests/golden/wordpiece, made by gen_wordpiece.py), on every tier and with
//! both WordPiece algorithms — ids, pieces, byte spans, the decoded text and the ids with
//! `[CLS] … [SEP]` must all be identical.
//!
//! Test names read `<config>::<tier>::<algorithm>` (`fast`, `linear`). A tier the CPU lacks is
//! reported as ignored (and fails under SIMDTOK_REQUIRE_TIERS, as in the kernel tests). Corpus
//! cases need `../shared/data` (or `$SIMDTOK_SHARED_DATA`); without it they are skipped with a
//! message and only the edge cases run.

#[path = "common/golden.rs"]
mod golden;
#[path = "common/harness.rs"]
mod harness;

use std::path::Path;

use golden::Golden;
use harness::{CaseCheck, check_cases, check_model_sha, header_config_name, load_tokenizer};
use libtest_mimic::{Arguments, Failed};
use serde_json::Value;
use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer, WordPieceAlgorithm};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/wordpiece");

/// Failing cases described in full (the count covers them all).
const MAX_REPORTED: usize = 12;

/// The two tokenizers a trial checks: without special tokens (ids, pieces, spans, decode) and
/// with them (`special_ids`).
struct Tokenizers {
    plain: Tokenizer,
    special: Tokenizer,
}

/// The `lowercase` load option a configuration asks for: `Some(false)` for the cased one, else
/// the default.
fn lowercase_option(config: &Value) -> Option<bool> {
    match config.get("lowercase").and_then(Value::as_bool) {
        Some(false) => Some(false),
        _ => None,
    }
}

fn load(
    model: &Path,
    config: &Value,
    kernels: &'static Kernels,
    algorithm: WordPieceAlgorithm,
) -> Result<Tokenizers, String> {
    let load_one = |add_special_tokens: bool| {
        let options = LoadOptions {
            lowercase: lowercase_option(config),
            add_special_tokens,
            wordpiece_algorithm: Some(algorithm),
            ..LoadOptions::default()
        };
        load_tokenizer(model, kernels, &options)
    };
    Ok(Tokenizers {
        plain: load_one(false)?,
        special: load_one(true)?,
    })
}

/// Checks one case; `Err` lists what differs.
fn check_case(toks: &Tokenizers, case: &Value, text: &str) -> Result<(), String> {
    let mut check = CaseCheck::new(case, text)?;
    check.plain(&toks.plain);
    // With [CLS] … [SEP]: both encoding paths.
    check.special_ids(&toks.special);
    check.finish()
}

fn run(
    golden: &Golden,
    model: &Path,
    kernels: &'static Kernels,
    algorithm: WordPieceAlgorithm,
) -> Result<(), Failed> {
    check_model_sha(golden, model)?;
    let toks = load(model, &golden.header["config"], kernels, algorithm)?;
    let name = golden.header["name"].as_str().unwrap_or("?");
    check_cases(golden, name, MAX_REPORTED, |case, text| {
        check_case(&toks, case, text)
    })
}

fn main() {
    let args = Arguments::from_args();
    let algorithms: Vec<_> = [WordPieceAlgorithm::Fast, WordPieceAlgorithm::Linear]
        .into_iter()
        .map(|a| (format!("::{}", a.name()), a))
        .collect();
    let trials = harness::tier_trials(&args, GOLDEN_DIR, header_config_name, &algorithms, run);
    libtest_mimic::run(&args, trials).exit();
}
