//! Reading the golden files of tests/golden (format: tests/golden/README.md) and rebuilding their
//! inputs; shared by the conformance tests (`#[path = "common/golden.rs"] mod golden;`).

// Each test uses a different subset.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sha2::{Digest, Sha256};
use simdtok::kernels::Tier;

/// `$SIMDTOK_SHARED_DATA`, else `<repo>/../shared/data`, if it exists.
pub fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    dir.is_dir().then_some(dir)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub struct Golden {
    pub header: Value,
    pub cases: Vec<Value>,
}

/// The header of a golden file (its first line) alone: the rest is not decompressed.
pub fn read_header(path: &Path) -> Value {
    use std::io::BufRead;
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut line = Vec::new();
    std::io::BufReader::new(flate2::read::GzDecoder::new(file))
        .read_until(b'\n', &mut line)
        .unwrap_or_else(|e| panic!("{}: gzip: {e}", path.display()));
    serde_json::from_slice(&line).unwrap_or_else(|e| panic!("{}: header: {e}", path.display()))
}

/// A golden file read when its first trial runs and dropped when its last is done: held all at
/// once, the parsed goldens took 6.6 GB (bpe alone), and reading them before the first trial
/// took 19 s of every run of the test binary, filtered or not.
pub struct LazyGolden {
    path: PathBuf,
    /// Trials still to use it, and the file once read.
    state: Mutex<(usize, Option<Arc<Golden>>)>,
}

impl LazyGolden {
    /// The file at `path`, for `uses` trials.
    pub fn new(path: PathBuf, uses: usize) -> LazyGolden {
        LazyGolden {
            path,
            state: Mutex::new((uses, None)),
        }
    }

    /// Runs `f` on the file (read by the first caller; a concurrent one waits for it), then
    /// counts one use: after the last, the file is dropped.
    pub fn with<T>(&self, f: impl FnOnce(&Golden) -> T) -> T {
        let golden = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(
                state
                    .1
                    .get_or_insert_with(|| Arc::new(read_golden(&self.path))),
            )
        };
        // Counted even when `f` panics, so that a failing trial does not keep the file.
        struct Done<'a>(&'a LazyGolden);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
                state.0 = state.0.saturating_sub(1);
                if state.0 == 0 {
                    state.1 = None;
                }
            }
        }
        let _done = Done(self);
        f(&golden)
    }
}

pub fn read_golden(path: &Path) -> Golden {
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
    let cases: Vec<Value> = lines.collect();
    if let Some(n) = header["n_cases"].as_u64() {
        assert_eq!(
            cases.len() as u64,
            n,
            "{}: n_cases says {n}, the file has {} cases",
            path.display(),
            cases.len()
        );
    }
    Golden { header, cases }
}

/// The golden files (`*.jsonl.gz`) of one directory, sorted.
pub fn golden_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.gz"))
        .collect();
    files.sort();
    files
}

/// Where the model of a golden file is, if available here.
pub fn model_path(header: &Value) -> Result<PathBuf, String> {
    location_path(header["model_location"].as_str().expect("model_location"))
}

/// The file a golden's location names (`repo:PATH` in the repository, `shared:PATH` in
/// `../shared/data`, `local:PATH` in the repository's tree but not committed: made by a script,
/// absent until it runs), if available here.
pub fn location_path(location: &str) -> Result<PathBuf, String> {
    if let Some(rel) = location.strip_prefix("repo:") {
        return Ok(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel));
    }
    if let Some(rel) = location.strip_prefix("local:") {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        return if path.exists() {
            Ok(path)
        } else {
            Err(format!(
                "{rel} is absent (not committed: scripts/make-unigram-tokenizer-json.py makes it \
                 from ../shared/data)"
            ))
        };
    }
    let rel = location.strip_prefix("shared:").expect("repo: or shared:");
    let data = shared_data().ok_or_else(|| {
        format!("{rel} is in ../shared/data, which is absent (set SIMDTOK_SHARED_DATA)")
    })?;
    Ok(data.join(rel))
}

