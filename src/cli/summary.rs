//! `encode --summary PATH`: what a run read and wrote, as one JSON object (and a line on
//! stderr), for the records of a data pipeline.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sha2::{Digest, Sha256};
use simdtok::bench::build_info;

use super::driver::Totals;
use super::output::Output;
use super::{CliResult, Failure};

/// See the module documentation.
#[derive(Serialize)]
pub struct Summary {
    /// simdtok's version and commit.
    pub simdtok: String,
    /// The model file and its SHA-256.
    pub model: FileDigest,
    /// Each input, in the order read.
    pub inputs: Vec<InputSummary>,
    /// The output (path or `<stdout>`) and its format.
    pub output: String,
    pub output_format: String,
    /// All inputs': texts (documents), bytes read (decompressed, line ends included) and tokens
    /// written (`--separator-id`'s included).
    pub documents: u64,
    pub bytes: u64,
    pub tokens: u64,
    /// Bad records left out (`--skip-bad`).
    pub skipped: u64,
    /// When the run started (seconds since the Unix epoch) and how long it took.
    pub started_unix_s: u64,
    pub seconds: f64,
}

/// One input of a run: its path (or `<stdin>`), how it was compressed, and what it gave.
#[derive(Serialize)]
pub struct InputSummary {
    pub path: String,
    pub compression: &'static str,
    pub documents: u64,
    pub bytes: u64,
    pub tokens: u64,
    /// Bad records left out (`--skip-bad`).
    pub skipped: u64,
}

impl InputSummary {
    /// The summary of input `path`, whose run ended with `totals`.
    pub fn new(path: String, compression: &'static str, totals: Totals) -> InputSummary {
        InputSummary {
            path,
            compression,
            documents: totals.texts,
            bytes: totals.bytes,
            tokens: totals.tokens,
            skipped: totals.skipped,
        }
    }
}

/// A file and the SHA-256 of its bytes.
#[derive(Serialize)]
pub struct FileDigest {
    pub path: String,
    pub sha256: String,
}

impl FileDigest {
    /// The digest of the file at `path`, read in blocks (a model file may be gigabytes).
    pub fn of(path: &Path) -> CliResult<FileDigest> {
        let fail = |e: std::io::Error| Failure::runtime(format!("{}: {e}", path.display()));
        let mut file = std::fs::File::open(path).map_err(fail)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf).map_err(fail)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        let sha256 = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(FileDigest {
            path: path.display().to_string(),
            sha256,
        })
    }
}

/// The clock at the start of a run.
pub struct Started {
    at: SystemTime,
}

impl Started {
    pub fn now() -> Started {
        Started {
            at: SystemTime::now(),
        }
    }
}

/// Everything but the run's results, known before it starts.
pub struct Context<'a> {
    pub model: &'a Path,
    pub output: &'a str,
    pub output_format: String,
}

/// Writes the summary of a run over `inputs` to `path` and its line to stderr.
pub fn write(
    path: &Path,
    context: Context<'_>,
    started: Started,
    inputs: Vec<InputSummary>,
) -> CliResult {
    let seconds = started.at.elapsed().unwrap_or(Duration::ZERO).as_secs_f64();
    let sum = |f: fn(&InputSummary) -> u64| inputs.iter().map(f).sum::<u64>();
    let (documents, bytes, tokens) = (sum(|i| i.documents), sum(|i| i.bytes), sum(|i| i.tokens));
    let skipped = sum(|i| i.skipped);
    let what = match &inputs[..] {
        [one] => one.path.clone(),
        many => format!("{} inputs", many.len()),
    };
    let summary = Summary {
        simdtok: format!("{} {}", build_info::VERSION, build_info::short_commit()),
        model: FileDigest::of(context.model)?,
        inputs,
        output: context.output.to_owned(),
        output_format: context.output_format,
        documents,
        bytes,
        tokens,
        skipped,
        started_unix_s: started
            .at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        seconds,
    };
    eprintln!(
        "simdtok: {what}: {} documents, {:.1} MB, {} tokens in {seconds:.2} s ({:.1} MB/s)",
        summary.documents,
        summary.bytes as f64 / 1e6,
        summary.tokens,
        summary.bytes as f64 / 1e6 / seconds.max(1e-9)
    );
    let mut json = serde_json::to_vec_pretty(&summary).map_err(Failure::runtime)?;
    json.push(b'\n');
    let mut out = Output::create(&Some(path.to_path_buf()))?;
    out.write_all(&json)?;
    out.finish()
}
