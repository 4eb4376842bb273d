//! One machine's report as a document and a chart: the machine first, then a table per bench
//! with one column per tier, and a bar chart per kernel and per model comparing the tiers.

use super::chart::{Panel, Series, tier_color};
use super::doc::{Doc, Section, Table};
use super::schema::{Machine, Report, Row, Run, Tool};
use crate::bench::machine::format_bytes;
use crate::bench::units::{factor, metric, size, three_figures};

/// The document of `report`.
pub fn report_doc(report: &Report) -> Doc {
    let mut facts = Table::new(vec![("".into(), false), (report.label.clone(), false)]);
    for (name, value) in machine_facts(&report.machine, &report.tool, &report.run) {
        facts.rows.push(vec![name.to_owned(), value]);
    }
    let tiers = &report.run.tiers;
    let best = tiers.last().cloned().unwrap_or_default();
    Doc {
        title: format!("simdtok report: {}", report.label),
        subtitle: subtitle(&report.tool, &report.run),
        facts,
        sections: vec![
            Section {
                title: "Encode throughput".into(),
                intro: format!(
                    "MB/s (10⁶ bytes of text per second) of the median pass over the corpus, \
                     per tier; tokens/s and × scalar for the best tier ({best}); ids = scalar: \
                     every tier's ids equal the scalar tier's on one thread."
                ),
                table: encode_table(&report.results, tiers),
            },
            Section {
                title: "Kernels".into(),
                intro: format!(
                    "GB/s (10⁹ bytes per second) of the median sample, per tier; × scalar for \
                     the best tier ({best}); = scalar: every tier's result equals scalar's."
                ),
                table: kernel_table(&report.results, tiers),
            },
        ],
        notes: notes(),
    }
}

/// How to read the figures (shared with comparisons).
pub fn notes() -> Vec<String> {
    vec![
        "Figures are medians; report.json keeps every sample with its minimum, maximum and \
         quartiles."
            .into(),
        "trie_prefix_search and trie_prefix_search_batch run the scalar walk on every tier \
         (a walk is a chain of dependent loads no vector instruction shortens), so their tiers \
         should tie: the spread between them shows the noise of the machine."
            .into(),
        "Encode passes reuse each thread's piece caches, as a long-running service does; the \
         all-threads rows split the texts into contiguous slices of equal bytes."
            .into(),
    ]
}

/// `simdtok 0.1.0 (commit) · release · started … · N s`.
pub fn subtitle(tool: &Tool, run: &Run) -> String {
    format!(
        "simdtok {} ({}) · {} build · {} · {:.0} s (budget {:.0} s)",
        tool.version,
        short(&tool.git_commit),
        tool.profile,
        run.started_utc,
        run.elapsed_s,
        run.budget_s
    )
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The machine's facts as (name, value) lines.
pub fn machine_facts(m: &Machine, tool: &Tool, run: &Run) -> Vec<(&'static str, String)> {
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let mut cores = format!("{} logical", m.logical_cores);
    if let Some(p) = m.physical_cores {
        cores.push_str(&format!(", {p} physical"));
    }
    if let (Some(p), Some(e)) = (m.performance_cores, m.efficiency_cores) {
        cores.push_str(&format!(" ({p} performance + {e} efficiency)"));
    }
    let caches = crate::bench::machine::caches_line(
        m.caches
            .iter()
            .map(|c| (c.level, c.kind.as_str(), c.size_bytes)),
    );
    vec![
        ("CPU", or_unknown(&m.cpu_brand)),
        ("architecture", m.arch.clone()),
        ("cores", cores),
        (
            "caches",
            if caches.is_empty() {
                "unknown".into()
            } else {
                caches
            },
        ),
        (
            "memory",
            m.memory_bytes.map_or("unknown".into(), format_bytes),
        ),
        ("OS", or_unknown(&m.os)),
        ("kernel", or_unknown(&m.kernel)),
        ("CPU features", m.features.join(" ")),
        ("tiers supported", m.supported_tiers.join(" ")),
        (
            "active tier",
            format!("{} ({})", m.active_tier, m.active_reason),
        ),
        (
            "simdtok",
            format!(
                "{} ({}), {} build for {}, tiers compiled: {}",
                tool.version,
                short(&tool.git_commit),
                tool.profile,
                tool.target,
                tool.compiled_tiers.join(" ")
            ),
        ),
        ("rustc", tool.rustc.clone()),
        (
            "run",
            format!(
                "{} · {:.1} s for a budget of {:.0} s · all threads = {} · {}–{} samples per row",
                run.started_utc,
                run.elapsed_s,
                run.budget_s,
                run.threads,
                run.min_samples,
                run.max_samples
            ),
        ),
    ]
}

/// Rows of `bench` grouped by (name, size, threads) in first-seen order, each with its rows per
/// tier.
fn grouped<'a>(rows: &'a [Row], bench: &str) -> Vec<Vec<&'a Row>> {
    let mut groups: Vec<Vec<&Row>> = Vec::new();
    for row in rows.iter().filter(|r| r.bench == bench) {
        match groups.iter_mut().find(|g| {
            let h = g[0];
            h.name == row.name && h.size == row.size && h.threads == row.threads
        }) {
            Some(g) => g.push(row),
            None => groups.push(vec![row]),
        }
    }
    groups
}

