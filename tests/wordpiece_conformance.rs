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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use golden::{
    Golden, case_label, case_text, golden_files, ids_digest, json_ids, json_pieces, json_spans,
    model_path, pieces_digest, read_golden, required_tiers, sha256_hex, spans_digest,
};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use simdtok::kernels::{Kernels, Tier};
use simdtok::{Encoding, LoadOptions, Tokenizer, WordPieceAlgorithm};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/wordpiece");

/// Failing cases described in full (the count covers them all).
const MAX_REPORTED: usize = 12;

/// Tokens shown on each side of a difference.
const CONTEXT_TOKENS: usize = 3;

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
        Tokenizer::from_file_with_options(model, kernels, &options).map_err(|e| {
            format!(
                "cannot load {} with {options:?} ({} tier): {e}",
                model.display(),
                kernels.tier()
            )
        })
    };
    Ok(Tokenizers {
        plain: load_one(false)?,
        special: load_one(true)?,
    })
}

/// Token sequences as parallel slices (either side may be shorter: a digest case has only heads
/// and tails, and a broken encoder may return uneven vectors).
struct Tokens<'a> {
    ids: &'a [u32],
    pieces: &'a [String],
    spans: &'a [(u32, u32)],
}

impl Tokens<'_> {
    fn len(&self) -> usize {
        self.ids.len().max(self.pieces.len()).max(self.spans.len())
    }

    fn token(&self, k: usize) -> (Option<u32>, Option<&str>, Option<(u32, u32)>) {
        (
            self.ids.get(k).copied(),
            self.pieces.get(k).map(String::as_str),
            self.spans.get(k).copied(),
        )
    }

    /// Tokens `at - CONTEXT_TOKENS ..= at + CONTEXT_TOKENS` as `id:"piece"[begin,end]`, with `at`
    /// marked; `base` is added to the printed positions (for tails).
    fn window(&self, at: usize, base: usize) -> String {
        let lo = at.saturating_sub(CONTEXT_TOKENS);
        let hi = (at + CONTEXT_TOKENS + 1).min(self.len());
        if lo >= hi {
            return "(no token there)".into();
        }
        (lo..hi)
            .map(|k| {
                let (id, piece, span) = self.token(k);
                let id = id.map_or("?".into(), |i| i.to_string());
                let piece = piece.map_or("?".into(), |p| format!("{p:?}"));
                let span = span.map_or("[?]".into(), |(b, e)| format!("[{b},{e}]"));
                let mark = if k == at { ">>" } else { "" };
                format!("{mark}#{}:{id}:{piece}{span}", base + k)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Compares two token sequences position by position; on a difference, says which fields differ,
/// where first, and shows both sides around it with the input text there.
fn compare_tokens(
    what: &str,
    got: &Tokens,
    want: &Tokens,
    base: usize,
    text: &str,
) -> Option<String> {
    let n = got.len().max(want.len());
    let at = (0..n).find(|&k| got.token(k) != want.token(k))?;
    let mut fields = Vec::new();
    for (name, differs) in [
        ("ids", got.ids != want.ids),
        ("pieces", got.pieces != want.pieces),
        ("spans", got.spans != want.spans),
    ] {
        if differs {
            fields.push(name);
        }
    }
    let (b, e) = want
        .token(at)
        .2
        .or(got.token(at).2)
        .map_or((text.len(), text.len()), |(b, e)| (b as usize, e as usize));
    Some(format!(
        "{what}: {} differ, first at token {} (got {} tokens, want {})\n      got:  {}\n      want: {}\n      text: {}",
        fields.join("+"),
        base + at,
        got.len(),
        want.len(),
        got.window(at, base),
        want.window(at, base),
        golden::snippet(text, b, e)
    ))
}

/// Checks one case; `Err` lists what differs.
fn check_case(toks: &Tokenizers, case: &Value, text: &str) -> Result<(), String> {
    if sha256_hex(text.as_bytes()) != case["text_sha256"].as_str().unwrap() {
        return Err("the input text's sha256 differs from the golden one (corpus changed?)".into());
    }
    let mut problems = Vec::new();
    let enc: Encoding = toks.plain.encode_full(text);
    let ids_only = toks.plain.encode(text);
    if ids_only != enc.ids {
        problems.push(format!(
            "encode() and encode_full() disagree: {}",
            golden::first_difference(&ids_only, &enc.ids)
        ));
    }
    if enc.pieces.len() != enc.ids.len() || enc.offsets.len() != enc.ids.len() {
        problems.push(format!(
            "encode_full() returned {} ids, {} pieces, {} offsets",
            enc.ids.len(),
            enc.pieces.len(),
            enc.offsets.len()
        ));
    }
    let n = case["n_ids"].as_u64().unwrap() as usize;
    if enc.ids.len() != n {
        problems.push(format!("{} tokens, want {n}", enc.ids.len()));
    }
    let got = Tokens {
        ids: &enc.ids,
        pieces: &enc.pieces,
        spans: &enc.offsets,
    };
    let want_ids = case.get("ids").map(json_ids);
    if let Some(want_ids) = &want_ids {
        // Full outputs: ids, pieces and spans are all stored.
        let want_pieces = json_pieces(&case["pieces"]);
        let want_spans = json_spans(&case["spans"]);
        let want = Tokens {
            ids: want_ids,
            pieces: &want_pieces,
            spans: &want_spans,
        };
        problems.extend(compare_tokens("tokens", &got, &want, 0, text));
    } else {
        for (field, differs) in [
            (
                "ids_sha256",
                ids_digest(&enc.ids) != case["ids_sha256"].as_str().unwrap(),
            ),
            (
                "pieces_sha256",
                pieces_digest(&enc.pieces) != case["pieces_sha256"].as_str().unwrap(),
            ),
            (
                "spans_sha256",
                spans_digest(&enc.offsets) != case["spans_sha256"].as_str().unwrap(),
            ),
        ] {
            if differs {
                problems.push(format!("{field} differs"));
            }
        }
        // Heads and tails, where stored (generated and long edge inputs).
        if let Some(head) = case.get("ids_head") {
            let (ids, pieces, spans) = (
                json_ids(head),
                json_pieces(&case["pieces_head"]),
                json_spans(&case["spans_head"]),
            );
            let k = ids.len();
            let want = Tokens {
                ids: &ids,
                pieces: &pieces,
                spans: &spans,
            };
            let got = Tokens {
                ids: &enc.ids[..k.min(enc.ids.len())],
                pieces: &enc.pieces[..k.min(enc.pieces.len())],
                spans: &enc.offsets[..k.min(enc.offsets.len())],
            };
            problems.extend(compare_tokens("head", &got, &want, 0, text));
        }
        if let Some(tail) = case.get("ids_tail") {
            let (ids, pieces, spans) = (
                json_ids(tail),
                json_pieces(&case["pieces_tail"]),
                json_spans(&case["spans_tail"]),
            );
            let k = ids.len();
            let want = Tokens {
                ids: &ids,
                pieces: &pieces,
                spans: &spans,
            };
            let got = Tokens {
                ids: &enc.ids[enc.ids.len().saturating_sub(k)..],
                pieces: &enc.pieces[enc.pieces.len().saturating_sub(k)..],
                spans: &enc.offsets[enc.offsets.len().saturating_sub(k)..],
            };
            let base = n.saturating_sub(k);
            problems.extend(compare_tokens("tail", &got, &want, base, text));
        }
    }
    // decode: of the reference ids where stored (so decoding is checked on its own), else of
    // ours (equal to the reference's when the digests above match).
    let decode_ids = want_ids.as_deref().unwrap_or(&enc.ids);
    match toks.plain.decode(decode_ids) {
        Err(e) => problems.push(format!("decode failed: {e}")),
        Ok(decoded) => {
            let eq_text = case["decoded_eq_text"].as_bool().unwrap();
            if let Some(want) = case["decoded"].as_str() {
                if decoded != want {
                    let at = decoded
                        .char_indices()
                        .zip(want.chars())
                        .find(|((_, a), b)| a != b)
                        .map_or(decoded.len().min(want.len()), |((i, _), _)| i);
                    problems.push(format!(
                        "decoded differs from byte {at}: got {:?}, want {:?}",
                        golden::clip(&decoded, at),
                        golden::clip(want, at)
                    ));
                }
            } else if let Some(want) = case["decoded_sha256"].as_str() {
                if sha256_hex(decoded.as_bytes()) != want {
                    problems.push(format!(
                        "decoded digest differs ({} bytes, want {})",
                        decoded.len(),
                        case["decoded_bytes"]
                    ));
                }
            } else if eq_text && decoded != text {
                problems.push("decoded text differs from the input".into());
            }
            if (decoded == text) != eq_text {
                problems.push(format!(
                    "decode(ids) == text is {}, want {eq_text}",
                    decoded == text
                ));
            }
        }
    }
    // With [CLS] … [SEP]: both encoding paths.
    if let Some(want) = case.get("special_ids") {
        let want = json_ids(want);
        let ids = toks.special.encode(text);
        if ids != want {
            problems.push(format!(
                "special_ids (add_special_tokens: true, encode): {}",
                golden::first_difference(&ids, &want)
            ));
        }
        let full = toks.special.encode_full(text).ids;
        if full != want {
            problems.push(format!(
                "special_ids (add_special_tokens: true, encode_full): {}",
                golden::first_difference(&full, &want)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n    "))
    }
}

fn run(
    golden: &Golden,
    model: &Path,
    kernels: &'static Kernels,
    algorithm: WordPieceAlgorithm,
) -> Result<(), Failed> {
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    if sha256_hex(&bytes) != golden.header["model_sha256"].as_str().unwrap() {
        return Err(format!(
            "{}: not the model the goldens were made with",
            model.display()
        )
        .into());
    }
    let toks = load(model, &golden.header["config"], kernels, algorithm)?;
    let (mut checked, mut skipped) = (0, 0);
    let mut failures: Vec<String> = Vec::new();
    let mut per_source: HashMap<String, (usize, usize)> = HashMap::new();
    for case in &golden.cases {
        let Some(text) = case_text(case) else {
            skipped += 1;
            continue;
        };
        checked += 1;
        let source = case["corpus"].as_str().unwrap_or("edge cases").to_owned();
        let entry = per_source.entry(source).or_default();
        entry.0 += 1;
        if let Err(why) = check_case(&toks, case, &text) {
            entry.1 += 1;
            if failures.len() < MAX_REPORTED {
                failures.push(format!(
                    "  {} ({}):\n    {why}",
                    case_label(case),
                    golden::describe_input(case, &text)
                ));
            }
        }
    }
    if skipped > 0 {
        println!(
            "{}: {skipped} corpus cases skipped: ../shared/data is absent (set SIMDTOK_SHARED_DATA)",
            golden.header["name"].as_str().unwrap_or("?")
        );
    }
    let mismatched: usize = per_source.values().map(|v| v.1).sum();
    if mismatched == 0 {
        return Ok(());
    }
    let mut sources: Vec<_> = per_source.into_iter().filter(|(_, v)| v.1 > 0).collect();
    sources.sort();
    let summary: Vec<String> = sources
        .iter()
        .map(|(s, (n, bad))| format!("{s}: {bad}/{n}"))
        .collect();
    Err(format!(
        "{mismatched} of {checked} cases differ ({}); the first {}:\n{}",
        summary.join(", "),
        failures.len(),
        failures.join("\n")
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let required = required_tiers();
    let mut trials = Vec::new();
    for file in golden_files(GOLDEN_DIR) {
        let golden = Arc::new(read_golden(&file));
        let config = golden.header["name"]
            .as_str()
            .expect("header name")
            .replace(['.', '-'], "_");
        let model: Result<PathBuf, String> = model_path(&golden.header);
        for tier in Tier::ALL {
            for algorithm in [WordPieceAlgorithm::Fast, WordPieceAlgorithm::Linear] {
                let name = format!(
                    "{config}::{}::{}",
                    tier.name().replace('.', ""),
                    algorithm.name()
                );
                let golden = golden.clone();
                let trial = match (Kernels::for_tier(tier), &model) {
                    (Some(k), Ok(model)) => {
                        let model = model.clone();
                        Trial::test(name, move || run(&golden, &model, k, algorithm))
                    }
                    (None, _) if required.contains(&tier) => Trial::test(name, move || {
                        Err(
                            format!("SIMDTOK_REQUIRE_TIERS names {tier}, which cannot run here")
                                .into(),
                        )
                    }),
                    (None, _) => Trial::test(name, move || {
                        Err(format!("skipped: {tier} cannot run here").into())
                    })
                    .with_ignored_flag(true),
                    (Some(_), Err(why)) => {
                        let why = why.clone();
                        if !args.list {
                            println!("{name}: skipped: {why}");
                        }
                        Trial::test(name, move || Err(format!("skipped: {why}").into()))
                            .with_ignored_flag(true)
                    }
                };
                trials.push(trial);
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
