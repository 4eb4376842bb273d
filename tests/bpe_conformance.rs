//! Conformance with tiktoken 0.14.0 and Hugging Face `tokenizers` 0.23.3 for byte-level BPE: every
//! golden case of every configuration (tests/golden/bpe, made by gen_bpe.py), on every tier — ids
//! (`encode` and `encode_full`), byte spans, pieces (tokenizer.json configurations), the decoded
//! text and, for tokenizer.json, the ids with `add_special_tokens` must all be identical.
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

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use golden::{
    Golden, case_label, case_text, golden_files, ids_digest, json_ids, json_pieces, json_spans,
    model_path, pieces_digest, read_golden, required_tiers, sha256_hex, spans_digest,
};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use simdtok::kernels::{Kernels, Tier};
use simdtok::{Encoding, LoadOptions, Tokenizer};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/bpe");

/// Failing cases described in full (the count covers them all).
const MAX_REPORTED: usize = 12;

/// Tokens shown on each side of a difference.
const CONTEXT_TOKENS: usize = 3;

/// A trial stops after this many cases that panicked (the rest would only repeat it).
const MAX_PANICS: usize = 20;

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
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        Tokenizer::from_file_with_options(model, kernels, &options)
    }));
    match loaded {
        Ok(Ok(tok)) => Ok(tok),
        Ok(Err(e)) => Err(format!(
            "cannot load {} with {options:?} ({} tier): {e}",
            model.display(),
            kernels.tier()
        )),
        Err(panic) => Err(format!(
            "loading {} with {options:?} ({} tier) panicked: {}",
            model.display(),
            kernels.tier(),
            panic_message(&*panic)
        )),
    }
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

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// Token sequences as parallel slices (either side may be shorter: a digest case has only heads
/// and tails, and a broken encoder may return uneven vectors). `pieces` are shown in messages;
/// they are compared only when `compare_pieces` is set (tokenizer.json; for tiktoken they are the
/// text under each span, for reading only).
struct Tokens<'a> {
    ids: &'a [u32],
    pieces: &'a [String],
    spans: &'a [(u32, u32)],
}