fn tier_cell<'a>(group: &[&'a Row], tier: &str) -> Option<&'a Row> {
    group.iter().copied().find(|r| r.tier == tier)
}

fn equal_cell(group: &[&Row]) -> String {
    let bad: Vec<&str> = group
        .iter()
        .filter(|r| !r.equal_to_scalar)
        .map(|r| r.tier.as_str())
        .collect();
    if bad.is_empty() {
        "✓".into()
    } else {
        format!("✗ {}", bad.join(" "))
    }
}

fn encode_table(rows: &[Row], tiers: &[String]) -> Table {
    let mut columns = vec![
        ("model".to_owned(), false),
        ("kind".to_owned(), false),
        ("threads".to_owned(), true),
    ];
    columns.extend(tiers.iter().map(|t| (format!("{t} MB/s"), true)));
    columns.extend([
        ("tokens/s".to_owned(), true),
        ("× scalar".to_owned(), true),
        ("ids = scalar".to_owned(), false),
    ]);
    let mut table = Table::new(columns);
    let best = tiers.last().map(String::as_str).unwrap_or("scalar");
    for group in grouped(rows, "encode") {
        let head = group[0];
        let mut cells = vec![
            head.name.clone(),
            head.family.clone(),
            head.threads.to_string(),
        ];
        for tier in tiers {
            cells.push(
                tier_cell(&group, tier)
                    .map_or("–".into(), |r| three_figures(r.bytes_per_s / 1e6)),
            );
        }
        let b = tier_cell(&group, best);
        cells.push(b.and_then(|r| r.tokens_per_s).map_or("–".into(), metric));
        cells.push(b.and_then(|r| r.vs_scalar).map_or("–".into(), factor));
        cells.push(equal_cell(&group));
        table.rows.push(cells);
    }
    table
}

fn kernel_table(rows: &[Row], tiers: &[String]) -> Table {
    let mut columns = vec![("kernel".to_owned(), false), ("size".to_owned(), true)];
    columns.extend(tiers.iter().map(|t| (format!("{t} GB/s"), true)));
    columns.extend([
        ("× scalar".to_owned(), true),
        ("= scalar".to_owned(), false),
    ]);
    let mut table = Table::new(columns);
    let best = tiers.last().map(String::as_str).unwrap_or("scalar");
    for group in grouped(rows, "kernel") {
        let head = group[0];
        let mut cells = vec![head.name.clone(), size(head.size)];
        for tier in tiers {
            cells.push(
                tier_cell(&group, tier)
                    .map_or("–".into(), |r| three_figures(r.bytes_per_s / 1e9)),
            );
        }
        let b = tier_cell(&group, best);
        cells.push(b.and_then(|r| r.vs_scalar).map_or("–".into(), factor));
        cells.push(equal_cell(&group));
        table.rows.push(cells);
    }
    table
}

/// The chart's series (one per tier) and panels (one per kernel, then one per model).
pub fn report_chart(report: &Report) -> (Vec<Series>, Vec<Panel>) {
    let tiers = &report.run.tiers;
    let series = tiers
        .iter()
        .map(|t| Series {
            name: t.clone(),
            color: tier_color(t),
        })
        .collect();
    let mut panels = Vec::new();
    for (bench, unit, scale) in [("kernel", "GB/s", 1e9), ("encode", "MB/s", 1e6)] {
        let rows: Vec<&Row> = report.results.iter().filter(|r| r.bench == bench).collect();
        let mut names: Vec<&str> = Vec::new();
        for r in &rows {
            if !names.contains(&r.name.as_str()) {
                names.push(&r.name);
            }
        }
        for name in names {
            let mine: Vec<&&Row> = rows.iter().filter(|r| r.name == name).collect();
            // Groups: sizes for kernels, thread counts for models.
            let mut keys: Vec<(u64, usize)> = Vec::new();
            for r in &mine {
                if !keys.contains(&(r.size, r.threads)) {
                    keys.push((r.size, r.threads));
                }
            }
            let groups = keys
                .iter()
                .map(|&(s, n)| {
                    if bench == "kernel" {
                        size(s)
                    } else {
                        threads_label(n)
                    }
                })
                .collect();
            let values = tiers
                .iter()
                .map(|t| {
                    keys.iter()
                        .map(|&(s, n)| {
                            mine.iter()
                                .find(|r| r.size == s && r.threads == n && &r.tier == t)
                                .map(|r| r.bytes_per_s / scale)
                        })
                        .collect()
                })
                .collect();
            // The best tier's speed-up over scalar, above each group.
            let best = tiers.last().map(String::as_str).unwrap_or("scalar");
            let annotations = keys
                .iter()
                .map(|&(s, n)| {
                    mine.iter()
                        .find(|r| r.size == s && r.threads == n && r.tier == best)
                        .and_then(|r| r.vs_scalar)
                        .filter(|_| tiers.len() > 1)
                        .map(factor)
                })
                .collect();
            let title = match bench {
                "kernel" => name.to_owned(),
                _ => format!("encode: {name} ({})", mine[0].family),
            };
            panels.push(Panel {
                title,
                unit: unit.into(),
                groups,
                values,
                annotations,
            });
        }
    }
    (series, panels)
}

/// `1 thread`, `8 threads`.
pub fn threads_label(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}
