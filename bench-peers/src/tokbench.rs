//! `--family tokbench`: Hugging Face tokbench's protocol (github `huggingface/tokbench`,
//! `core/src/lib.rs`), the one simdtok's headline figures follow (shared/design/benchmarks.md),
//! on byte-level and SentencePiece-style BPE models × seven languages.
//!
//! - Each corpus is one string cut into chunks of [`CHUNK_BYTES`] (each cut moved forward to a
//!   character boundary), at most [`MAX_CHUNKS`] of them: tokbench's `chunk` and its driver's
//!   constants.
//! - The chunks are cut into `reps + 1` disjoint slices of `chunks / (reps + 1)` chunks each
//!   (the few chunks left over are only in the hash): slice 0 warms a freshly loaded engine and
//!   is also timed, the *cold* first slice; every timed rep encodes a slice the engine has never
//!   seen. The figure is the median over reps of seconds per byte, shown as MB/s (10^6 bytes;
//!   tokbench divides by 2^20).
//! - Load (file read + build) is timed apart, for every cell: each engine is loaded afresh for
//!   each model × corpus, so that nothing of one corpus is cached for the next.
//! - One thread: the process pins itself to one CPU (`sched_setaffinity`, inherited by every
//!   thread and child process) and sets `RAYON_NUM_THREADS=1`, `TOKENIZERS_PARALLELISM=false`.
//! - Every chunk is encoded separately (ordinary public API, no special tokens added); after the
//!   timed slices, a pass over every chunk concatenates the ids and hashes their little-endian
//!   `u32` bytes (FNV-1a 64). An engine whose hash is not the reference's is marked and never
//!   ranked. References: tiktoken-rs for rank files, `tokenizers` 0.23 for `tokenizer.json`.
//! - The Python engines (gigatoken, fastokens) run in a fresh interpreter per cell
//!   (`py/tokbench_peer.py`), on the same chunks and slices (the byte ranges are handed over, not
//!   recomputed), timed from inside Python: their call overhead is included.
//!
//! The whole matrix runs `--runs` times (engines in a rotated order each run); the report gives
//! per-cell medians, and simdtok ÷ the fastest correct peer as the median of the runs' ratios.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use crate::measure::{cpu_model, median, today};
use crate::peers::{self, Encoder, Family, Impl, ModelSpec};
use crate::report::{Notes, fmt_mbps};
use crate::{Options, matches};

/// tokbench's chunk size (its driver's `CHUNK_BYTES`, 10 KiB).
pub const CHUNK_BYTES: usize = 10 * 1024;
/// tokbench's cap on the chunks of a corpus (its driver's `MAX_CHUNKS`): at most about 1 MB of
/// each corpus is used.
pub const MAX_CHUNKS: usize = 100;
/// Timed slices per cell (tokbench's `--reps` default).
pub const DEFAULT_REPS: usize = 5;
/// Runs of the whole matrix (benchmarks.md: at least 3, per-cell medians).
pub const DEFAULT_RUNS: usize = 3;
/// The `--impls` keys of the Python engines.
pub const PYTHON_KEYS: [&str; 2] = ["gigatoken", "fastokens"];
/// The versions the protocol names (`pip install gigatoken==0.10.0 fastokens==0.3.5`).
const PYTHON_VERSIONS: [(&str, &str); 2] = [("gigatoken", "0.10.0"), ("fastokens", "0.3.5")];

/// `$SIMDTOK_BENCH_CACHE`, else `$HOME/.cache/simdtok-bench`: where the fetch scripts put what
/// shared/data lacks.
pub fn default_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("SIMDTOK_BENCH_CACHE") {
        return PathBuf::from(dir);
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/simdtok-bench")
}

// ---- the protocol's pieces ----

