//! What the three conformance harnesses (spm, wordpiece, bpe) share: one libtest-mimic trial per
//! golden file × tier (× variant), the loop over a file's cases with its failure summary, and the
//! checks of one case (ids, pieces, spans, decoded text, special ids). Included after
//! `golden.rs`:
//!
//! ```ignore
//! #[path = "common/golden.rs"]
//! mod golden;
//! #[path = "common/harness.rs"]
//! mod harness;
//! ```

// Each test uses a different subset.
#![allow(dead_code)]

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use simdtok::kernels::{Kernels, Tier};
use simdtok::{Encoding, LoadOptions, Tokenizer};

use crate::golden::{
    self, Golden, LazyGolden, case_label, case_text, first_difference, golden_files, ids_digest,
    json_ids, json_pieces, json_spans, model_path, pieces_digest, read_header, required_tiers,
    sha256_hex, spans_digest,
};

/// Tokens shown on each side of a difference.
pub const CONTEXT_TOKENS: usize = 3;

/// A trial stops after this many cases that panicked (the rest would only repeat it).
pub const MAX_PANICS: usize = 20;

/// The trials of every golden file of `dir`: one per tier of [`Tier::ALL`] and per variant, named
/// `<config>::<tier><suffix>` (`config` from `config_name`, `suffix` from `variants`; give one
/// variant with an empty suffix for none). A trial runs `run` with the tier's kernels and the
/// model; a tier the CPU lacks is ignored, or fails when `SIMDTOK_REQUIRE_TIERS` names it; a model
/// not available here is ignored with a message.
pub fn tier_trials<V: Copy + Send + 'static>(
    args: &Arguments,
    dir: &str,
    config_name: fn(&Path, &Value) -> String,
    variants: &[(String, V)],
    run: fn(&Golden, &Path, &'static Kernels, V) -> Result<(), Failed>,
) -> Vec<Trial> {
    let required = required_tiers();
    let mut trials = Vec::new();
    for file in golden_files(dir) {
        let header = read_header(&file);
        let config = config_name(&file, &header);
        let model: Result<PathBuf, String> = model_path(&header);
        // The trials that read the file (tiers this CPU has, when the model is here), so that
        // the last of them drops it.
        let runnable = Tier::ALL
            .iter()
            .filter(|&&t| Kernels::for_tier(t).is_some())
            .count()
            * variants.len();
        let golden = Arc::new(LazyGolden::new(
            file.clone(),
            if model.is_ok() { runnable } else { 0 },
        ));
        for tier in Tier::ALL {
            for (suffix, variant) in variants {
                let variant = *variant;
                let name = format!("{config}::{}{suffix}", tier.name().replace('.', ""));
                let trial = match (Kernels::for_tier(tier), &model) {
                    (Some(k), Ok(model)) => {
                        let model = model.clone();
                        let golden = Arc::clone(&golden);
                        Trial::test(name, move || {
                            golden.with(|golden| run(golden, &model, k, variant))
                        })
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
    trials
}

/// `config_name` for [`tier_trials`]: the header's `name`, with `.` and `-` made `_`.
pub fn header_config_name(_file: &Path, header: &Value) -> String {
    header["name"]
        .as_str()
        .expect("header name")
        .replace(['.', '-'], "_")
}

/// The model file must be the one the goldens were made with.
pub fn check_model_sha(golden: &Golden, model: &Path) -> Result<(), String> {
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    if sha256_hex(&bytes) != golden.header["model_sha256"].as_str().unwrap() {
        return Err(format!(
            "{}: not the model the goldens were made with",
            model.display()
        ));
    }
    Ok(())
}

pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// Loads a model; an error or a panic is an `Err` that names the model, options and tier.
pub fn load_tokenizer(
    model: &Path,
    kernels: &'static Kernels,
    options: &LoadOptions,
) -> Result<Tokenizer, String> {
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        Tokenizer::from_file_with_options(model, kernels, options)
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

/// Runs `check` on every case of `golden` whose input is available (the others are counted and
/// reported as skipped, under `name`). A case that panics fails; the trial stops after
/// [`MAX_PANICS`] of them. `Err` gives the failing cases per source and the first `max_reported`
/// in full.
pub fn check_cases(
    golden: &Golden,
    name: &str,
    max_reported: usize,
    check: impl Fn(&Value, &str) -> Result<(), String>,
) -> Result<(), Failed> {
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
        let result =
            catch_unwind(AssertUnwindSafe(|| check(case, &text))).unwrap_or_else(|panic| {
                panics += 1;
                Err(format!("panicked: {}", panic_message(&*panic)))
            });
        if let Err(why) = result {
            entry.1 += 1;
            if failures.len() < max_reported {
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

/// Token sequences as parallel slices (either side may be shorter: a digest case has only heads
/// and tails, and a broken encoder may return uneven vectors). `pieces` are always shown in
/// messages, compared only when `compare_pieces` is set (else they are for reading only).
pub struct Tokens<'a> {
    pub ids: &'a [u32],
    pub pieces: &'a [String],
    pub spans: &'a [(u32, u32)],
    pub compare_pieces: bool,
}

impl Tokens<'_> {
    fn len(&self) -> usize {
        let n = self.ids.len().max(self.spans.len());
        if self.compare_pieces {
            n.max(self.pieces.len())
        } else {
            n
        }
    }

    fn key(&self, k: usize) -> (Option<u32>, Option<&str>, Option<(u32, u32)>) {
        (
            self.ids.get(k).copied(),
            if self.compare_pieces {
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

    /// The first `k` tokens (or all, if fewer).
    fn head(&self, k: usize) -> Self {
        Tokens {
            ids: &self.ids[..k.min(self.ids.len())],
            pieces: &self.pieces[..k.min(self.pieces.len())],
            spans: &self.spans[..k.min(self.spans.len())],
            compare_pieces: self.compare_pieces,
        }
    }

    /// The last `k` tokens (or all, if fewer).
    fn tail(&self, k: usize) -> Self {
        Tokens {
            ids: &self.ids[self.ids.len().saturating_sub(k)..],
            pieces: &self.pieces[self.pieces.len().saturating_sub(k)..],
            spans: &self.spans[self.spans.len().saturating_sub(k)..],
            compare_pieces: self.compare_pieces,
        }
    }
}

/// Compares two token sequences position by position; on a difference, says which fields differ,
/// where first, and shows both sides around it with the input text there. Pieces are compared
/// when `want.compare_pieces` is set.
pub fn compare_tokens(
    what: &str,
    got: &Tokens,
    want: &Tokens,
    base: usize,
    text: &str,
) -> Option<String> {
    let compare_pieces = want.compare_pieces;
    let got = Tokens {
        compare_pieces,
        ..*got
    };
    let n = got.len().max(want.len());
    let at = (0..n).find(|&k| got.key(k) != want.key(k))?;
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

/// The checks of one case, gathering what differs.
pub struct CaseCheck<'a> {
    pub case: &'a Value,
    pub text: &'a str,
    pub problems: Vec<String>,
}

impl<'a> CaseCheck<'a> {
    /// Fails at once when the input text is not the one the golden was made from.
    pub fn new(case: &'a Value, text: &'a str) -> Result<Self, String> {
        if sha256_hex(text.as_bytes()) != case["text_sha256"].as_str().unwrap() {
            return Err(
                "the input text's sha256 differs from the golden one (corpus changed?)".into(),
            );
        }
        Ok(CaseCheck {
            case,
            text,
            problems: Vec::new(),
        })
    }

    /// `Err` lists what differs.
    pub fn finish(self) -> Result<(), String> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(self.problems.join("\n    "))
        }
    }

    /// The case's `n_ids`.
    pub fn n_ids(&self) -> usize {
        self.case["n_ids"].as_u64().unwrap() as usize
    }

    /// Encodes the text with `encode_full` and checks that `encode` agrees, that there are as
    /// many offsets (and, with `with_pieces`, pieces) as ids and `n_ids` of them.
    pub fn encode(&mut self, tok: &Tokenizer, with_pieces: bool) -> Encoding {
        let enc: Encoding = tok.encode_full(self.text);
        let ids_only = tok.encode(self.text);
        if ids_only != enc.ids {
            self.problems.push(format!(
                "encode() and encode_full() disagree: {}",
                first_difference(&ids_only, &enc.ids)
            ));
        }
        if enc.offsets.len() != enc.ids.len() || (with_pieces && enc.pieces.len() != enc.ids.len())
        {
            self.problems.push(format!(
                "encode_full() returned {} ids, {} pieces, {} offsets",
                enc.ids.len(),
                enc.pieces.len(),
                enc.offsets.len()
            ));
        }
        let n = self.n_ids();
        if enc.ids.len() != n {
            self.problems
                .push(format!("{} tokens, want {n}", enc.ids.len()));
        }
        enc
    }

    /// Compares `got` with the case: ids, spans and (with `got.compare_pieces`) pieces in full
    /// where stored, else their digests (`extra_digests` adds more: name and whether it differs)
    /// and the stored heads and tails. `want_pieces` reads the stored pieces of a field
    /// (`pieces`, `pieces_head`, `pieces_tail`). Returns the stored ids, if any.
    pub fn tokens(
        &mut self,
        got: &Tokens,
        want_pieces: &dyn Fn(&Value, &str) -> Vec<String>,
        extra_digests: Vec<(&str, bool)>,
    ) -> Option<Vec<u32>> {
        let (case, text) = (self.case, self.text);
        let compare_pieces = got.compare_pieces;
        let want_ids = case.get("ids").map(json_ids);
        if let Some(want_ids) = &want_ids {
            // Full outputs: ids, pieces and spans are all stored.
            let want_spans = json_spans(&case["spans"]);
            let pieces = want_pieces(case, "pieces");
            let want = Tokens {
                ids: want_ids,
                pieces: &pieces,
                spans: &want_spans,
                compare_pieces,
            };
            self.problems
                .extend(compare_tokens("tokens", got, &want, 0, text));
        }
        if want_ids.is_some() {
            return want_ids;
        }
        let mut digests = vec![
            (
                "ids_sha256",
                ids_digest(got.ids) != case["ids_sha256"].as_str().unwrap(),
            ),
            (
                "spans_sha256",
                spans_digest(got.spans) != case["spans_sha256"].as_str().unwrap(),
            ),
        ];
        if compare_pieces {
            digests.push((
                "pieces_sha256",
                pieces_digest(got.pieces) != case["pieces_sha256"].as_str().unwrap(),
            ));
        }
        digests.extend(extra_digests);
        for (field, differs) in digests {
            if differs {
                self.problems.push(format!("{field} differs"));
            }
        }
        // Heads and tails, where stored (generated and long inputs).
        for (what, ids_field, pieces_field, spans_field) in [
            ("head", "ids_head", "pieces_head", "spans_head"),
            ("tail", "ids_tail", "pieces_tail", "spans_tail"),
        ] {
            let Some(ids) = case.get(ids_field) else {
                continue;
            };
            let ids = json_ids(ids);
            let (pieces, spans) = (
                want_pieces(case, pieces_field),
                json_spans(&case[spans_field]),
            );
            let k = ids.len();
            let want = Tokens {
                ids: &ids,
                pieces: &pieces,
                spans: &spans,
                compare_pieces,
            };
            let (ours, base) = if what == "head" {
                (got.head(k), 0)
            } else {
                (got.tail(k), self.n_ids().saturating_sub(k))
            };
            self.problems
                .extend(compare_tokens(what, &ours, &want, base, text));
        }
        None
    }

    /// [`Self::tokens`], then [`Self::decode`] of the stored ids where stored (so decoding is
    /// checked on its own), else of ours (equal to the reference's when the digests match).
    pub fn tokens_and_decode(
        &mut self,
        tok: &Tokenizer,
        got: &Tokens,
        want_pieces: &dyn Fn(&Value, &str) -> Vec<String>,
        extra_digests: Vec<(&str, bool)>,
    ) {
        match self.tokens(got, want_pieces, extra_digests) {
            Some(want_ids) => self.decode(tok, &want_ids, "the stored ids"),
            None => self.decode(tok, got.ids, "our ids"),
        }
    }

    /// The checks of `tok`'s plain encoding where its pieces are compared as stored:
    /// [`Self::encode`] and [`Self::tokens_and_decode`]. Returns the encoding.
    pub fn plain(&mut self, tok: &Tokenizer) -> Encoding {
        let enc = self.encode(tok, true);
        let got = Tokens {
            ids: &enc.ids,
            pieces: &enc.pieces,
            spans: &enc.offsets,
            compare_pieces: true,
        };
        self.tokens_and_decode(tok, &got, &stored_pieces, Vec::new());
        enc
    }

    /// Decodes `ids` (`ids_are`: whose they are, for messages) and compares with `decoded`,
    /// `decoded_sha256` or the text, and `decoded_eq_text`.
    pub fn decode(&mut self, tok: &Tokenizer, ids: &[u32], ids_are: &str) {
        let (case, text) = (self.case, self.text);
        match tok.decode(ids) {
            Err(e) => self
                .problems
                .push(format!("decode of {ids_are} failed: {e}")),
            Ok(decoded) => {
                let eq_text = case["decoded_eq_text"].as_bool().unwrap();
                if let Some(want) = case["decoded"].as_str() {
                    if decoded != want {
                        let at = decoded
                            .char_indices()
                            .zip(want.chars())
                            .find(|((_, a), b)| a != b)
                            .map_or(decoded.len().min(want.len()), |((i, _), _)| i);
                        self.problems.push(format!(
                            "decoded ({ids_are}) differs from byte {at}: got {:?}, want {:?} \
                             (lengths {} / {})",
                            golden::clip(&decoded, at),
                            golden::clip(want, at),
                            decoded.len(),
                            want.len()
                        ));
                    }
                } else if let Some(want) = case["decoded_sha256"].as_str() {
                    if sha256_hex(decoded.as_bytes()) != want {
                        self.problems.push(format!(
                            "decoded ({ids_are}) digest differs ({} bytes, want {})",
                            decoded.len(),
                            case["decoded_bytes"]
                        ));
                    }
                } else if eq_text && decoded != text {
                    self.problems.push(format!(
                        "decoded ({ids_are}) differs from the input: {}",
                        first_difference(decoded.as_bytes(), text.as_bytes())
                    ));
                }
                if (decoded == text) != eq_text {
                    self.problems.push(format!(
                        "decode({ids_are}) == text is {}, want {eq_text}",
                        decoded == text
                    ));
                }
            }
        }
    }

    /// `special_ids` (with `add_special_tokens: true`), where stored: both encoding paths.
    pub fn special_ids(&mut self, special: &Tokenizer) {
        let Some(want) = self.case.get("special_ids") else {
            return;
        };
        let want = json_ids(want);
        let ids = special.encode(self.text);
        if ids != want {
            self.problems.push(format!(
                "special_ids (add_special_tokens: true, encode): {}",
                first_difference(&ids, &want)
            ));
        }
        let full = special.encode_full(self.text).ids;
        if full != want {
            self.problems.push(format!(
                "special_ids (add_special_tokens: true, encode_full): {}",
                first_difference(&full, &want)
            ));
        }
    }
}

/// `want_pieces` for [`CaseCheck::tokens`]: the stored pieces as they are.
pub fn stored_pieces(case: &Value, field: &str) -> Vec<String> {
    json_pieces(&case[field])
}
