//! `simdtok bench`'s output: one text table (model × threads × tier: MB/s, tokens/s, speed-up
//! over scalar, ids check), or the same rows as JSON.

use serde::Serialize;

use super::build_info;
use super::encode::PassIds;
use super::suite::{BenchConfig, BenchRow};
use super::units::{factor, metric, three_figures};

/// Columns of text, left-aligned (`false`) or right-aligned (`true`), with two spaces between.
pub struct TextTable {
    header: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column headers and alignments.
    pub fn new(columns: &[(&str, bool)]) -> TextTable {
        TextTable {
            header: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            right: columns.iter().map(|(_, r)| *r).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (one cell per column).
    pub fn push(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }

    /// The table, a line per row, the header underlined.
    pub fn render(&self) -> String {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let pad = " ".repeat(widths[i] - width(cell));
                if i > 0 {
                    out.push_str("  ");
                }
                if self.right[i] {
                    out.push_str(&pad);
                    out.push_str(cell);
                } else {
                    out.push_str(cell);
                    if i + 1 < cells.len() {
                        out.push_str(&pad);
                    }
                }
            }
            out.push('\n');
            out
        };
        let mut out = line(&self.header);
        let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
        out.push_str(&line(&rule));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// The first lines: what was measured, on what, how.
pub fn heading(config: &BenchConfig, cpu: &str) -> String {
    let tiers: Vec<&str> = config.tiers.iter().map(|t| t.name()).collect();
    let threads: Vec<String> = config.threads.iter().map(|n| n.to_string()).collect();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let passes = if config.plan.min_passes == 1 && config.plan.max_passes == 1 {
        "one pass".to_owned()
    } else if config.plan.min_passes == config.plan.max_passes {
        format!("median of {} passes", config.plan.min_passes)
    } else {
        format!(
            "median of {}–{} passes",
            config.plan.min_passes, config.plan.max_passes
        )
    };
    let kept = match config.pass_ids {
        PassIds::Discard => "",
        PassIds::Keep => ", every id of a pass kept",
    };
    let kept = match config.cache_budget.limit() {
        None => kept.to_owned(),
        Some(_) => format!("{kept}, caches at most {} a thread", config.cache_budget),
    };
    let mut out = format!(
        "simdtok bench: {} × tiers {} × threads {} over {} ({:.1} KB in {}); {passes} after a \
         warm-up{kept}\n",
        plural(config.models.len(), "model", "models"),
        tiers.join(" "),
        threads.join(" and "),
        plural(config.corpus.len(), "text", "texts"),
        config.corpus.bytes() as f64 / 1e3,
        plural(config.corpus.files.len(), "file", "files"),
    );
    out.push_str(&format!(
        "cpu: {cpu}; simdtok {} {} ({} build)\n",
        build_info::VERSION,
        build_info::short_commit(),
        build_info::PROFILE
    ));
    if build_info::PROFILE != "release" {
        out.push_str("note: a debug build; timings mean little (cargo run --release -- bench)\n");
    }
    out
}

/// The table of `rows`: MB/s and tokens/s are of the median pass, ± half the interquartile
/// range of the passes relative to the median (how steady they were); × scalar is against the
/// scalar tier at the same thread count.
pub fn render(rows: &[BenchRow]) -> String {
    let mut table = TextTable::new(&[
        ("model", false),
        ("kind", false),
        ("threads", true),
        ("tier", false),
        ("MB/s", true),
        ("tokens/s", true),
        ("± IQR", true),
        ("× scalar", true),
        ("cache/thread", true),
        ("ids", false),
    ]);
    let mut last: Option<(&str, usize)> = None;
    for row in rows {
        let m = &row.measurement;
        let first_of_model = last.is_none_or(|(model, _)| model != row.model);
        let first_of_group = first_of_model || last.is_some_and(|(_, n)| n != m.threads);
        table.push(vec![
            if first_of_model {
                row.model.clone()
            } else {
                String::new()
            },
            if first_of_model {
                row.kind.clone()
            } else {
                String::new()
            },
            if first_of_group {
                m.threads.to_string()
            } else {
                String::new()
            },
            m.tier.name().to_owned(),
            three_figures(row.bytes_per_s / 1e6),
            metric(row.tokens_per_s),
            format!("{:.0}%", 50.0 * row.summary.relative_iqr()),
            row.vs_scalar.map_or("–".to_owned(), factor),
            super::units::size(m.cache_bytes_per_thread),
            if row.ids_equal {
                "✓".to_owned()
            } else {
                "✗ differ".to_owned()
            },
        ]);
        last = Some((&row.model, m.threads));
    }
    let mut out = table.render();
    out.push_str(&slow_path_notes(rows));
    out
}

/// A line per model and regex that runs on the regex engine, once each: a slower path is
/// never taken silently.
fn slow_path_notes(rows: &[BenchRow]) -> String {
    let mut out = String::new();
    let mut said: Vec<(&str, &str)> = Vec::new();
    for row in rows {
        for source in &row.measurement.regex_fallbacks {
            if !said.contains(&(row.model.as_str(), source.as_str())) {
                said.push((&row.model, source));
                out.push_str(&format!(
                    "note: {}: the pre-tokenizer regex {source:?} has no hand-written scanner; it runs on the regex engine, several times slower\n",
                    row.model
                ));
            }
        }
    }
    out
}

/// The last line: whether every row's ids equal scalar's, naming those that do not.
pub fn verdict(rows: &[BenchRow]) -> (bool, String) {
    let bad: Vec<String> = rows
        .iter()
        .filter(|r| !r.ids_equal)
        .map(|r| {
            format!(
                "{} on {} with {} threads",
                r.model, r.measurement.tier, r.measurement.threads
            )
        })
        .collect();
    if bad.is_empty() {
        (
            true,
            format!("✓ ids: all {} rows gave the scalar tier's ids", rows.len()),
        )
    } else {
        (
            false,
            format!("✗ ids differ from the scalar tier's: {}", bad.join("; ")),
        )
    }
}

/// `simdtok bench --json`: one object.
#[derive(Serialize)]
pub struct BenchJson<'a> {
    /// `simdtok-bench/1`.
    pub schema: &'static str,
    /// simdtok's version and commit.
    pub version: String,
    /// The CPU brand.
    pub cpu: &'a str,
    /// The corpus files (name, bytes, sha256).
    pub corpus: &'a [super::inputs::InputDigest],
    /// Whether each timed pass kept every id (`--keep-ids`) instead of reusing one buffer.
    pub keep_ids: bool,
    /// `--cache-budget` in bytes; `null` for the default sizes.
    pub cache_budget: Option<usize>,
    /// Texts and their bytes.
    pub texts: usize,
    /// Bytes of the texts.
    pub bytes: u64,
    /// The rows.
    pub rows: Vec<BenchJsonRow<'a>>,
    /// Whether every row's ids equal scalar's.
    pub ids_equal: bool,
}

/// One row of [`BenchJson`].
#[derive(Serialize)]
pub struct BenchJsonRow<'a> {
    /// The model's label.
    pub model: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// The tier.
    pub tier: &'static str,
    /// Threads.
    pub threads: usize,
    /// Tokens per pass.
    pub tokens: u64,
    /// The warm-up pass, ns.
    pub warmup_ns: u64,
    /// The timed passes, ns.
    pub samples_ns: &'a [u64],
    /// The median pass, ns.
    pub median_ns: f64,
    /// MB/s (10^6 bytes) of the median pass.
    pub mb_per_s: f64,
    /// Tokens per second of the median pass.
    pub tokens_per_s: f64,
    /// Over scalar at the same thread count.
    pub vs_scalar: Option<f64>,
    /// Ids equal to scalar's.
    pub ids_equal: bool,
    /// SHA-256 of the ids.
    pub ids_sha256: &'a str,
    /// The most bytes one worker's caches held after a pass.
    pub cache_bytes_per_thread: u64,
}