/// `text` cut into chunks of `chunk_bytes` bytes, each end moved forward to a character
/// boundary, at most `max_chunks` of them (tokbench's `chunk`, as byte ranges).
pub fn chunk(text: &str, chunk_bytes: usize, max_chunks: usize) -> Vec<Range<usize>> {
    assert!(chunk_bytes > 0, "chunks of no bytes");
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() && out.len() < max_chunks {
        let mut end = (start + chunk_bytes).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// The `reps + 1` slices of `chunks` chunks, as chunk index ranges: disjoint and consecutive,
/// `chunks / (reps + 1)` chunks each, from chunk 0 (the remainder, fewer than `reps + 1`
/// chunks, is in no slice). Empty when there are fewer chunks than slices (tokbench would then
/// encode some text twice; here the cell is not run).
pub fn slices(chunks: usize, reps: usize) -> Vec<Range<usize>> {
    let per = chunks / (reps + 1);
    if per == 0 {
        return Vec::new();
    }
    (0..=reps).map(|i| i * per..(i + 1) * per).collect()
}

/// FNV-1a 64, fed bytes or ids (an id as its little-endian `u32` bytes).
#[derive(Clone, Copy, Debug)]
pub struct Fnv(u64);

impl Fnv {
    pub const OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01B3;

    pub fn new() -> Fnv {
        Fnv(Fnv::OFFSET)
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(Fnv::PRIME);
        }
    }

    pub fn ids(&mut self, ids: &[u32]) {
        for id in ids {
            self.bytes(&id.to_le_bytes());
        }
    }

    pub fn finish(self) -> u64 {
        self.0
    }
}

/// The hash tokbench compares: FNV-1a 64 of the ids' little-endian `u32` bytes.
pub fn ids_hash(ids: &[u32]) -> u64 {
    let mut h = Fnv::new();
    h.ids(ids);
    h.finish()
}

// ---- corpora ----

/// Where a corpus comes from.
struct CorpusDef {
    name: &'static str,
    /// The file: under shared/data/corpora, or (`in_cache`) under the cache's `corpora/`.
    file: &'static str,
    in_cache: bool,
    what: &'static str,
}

const CORPORA: [CorpusDef; 7] = [
    CorpusDef {
        name: "english",
        file: "en_jargon_file_4.4.7.txt",
        in_cache: false,
        what: "The Jargon File 4.4.7 (modern English prose; shared/data)",
    },
    CorpusDef {
        name: "code",
        file: "code_python311_stdlib_sample.py.txt",
        in_cache: false,
        what: "CPython 3.11 standard library modules (shared/data)",
    },
    CorpusDef {
        name: "chinese",
        file: "zh-cn_debian_reference.txt",
        in_cache: false,
        what: "Debian Reference, Simplified Chinese (shared/data)",
    },
    CorpusDef {
        name: "japanese",
        file: "ja_debian_reference.txt",
        in_cache: false,
        what: "Debian Reference, Japanese (shared/data)",
    },
    CorpusDef {
        name: "russian",
        file: "ru_debian_docs.txt",
        in_cache: true,
        what: "Debian Installation Guide + Debian FAQ, Russian (scripts/fetch-bench-corpora.sh)",
    },
    CorpusDef {
        name: "german",
        file: "de_debian_reference.txt",
        in_cache: true,
        what: "Debian Reference, German (scripts/fetch-bench-corpora.sh)",
    },
    CorpusDef {
        name: "korean",
        file: "ko_debian_docs.txt",
        in_cache: true,
        what: "Debian Installation Guide + Debian FAQ, Korean (scripts/fetch-bench-corpora.sh)",
    },
];

/// A corpus, cut as the protocol cuts it.
pub struct Corpus {
    pub name: &'static str,
    what: &'static str,
    path: PathBuf,
    pub text: String,
    pub chunks: Vec<Range<usize>>,
    /// Chunk index ranges: slice 0 warms up, then one per timed rep.
    pub slices: Vec<Range<usize>>,
}

impl Corpus {
    /// `text` cut into chunks of `chunk_bytes` (the protocol's: [`CHUNK_BYTES`]) and slices.
    pub fn new(
        (name, what): (&'static str, &'static str),
        path: PathBuf,
        text: String,
        chunk_bytes: usize,
        reps: usize,
    ) -> Corpus {
        let chunks = chunk(&text, chunk_bytes, MAX_CHUNKS);
        let slices = slices(chunks.len(), reps);
        Corpus {
            name,
            what,
            path,
            text,
            chunks,
            slices,
        }
    }

    fn read(def: &CorpusDef, data: &Path, cache: &Path, reps: usize) -> Result<Corpus, String> {
        let path = if def.in_cache {
            cache.join("corpora").join(def.file)
        } else {
            data.join("corpora").join(def.file)
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && def.in_cache => {
                return Err(format!(
                    "absent: {} not found (run scripts/fetch-bench-corpora.sh{})",
                    path.display(),
                    dir_arg(cache)
                ));
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let corpus = Corpus::new((def.name, def.what), path, text, CHUNK_BYTES, reps);
        if corpus.slices.is_empty() {
            return Err(format!(
                "{}: {} chunks, fewer than the {} slices",
                corpus.path.display(),
                corpus.chunks.len(),
                reps + 1
            ));
        }
        Ok(corpus)
    }

    pub fn chunk_text(&self, i: usize) -> &str {
        &self.text[self.chunks[i].clone()]
    }

    fn slice_bytes(&self, s: usize) -> usize {
        self.slices[s].clone().map(|i| self.chunks[i].len()).sum()
    }

    fn chunked_bytes(&self) -> usize {
        self.chunks.last().map_or(0, |c| c.end)
    }
}

/// ` --dir DIR` when `cache` is not the default.
fn dir_arg(cache: &Path) -> String {
    if cache == default_cache() {
        String::new()
    } else {
        format!(" --dir {}", cache.display())
    }
}

// ---- models ----

/// A model row: what the Rust engines load (`spec`) and what the Python engines load.
struct Model {
    spec: ModelSpec,
    /// Where the Python engines find it: a rank file (and its encoding's name), else the
    /// `tokenizer.json`.
    tiktoken: Option<(&'static str, PathBuf)>,
    tokenizer_json: Option<PathBuf>,
}

/// The models, in table order: the rank files and tokenizer.json files of shared/data, then
/// those of the cache (`Err`: absent, and why).
fn models(data: &Path, cache: &Path) -> Vec<(&'static str, Result<Model, String>)> {
    let shared = peers::bpe_models(data);
    let mut out = Vec::new();
    for name in ["cl100k_base", "o200k_base", "llama3", "qwen3"] {
        out.push((name, shared_model(&shared, name)));
    }
    for name in ["deepseek_v3", "gemma3"] {
        let path = cache.join("models").join(name).join("tokenizer.json");
        let model = if path.is_file() {
            Ok(Model {
                spec: ModelSpec {
                    name,
                    algorithm: "tokenizer.json",
                    path: path.clone(),
                    family: Family::Bpe,
                    peer_json: Some(path.clone()),
                    ranks: None,
                },
                tiktoken: None,
                tokenizer_json: Some(path),
            })
        } else {
            Err(format!(
                "absent: {} not found (run scripts/fetch-bench-models.sh{})",
                path.display(),
                dir_arg(cache)
            ))
        };
        out.push((name, model));
    }
    out.push(("llama2", shared_model(&shared, "llama2")));
    out
}

fn shared_model(shared: &[ModelSpec], name: &str) -> Result<Model, String> {
    let spec = shared
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| format!("bench-peers knows no model {name}"))?
        .clone();
    if !spec.path.is_file() {
        return Err(format!("absent: {} not found", spec.path.display()));
    }
    let tiktoken = spec.ranks.clone().filter(|_| !spec.is_tokenizer_json());
    Ok(Model {
        tokenizer_json: spec.peer_json.clone(),
        tiktoken,
        spec,
    })
}

// ---- engines ----

/// A Python library, driven by `py/tokbench_peer.py` in its own process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyEngine {
    Gigatoken,
    Fastokens,
}

impl PyEngine {
    fn key(self) -> &'static str {
        match self {
            PyEngine::Gigatoken => "gigatoken",
            PyEngine::Fastokens => "fastokens",
        }
    }
}

/// An engine of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// In this process, through [`peers::load`].
    Rust(Impl),
    Python(PyEngine),
}

impl Engine {
    /// Every engine, in table order.
    const ALL: [Engine; 9] = [
        Engine::Rust(Impl::Simdtok),
        Engine::Rust(Impl::Tokenizers1),
        Engine::Rust(Impl::Tokenizers),
        Engine::Rust(Impl::TiktokenRs),
        Engine::Rust(Impl::BpeOpenai),
        Engine::Rust(Impl::Kitoken),
        Engine::Rust(Impl::Tokie),
        Engine::Python(PyEngine::Gigatoken),
        Engine::Python(PyEngine::Fastokens),
    ];
    /// Always run: simdtok and the references.
    const ALWAYS: [Engine; 3] = [
        Engine::Rust(Impl::Simdtok),
        Engine::Rust(Impl::Tokenizers),
        Engine::Rust(Impl::TiktokenRs),
    ];

    fn key(self) -> &'static str {
        match self {
            Engine::Rust(imp) => imp.key(),
            Engine::Python(py) => py.key(),
        }
    }

    fn label(self) -> String {
        match self {
            Engine::Rust(Impl::Tokenizers) => "tokenizers 0.23".to_owned(),
            Engine::Rust(imp) => imp.label().to_owned(),
            Engine::Python(py) => format!("{} (Python)", py.key()),
        }
    }

    /// Whether the engine can run the model at all (the tiktoken-only engines need a rank
    /// file); an engine that applies but cannot load it says why in its cell.
    fn applies(self, model: &Model) -> bool {
        match self {
            Engine::Rust(Impl::TiktokenRs | Impl::BpeOpenai) => model.spec.ranks.is_some(),
            _ => true,
        }
    }
}

/// The engines of `--impls` (`None`: all but kitoken and tokie), in table order, simdtok and
/// the references always among them.
fn engines(list: Option<&[String]>) -> Result<Vec<Engine>, String> {
    let mut chosen: Vec<Engine> = Engine::ALWAYS.to_vec();
    match list {
        None => chosen.extend(
            Engine::ALL
                .into_iter()
                .filter(|e| !matches!(e, Engine::Rust(Impl::Kitoken | Impl::Tokie))),
        ),
        Some(keys) => {
            for key in keys {
                let engine = Engine::ALL
                    .into_iter()
                    .find(|e| e.key() == key)
                    .ok_or_else(|| format!("--impls: no tokbench engine {key}"))?;
                chosen.push(engine);
            }
        }
    }
    Ok(Engine::ALL
        .into_iter()
        .filter(|e| chosen.contains(e))
        .collect())
}

/// The reference of a model: tiktoken-rs for a rank file, `tokenizers` 0.23 for a
/// `tokenizer.json`.
fn reference(model: &Model) -> Engine {
    Engine::Rust(model.spec.reference())
}

// ---- one cell ----

