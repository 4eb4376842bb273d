//! Conformance with tiktoken 0.14.0 and Hugging Face `tokenizers` 0.23.3 for byte-level BPE (and
//! the SentencePiece-style and character-level `tokenizer.json` BPE files, the latter and the
//! Gemma-layout `gemma-1k*` ones made with 0.23.2): every golden case of every configuration (tests/golden/bpe, made by gen_bpe.py), on
//! every tier — ids (`encode` and `encode_full`), byte spans, pieces (tokenizer.json
//! configurations), the decoded text and, for tokenizer.json, the ids with `add_special_tokens`
//! must all be identical. The `*-dup-merges` configurations (their tokenizer.json files beside
//! their goldens, made by tests/golden/bpe/make_dup_merges_tokenizers.py) list many merges more
//! than once: the reference ranks such a pair at its last place.
//!
//! Test names read `<config>::<tier>`. A tier the CPU lacks is reported as ignored (and fails under
//! SIMDTOK_REQUIRE_TIERS, as in the kernel tests). The tiktoken rank files and the tokenizer.json
//! files are read from `../shared/data` (or `$SIMDTOK_SHARED_DATA`); without it those
//! configurations are skipped with a message, and for `gpt2` (in the repository) only the edge
//! cases run.
//!
//! Configurations are told apart by their header: `"tiktoken"` (rank files and GPT-2's
//! encoder.json, reference `encode_ordinary`) or `"tokenizers"` (tokenizer.json).

#[path = "common/golden.rs"]
mod golden;
#[path = "common/harness.rs"]
mod harness;

use std::path::Path;

use golden::{Golden, first_difference, ids_digest, json_ids, json_pieces, json_spans, sha256_hex};
use harness::{
    CaseCheck, Tokens, check_cases, check_model_sha, header_config_name, load_tokenizer,
};
use libtest_mimic::{Arguments, Failed};
use serde_json::Value;
use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/bpe");

/// Failing cases described in full (the count covers them all).
const MAX_REPORTED: usize = 12;

/// Which reference made a golden file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// tiktoken `encode_ordinary`: pieces are bytes (`pieces_hex`), spans are contiguous.
    Tiktoken,
    /// Hugging Face tokenizers: pieces are `enc.tokens`, `special_ids` for edge cases.
    Tokenizers,
}

fn family(header: &Value) -> Family {
    if header.get("tiktoken").is_some() {
        Family::Tiktoken
    } else {
        Family::Tokenizers
    }
}

/// The tokenizers a trial checks: without special tokens (ids, pieces, spans, decode) and, for
/// tokenizer.json, with them (`special_ids`); for tiktoken, with special tokens recognised in
/// the text (`allowed_special_ids`).
struct Tokenizers {
    plain: Tokenizer,
    special: Option<Tokenizer>,
    allow_special: Option<Tokenizer>,
}

fn load_one(
    model: &Path,
    kernels: &'static Kernels,
    add_special_tokens: bool,
    allow_special: bool,
) -> Result<Tokenizer, String> {
    let options = LoadOptions {
        add_special_tokens,
        allow_special,
        ..LoadOptions::default()
    };
    load_tokenizer(model, kernels, &options)
}

/// Loads the tokenizers of a configuration. With `add_special_tokens: true`, a model whose
/// post-processor adds nothing (every `special_ids` equals `ids`: all but llama2 here) may be
/// refused; then `special_ids` are not checked, and a note says so.
fn load(
    golden: &Golden,
    model: &Path,
    kernels: &'static Kernels,
) -> Result<(Tokenizers, Option<String>), String> {
    let plain = load_one(model, kernels, false, false)?;
    if family(&golden.header) == Family::Tiktoken {
        return Ok((
            Tokenizers {
                plain,
                special: None,
                allow_special: Some(load_one(model, kernels, false, true)?),
            },
            None,
        ));
    }
    match load_one(model, kernels, true, false) {
        Ok(special) => Ok((
            Tokenizers {
                plain,
                special: Some(special),
                allow_special: None,
            },
            None,
        )),
        Err(why) => {
            let adds_nothing = golden
                .cases
                .iter()
                .filter(|c| c.get("special_ids").is_some())
                .all(|c| c["special_ids"] == c["ids"]);
            if adds_nothing {
                let note = format!(
                    "special_ids not checked: add_special_tokens refused ({why}); the reference \
                     adds nothing for this model"
                );
                Ok((
                    Tokenizers {
                        plain,
                        special: None,
                        allow_special: None,
                    },
                    Some(note),
                ))
            } else {
                Err(why)
            }
        }
    }
}