/// The lines of one corpus file.
pub type Lines = Arc<Vec<Vec<u8>>>;

/// The corpus files' lines, read once per process.
pub fn corpus_lines(name: &str) -> Option<Lines> {
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
    let lines = Arc::new(lines);
    cache.insert(name.to_owned(), lines.clone());
    Some(lines)
}

/// The input text of a case, or `None` when its corpus is not available here.
pub fn case_text(case: &Value) -> Option<String> {
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

/// SHA-256 of the ids in decimal, joined by spaces (as the golden scripts write them). Written
/// into one buffer: a `String` per id was a tenth of the conformance tests' time.
pub fn ids_digest(ids: &[u32]) -> String {
    let mut text = Vec::with_capacity(ids.len() * 6);
    let mut digits = itoa::Buffer::new();
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            text.push(b' ');
        }
        text.extend_from_slice(digits.format(id).as_bytes());
    }
    sha256_hex(&text)
}

pub fn pieces_digest(pieces: &[String]) -> String {
    let mut bytes = Vec::new();
    for p in pieces {
        bytes.extend_from_slice(p.as_bytes());
        bytes.push(0xFF);
    }
    sha256_hex(&bytes)
}

/// SHA-256 of the spans as `begin,end`, joined by spaces (one buffer, as [`ids_digest`]).
pub fn spans_digest(spans: &[(u32, u32)]) -> String {
    let mut text = Vec::with_capacity(spans.len() * 12);
    let mut digits = itoa::Buffer::new();
    for (i, &(b, e)) in spans.iter().enumerate() {
        if i > 0 {
            text.push(b' ');
        }
        text.extend_from_slice(digits.format(b).as_bytes());
        text.push(b',');
        text.extend_from_slice(digits.format(e).as_bytes());
    }
    sha256_hex(&text)
}

pub fn json_ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("ids")
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

pub fn json_pieces(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("pieces")
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

pub fn json_spans(v: &Value) -> Vec<(u32, u32)> {
    v.as_array()
        .expect("spans")
        .iter()
        .map(|x| (x[0].as_u64().unwrap() as u32, x[1].as_u64().unwrap() as u32))
        .collect()
}

/// The first difference between two sequences, for messages.
pub fn first_difference<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T]) -> String {
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

/// `corpus:[s, e]` or `edge:<name>`.
pub fn case_label(case: &Value) -> String {
    match case["source"].as_str() {
        Some("corpus") => format!("{}:{}", case["corpus"].as_str().unwrap(), case["lines"]),
        _ => format!("edge:{}", case["name"].as_str().unwrap_or("?")),
    }
}

/// The tiers `SIMDTOK_REQUIRE_TIERS` names: a trial for one of them fails (not skips) when the
/// CPU lacks it.
pub fn required_tiers() -> Vec<Tier> {
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

/// `text` around bytes `begin..end`, widened by up to 24 bytes each side (on char boundaries).
pub fn snippet(text: &str, begin: usize, end: usize) -> String {
    let mut lo = begin.min(text.len()).saturating_sub(24);
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = end
        .clamp(begin.min(text.len()), text.len())
        .saturating_add(24);
    hi = hi.min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    format!("bytes {lo}..{hi}: {:?}", &text[lo..hi])
}

/// Up to 60 bytes of `s` from byte `at` (on char boundaries), with 20 before it.
pub fn clip(s: &str, at: usize) -> &str {
    let mut lo = at.min(s.len()).saturating_sub(20);
    while !s.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (at + 60).min(s.len());
    while !s.is_char_boundary(hi) {
        hi += 1;
    }
    &s[lo..hi]
}

/// The input shown in a failure message: the text itself when short, else its length.
pub fn describe_input(case: &Value, text: &str) -> String {
    if case.get("text").is_some() && text.len() <= 120 {
        format!("{text:?}")
    } else {
        format!("{} bytes", text.len())
    }
}