/// What one engine gave on one cell in one run.
struct Measured {
    load_s: f64,
    /// Seconds of each slice, slice 0 (the cold one) first.
    slice_s: Vec<f64>,
    /// The ids of every chunk, concatenated, and where each chunk's start.
    ids: Vec<u32>,
    starts: Vec<usize>,
    hash: u64,
    /// The Python engines: what they loaded (rank file or tokenizer.json).
    loaded_from: Option<String>,
}

impl Measured {
    fn cold_mbps(&self, corpus: &Corpus) -> f64 {
        corpus.slice_bytes(0) as f64 / self.slice_s[0] / 1e6
    }

    /// 10^6 bytes ÷ the median over the timed slices of seconds per byte.
    fn mbps(&self, corpus: &Corpus) -> f64 {
        let spb: Vec<f64> = (1..self.slice_s.len())
            .map(|s| self.slice_s[s] / corpus.slice_bytes(s) as f64)
            .collect();
        1.0 / median(&spb) / 1e6
    }
}

/// One engine on one cell: a fresh load, the cold slice, the timed slices, then the pass that
/// hashes the ids.
fn run_rust(imp: Impl, spec: &ModelSpec, corpus: &Corpus) -> Result<Measured, String> {
    let start = Instant::now();
    let mut enc = peers::load(imp, spec)?;
    let load_s = start.elapsed().as_secs_f64();
    enc.one_thread();
    let mut slice_s = Vec::with_capacity(corpus.slices.len());
    for slice in &corpus.slices {
        slice_s.push(time_slice(enc.as_mut(), corpus, slice.clone())?);
    }
    let mut ids = Vec::new();
    let mut starts = Vec::with_capacity(corpus.chunks.len() + 1);
    for i in 0..corpus.chunks.len() {
        starts.push(ids.len());
        ids.extend_from_slice(enc.encode(corpus.chunk_text(i))?);
    }
    starts.push(ids.len());
    Ok(Measured {
        load_s,
        slice_s,
        hash: ids_hash(&ids),
        ids,
        starts,
        loaded_from: None,
    })
}

/// Seconds to encode the chunks of one slice, one call each.
fn time_slice(enc: &mut dyn Encoder, corpus: &Corpus, slice: Range<usize>) -> Result<f64, String> {
    let start = Instant::now();
    let mut tokens = 0usize;
    for i in slice {
        tokens += enc.encode(corpus.chunk_text(i))?.len();
    }
    std::hint::black_box(tokens);
    Ok(start.elapsed().as_secs_f64())
}

/// The Python driver, committed beside this crate.
pub fn driver_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("py/tokbench_peer.py")
}

