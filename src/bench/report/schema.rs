//! The JSON of `report.json`: a report of one machine ([`Report`]) or a comparison of several
//! ([`Comparison`]). Both carry [`SCHEMA_VERSION`]; a reader refuses any other version rather
//! than guess at fields whose meaning may have changed.
//!
//! Raw samples are integer nanoseconds (exact in JSON); derived figures are rounded to six
//! significant digits, which read back as the same `f64`, so a report survives a round trip.

use serde::{Deserialize, Serialize};

use crate::bench::inputs::InputDigest;

/// The version of this layout. Raise it when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// `kind` of a single machine's report.
pub const KIND_REPORT: &str = "report";
/// `kind` of a comparison of several reports.
pub const KIND_COMPARISON: &str = "comparison";

/// One machine's measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`KIND_REPORT`].
    pub kind: String,
    /// The column name in comparisons (`--label`; default: the CPU brand).
    pub label: String,
    /// The binary that measured.
    pub tool: Tool,
    /// The machine it ran on.
    pub machine: Machine,
    /// How the run went.
    pub run: Run,
    /// Every model, corpus file and generated buffer measured, with its digest.
    pub inputs: Vec<InputDigest>,
    /// One row per bench × model/kernel × size × tier × threads.
    pub results: Vec<Row>,
}

/// The binary that produced a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    /// `simdtok`.
    pub name: String,
    /// The crate version.
    pub version: String,
    /// The git commit it was built from (`unknown` outside a checkout).
    pub git_commit: String,
    /// `rustc --version` of its compiler.
    pub rustc: String,
    /// The target triple.
    pub target: String,
    /// `release` or `debug`.
    pub profile: String,
    /// The tiers compiled in.
    pub compiled_tiers: Vec<String>,
}

/// A cache level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    /// 1, 2, 3, …
    pub level: u8,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// The machine a report was made on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU model, where the OS tells it.
    pub cpu_brand: Option<String>,
    /// `x86_64`, `aarch64`, …
    pub arch: String,
    /// Logical CPUs this process could use.
    pub logical_cores: usize,
    /// Physical cores, where known.
    pub physical_cores: Option<usize>,
    /// Performance cores (Apple Silicon).
    pub performance_cores: Option<usize>,
    /// Efficiency cores (Apple Silicon).
    pub efficiency_cores: Option<usize>,
    /// Caches.
    pub caches: Vec<Cache>,
    /// Installed memory.
    pub memory_bytes: Option<u64>,
    /// OS release.
    pub os: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// CPU features detected (of those simdtok asks about).
    pub features: Vec<String>,
    /// Tiers this CPU supports.
    pub supported_tiers: Vec<String>,
    /// The tier `Kernels::active()` picks.
    pub active_tier: String,
    /// Why.
    pub active_reason: String,
}

/// How the run went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// When it started (UTC, RFC 3339).
    pub started_utc: String,
    /// Wall time of the whole run, seconds.
    pub elapsed_s: f64,
    /// The time budget asked for, seconds.
    pub budget_s: f64,
    /// The "all threads" count of the encode rows.
    pub threads: usize,
    /// The tiers measured.
    pub tiers: Vec<String>,
    /// Fewest samples any row has.
    pub min_samples: usize,
    /// Most samples any row has.
    pub max_samples: usize,
}

/// One measurement: a kernel or an encode, on one input size, tier and thread count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `kernel` or `encode`.
    pub bench: String,
    /// Kernel family (`byte-classes`, `crc32c`, `prune`, `trie`) or model kind.
    pub family: String,
    /// Kernel name or model label.
    pub name: String,
    /// Bytes processed per iteration.
    pub size: u64,
    /// The tier.
    pub tier: String,
    /// Threads.
    pub threads: usize,
    /// The names of the inputs (see [`Report::inputs`]).
    pub inputs: Vec<String>,
    /// Iterations per sample.
    pub iterations: u64,
    /// Each sample's wall time, ns (for `iterations` iterations).
    pub samples_ns: Vec<u64>,
    /// Median time per iteration, ns.
    pub median_ns: f64,
    /// Fastest sample per iteration, ns.
    pub min_ns: f64,
    /// Slowest sample per iteration, ns.
    pub max_ns: f64,
    /// First quartile per iteration, ns.
    pub q1_ns: f64,
    /// Third quartile per iteration, ns.
    pub q3_ns: f64,
    /// Bytes per second at the median.
    pub bytes_per_s: f64,
    /// Tokens per iteration (encode rows).
    pub tokens: Option<u64>,
    /// Tokens per second at the median (encode rows).
    pub tokens_per_s: Option<f64>,
    /// Throughput over the scalar tier's, same key otherwise.
    pub vs_scalar: Option<f64>,
    /// Whether the result (ids, masks, hashes, positions, matches) equals the scalar tier's.
    pub equal_to_scalar: bool,
    /// SHA-256 of the ids (encode rows): equal across machines when they tokenize alike.
    pub ids_sha256: Option<String>,
}

impl Row {
    /// What identifies a row across machines: bench, name, size, threads and tier.
    pub fn key(&self) -> RowKey {
        RowKey {
            bench: self.bench.clone(),
            name: self.name.clone(),
            size: self.size,
            threads: self.threads,
            tier: self.tier.clone(),
        }
    }
}

/// The identity of a row.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RowKey {
    /// `kernel` or `encode`.
    pub bench: String,
    /// Kernel name or model label.
    pub name: String,
    /// Bytes per iteration.
    pub size: u64,
    /// Threads (0 in comparisons: each machine's "all threads").
    pub threads: usize,
    /// The tier (`best` in comparisons: each machine's best tier).
    pub tier: String,
}

/// Several machines' reports, merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`KIND_COMPARISON`].
    pub kind: String,
    /// The machine the relative columns divide by.
    pub baseline: String,
    /// The machines, in column order.
    pub machines: Vec<ComparedMachine>,
    /// The inputs (identical in every report that has them).
    pub inputs: Vec<InputDigest>,
    /// One row per key; `cells[i]` is machine `i`'s.
    pub rows: Vec<ComparedRow>,
}

/// One machine of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparedMachine {
    /// Its label (made unique).
    pub label: String,
    /// The report file it came from.
    pub file: String,
    /// Its tool.
    pub tool: Tool,
    /// Its facts.
    pub machine: Machine,
    /// Its run.
    pub run: Run,
}

/// One key across machines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparedRow {
    /// bench, name, size, threads, tier (`best`: each machine's best tier).
    pub key: RowKey,
    /// Kernel family or model kind.
    pub family: String,
    /// One per machine; `None` where that machine has no such row.
    pub cells: Vec<Option<Cell>>,
    /// Each machine's throughput over the baseline's (`None` where either is missing).
    pub relative: Vec<Option<f64>>,
}

/// One machine's figures for a compared row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The tier measured (for `best` rows, which one).
    pub tier: String,
    /// The threads it ran on (for "all threads" rows, that machine's count).
    pub threads: usize,
    /// Median ns per iteration.
    pub median_ns: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Tokens per second (encode rows).
    pub tokens_per_s: Option<f64>,
    /// Samples taken.
    pub samples: usize,
    /// Whether the result equals that machine's scalar tier's.
    pub equal_to_scalar: bool,
    /// SHA-256 of the ids (encode rows).
    pub ids_sha256: Option<String>,
}