impl Tokens<'_> {
    fn len(&self) -> usize {
        self.ids.len().max(self.spans.len())
    }

    fn key(
        &self,
        k: usize,
        compare_pieces: bool,
    ) -> (Option<u32>, Option<&str>, Option<(u32, u32)>) {
        (
            self.ids.get(k).copied(),
            if compare_pieces {
                self.pieces.get(k).map(String::as_str)
            } else {
                None
            },
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
                let id = self.ids.get(k).map_or("?".into(), |i| i.to_string());
                let piece = self.pieces.get(k).map_or("?".into(), |p| format!("{p:?}"));
                let span = self
                    .spans
                    .get(k)
                    .map_or("[?]".into(), |(b, e)| format!("[{b},{e}]"));
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
    compare_pieces: bool,
    base: usize,
    text: &str,
) -> Option<String> {
    let n = got.len().max(want.len());
    let at = (0..n).find(|&k| got.key(k, compare_pieces) != want.key(k, compare_pieces))?;
    let mut fields = Vec::new();
    for (name, differs) in [
        ("ids", got.ids != want.ids),
        ("pieces", compare_pieces && got.pieces != want.pieces),
        ("spans", got.spans != want.spans),
    ] {
        if differs {
            fields.push(name);
        }
    }
    let (b, e) = want
        .spans
        .get(at)
        .or(got.spans.get(at))
        .map_or((text.len(), text.len()), |&(b, e)| (b as usize, e as usize));
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
    if sha256_hex(text.as_bytes()) != case["text_sha256"].as_str().unwrap() {
        return Err("the input text's sha256 differs from the golden one (corpus changed?)".into());
    }
    let compare_pieces = family == Family::Tokenizers;
    let mut problems = Vec::new();
    let enc: Encoding = toks.plain.encode_full(text);
    let ids_only = toks.plain.encode(text);
    if ids_only != enc.ids {
        problems.push(format!(
            "encode() and encode_full() disagree: {}",
            golden::first_difference(&ids_only, &enc.ids)
        ));
    }
    if enc.offsets.len() != enc.ids.len() || (compare_pieces && enc.pieces.len() != enc.ids.len()) {
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
    };
    let want_ids = case.get("ids").map(json_ids);
    if let Some(want_ids) = &want_ids {
        // Full outputs: ids, pieces and spans are all stored.
        let want_spans = json_spans(&case["spans"]);
        let pieces = want_pieces(case, family, "pieces");
        if family == Family::Tiktoken {
            // The golden itself: tiktoken's token bytes are the text under its spans.
            let under: Vec<String> = want_spans
                .iter()
                .map(|&(b, e)| hex(&text.as_bytes()[b as usize..e as usize]))
                .collect();
            if under != json_pieces(&case["pieces_hex"]) {
                problems.push("golden file: pieces_hex are not the text under the spans".into());
            }
            // And ours: the bytes of each id.
            let ours: Vec<String> = enc
                .ids
                .iter()
                .map(|&id| toks.plain.token_bytes(id).map_or("<none>".into(), hex))
                .collect();
            if ours != json_pieces(&case["pieces_hex"]) {
                problems.push(format!(
                    "token_bytes of the ids are not pieces_hex: {}",
                    golden::first_difference(&ours, &json_pieces(&case["pieces_hex"]))
                ));
            }
        }
        let want = Tokens {
            ids: want_ids,
            pieces: &pieces,
            spans: &want_spans,
        };
        problems.extend(compare_tokens(
            "tokens",
            &got,
            &want,
            compare_pieces,
            0,
            text,
        ));
    } else {
        let mut digests = vec![
            (
                "ids_sha256",
                ids_digest(&enc.ids) != case["ids_sha256"].as_str().unwrap(),
            ),
            (
                "spans_sha256",
                spans_digest(&enc.offsets) != case["spans_sha256"].as_str().unwrap(),
            ),
        ];
        if compare_pieces {
            digests.push((
                "pieces_sha256",
                pieces_digest(&enc.pieces) != case["pieces_sha256"].as_str().unwrap(),
            ));
        }
        if family == Family::Tiktoken {
            // The bytes of each id, in tiktoken's digest of its `decode_tokens_bytes`.
            let ours: Vec<String> = enc
                .ids
                .iter()
                .map(|&id| toks.plain.token_bytes(id).map_or("<none>".into(), hex))
                .collect();
            digests.push((
                "pieces_hex_sha256",
                pieces_digest(&ours) != case["pieces_hex_sha256"].as_str().unwrap(),
            ));
        }
        for (field, differs) in digests {
            if differs {
                problems.push(format!("{field} differs"));
            }
        }
        // Heads and tails, where stored (generated and long edge inputs).
        if let Some(head) = case.get("ids_head") {
            let ids = json_ids(head);
            let (pieces, spans) = (
                want_pieces(case, family, "pieces_head"),
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
                pieces: &got_pieces[..k.min(got_pieces.len())],
                spans: &enc.offsets[..k.min(enc.offsets.len())],
            };
            problems.extend(compare_tokens("head", &got, &want, compare_pieces, 0, text));
        }
        if let Some(tail) = case.get("ids_tail") {
            let ids = json_ids(tail);
            let (pieces, spans) = (
                want_pieces(case, family, "pieces_tail"),
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
                pieces: &got_pieces[got_pieces.len().saturating_sub(k)..],
                spans: &enc.offsets[enc.offsets.len().saturating_sub(k)..],
            };
            let base = n.saturating_sub(k);
            problems.extend(compare_tokens(
                "tail",
                &got,
                &want,
                compare_pieces,
                base,
                text,
            ));
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
    // tokenizer.json with add_special_tokens: both encoding paths.
    if let (Some(want), Some(special)) = (case.get("special_ids"), &toks.special) {
        let want = json_ids(want);
        let ids = special.encode(text);
        if ids != want {
            problems.push(format!(
                "special_ids (add_special_tokens: true, encode): {}",
                golden::first_difference(&ids, &want)
            ));
        }
        let full = special.encode_full(text).ids;
        if full != want {
            problems.push(format!(
                "special_ids (add_special_tokens: true, encode_full): {}",
                golden::first_difference(&full, &want)
            ));
        }
    }
    // tiktoken's `encode(text, allowed_special="all")`, for texts holding a special token.
    if let Some(allow) = &toks.allow_special {
        let got = allow.encode(text);
        if let Some(want) = case.get("allowed_special_ids") {
            let want = json_ids(want);
            if got != want {
                problems.push(format!(
                    "allowed_special_ids (allow_special: true): {}",
                    golden::first_difference(&got, &want)
                ));
            }
        } else if let Some(want) = case.get("allowed_special_ids_sha256") {
            if ids_digest(&got) != want.as_str().unwrap() {
                problems.push("allowed_special_ids_sha256 (allow_special: true) differs".into());
            }
        } else if got != enc.ids {
            // No special token string in the text: recognising them changes nothing.
            problems.push(format!(
                "allow_special: true changed a text without special tokens: {}",
                golden::first_difference(&got, &enc.ids)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n    "))
    }
}

/// The model file and, for GPT-2, the vocab.bpe beside it must be those of the goldens.
fn check_model_files(golden: &Golden, model: &Path) -> Result<(), String> {
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    if sha256_hex(&bytes) != golden.header["model_sha256"].as_str().unwrap() {
        return Err(format!(
            "{}: not the model the goldens were made with",
            model.display()
        ));
    }
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

fn run(golden: &Golden, model: &Path, kernels: &'static Kernels) -> Result<(), Failed> {
    check_model_files(golden, model)?;
    let name = golden.header["name"].as_str().unwrap_or("?");
    let family = family(&golden.header);
    let (toks, note) = load(golden, model, kernels)?;
    if let Some(note) = note {
        println!("{name}: {note}");
    }
    let (mut checked, mut skipped, mut panics) = (0, 0, 0);
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
        let result = catch_unwind(AssertUnwindSafe(|| check_case(&toks, family, case, &text)))
            .unwrap_or_else(|panic| {
                panics += 1;
                Err(format!("panicked: {}", panic_message(&*panic)))
            });
        if let Err(why) = result {
            entry.1 += 1;
            if failures.len() < MAX_REPORTED {
                failures.push(format!(
                    "  {} ({}):\n    {why}",
                    case_label(case),
                    golden::describe_input(case, &text)
                ));
            }
        }
        if panics >= MAX_PANICS {
            failures.push(format!(
                "  stopped after {MAX_PANICS} cases that panicked ({checked} of {} cases run)",
                golden.cases.len()
            ));
            break;
        }
    }
    if skipped > 0 {
        println!(
            "{name}: {skipped} corpus cases skipped: ../shared/data is absent (set SIMDTOK_SHARED_DATA)"
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
            let name = format!("{config}::{}", tier.name().replace('.', ""));
            let golden = golden.clone();
            let trial = match (Kernels::for_tier(tier), &model) {
                (Some(k), Ok(model)) => {
                    let model = model.clone();
                    Trial::test(name, move || run(&golden, &model, k))
                }
                (None, _) if required.contains(&tier) => Trial::test(name, move || {
                    Err(format!("SIMDTOK_REQUIRE_TIERS names {tier}, which cannot run here").into())
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
    libtest_mimic::run(&args, trials).exit();
}