/// The interpreter: `$BENCH_PEERS_PYTHON`, else `python3` (as for the SentencePiece column).
fn python() -> String {
    std::env::var("BENCH_PEERS_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Runs the driver with `args`, returning the JSON of its last stdout line (`Err`: it printed
/// `{"error": ...}`, or nothing usable).
fn call_driver(args: &[&std::ffi::OsStr]) -> Result<serde_json::Value, String> {
    let out = Command::new(python())
        .arg(driver_path())
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .env("TOKENIZERS_PARALLELISM", "false")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    let value: serde_json::Value = serde_json::from_str(line).map_err(|_| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.trim().lines().rev().take(3).collect();
        format!(
            "the Python driver failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        )
    })?;
    if let Some(e) = value.get("error").and_then(|e| e.as_str()) {
        return Err(e.to_owned());
    }
    Ok(value)
}

/// The installed version of a Python engine and of Python, or why it cannot run.
fn python_version(engine: &str) -> Result<(String, String), String> {
    let v =
        call_driver(&["--version".as_ref(), engine.as_ref()]).map_err(|e| match PYTHON_VERSIONS
            .iter()
            .find(|(k, _)| *k == engine)
        {
            Some((k, v)) => format!("{e} (`pip install {k}=={v}`, or set BENCH_PEERS_PYTHON)"),
            None => e,
        })?;
    Ok((
        v["version"].as_str().unwrap_or("?").to_owned(),
        v["python"].as_str().unwrap_or("?").to_owned(),
    ))
}

/// Where the Python engines' job files, corpus texts and ids go (removed at the end).
struct Scratch(PathBuf);

impl Scratch {
    /// A fresh directory, `tag` telling the users of one process apart.
    fn new(tag: &str) -> Result<Scratch, String> {
        let dir =
            std::env::temp_dir().join(format!("bench-peers-tokbench-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A Python engine (`engine`: its key, or `codepoints`, the driver's test stub) on one cell, in
/// a fresh interpreter; its hash is checked against the Rust FNV of the ids it wrote, and with
/// `pinned`, that it could run on that CPU only.
fn run_python(
    engine: &str,
    (tiktoken, tokenizer_json): (Option<(&str, &Path)>, Option<&Path>),
    corpus: &Corpus,
    dir: &Path,
    pinned: Option<usize>,
) -> Result<Measured, String> {
    let text = dir.join(format!("{}.txt", corpus.name));
    if !text.is_file() {
        std::fs::write(&text, &corpus.text).map_err(|e| format!("{}: {e}", text.display()))?;
    }
    let ids_out = dir.join("ids.u32");
    let job = serde_json::json!({
        "engine": engine,
        "tokenizer_json": tokenizer_json,
        "tiktoken": tiktoken.map(|(_, p)| p),
        "encoding": tiktoken.map(|(n, _)| n),
        "text": text,
        "chunks": corpus.chunks.iter().map(|c| [c.start, c.end]).collect::<Vec<_>>(),
        "slices": corpus.slices.iter().map(|s| [s.start, s.end]).collect::<Vec<_>>(),
        "ids_out": ids_out,
    });
    let job_path = dir.join("job.json");
    std::fs::write(&job_path, job.to_string())
        .map_err(|e| format!("{}: {e}", job_path.display()))?;
    let _ = std::fs::remove_file(&ids_out);
    let v = call_driver(&[job_path.as_os_str()])?;
    let slice_s: Vec<f64> = v["slice_s"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_f64()).collect())
        .unwrap_or_default();
    if slice_s.len() != corpus.slices.len() {
        return Err(format!(
            "the Python driver gave {} slice times",
            slice_s.len()
        ));
    }
    if let Some(cpu) = pinned {
        let cpus: Vec<u64> = v["cpus"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c.as_u64()).collect())
            .unwrap_or_default();
        if cpus != [cpu as u64] {
            return Err(format!(
                "harness error: the Python engine was not pinned to CPU {cpu} (it may run on \
                 {cpus:?})"
            ));
        }
    }
    let raw = std::fs::read(&ids_out).map_err(|e| format!("{}: {e}", ids_out.display()))?;
    let chunks = crate::python::counted_ids(&raw, u32::from_le_bytes)
        .ok_or("the Python driver's ids are truncated")?;
    let mut ids = Vec::with_capacity(raw.len() / 4);
    let mut starts = Vec::with_capacity(corpus.chunks.len() + 1);
    for chunk in &chunks {
        starts.push(ids.len());
        ids.extend_from_slice(chunk);
    }
    starts.push(ids.len());
    if starts.len() != corpus.chunks.len() + 1 {
        return Err(format!(
            "the Python driver gave ids for {} of {} chunks",
            starts.len() - 1,
            corpus.chunks.len()
        ));
    }
    let hash = ids_hash(&ids);
    let theirs = v["ids_hash"].as_str().unwrap_or("");
    if theirs != format!("{hash:016x}") {
        return Err(format!(
            "harness error: the Python driver's FNV-1a ({theirs}) is not that of the ids it \
             wrote ({hash:016x})"
        ));
    }
    Ok(Measured {
        load_s: v["load_s"].as_f64().unwrap_or(f64::NAN),
        slice_s,
        ids,
        starts,
        hash,
        loaded_from: v["loaded_from"].as_str().map(str::to_owned),
    })
}

/// What one engine gave on one cell in one run, kept for the report.
#[derive(Clone, Debug)]
enum Outcome {
    /// The engine cannot read this kind of model (a tiktoken-only engine on a tokenizer.json).
    NotApplicable,
    /// It could not load the model, or failed while encoding (why).
    Failed(String),
    Done {
        mbps: f64,
        cold_mbps: f64,
        load_s: f64,
        /// Whether its hash is the reference's (`None`: the reference has none).
        same: Option<bool>,
        /// Where its ids first differ from the reference's.
        first_difference: Option<String>,
        loaded_from: Option<String>,
    },
}

/// Where `got`'s ids first differ from `want`'s: the chunk and token, and the ids around it.
fn first_difference(corpus: &Corpus, want: &Measured, got: &Measured) -> String {
    for c in 0..corpus.chunks.len() {
        let w = &want.ids[want.starts[c]..want.starts[c + 1]];
        let g = &got.ids[got.starts[c]..got.starts[c + 1]];
        if w == g {
            continue;
        }
        let at = w
            .iter()
            .zip(g)
            .position(|(a, b)| a != b)
            .unwrap_or(w.len().min(g.len()));
        let window = |ids: &[u32]| {
            let lo = at.saturating_sub(2);
            let hi = (at + 4).min(ids.len());
            format!("{:?}", &ids[lo.min(ids.len())..hi])
        };
        return format!(
            "chunk {c} (bytes {}..{}), token {at} of {} (reference) / {}: reference {} vs {}",
            corpus.chunks[c].start,
            corpus.chunks[c].end,
            w.len(),
            g.len(),
            window(w),
            window(g)
        );
    }
    "the hashes differ but the ids are the same (?)".to_owned()
}

// ---- the run ----

/// A Python engine's version, or why it cannot run.
type PyStatus = Result<(String, String), String>;

/// Per model × corpus × engine: the outcome of each run.
type Results = BTreeMap<(usize, usize), Vec<(Engine, Vec<Outcome>)>>;

pub fn main(opts: &Options) -> ExitCode {
    match run(opts) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-peers: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(opts: &Options) -> Result<String, String> {
    if !opts.data.is_dir() {
        return Err(format!(
            "shared data not found at {} (set SIMDTOK_SHARED_DATA or --data)",
            opts.data.display()
        ));
    }
    let engines = engines(opts.tokbench_impls.as_deref())?;
    // Before pinning, which makes it see one CPU.
    let machine = cpu_model();
    let cpu = one_thread(opts.cpu)?;
    eprintln!("pinned to CPU {cpu}; RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false");

    let models: Vec<(&str, Result<Model, String>)> = models(&opts.data, &opts.cache)
        .into_iter()
        .filter(|(name, _)| matches(&opts.models, name))
        .collect();
    if models.is_empty() {
        return Err("no model matches --model".to_owned());
    }
    let corpora: Vec<(&str, Result<Corpus, String>)> = CORPORA
        .iter()
        .filter(|c| matches(&opts.corpora, c.name))
        .map(|c| (c.name, Corpus::read(c, &opts.data, &opts.cache, opts.reps)))
        .collect();
    if corpora.is_empty() {
        return Err("no corpus matches --corpus".to_owned());
    }
    for (name, m) in &models {
        if let Err(e) = m {
            eprintln!("model {name}: {e}");
        }
    }
    for (name, c) in &corpora {
        match c {
            Ok(c) => eprintln!(
                "corpus {name}: {} bytes in {} chunks, {} slices of {} chunks",
                c.chunked_bytes(),
                c.chunks.len(),
                c.slices.len(),
                c.slices[0].len()
            ),
            Err(e) => eprintln!("corpus {name}: {e}"),
        }
    }
    let python: Vec<(PyEngine, PyStatus)> = engines
        .iter()
        .filter_map(|e| match e {
            Engine::Python(py) => Some((*py, python_version(py.key()))),
            Engine::Rust(_) => None,
        })
        .collect();
    for (py, status) in &python {
        match status {
            Ok((v, p)) => eprintln!("{} {v} (Python {p})", py.key()),
            Err(e) => eprintln!("{}: {e}", py.key()),
        }
    }
    let scratch = Scratch::new("run")?;

    let started = Instant::now();
    let mut results: Results = BTreeMap::new();
    for run in 0..opts.runs {
        // The engines in a rotated order each run, so that drifts of the machine hit each alike.
        let mut order = engines.clone();
        order.rotate_left(run % engines.len());
        for (m, (_, model)) in models.iter().enumerate() {
            let Ok(model) = model else { continue };
            for (c, (_, corpus)) in corpora.iter().enumerate() {
                let Ok(corpus) = corpus else { continue };
                let bench = Bench {
                    python: &python,
                    scratch: &scratch.0,
                    cpu,
                    run,
                    runs: opts.runs,
                };
                let cell = run_cell(&order, model, corpus, &bench);
                let entry = results
                    .entry((m, c))
                    .or_insert_with(|| engines.iter().map(|&e| (e, Vec::new())).collect());
                for (engine, outcome) in cell {
                    if let Some((_, runs)) = entry.iter_mut().find(|(e, _)| *e == engine) {
                        runs.push(outcome);
                    }
                }
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("done in {seconds:.0} s");
    let setup = Setup {
        machine,
        cpu,
        seconds,
    };
    Ok(report(
        opts, &engines, &models, &corpora, &python, &results, &setup,
    ))
}

/// Pins this process (its one thread so far, and so every thread and child process it starts)
/// to `cpu`, or to the CPU it is on; sets the one-thread variables. Returns the CPU.
fn one_thread(cpu: Option<usize>) -> Result<usize, String> {
    // SAFETY: called before this process starts any thread (the Python version checks and every
    // engine come later), so nothing reads the environment concurrently.
    unsafe {
        std::env::set_var("RAYON_NUM_THREADS", "1");
        std::env::set_var("TOKENIZERS_PARALLELISM", "false");
    }
    #[cfg(target_os = "linux")]
    // SAFETY: the CPU sets are plain data, sized as the calls are told; pid 0 is this thread.
    unsafe {
        let cpu = match cpu {
            Some(c) => c,
            None => usize::try_from(libc::sched_getcpu())
                .map_err(|_| "sched_getcpu failed".to_owned())?,
        };
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("--cpu {cpu}: no such CPU"));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(cpu)
    }
    #[cfg(not(target_os = "linux"))]
    Err(format!(
        "pinning to one CPU (--cpu {cpu:?}) needs Linux's sched_setaffinity"
    ))
}

/// Every engine on one model × corpus, one after the other, each loaded afresh.
/// Where a cell runs: the Python engines' state, the scratch directory, the pinned CPU, and which
/// run of how many this is.
struct Bench<'a> {
    python: &'a [(PyEngine, PyStatus)],
    scratch: &'a Path,
    cpu: usize,
    run: usize,
    runs: usize,
}

fn run_cell(
    order: &[Engine],
    model: &Model,
    corpus: &Corpus,
    bench: &Bench,
) -> Vec<(Engine, Outcome)> {
    let Bench {
        python,
        scratch,
        cpu,
        run,
        runs,
    } = *bench;
    let mut measured: Vec<(Engine, Result<Measured, String>)> = Vec::new();
    for &engine in order {
        if !engine.applies(model) {
            continue;
        }
        let result = match engine {
            Engine::Rust(imp) => run_rust(imp, &model.spec, corpus),
            Engine::Python(py) => match python.iter().find(|(p, _)| *p == py) {
                Some((_, Err(why))) => Err(why.clone()),
                _ => run_python(
                    py.key(),
                    (
                        model.tiktoken.as_ref().map(|(n, p)| (*n, p.as_path())),
                        model.tokenizer_json.as_deref(),
                    ),
                    corpus,
                    scratch,
                    Some(cpu),
                ),
            },
        };
        match &result {
            Ok(m) => eprintln!(
                "run {}/{runs} {:<12} {:<9} {:<20} {:>8.2} MB/s  cold {:>8.2}  load {:>7.1} ms",
                run + 1,
                model.spec.name,
                corpus.name,
                engine.label(),
                m.mbps(corpus),
                m.cold_mbps(corpus),
                m.load_s * 1e3
            ),
            Err(e) => eprintln!(
                "run {}/{runs} {:<12} {:<9} {:<20} {e}",
                run + 1,
                model.spec.name,
                corpus.name,
                engine.label()
            ),
        }
        measured.push((engine, result));
    }
    let reference = reference(model);
    let want = measured
        .iter()
        .find(|(e, _)| *e == reference)
        .and_then(|(_, r)| r.as_ref().ok());
    let mut out: Vec<(Engine, Outcome)> = measured
        .iter()
        .map(|(engine, result)| {
            let outcome = match result {
                Err(why) => Outcome::Failed(why.clone()),
                Ok(m) => {
                    let same = want.map(|w| w.hash == m.hash);
                    if same == Some(false) {
                        eprintln!(
                            "   {} ids differ from the reference's on {}",
                            engine.label(),
                            corpus.name
                        );
                    }
                    Outcome::Done {
                        mbps: m.mbps(corpus),
                        cold_mbps: m.cold_mbps(corpus),
                        load_s: m.load_s,
                        same,
                        first_difference: match (same, want) {
                            (Some(false), Some(w)) => Some(first_difference(corpus, w, m)),
                            _ => None,
                        },
                        loaded_from: m.loaded_from.clone(),
                    }
                }
            };
            (*engine, outcome)
        })
        .collect();
    for &engine in order {
        if !engine.applies(model) {
            out.push((engine, Outcome::NotApplicable));
        }
    }
    out
}

// ---- the report ----

/// One cell of the table over the runs: medians of the runs that gave a figure.
struct Summary {
    mbps: f64,
    cold_mbps: f64,
    /// Every run agreed with the reference (`None`: no reference figure to compare with).
    same: Option<bool>,
    first_difference: Option<String>,
    /// Runs that gave a figure, of all.
    done: usize,
    runs: usize,
    failure: Option<String>,
}

fn summarize(outcomes: &[Outcome]) -> Option<Result<Summary, String>> {
    if outcomes.iter().all(|o| matches!(o, Outcome::NotApplicable)) {
        return None;
    }
    let mut mbps = Vec::new();
    let mut cold = Vec::new();
    let mut same = Some(true);
    let mut first_difference = None;
    let mut failure = None;
    for o in outcomes {
        match o {
            Outcome::Done {
                mbps: m,
                cold_mbps: c,
                same: s,
                first_difference: d,
                ..
            } => {
                mbps.push(*m);
                cold.push(*c);
                same = match (same, s) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (None, _) | (_, None) => None,
                    _ => Some(true),
                };
                if first_difference.is_none() {
                    first_difference.clone_from(d);
                }
            }
            Outcome::Failed(why) => failure = failure.or_else(|| Some(why.clone())),
            Outcome::NotApplicable => {}
        }
    }
    if mbps.is_empty() {
        return Some(Err(failure.unwrap_or_default()));
    }
    Some(Ok(Summary {
        mbps: median(&mbps),
        cold_mbps: median(&cold),
        same,
        first_difference,
        done: mbps.len(),
        runs: outcomes.len(),
        failure,
    }))
}

/// simdtok ÷ the fastest peer whose ids are the reference's, in run `run` (and that peer).
fn run_ratio(cells: &[(Engine, Vec<Outcome>)], run: usize) -> Option<(f64, Engine)> {
    let figure = |outcome: &Outcome| match outcome {
        Outcome::Done {
            mbps,
            same: Some(true),
            ..
        } => Some(*mbps),
        _ => None,
    };
    let (_, simdtok) = cells
        .iter()
        .find(|(e, _)| *e == Engine::Rust(Impl::Simdtok))?;
    let s = figure(simdtok.get(run)?)?;
    let (peer, p) = cells
        .iter()
        .filter(|(e, _)| *e != Engine::Rust(Impl::Simdtok))
        .filter_map(|(e, runs)| Some((*e, figure(runs.get(run)?)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some((s / p, peer))
}

/// The median over the runs of [`run_ratio`], and the peer most often the fastest.
fn cell_ratio(cells: &[(Engine, Vec<Outcome>)], runs: usize) -> Option<(f64, Engine, usize)> {
    let per_run: Vec<(f64, Engine)> = (0..runs).filter_map(|r| run_ratio(cells, r)).collect();
    if per_run.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = per_run.iter().map(|(r, _)| *r).collect();
    let mut counts: Vec<(Engine, usize)> = Vec::new();
    for (_, peer) in &per_run {
        match counts.iter_mut().find(|(e, _)| e == peer) {
            Some((_, n)) => *n += 1,
            None => counts.push((*peer, 1)),
        }
    }
    let (peer, n) = counts.into_iter().max_by_key(|(_, n)| *n)?;
    Some((median(&ratios), peer, n))
}

fn git_commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!(
                "{commit}{}",
                if dirty { " + uncommitted changes" } else { "" }
            )
        }
        None => "unknown".to_owned(),
    }
}

/// What an engine runs, for the report.
fn engine_text(engine: Engine, python: &[(PyEngine, PyStatus)], tier: &str) -> String {
    let py_version = |py: PyEngine| match python.iter().find(|(p, _)| *p == py) {
        Some((_, Ok((v, p)))) => {
            let wanted = PYTHON_VERSIONS
                .iter()
                .find(|(k, _)| *k == py.key())
                .map(|(_, v)| *v);
            let note = match wanted {
                Some(w) if w != v => format!(" (**not the {w} the protocol names**)"),
                _ => String::new(),
            };
            format!("{v}{note}, Python {p}")
        }
        Some((_, Err(e))) => format!("unavailable: {e}"),
        None => "not run".to_owned(),
    };
    match engine {
        Engine::Rust(Impl::Simdtok) => format!(
            "the `{tier}` tier, `Tokenizer::from_file_with_options(path, Kernels::active()?, \
             &LoadOptions::default())`, `encode_ids_into(chunk, &mut reused_vec)`"
        ),
        Engine::Rust(Impl::Tokenizers1) => "Hugging Face `tokenizers` 1.0.0-rc.3 (the \
            `tk-encode` engine): `from_json_file`, or `canonicalize_file` + `from_json` for a \
            pre-2.0 file (in the load time); `PipelineTokenizer::encode_into(chunk, \
            add_special_tokens: false, padding/truncation off, &mut reused)`"
            .to_owned(),
        Engine::Rust(Impl::Tokenizers) => "**reference of the tokenizer.json models**: Hugging \
            Face `tokenizers` 0.23.2, `Tokenizer::from_file`, `encode_fast(chunk, false)`"
            .to_owned(),
        Engine::Rust(Impl::TiktokenRs) => "**reference of the rank files**: `tiktoken-rs` \
            0.12.1, `CoreBPE::new` on the local rank file with the crate's own pattern and \
            special tokens; `encode_ordinary(chunk)`"
            .to_owned(),
        Engine::Rust(Impl::BpeOpenai) => "`bpe-openai` 0.3.2, its bundled `cl100k_base()` / \
            `o200k_base()` (process-wide statics: only the first load costs anything), \
            `encode(chunk)`"
            .to_owned(),
        Engine::Rust(Impl::Kitoken) => "`kitoken` 0.11.1 (`from_tiktoken_file` or the \
            tokenizer.json), `encode(chunk, false)`"
            .to_owned(),
        Engine::Rust(Impl::Tokie) => "`tokie` 0.1.4, `Tokenizer::from_json`, \
            `encode_ids(chunk, false)` (pinned to the CPU it is on)"
            .to_owned(),
        Engine::Rust(other) => format!("`{}`", other.label()),
        Engine::Python(PyEngine::Gigatoken) => format!(
            "**Python**, `gigatoken` {}: `gigatoken.Tokenizer(tokenizer.json)`, or \
             `Tokenizer.from_tiktoken(rank file)` on the rank-file rows; `encode(chunk)` (a \
             numpy `uint32` array; it has no option to add special tokens). numpy, which it \
             imports at its first encode, is imported before the clock starts",
            py_version(PyEngine::Gigatoken)
        ),
        Engine::Python(PyEngine::Fastokens) => format!(
            "**Python**, `fastokens` {}: `fastokens.Tokenizer.from_file(tokenizer.json)`, or \
             `Tokenizer.from_tiktoken(rank file, encoding=NAME)` on the rank-file rows (it \
             cannot load `gpt35turbo.tokenizer.json`: `unsupported model type: Other`); \
             `encode(chunk, add_special_tokens=False).ids` (a list of int). Its first encode \
             on a new instance takes 50 to 100 ms (set-up inside the library): that is in its \
             cold figure",
            py_version(PyEngine::Fastokens)
        ),
    }
}

/// Where and how long the matrix ran.
struct Setup {
    /// The CPU model and count, before pinning.
    machine: String,
    /// The CPU pinned to.
    cpu: usize,
    seconds: f64,
}

fn report(
    opts: &Options,
    engines: &[Engine],
    models: &[(&str, Result<Model, String>)],
    corpora: &[(&str, Result<Corpus, String>)],
    python: &[(PyEngine, PyStatus)],
    results: &Results,
    setup: &Setup,
) -> String {
    let Setup {
        machine,
        cpu,
        seconds,
    } = setup;
    let mut out = String::new();
    let mut notes = Notes::default();
    let tier = simdtok::kernels::Kernels::active().map_or("?".to_owned(), |k| k.tier().to_string());
    let command: Vec<String> = std::env::args().skip(1).collect();
    let _ = writeln!(
        out,
        "## tokbench protocol: byte-level and SentencePiece-style BPE\n\n\
         Command: `cargo bench-peers {}`  \n\
         Date: {}; commit {}; CPU: {} (pinned to CPU {cpu}); simdtok tier: {tier}; {} run(s) of \
         the matrix, {} s in all.\n",
        command.join(" "),
        today(),
        git_commit(),
        machine,
        opts.runs,
        seconds.round()
    );
    let _ = writeln!(
        out,
        "Protocol (Hugging Face tokbench's, `core/src/lib.rs`): each corpus is one string cut \
         into chunks of {CHUNK_BYTES} bytes (each cut moved forward to a character boundary), \
         at most {MAX_CHUNKS}; the chunks are cut into {} disjoint slices of equal chunk count. \
         Every engine is loaded afresh for every model × corpus (load timed apart), encodes \
         slice 0 (**cold**: its first text, no warm-up), then {} further slices, each text it \
         has never seen; **MB/s** = 10^6 bytes ÷ the median over those slices of seconds per \
         byte. One CPU, `RAYON_NUM_THREADS=1`, `TOKENIZERS_PARALLELISM=false`. Every chunk is \
         encoded alone through the library's ordinary call, no special tokens added; a last \
         pass over every chunk hashes the concatenated ids (FNV-1a 64 of their little-endian \
         u32 bytes), compared with the reference's (tiktoken-rs for the rank files, \
         `tokenizers` 0.23 for tokenizer.json): **≠** marks a hash that differs, and such a \
         figure is never ranked. (Python) engines run in a fresh interpreter per cell, timed \
         from inside Python on the same chunks: their call overhead and their result objects \
         are in their figures. Cells are medians over the {} run(s); engines run in a rotated \
         order each run. The last column is simdtok ÷ the fastest peer whose hash is the \
         reference's (any class, Python included), the median over the runs of that run's \
         ratio; `–`: the engine cannot read this kind of model.\n",
        opts.reps + 1,
        opts.reps,
        opts.runs,
    );

    // Throughput.
    let mut head = "| model | corpus |".to_owned();
    let mut rule = "|:---|:---|".to_owned();
    for e in engines {
        let _ = write!(head, " {} | cold |", e.label());
        rule.push_str("---:|---:|");
    }
    head.push_str(" simdtok ÷ fastest correct peer |");
    rule.push_str("---:|");
    let _ = writeln!(out, "{head}\n{rule}");
    let mut ratios: Vec<(f64, String)> = Vec::new();
    let mut unranked = Vec::new();
    for (m, (model_name, model)) in models.iter().enumerate() {
        let model = match model {
            Ok(model) => model,
            Err(why) => {
                let mark = notes.mark(&format!("`{model_name}`: {why}"));
                let _ = writeln!(out, "| `{model_name}` | model {}{mark} |", short(why));
                continue;
            }
        };
        let reference = reference(model);
        for (c, (corpus_name, corpus)) in corpora.iter().enumerate() {
            let lead = if c == 0 {
                format!("`{}` (ref: {})", model_name, reference.label())
            } else {
                String::new()
            };
            if let Err(why) = corpus {
                let mark = notes.mark(&format!("corpus `{corpus_name}`: {why}"));
                let _ = writeln!(out, "| {lead} | {corpus_name} | {}{mark} |", short(why));
                continue;
            }
            let Some(cells) = results.get(&(m, c)) else {
                continue;
            };
            let _ = write!(out, "| {lead} | {corpus_name} |");
            for (engine, outcomes) in cells {
                match summarize(outcomes) {
                    None => out.push_str(" – | – |"),
                    Some(Err(why)) => {
                        let mark = notes.mark(&format!("{}: {why}", engine.label()));
                        let _ = write!(out, " n/a{mark} | |");
                    }
                    Some(Ok(s)) => {
                        let mut figure = fmt_mbps(s.mbps);
                        match s.same {
                            Some(true) => {}
                            Some(false) => {
                                let mark = notes.mark(&format!(
                                    "{} on `{model_name}` × {corpus_name}: ids differ from the \
                                     reference's; first at {}",
                                    engine.label(),
                                    s.first_difference.as_deref().unwrap_or("?")
                                ));
                                let _ = write!(figure, " ≠{mark}");
                            }
                            None => figure.push_str(" (unverified)"),
                        }
                        if s.done < s.runs {
                            let mark = notes.mark(&format!(
                                "{}: failed in {} of {} runs ({})",
                                engine.label(),
                                s.runs - s.done,
                                s.runs,
                                s.failure.as_deref().unwrap_or("?")
                            ));
                            figure.push_str(&mark);
                        }
                        let _ = write!(out, " {figure} | {} |", fmt_mbps(s.cold_mbps));
                    }
                }
            }
            match cell_ratio(cells, opts.runs) {
                Some((r, peer, n)) => {
                    let runs = if n < opts.runs && opts.runs > 1 {
                        format!(", fastest in {n} of {} runs", opts.runs)
                    } else {
                        String::new()
                    };
                    let _ = writeln!(out, " {r:.2}× ({}{runs}) |", peer.label());
                    ratios.push((
                        r,
                        format!("`{model_name}` × {corpus_name} against {}", peer.label()),
                    ));
                }
                None => {
                    let simdtok = cells
                        .iter()
                        .find(|(e, _)| *e == Engine::Rust(Impl::Simdtok))
                        .and_then(|(_, o)| summarize(o));
                    let why = match simdtok {
                        Some(Ok(s)) if s.same == Some(false) => "simdtok ≠: not ranked",
                        Some(Ok(s)) if s.same.is_none() => "unverified: the reference gave no ids",
                        Some(Ok(_)) => "no correct peer",
                        _ => "simdtok did not run",
                    };
                    unranked.push(format!("`{model_name}` × {corpus_name}: {why}"));
                    let _ = writeln!(out, " {why} |");
                }
            }
        }
    }
    notes.write(&mut out);
    out.push('\n');
    if ratios.is_empty() {
        let _ = writeln!(out, "**Summary**: no cell has a ratio.");
    } else {
        let values: Vec<f64> = ratios.iter().map(|(r, _)| *r).collect();
        let (min, min_cell) = ratios
            .iter()
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("a ratio");
        let _ = writeln!(
            out,
            "**Summary**: simdtok ÷ fastest correct peer, median over {} cells **{:.2}×**; \
             minimum **{min:.2}×** ({min_cell}).{}",
            values.len(),
            median(&values),
            if unranked.is_empty() {
                String::new()
            } else {
                format!(" Not ranked: {}.", unranked.join("; "))
            }
        );
    }

    // The corpora.
    let _ = writeln!(
        out,
        "\n**Corpora** (chunks of {CHUNK_BYTES} bytes, at most {MAX_CHUNKS}; the left-over \
         chunks are only hashed):\n\n\
         | corpus | text | file bytes | bytes chunked | chunks | chunks per slice | bytes per \
         slice (mean) | left over |\n|:---|:---|---:|---:|---:|---:|---:|---:|"
    );
    for (name, corpus) in corpora {
        match corpus {
            Ok(c) => {
                let per = c.slices[0].len();
                let mean =
                    (0..c.slices.len()).map(|s| c.slice_bytes(s)).sum::<usize>() / c.slices.len();
                let _ = writeln!(
                    out,
                    "| {name} | {} (`{}`) | {} | {} | {} | {per} | {mean} | {} |",
                    c.what,
                    c.path
                        .file_name()
                        .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
                    c.text.len(),
                    c.chunked_bytes(),
                    c.chunks.len(),
                    c.chunks.len() - per * c.slices.len()
                );
            }
            Err(why) => {
                let _ = writeln!(out, "| {name} | {why} | | | | | | |");
            }
        }
    }
    let small: Vec<String> = corpora
        .iter()
        .filter_map(|(n, c)| c.as_ref().ok().map(|c| (n, c)))
        .filter(|(_, c)| c.chunks.len() < MAX_CHUNKS)
        .map(|(n, c)| format!("{n} ({} chunks)", c.chunks.len()))
        .collect();
    if !small.is_empty() {
        let _ = writeln!(
            out,
            "\nSmaller than tokbench's {MAX_CHUNKS} chunks, so with smaller slices: {}.",
            small.join(", ")
        );
    }

    // The models.
    let _ = writeln!(
        out,
        "\n**Models**:\n\n| model | simdtok and the Rust peers load | reference |\n|:---|:---|:---|"
    );
    for (name, model) in models {
        match model {
            Ok(model) => {
                let file = |p: &Path| {
                    p.file_name()
                        .map_or(String::new(), |f| f.to_string_lossy().into_owned())
                };
                let what = match (&model.tiktoken, &model.tokenizer_json) {
                    (Some((_, ranks)), Some(json)) => format!(
                        "`{}` (simdtok, tiktoken-rs, bpe-openai, the Python engines); `{}` \
                         (`tokenizers` 1.0 and 0.23)",
                        file(ranks),
                        file(json)
                    ),
                    _ => format!("`{}`", model.spec.path.display()),
                };
                let _ = writeln!(out, "| `{name}` | {what} | {} |", reference(model).label());
            }
            Err(why) => {
                let _ = writeln!(out, "| `{name}` | {why} | |");
            }
        }
    }

    // The engines.
    let _ = writeln!(out, "\n**Engines**:\n");
    for &e in engines {
        let _ = writeln!(out, "- {}: {}", e.label(), engine_text(e, python, &tier));
    }

    // Loading.
    let _ = writeln!(
        out,
        "\n**Load** (ms, median over the corpora and runs; file read + build, a fresh instance \
         per cell; Python: the library's constructor, after its import):\n"
    );
    let mut head = "| model |".to_owned();
    let mut rule = "|:---|".to_owned();
    for e in engines {
        let _ = write!(head, " {} |", e.label());
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "{head}\n{rule}");
    for (m, (name, model)) in models.iter().enumerate() {
        if model.is_err() {
            continue;
        }
        let _ = write!(out, "| `{name}` |");
        for (k, &engine) in engines.iter().enumerate() {
            let mut loads = Vec::new();
            let mut from = None;
            let mut applies = false;
            for ((mm, _), cells) in results.range((m, 0)..(m + 1, 0)) {
                debug_assert_eq!(*mm, m);
                let Some((_, outcomes)) = cells.get(k).filter(|(e, _)| *e == engine) else {
                    continue;
                };
                for o in outcomes {
                    match o {
                        Outcome::Done {
                            load_s,
                            loaded_from,
                            ..
                        } => {
                            applies = true;
                            loads.push(*load_s * 1e3);
                            from = from.or(loaded_from.clone());
                        }
                        Outcome::Failed(_) => applies = true,
                        Outcome::NotApplicable => {}
                    }
                }
            }
            let cell = match (loads.is_empty(), applies) {
                (false, _) => format!(
                    "{:.1}{}",
                    median(&loads),
                    from.map_or(String::new(), |f| format!(" ({f})"))
                ),
                (true, true) => "n/a".to_owned(),
                (true, false) => "–".to_owned(),
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out
}

/// The first clause of a reason, for a table cell (the whole of it goes in a note).
fn short(why: &str) -> &str {
    why.split(':').next().unwrap_or(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text whose characters are 1 to 4 bytes long, so that chunk ends fall inside them.
    fn mixed_text(chars: usize) -> String {
        let alphabet = ['a', 'é', '日', '🎉', ' ', 'Ж', '\n'];
        (0..chars)
            .map(|i| alphabet[(i * 7 + i / 3) % alphabet.len()])
            .collect()
    }

    #[test]
    fn chunks_end_on_char_boundaries_and_cover_the_text() {
        let text = mixed_text(5000);
        for size in [1, 2, 3, 5, 64, 1000, 10 * 1024] {
            let chunks = chunk(&text, size, usize::MAX);
            assert_eq!(chunks.first().map(|c| c.start), Some(0));
            assert_eq!(chunks.last().map(|c| c.end), Some(text.len()));
            for (i, c) in chunks.iter().enumerate() {
                assert!(text.is_char_boundary(c.start) && text.is_char_boundary(c.end));
                if i + 1 < chunks.len() {
                    assert_eq!(c.end, chunks[i + 1].start, "chunks are consecutive");
                    // The cut is moved forward, never back, and by less than one character.
                    assert!(c.len() >= size && c.len() < size + 4, "{size}: {c:?}");
                }
            }
            let joined: String = chunks.iter().map(|c| &text[c.clone()]).collect();
            assert_eq!(joined, text);
        }
        // At most `max_chunks`, from the start.
        let capped = chunk(&text, 100, 7);
        assert_eq!(capped.len(), 7);
        assert_eq!(capped, chunk(&text, 100, usize::MAX)[..7]);
        assert!(chunk("", 10, 100).is_empty());
    }

    #[test]
    fn corpora_are_cut_like_tokbench() {
        let text = mixed_text(600_000);
        let corpus = Corpus::new(
            ("t", "test"),
            PathBuf::new(),
            text,
            CHUNK_BYTES,
            DEFAULT_REPS,
        );
        assert_eq!(corpus.chunks.len(), MAX_CHUNKS);
        assert_eq!(corpus.slices.len(), DEFAULT_REPS + 1);
        assert!(corpus.chunks.iter().all(|c| c.len() >= CHUNK_BYTES));
    }

    #[test]
    fn slices_are_disjoint_equal_and_cover_all_but_the_remainder() {
        for chunks in 0..150 {
            for reps in [1, 2, 5, 9] {
                let s = slices(chunks, reps);
                if chunks < reps + 1 {
                    assert!(s.is_empty());
                    continue;
                }
                assert_eq!(s.len(), reps + 1);
                let per = chunks / (reps + 1);
                assert_eq!(s[0].start, 0);
                for (i, r) in s.iter().enumerate() {
                    assert_eq!(r.len(), per);
                    if i > 0 {
                        assert_eq!(s[i - 1].end, r.start, "disjoint and consecutive");
                    }
                }
                let covered = s.last().unwrap().end;
                assert!(covered <= chunks && chunks - covered < reps + 1);
            }
        }
        // tokbench's own case: 24 chunks, 5 reps: 6 slices of 4.
        assert_eq!(slices(24, 5)[5], 20..24);
    }

    #[test]
    fn fnv1a_known_answers() {
        // The published FNV-1a 64 test vectors.
        for (input, want) in [
            (&b""[..], 0xcbf2_9ce4_8422_2325_u64),
            (b"a", 0xaf63_dc4c_8601_ec8c),
            (b"foobar", 0x8594_4171_f739_67e8),
        ] {
            let mut h = Fnv::new();
            h.bytes(input);
            assert_eq!(h.finish(), want, "{input:?}");
        }
        // Ids are hashed as their little-endian u32 bytes, in order.
        assert_eq!(ids_hash(&[]), Fnv::OFFSET);
        assert_eq!(ids_hash(&[0x006f_6f66]), {
            let mut h = Fnv::new();
            h.bytes(b"foo\0");
            h.finish()
        });
        assert_eq!(ids_hash(&[0x6261_6f6f, 0x7266]), {
            let mut h = Fnv::new();
            h.bytes(b"ooabfr\0\0");
            h.finish()
        });
        assert_ne!(ids_hash(&[1, 2, 3]), ids_hash(&[3, 2, 1]));
    }

    #[test]
    fn engines_always_include_simdtok_and_the_references() {
        let all = engines(None).unwrap();
        assert_eq!(all.len(), 7);
        assert!(!all.contains(&Engine::Rust(Impl::Kitoken)));
        let some = engines(Some(&["fastokens".to_owned()])).unwrap();
        assert_eq!(
            some,
            [
                Engine::Rust(Impl::Simdtok),
                Engine::Rust(Impl::Tokenizers),
                Engine::Rust(Impl::TiktokenRs),
                Engine::Python(PyEngine::Fastokens)
            ]
        );
        assert!(engines(Some(&["nope".to_owned()])).is_err());
    }

    /// The Python driver, with its `codepoints` stub, on the chunks and slices the Rust side
    /// cut: its FNV-1a is the Rust one (`run_python` also checks it against the ids it wrote,
    /// which must be each chunk's code points, so the chunks reached it intact).
    #[test]
    fn python_driver_hash_is_the_rust_hash() {
        let text = mixed_text(3000) + "\u{10FFFF}\u{0}z";
        let tiny = Corpus::new(("driver-test", "test"), PathBuf::new(), text, 1000, 2);
        assert!(tiny.chunks.len() > 3);
        let dir = Scratch::new("driver-test").unwrap();
        let m = match run_python("codepoints", (None, None), &tiny, &dir.0, None) {
            Ok(m) => m,
            Err(e) if e.starts_with("cannot run") => {
                eprintln!("no Python: skipped ({e})");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let want: Vec<u32> = tiny.text.chars().map(u32::from).collect();
        assert_eq!(m.ids, want);
        assert_eq!(m.hash, ids_hash(&want));
        assert_eq!(m.starts.len(), tiny.chunks.len() + 1);
        for (c, range) in tiny.chunks.iter().enumerate() {
            assert_eq!(
                m.starts[c + 1] - m.starts[c],
                tiny.text[range.clone()].chars().count()
            );
        }
        assert_eq!(m.slice_s.len(), 3);
    }

    /// gigatoken and fastokens through the driver, where they are installed, give the ids
    /// (the hash) of the reference on a few chunks of English with cl100k_base's rank file.
    #[test]
    fn python_engines_match_the_reference_on_a_small_input() {
        let data = crate::default_data();
        let Some(Ok(model)) = models(&data, &default_cache())
            .into_iter()
            .find(|(n, _)| *n == "cl100k_base")
            .map(|(_, m)| m)
        else {
            eprintln!("shared data not found: skipped");
            return;
        };
        let def = &CORPORA[0];
        let text = std::fs::read_to_string(data.join("corpora").join(def.file)).unwrap();
        let end = (0..=30_000)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap();
        let corpus = Corpus::new(
            (def.name, def.what),
            PathBuf::new(),
            text[..end].to_owned(),
            2000,
            2,
        );
        let want = run_rust(Impl::TiktokenRs, &model.spec, &corpus).unwrap();
        let dir = Scratch::new("engines-test").unwrap();
        for py in PYTHON_KEYS {
            if let Err(e) = python_version(py) {
                eprintln!("{py}: skipped ({e})");
                continue;
            }
            let files = (
                model.tiktoken.as_ref().map(|(n, p)| (*n, p.as_path())),
                model.tokenizer_json.as_deref(),
            );
            let got = run_python(py, files, &corpus, &dir.0, None).unwrap();
            assert_eq!(got.hash, want.hash, "{py}");
            assert_eq!(got.ids, want.ids, "{py}");
        }
    }
}
