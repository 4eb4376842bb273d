//! The Python `sentencepiece` library (0.2.3 here: the version simdtok's goldens come from), timed
//! in its own process on the same texts. Not the same process as the others: its MB/s include
//! building Python lists of ids, and are only roughly comparable. `encode(texts, num_threads=1)`
//! is its cheapest id path (the C++ batch loop on one worker thread).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The interpreter: `$BENCH_PEERS_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("BENCH_PEERS_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

const SCRIPT: &str = r#"
import array, json, math, os, sys, time

def out(**kw):
    print(json.dumps(kw))
    sys.exit(0)

try:
    import sentencepiece as spm
except Exception as e:
    out(error="cannot import sentencepiece: %s" % e)

def rss():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except Exception:
        return None

mode, model = sys.argv[1], sys.argv[2]
if mode == "version":
    out(version=spm.__version__)
if mode == "load":
    loads = int(sys.argv[3])
    before = rss()
    t0 = time.perf_counter()
    kept = spm.SentencePieceProcessor(model_file=model)
    times = [time.perf_counter() - t0]
    after = rss()
    for _ in range(loads - 1):
        t0 = time.perf_counter()
        sp = spm.SentencePieceProcessor(model_file=model)
        times.append(time.perf_counter() - t0)
        del sp
    times.sort()
    n = len(times)
    med = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
    delta = after - before if before is not None and after is not None else None
    out(load_ms=med * 1e3, rss=delta)

texts_path, count, ids_path, passes, budget, limit, one = sys.argv[3:10]
sp = spm.SentencePieceProcessor(model_file=model)
with open(texts_path, "rb") as f:
    texts = f.read().decode("utf-8").split("\n")
if len(texts) != int(count):
    out(error="expected %s texts, read %d" % (count, len(texts)))
passes, budget, limit = int(passes), float(budget), float(limit)
if one == "1":
    text = texts[0]
    raw = text.encode("utf-8")
    small = raw[:16384].decode("utf-8", "ignore")
    large = raw[:65536].decode("utf-8", "ignore")
    def tm(s):
        t0 = time.perf_counter()
        sp.encode(s)
        return time.perf_counter() - t0
    tm(small)
    ts, tl = max(tm(small), 1e-9), max(tm(large), 1e-9)
    nl, ns = len(large.encode("utf-8")), len(small.encode("utf-8"))
    g = min(max(math.log(tl / ts) / math.log(nl / ns), 1.0), 3.0)
    est = tl * (len(raw) / nl) ** g
    if est > limit:
        out(skipped="one pass estimated at %.0f s (64 KiB took %.2f s, %.2f MB/s; time grows as size^%.1f)" % (est, tl, nl / tl / 1e6, g))
    run = lambda: [sp.encode(text)]
else:
    run = lambda: sp.encode(texts, num_threads=1)
t0 = time.perf_counter()
ids = run()
warm = time.perf_counter() - t0
buf = array.array("I")
for line in ids:
    buf.append(len(line))
    buf.extend(line)
with open(ids_path, "wb") as f:
    buf.tofile(f)
k = passes
if warm * passes > budget:
    k = max(1, min(passes, int(budget / warm)))
times = []
for _ in range(k):
    t0 = time.perf_counter()
    run()
    times.append(time.perf_counter() - t0)
out(warm=warm, times=times)
"#;

fn call(args: &[&std::ffi::OsStr]) -> Result<serde_json::Value, String> {
    let out = Command::new(python())
        .arg("-c")
        .arg(SCRIPT)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    let value: serde_json::Value = serde_json::from_str(line).map_err(|_| {
        format!(
            "{} failed ({}): {}",
            python(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    if let Some(e) = value.get("error").and_then(|e| e.as_str()) {
        return Err(e.to_owned());
    }
    Ok(value)
}

/// The library's version, or why it cannot be used.
pub fn version() -> Result<String, String> {
    let v = call(&["version".as_ref(), "-".as_ref()])?;
    Ok(v["version"].as_str().unwrap_or("?").to_owned())
}

/// Median load time (ms) over `loads` loads in a fresh interpreter, and the RSS growth of the first.
pub fn probe_load(model: &Path, loads: usize) -> Result<(f64, Option<i64>), String> {
    let loads = loads.to_string();
    let v = call(&["load".as_ref(), model.as_os_str(), loads.as_ref()])?;
    Ok((v["load_ms"].as_f64().unwrap_or(f64::NAN), v["rss"].as_i64()))
}

/// What one run on one input gave.
pub enum Outcome {
    /// Seconds of the timed passes, and the ids of every text.
    Done {
        times: Vec<f64>,
        ids: Vec<Vec<u32>>,
    },
    Skipped(String),
    Failed(String),
}

pub struct Limits {
    pub passes: usize,
    pub budget_s: f64,
    pub repeat_limit_s: f64,
}

/// Encodes `texts` with the model in a Python process: a warm-up pass whose ids come back, then
/// timed passes.
pub fn run(model: &Path, texts: &[&str], one_text: bool, limits: &Limits) -> Outcome {
    match run_inner(model, texts, one_text, limits) {
        Ok(o) => o,
        Err(e) => Outcome::Failed(e),
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_inner(
    model: &Path,
    texts: &[&str],
    one_text: bool,
    limits: &Limits,
) -> Result<Outcome, String> {
    let dir = TempDir(std::env::temp_dir().join(format!("bench-peers-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).map_err(|e| format!("{}: {e}", dir.0.display()))?;
    let texts_path = dir.0.join("texts.txt");
    let ids_path = dir.0.join("ids.u32");
    // Texts never hold "\n" (they are lines), so joining on it is reversible.
    std::fs::write(&texts_path, texts.join("\n")).map_err(|e| e.to_string())?;
    let args: Vec<std::ffi::OsString> = vec![
        "encode".into(),
        model.into(),
        texts_path.clone().into(),
        texts.len().to_string().into(),
        ids_path.clone().into(),
        limits.passes.to_string().into(),
        limits.budget_s.to_string().into(),
        limits.repeat_limit_s.to_string().into(),
        if one_text { "1" } else { "0" }.into(),
    ];
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let v = call(&refs)?;
    if let Some(reason) = v.get("skipped").and_then(|s| s.as_str()) {
        return Ok(Outcome::Skipped(reason.to_owned()));
    }
    let times: Vec<f64> = v["times"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_f64()).collect())
        .unwrap_or_default();
    let raw = std::fs::read(&ids_path).map_err(|e| format!("{}: {e}", ids_path.display()))?;
    let ids = counted_ids(&raw, u32::from_ne_bytes).ok_or("truncated ids from Python")?;
    if ids.len() != texts.len() {
        return Err(format!(
            "Python returned ids for {} of {} texts",
            ids.len(),
            texts.len()
        ));
    }
    Ok(Outcome::Done { times, ids })
}

/// The ids a Python child wrote as `u32`s (read with `word`): per text, its count, then its ids.
/// `None` when the last text is cut short.
pub fn counted_ids(raw: &[u8], word: fn([u8; 4]) -> u32) -> Option<Vec<Vec<u32>>> {
    let words: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| word([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut texts = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let n = words[i] as usize;
        texts.push(words.get(i + 1..i + 1 + n)?.to_vec());
        i += 1 + n;
    }
    Some(texts)
}
