//! Conformance with `sentencepiece` 0.2.3: every golden case of every model (tests/golden/
//! sentencepiece, made by gen_sentencepiece.py), on every tier — ids, pieces, byte spans and the
//! decoded text must all be identical.
//!
//! Test names read `<model>::<tier>`. A tier the CPU lacks is reported as ignored (and fails under
//! SIMDTOK_REQUIRE_TIERS, as in the kernel tests). Models and corpora that live in
//! `../shared/data` (or `$SIMDTOK_SHARED_DATA`) are skipped with a message when it is absent.

#[path = "common/golden.rs"]
mod golden;
#[path = "common/harness.rs"]
mod harness;

use std::path::Path;

use golden::Golden;
use harness::{CaseCheck, check_cases, check_model_sha, load_tokenizer};
use libtest_mimic::{Arguments, Failed};
use serde_json::Value;
use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/sentencepiece");

/// Failing cases described in full (the count covers them all).
const MAX_REPORTED: usize = 15;

/// Checks one case; `Err` lists what differs. Three times: the caches store a long word at
/// its second sight (the unigram model's long tier) and answer it from the third, and a cached
/// path must give what the reference's pass gave.
fn check_case(tok: &Tokenizer, case: &Value, text: &str) -> Result<(), String> {
    let mut check = CaseCheck::new(case, text)?;
    for _ in 0..3 {
        check.plain(tok);
    }
    check.finish()
}

fn run(golden: &Golden, model: &Path, kernels: &'static Kernels, (): ()) -> Result<(), Failed> {
    check_model_sha(golden, model)?;
    let tok = load_tokenizer(model, kernels, &LoadOptions::default())?;
    let name = model.display().to_string();
    check_cases(golden, &name, MAX_REPORTED, |case, text| {
        check_case(&tok, case, text)
    })
}

/// `<model>` of the trial names: the golden file's name.
fn config_name(file: &Path, _header: &serde_json::Value) -> String {
    file.file_name()
        .unwrap()
        .to_string_lossy()
        .trim_end_matches(".jsonl.gz")
        .replace(['.', '-'], "_")
}

fn main() {
    let args = Arguments::from_args();
    let trials = harness::tier_trials(&args, GOLDEN_DIR, config_name, &[(String::new(), ())], run);
    libtest_mimic::run(&args, trials).exit();
}
