//! Conformance with Hugging Face `tokenizers` 0.23.3 for `tokenizer.json` files with a `Unigram`
//! model (made from SentencePiece models by `transformers`' converters:
//! scripts/make-unigram-tokenizer-json.py): every golden case of every configuration
//! (tests/golden/unigram, made by tests/golden/gen_unigram.py), on every tier — ids (`encode`
//! and `encode_full`), byte spans, pieces, the decoded text, and the ids with
//! `add_special_tokens` must all be identical.
//!
//! Test names read `<config>::<tier>`. A tier the CPU lacks is reported as ignored (and fails
//! under SIMDTOK_REQUIRE_TIERS, as in the kernel tests). The corpus cases read
//! `../shared/data/corpora` (or `$SIMDTOK_SHARED_DATA`); without it only the edge cases run, and
//! the harness says how many were skipped. `xlm-roberta-nomic`'s tokenizer.json is not committed
//! (`local:`, made from `../shared/data` by the script): without it that configuration is
//! skipped with a message.

#[path = "common/golden.rs"]
mod golden;
#[path = "common/harness.rs"]
mod harness;

use std::path::Path;

use golden::Golden;
use harness::{
    CaseCheck, Tokens, check_cases, check_model_sha, header_config_name, load_tokenizer,
};
use libtest_mimic::{Arguments, Failed};
use serde_json::Value;
use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/unigram");

/// Failing cases described in full (the count covers them all).
const MAX_REPORTED: usize = 12;

fn load_one(
    model: &Path,
    kernels: &'static Kernels,
    add_special_tokens: bool,
) -> Result<Tokenizer, String> {
    let options = LoadOptions {
        add_special_tokens,
        ..LoadOptions::default()
    };
    load_tokenizer(model, kernels, &options)
}

/// The tokenizer with `add_special_tokens`. A model whose post-processor adds nothing (every
/// `special_ids` equals `ids`: botchan-spm) may refuse it; then `special_ids` are not checked,
/// and a note says so.
fn load_special(
    golden: &Golden,
    model: &Path,
    kernels: &'static Kernels,
) -> Result<Option<Tokenizer>, String> {
    match load_one(model, kernels, true) {
        Ok(special) => Ok(Some(special)),
        Err(why) => {
            let adds_nothing = golden
                .cases
                .iter()
                .filter(|c| c.get("special_ids").is_some())
                .all(|c| c["special_ids"] == c["ids"]);
            if adds_nothing {
                println!(
                    "{}: special_ids not checked: add_special_tokens refused ({why}); the \
                     reference adds nothing for this model",
                    golden.header["name"].as_str().unwrap_or("?")
                );
                Ok(None)
            } else {
                Err(why)
            }
        }
    }
}

/// Checks one case; `Err` lists what differs.
fn check_case(
    plain: &Tokenizer,
    special: Option<&Tokenizer>,
    case: &Value,
    text: &str,
) -> Result<(), String> {
    let mut check = CaseCheck::new(case, text)?;
    let enc = check.encode(plain, true);
    let got = Tokens {
        ids: &enc.ids,
        pieces: &enc.pieces,
        spans: &enc.offsets,
        compare_pieces: true,
    };
    check.tokens_and_decode(plain, &got, &harness::stored_pieces, Vec::new());
    if let Some(special) = special {
        check.special_ids(special);
    }
    check.finish()
}

fn run(golden: &Golden, model: &Path, kernels: &'static Kernels, (): ()) -> Result<(), Failed> {
    check_model_sha(golden, model)?;
    let name = golden.header["name"].as_str().unwrap_or("?");
    let plain = load_one(model, kernels, false)?;
    let special = load_special(golden, model, kernels)?;
    check_cases(golden, name, MAX_REPORTED, |case, text| {
        check_case(&plain, special.as_ref(), case, text)
    })
}

fn main() {
    let args = Arguments::from_args();
    let trials = harness::tier_trials(
        &args,
        GOLDEN_DIR,
        header_config_name,
        &[(String::new(), ())],
        run,
    );
    libtest_mimic::run(&args, trials).exit();
}