/// The JSON form of a run.
pub fn to_json<'a>(config: &'a BenchConfig, cpu: &'a str, rows: &'a [BenchRow]) -> BenchJson<'a> {
    BenchJson {
        schema: "simdtok-bench/1",
        version: format!("{} {}", build_info::VERSION, build_info::short_commit()),
        cpu,
        corpus: &config.corpus.files,
        keep_ids: config.pass_ids == PassIds::Keep,
        cache_budget: config.cache_budget.limit(),
        texts: config.corpus.len(),
        bytes: config.corpus.bytes(),
        ids_equal: rows.iter().all(|r| r.ids_equal),
        rows: rows
            .iter()
            .map(|r| BenchJsonRow {
                model: &r.model,
                kind: &r.kind,
                tier: r.measurement.tier.name(),
                threads: r.measurement.threads,
                tokens: r.measurement.tokens,
                warmup_ns: r.measurement.warmup_ns,
                samples_ns: &r.measurement.samples_ns,
                median_ns: r.summary.median,
                mb_per_s: r.bytes_per_s / 1e6,
                tokens_per_s: r.tokens_per_s,
                vs_scalar: r.vs_scalar,
                ids_equal: r.ids_equal,
                ids_sha256: &r.measurement.ids_sha256,
                cache_bytes_per_thread: r.measurement.cache_bytes_per_thread,
            })
            .collect(),
    }
}
