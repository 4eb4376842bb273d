//! Conformance with `sentencepiece` 0.2.3: every golden case of every model (tests/golden/
//! sentencepiece, made by gen_sentencepiece.py), on every tier — ids, pieces, byte spans and the
//! decoded text must all be identical.
//!
//! Test names read `<model>::<tier>`. A tier the CPU lacks is reported as ignored (and fails under
//! SIMDTOK_REQUIRE_TIERS, as in the kernel tests). Models and corpora that live in
//! `../shared/data` (or `$SIMDTOK_SHARED_DATA`) are skipped with a message when it is absent.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use sha2::{Digest, Sha256};
use simdtok::Tokenizer;
use simdtok::kernels::{Kernels, Tier};

const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/sentencepiece");

fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    dir.is_dir().then_some(dir)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Golden {
    header: Value,
    cases: Vec<Value>,
}

fn read_golden(path: &Path) -> Golden {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("golden file"))
        .read_to_end(&mut raw)
        .expect("gzip");
    // Split on 0x0A only: strings may hold U+2028 and friends raw.
    let mut lines = raw
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).expect("JSON line"));
    let header = lines.next().expect("header");
    Golden {
        header,
        cases: lines.collect(),
    }
}

/// Where the model of a golden file is, if available here.
fn model_path(header: &Value) -> Result<PathBuf, String> {
    let location = header["model_location"].as_str().expect("model_location");
    if let Some(rel) = location.strip_prefix("repo:") {
        return Ok(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel));
    }
    let rel = location.strip_prefix("shared:").expect("repo: or shared:");
    let data = shared_data().ok_or_else(|| {
        format!("{rel} is in ../shared/data, which is absent (set SIMDTOK_SHARED_DATA)")
    })?;
    Ok(data.join(rel))
}

/// The lines of one corpus file.
type Lines = std::sync::Arc<Vec<Vec<u8>>>;

/// The corpus files' lines, read once per process.
fn corpus_lines(name: &str) -> Option<Lines> {
    static CACHE: Mutex<Option<HashMap<String, Lines>>> = Mutex::new(None);
    let data = shared_data()?;
    let mut cache = CACHE.lock().unwrap();
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(lines) = cache.get(name) {
        return Some(lines.clone());
    }
    let bytes = std::fs::read(data.join("corpora").join(name)).ok()?;
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if bytes.ends_with(b"\n") {
        lines.pop();
    }
    let lines = std::sync::Arc::new(lines);
    cache.insert(name.to_owned(), lines.clone());
    Some(lines)
}

/// The input text of a case, or `None` when its corpus is not available here.
fn case_text(case: &Value) -> Option<String> {
    if let Some(text) = case["text"].as_str() {
        return Some(text.to_owned());
    }
    if let Some(gen_) = case.get("gen") {
        let mut text = String::new();
        for part in gen_["parts"].as_array().expect("parts") {
            let unit = part["unit"].as_str().expect("unit");
            text.push_str(&unit.repeat(part["times"].as_u64().expect("times") as usize));
        }
        return Some(text);
    }
    let lines = corpus_lines(case["corpus"].as_str().expect("corpus"))?;
    let range = case["lines"].as_array().expect("lines");
    let (s, e) = (
        range[0].as_u64().unwrap() as usize,
        range[1].as_u64().unwrap() as usize,
    );
    Some(String::from_utf8(lines[s..e].join(&b'\n')).expect("corpus lines are UTF-8"))
}

fn ids_digest(ids: &[u32]) -> String {
    let s: Vec<String> = ids.iter().map(u32::to_string).collect();
    sha256_hex(s.join(" ").as_bytes())
}

fn pieces_digest(pieces: &[String]) -> String {
    let mut bytes = Vec::new();
    for p in pieces {
        bytes.extend_from_slice(p.as_bytes());
        bytes.push(0xFF);
    }
    sha256_hex(&bytes)
}

fn spans_digest(spans: &[(u32, u32)]) -> String {
    let s: Vec<String> = spans.iter().map(|(b, e)| format!("{b},{e}")).collect();
    sha256_hex(s.join(" ").as_bytes())
}

fn json_ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("ids")
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn json_pieces(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("pieces")
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

fn json_spans(v: &Value) -> Vec<(u32, u32)> {
    v.as_array()
        .expect("spans")
        .iter()
        .map(|x| (x[0].as_u64().unwrap() as u32, x[1].as_u64().unwrap() as u32))
        .collect()
}

/// The first difference between two sequences, for messages.
fn first_difference<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T]) -> String {
    let i = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    format!(
        "first difference at {i}: got {:?}, want {:?} (lengths {} / {})",
        &got[i.min(got.len())..(i + 3).min(got.len())],
        &want[i.min(want.len())..(i + 3).min(want.len())],
        got.len(),
        want.len()
    )
}

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

fn case_label(case: &Value) -> String {
    match case["source"].as_str() {
        Some("corpus") => format!("{}:{}", case["corpus"].as_str().unwrap(), case["lines"]),
        _ => format!("edge:{}", case["name"].as_str().unwrap_or("?")),
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

fn required_tiers() -> Vec<Tier> {
    std::env::var("SIMDTOK_REQUIRE_TIERS")
        .ok()
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().expect("SIMDTOK_REQUIRE_TIERS names tiers"))
                .collect()
        })
        .unwrap_or_default()
}

fn main() {
    let args = Arguments::from_args();
    let required = required_tiers();
    let mut files: Vec<PathBuf> = std::fs::read_dir(GOLDEN_DIR)
        .expect("tests/golden/sentencepiece")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.gz"))
        .collect();
    files.sort();
    let mut trials = Vec::new();
    for file in files {
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
