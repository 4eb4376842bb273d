//! Conformance with `sentencepiece` 0.2.3: every golden case of every model (tests/golden/
//! sentencepiece, made by gen_sentencepiece.py), on every tier — ids, pieces, byte spans and the
//! decoded text must all be identical.
//!
//! Test names read `<model>::<tier>`. A tier the CPU lacks is reported as ignored (and fails under
//! SIMDTOK_REQUIRE_TIERS, as in the kernel tests). Models and corpora that live in
//! `../shared/data` (or `$SIMDTOK_SHARED_DATA`) are skipped with a message when it is absent.

#[path = "common/golden.rs"]
mod golden;

use std::collections::HashMap;
use std::path::Path;

use golden::{
    Golden, case_label, case_text, first_difference, golden_files, ids_digest, json_ids,
    json_pieces, json_spans, model_path, pieces_digest, read_golden, required_tiers, sha256_hex,
    spans_digest,
};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use simdtok::Tokenizer;
use simdtok::kernels::{Kernels, Tier};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/sentencepiece");

/// Checks one case; `Err` lists what differs.
fn check_case(tok: &Tokenizer, case: &Value, text: &str) -> Result<(), String> {
    let mut problems = Vec::new();
    if sha256_hex(text.as_bytes()) != case["text_sha256"].as_str().unwrap() {
        return Err("the input text's sha256 differs from the golden one (corpus changed?)".into());
    }
    let enc = tok.encode_full(text);
    if tok.encode(text) != enc.ids {
        problems.push("encode() and encode_full() disagree".to_owned());
    }
    let n = case["n_ids"].as_u64().unwrap() as usize;
    if enc.ids.len() != n {
        problems.push(format!("{} tokens, want {n}", enc.ids.len()));
    }
    // ids
    if let Some(want) = case.get("ids") {
        let want = json_ids(want);
        if enc.ids != want {
            problems.push(format!("ids: {}", first_difference(&enc.ids, &want)));
        }
    } else if ids_digest(&enc.ids) != case["ids_sha256"].as_str().unwrap() {
        problems.push("ids digest differs".into());
    }
    // pieces
    if let Some(want) = case.get("pieces") {
        let want = json_pieces(want);
        if enc.pieces != want {
            problems.push(format!("pieces: {}", first_difference(&enc.pieces, &want)));
        }
    } else if pieces_digest(&enc.pieces) != case["pieces_sha256"].as_str().unwrap() {
        problems.push("pieces digest differs".into());
    }
    // spans
    if let Some(want) = case.get("spans") {
        let want = json_spans(want);
        if enc.offsets != want {
            problems.push(format!("spans: {}", first_difference(&enc.offsets, &want)));
        }
    } else if spans_digest(&enc.offsets) != case["spans_sha256"].as_str().unwrap() {
        problems.push("spans digest differs".into());
    }
    for (field, ours) in [
        ("ids_head", &enc.ids[..enc.ids.len().min(50)]),
        ("ids_tail", &enc.ids[enc.ids.len().saturating_sub(50)..]),
    ] {
        if let Some(want) = case.get(field)
            && json_ids(want) != ours
        {
            problems.push(format!("{field} differs"));
        }
    }
    // decode (of our ids, which equal the reference's when the checks above pass)
    match tok.decode(&enc.ids) {
        Err(e) => problems.push(format!("decode failed: {e}")),
        Ok(decoded) => {
            let eq_text = case["decoded_eq_text"].as_bool().unwrap();
            if let Some(want) = case["decoded"].as_str() {
                if decoded != want {
                    problems.push(format!("decoded {decoded:?}, want {want:?}"));
                }
            } else if let Some(want) = case["decoded_sha256"].as_str() {
                if sha256_hex(decoded.as_bytes()) != want {
                    problems.push("decoded digest differs".into());
                }
            } else if eq_text && decoded != text {
                problems.push("decoded text differs from the input".into());
            }
            if (decoded == text) != eq_text {
                problems.push(format!(
                    "decode(encode(x)) == x is {}, want {eq_text}",
                    decoded == text
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn run(golden: &Golden, model: &Path, kernels: &'static Kernels) -> Result<(), Failed> {
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    if sha256_hex(&bytes) != golden.header["model_sha256"].as_str().unwrap() {
        return Err(format!(
            "{}: not the model the goldens were made with",
            model.display()
        )
        .into());
    }
    let tok = Tokenizer::from_file_with(model, kernels).map_err(|e| e.to_string())?;
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
        if let Err(why) = check_case(&tok, case, &text) {
            entry.1 += 1;
            if failures.len() < 15 {
                failures.push(format!("  {}: {why}", case_label(case)));
            }
        }
    }
    if skipped > 0 {
        println!(
            "{}: {skipped} corpus cases skipped: ../shared/data is absent (set SIMDTOK_SHARED_DATA)",
            model.display()
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
        "{mismatched} of {checked} cases differ ({})\n{}",
        summary.join(", "),
        failures.join("\n")
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let required = required_tiers();
    let mut trials = Vec::new();
    for file in golden_files(GOLDEN_DIR) {
        let stem = file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".jsonl.gz")
            .replace(['.', '-'], "_");
        let golden = std::sync::Arc::new(read_golden(&file));
        let model = model_path(&golden.header);
        for tier in Tier::ALL {
            let name = format!("{stem}::{}", tier.name().replace('.', ""));
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