/// The text under each span, for messages (tiktoken pieces are bytes, often not UTF-8).
fn span_texts(text: &str, spans: &[(u32, u32)]) -> Vec<String> {
    spans
        .iter()
        .map(|&(b, e)| {
            text.as_bytes()
                .get(b as usize..e as usize)
                .map_or("<span out of range>".into(), |s| {
                    String::from_utf8_lossy(s).into_owned()
                })
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The pieces stored for a case and the hex-decoded form of tiktoken's, for messages.
fn want_pieces(case: &Value, family: Family, field: &str) -> Vec<String> {
    match family {
        Family::Tokenizers => json_pieces(&case[field]),
        Family::Tiktoken => json_pieces(&case[field.replace("pieces", "pieces_hex")])
            .iter()
            .map(|h| {
                let bytes: Vec<u8> = (0..h.len() / 2)
                    .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap_or(b'?'))
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .collect(),
    }
}

/// Checks one case; `Err` lists what differs.
fn check_case(toks: &Tokenizers, family: Family, case: &Value, text: &str) -> Result<(), String> {
    let mut check = CaseCheck::new(case, text)?;
    let compare_pieces = family == Family::Tokenizers;
    let enc = check.encode(&toks.plain, compare_pieces);
    // Pieces as compared (tokenizer.json) or as shown (tiktoken: the text under our spans).
    let got_pieces = if compare_pieces {
        enc.pieces.clone()
    } else {
        span_texts(text, &enc.offsets)
    };
    let got = Tokens {
        ids: &enc.ids,
        pieces: &got_pieces,
        spans: &enc.offsets,
        compare_pieces,
    };
    let mut extra_digests = Vec::new();
    if family == Family::Tiktoken {
        // The bytes of each id: in full, they are pieces_hex; else tiktoken's digest of its
        // `decode_tokens_bytes`.
        let ours: Vec<String> = enc
            .ids
            .iter()
            .map(|&id| toks.plain.token_bytes(id).map_or("<none>".into(), hex))
            .collect();
        if case.get("ids").is_some() {
            let want_hex = json_pieces(&case["pieces_hex"]);
            // The golden itself: tiktoken's token bytes are the text under its spans.
            let under: Vec<String> = json_spans(&case["spans"])
                .iter()
                .map(|&(b, e)| hex(&text.as_bytes()[b as usize..e as usize]))
                .collect();
            if under != want_hex {
                check
                    .problems
                    .push("golden file: pieces_hex are not the text under the spans".into());
            }
            // And ours.
            if ours != want_hex {
                check.problems.push(format!(
                    "token_bytes of the ids are not pieces_hex: {}",
                    first_difference(&ours, &want_hex)
                ));
            }
        } else {
            extra_digests.push((
                "pieces_hex_sha256",
                golden::pieces_digest(&ours) != case["pieces_hex_sha256"].as_str().unwrap(),
            ));
        }
    }
    let stored = |case: &Value, field: &str| want_pieces(case, family, field);
    check.tokens_and_decode(&toks.plain, &got, &stored, extra_digests);
    // tokenizer.json with add_special_tokens: both encoding paths.
    if let Some(special) = &toks.special {
        check.special_ids(special);
    }
    // tiktoken's `encode(text, allowed_special="all")`, for texts holding a special token.
    if let Some(allow) = &toks.allow_special {
        let got = allow.encode(text);
        if let Some(want) = case.get("allowed_special_ids") {
            let want = json_ids(want);
            if got != want {
                check.problems.push(format!(
                    "allowed_special_ids (allow_special: true): {}",
                    first_difference(&got, &want)
                ));
            }
        } else if let Some(want) = case.get("allowed_special_ids_sha256") {
            if ids_digest(&got) != want.as_str().unwrap() {
                check
                    .problems
                    .push("allowed_special_ids_sha256 (allow_special: true) differs".into());
            }
        } else if got != enc.ids {
            // No special token string in the text: recognising them changes nothing.
            check.problems.push(format!(
                "allow_special: true changed a text without special tokens: {}",
                first_difference(&got, &enc.ids)
            ));
        }
    }
    check.finish()
}

/// The model file and, for GPT-2, the vocab.bpe beside it must be those of the goldens.
fn check_model_files(golden: &Golden, model: &Path) -> Result<(), String> {
    check_model_sha(golden, model)?;
    if let Some(want) = golden.header["vocab_bpe_sha256"].as_str() {
        let merges = model.with_file_name("vocab.bpe");
        let bytes = std::fs::read(&merges).map_err(|e| format!("{}: {e}", merges.display()))?;
        if sha256_hex(&bytes) != want {
            return Err(format!(
                "{}: not the merges the goldens were made with",
                merges.display()
            ));
        }
    }
    Ok(())
}

fn run(golden: &Golden, model: &Path, kernels: &'static Kernels, (): ()) -> Result<(), Failed> {
    check_model_files(golden, model)?;
    let name = golden.header["name"].as_str().unwrap_or("?");
    let family = family(&golden.header);
    let (toks, note) = load(golden, model, kernels)?;
    if let Some(note) = note {
        println!("{name}: {note}");
    }
    check_cases(golden, name, MAX_REPORTED, |case, text| {
        check_case(&toks, family, case, text)
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
