//! `simdtok report --compare`: reports of several machines merged into one comparison. Rows
//! are matched on bench, model or kernel, size, thread count (one, or each machine's "all") and
//! tier, plus a `best` row per machine's best tier; inputs of the same name must have the same
//! sha256 in every report, or the comparison is refused (figures of different bytes are not
//! comparable).

use std::collections::HashMap;

use super::chart::{Panel, Series, machine_colors};
use super::doc::{Doc, Section, Table};
use super::schema::{
    Cell, ComparedMachine, ComparedRow, Comparison, KIND_COMPARISON, Report, Row, RowKey,
    SCHEMA_VERSION,
};
use super::view::{machine_facts, notes};
use crate::bench::error::{BenchError, InputMismatch};
use crate::bench::inputs::InputDigest;
use crate::bench::stats::round_significant;
use crate::bench::units::{factor, metric, size, three_figures};

/// The tier of the synthesized rows that hold each machine's best tier.
pub const BEST: &str = "best";
/// The thread count of "all threads" rows in comparisons (each machine's own count is in its
/// cells).
pub const ALL_THREADS: usize = 0;

/// Merges `reports` (file name, report), in column order; the relative columns divide by
/// `baseline` (a label; default the first report).
///
/// # Errors
/// [`BenchError::InputsDiffer`] when an input's sha256 differs between two reports;
/// [`BenchError::Invalid`] for an unknown baseline or fewer than two reports.
pub fn compare(
    reports: &[(String, Report)],
    baseline: Option<&str>,
) -> Result<Comparison, BenchError> {
    if reports.len() < 2 {
        return Err(BenchError::Invalid(
            "--compare needs two reports or more".into(),
        ));
    }
    let labels = unique_labels(reports.iter().map(|(_, r)| r.label.as_str()));
    let base = match baseline {
        None => 0,
        Some(b) => labels.iter().position(|l| l == b).ok_or_else(|| {
            BenchError::Invalid(format!(
                "--baseline {b:?} is none of the reports' labels: {}",
                labels
                    .iter()
                    .map(|l| format!("{l:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
    };
    let inputs = check_inputs(reports, &labels)?;

    // Each machine's rows by comparison key, with `best` rows added.
    let mut by_key: Vec<HashMap<RowKey, &Row>> = Vec::new();
    let mut groups: Vec<(RowKey, String)> = Vec::new(); // (key without tier, family), in order
    for (_, report) in reports {
        let best = report.run.tiers.last().cloned().unwrap_or_default();
        let mut map = HashMap::new();
        for row in &report.results {
            let key = compared_key(row, &report.run.tiers);
            let mut group = key.clone();
            group.tier.clear();
            if !groups.iter().any(|(g, _)| *g == group) {
                groups.push((group, row.family.clone()));
            }
            if row.tier == best {
                let mut best_key = key.clone();
                best_key.tier = BEST.to_owned();
                map.insert(best_key, row);
            }
            map.insert(key, row);
        }
        by_key.push(map);
    }
    let mut rows = Vec::new();
    for (group, family) in groups {
        for tier in tier_order(&by_key, &group) {
            let mut key = group.clone();
            key.tier = tier;
            let cells: Vec<Option<Cell>> = by_key
                .iter()
                .map(|m| m.get(&key).map(|r| cell(r)))
                .collect();
            let base_rate = cells[base].as_ref().map(|c| c.bytes_per_s);
            let relative = cells
                .iter()
                .map(|c| match (c, base_rate) {
                    (Some(c), Some(b)) if b > 0.0 => Some(round_significant(c.bytes_per_s / b, 6)),
                    _ => None,
                })
                .collect();
            rows.push(ComparedRow {
                key,
                family: family.clone(),
                cells,
                relative,
            });
        }
    }
    Ok(Comparison {
        schema_version: SCHEMA_VERSION,
        kind: KIND_COMPARISON.to_owned(),
        baseline: labels[base].clone(),
        machines: reports
            .iter()
            .zip(&labels)
            .map(|((file, r), label)| ComparedMachine {
                label: label.clone(),
                file: file.clone(),
                tool: r.tool.clone(),
                machine: r.machine.clone(),
                run: r.run.clone(),
            })
            .collect(),
        inputs,
        rows,
    })
}

/// Labels made unique by a ` (2)`, ` (3)`… suffix.
fn unique_labels<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for label in labels {
        let mut candidate = label.to_owned();
        let mut n = 2;
        while out.contains(&candidate) {
            candidate = format!("{label} ({n})");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// The union of the reports' inputs; an input whose digest differs between two reports is an
/// error naming it.
fn check_inputs(
    reports: &[(String, Report)],
    labels: &[String],
) -> Result<Vec<InputDigest>, BenchError> {
    let mut seen: Vec<(usize, &InputDigest)> = Vec::new();
    for (i, (_, report)) in reports.iter().enumerate() {
        for input in &report.inputs {
            match seen.iter().find(|(_, s)| s.name == input.name) {
                Some((j, first)) if first.sha256 != input.sha256 || first.bytes != input.bytes => {
                    return Err(BenchError::InputsDiffer(Box::new(InputMismatch {
                        input: input.name.clone(),
                        first: reports[*j].0.clone(),
                        first_label: labels[*j].clone(),
                        first_sha256: first.sha256.clone(),
                        second: reports[i].0.clone(),
                        second_label: labels[i].clone(),
                        second_sha256: input.sha256.clone(),
                    })));
                }
                Some(_) => {}
                None => seen.push((i, input)),
            }
        }
    }
    Ok(seen.into_iter().map(|(_, d)| d.clone()).collect())
}

/// A row's key in comparisons: more than one thread becomes [`ALL_THREADS`].
fn compared_key(row: &Row, _tiers: &[String]) -> RowKey {
    let mut key = row.key();
    if key.threads > 1 {
        key.threads = ALL_THREADS;
    }
    key
}

/// The tiers present for `group` on any machine: `best`, then scalar and the SIMD tiers in
/// their order of preference.
fn tier_order(by_key: &[HashMap<RowKey, &Row>], group: &RowKey) -> Vec<String> {
    let mut tiers: Vec<String> = Vec::new();
    for map in by_key {
        for key in map.keys() {
            let same = key.bench == group.bench
                && key.name == group.name
                && key.size == group.size
                && key.threads == group.threads;
            if same && !tiers.contains(&key.tier) {
                tiers.push(key.tier.clone());
            }
        }
    }
    const ORDER: [&str; 5] = [BEST, "scalar", "sse4.2", "avx2", "neon"];
    tiers.sort_by_key(|t| {
        (
            ORDER.iter().position(|o| o == t).unwrap_or(ORDER.len()),
            t.clone(),
        )
    });
    tiers
}

fn cell(row: &Row) -> Cell {
    Cell {
        tier: row.tier.clone(),
        threads: row.threads,
        median_ns: row.median_ns,
        bytes_per_s: row.bytes_per_s,
        tokens_per_s: row.tokens_per_s,
        samples: row.samples_ns.len(),
        equal_to_scalar: row.equal_to_scalar,
        ids_sha256: row.ids_sha256.clone(),
    }
}

/// The comparison as a document: the machines side by side, then the best tier and scalar of
/// every kernel and model on each machine, with each machine over the baseline.
pub fn comparison_doc(c: &Comparison) -> Doc {
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    let mut columns = vec![(String::new(), false)];
    columns.extend(labels.iter().map(|l| ((*l).to_owned(), false)));
    let mut facts = Table::new(columns);
    let per_machine: Vec<Vec<(&str, String)>> = c
        .machines
        .iter()
        .map(|m| machine_facts(&m.machine, &m.tool, &m.run))
        .collect();
    for (i, (name, _)) in per_machine[0].iter().enumerate() {
        let mut row = vec![(*name).to_owned()];
        row.extend(per_machine.iter().map(|f| f[i].1.clone()));
        facts.rows.push(row);
    }
    let mut report_row = vec!["report file".to_owned()];
    report_row.extend(c.machines.iter().map(|m| m.file.clone()));
    facts.rows.push(report_row);
    let others: Vec<&str> = labels
        .iter()
        .copied()
        .filter(|l| *l != c.baseline)
        .collect();
    Doc {
        title: if labels.iter().map(|l| l.len() + 3).sum::<usize>() <= 80 {
            format!("simdtok comparison: {}", labels.join(" · "))
        } else {
            format!("simdtok comparison of {} machines", labels.len())
        },
        subtitle: format!(
            "baseline: {} · rows matched on bench, kernel or model, size, threads and tier · \
             inputs checked by sha256",
            c.baseline,
        ),
        facts,
        sections: vec![
            Section {
                title: "Encode throughput".into(),
                intro: format!(
                    "MB/s of the median pass on each machine's best tier (its name in \
                     parentheses) and on scalar; [n]: the thread count of that machine's \
                     all-threads run; tokens/s of the same row; × {}: over the baseline's \
                     figure; same ids: every machine and tier gave the same ids. Every tier's \
                     own row is in report.json.",
                    c.baseline
                ),
                table: compared_table(c, "encode", &others),
            },
            Section {
                title: "Kernels".into(),
                intro: format!(
                    "GB/s of the median sample on each machine's best tier and on scalar; × {}: \
                     over the baseline's figure.",
                    c.baseline
                ),
                table: compared_table(c, "kernel", &others),
            },
        ],
        notes: notes(),
    }
}

fn compared_table(c: &Comparison, bench: &str, others: &[&str]) -> Table {
    let encode = bench == "encode";
    let mut columns = vec![
        ((if encode { "model" } else { "kernel" }).to_owned(), false),
        ((if encode { "threads" } else { "size" }).to_owned(), true),
        ("tier".to_owned(), false),
    ];
    let unit = if encode { "MB/s" } else { "GB/s" };
    columns.extend(
        c.machines
            .iter()
            .map(|m| (format!("{} {unit}", m.label), true)),
    );
    if encode {
        columns.extend(
            c.machines
                .iter()
                .map(|m| (format!("{} tokens/s", m.label), true)),
        );
    }
    columns.extend(
        others
            .iter()
            .map(|l| (format!("{l} × {}", c.baseline), true)),
    );
    if encode {
        columns.push(("same ids".to_owned(), false));
    }
    let mut table = Table::new(columns);
    let scale = if encode { 1e6 } else { 1e9 };
    for row in c.rows.iter().filter(|r| r.key.bench == bench) {
        if row.key.tier != BEST && row.key.tier != "scalar" {
            continue;
        }
        let mut cells = vec![
            row.key.name.clone(),
            if encode {
                if row.key.threads == ALL_THREADS {
                    "all".to_owned()
                } else {
                    row.key.threads.to_string()
                }
            } else {
                size(row.key.size)
            },
            row.key.tier.clone(),
        ];
        for cell in &row.cells {
            cells.push(cell.as_ref().map_or("–".into(), |x| {
                let mut s = three_figures(x.bytes_per_s / scale);
                if row.key.tier == BEST {
                    s.push_str(&format!(" ({})", x.tier));
                }
                if encode && row.key.threads == ALL_THREADS {
                    s.push_str(&format!(" [{}]", x.threads));
                }
                s
            }));
        }
        if encode {
            for cell in &row.cells {
                cells.push(
                    cell.as_ref()
                        .and_then(|x| x.tokens_per_s)
                        .map_or("–".into(), metric),
                );
            }
        }
        for (m, rel) in c.machines.iter().zip(&row.relative) {
            if m.label != c.baseline {
                cells.push(rel.map_or("–".into(), factor));
            }
        }
        if encode {
            cells.push(same_ids(c, row));
        }
        table.rows.push(cells);
    }
    table
}

/// `✓` when every machine's ids (on every tier of this model and thread count) are the same.
fn same_ids(c: &Comparison, row: &ComparedRow) -> String {
    let digests: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| {
            r.key.bench == row.key.bench && r.key.name == row.key.name && r.key.size == row.key.size
        })
        .flat_map(|r| r.cells.iter().flatten())
        .filter_map(|x| x.ids_sha256.as_deref())
        .collect();
    let all_equal = c
        .rows
        .iter()
        .filter(|r| r.key.bench == row.key.bench && r.key.name == row.key.name)
        .flat_map(|r| r.cells.iter().flatten())
        .all(|x| x.equal_to_scalar);
    if digests.windows(2).all(|w| w[0] == w[1]) && all_equal {
        "✓".into()
    } else {
        "✗".into()
    }
}

/// The chart: per kernel and model, each machine's scalar (light) and best tier (dark).
pub fn comparison_chart(c: &Comparison) -> (Vec<Series>, Vec<Panel>) {
    let mut series = Vec::new();
    for (i, m) in c.machines.iter().enumerate() {
        let (dark, light) = machine_colors(i);
        series.push(Series {
            name: format!("{}: scalar", m.label),
            color: light,
        });
        series.push(Series {
            name: format!("{}: best tier", m.label),
            color: dark,
        });
    }
    let mut panels = Vec::new();
    for (bench, unit, scale) in [("kernel", "GB/s", 1e9), ("encode", "MB/s", 1e6)] {
        let mut names: Vec<(&str, &str)> = Vec::new();
        for r in c.rows.iter().filter(|r| r.key.bench == bench) {
            if !names.iter().any(|(n, _)| *n == r.key.name) {
                names.push((&r.key.name, &r.family));
            }
        }
        for (name, family) in names {
            let mine: Vec<&ComparedRow> = c
                .rows
                .iter()
                .filter(|r| r.key.bench == bench && r.key.name == name)
                .collect();
            let mut keys: Vec<(u64, usize)> = Vec::new();
            for r in &mine {
                if !keys.contains(&(r.key.size, r.key.threads)) {
                    keys.push((r.key.size, r.key.threads));
                }
            }
            let groups = keys
                .iter()
                .map(|&(s, n)| match (bench, n) {
                    ("kernel", _) => size(s),
                    (_, ALL_THREADS) => "all threads".to_owned(),
                    (_, n) => super::view::threads_label(n),
                })
                .collect();
            let mut values = Vec::new();
            for i in 0..c.machines.len() {
                for tier in ["scalar", BEST] {
                    values.push(
                        keys.iter()
                            .map(|&(s, n)| {
                                mine.iter()
                                    .find(|r| {
                                        r.key.size == s && r.key.threads == n && r.key.tier == tier
                                    })
                                    .and_then(|r| r.cells[i].as_ref())
                                    .map(|x| x.bytes_per_s / scale)
                            })
                            .collect(),
                    );
                }
            }
            let title = match bench {
                "kernel" => name.to_owned(),
                _ => format!("encode: {name} ({family})"),
            };
            panels.push(Panel {
                title,
                unit: unit.into(),
                groups,
                values,
                annotations: Vec::new(),
            });
        }
    }
    (series, panels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_unique() {
        let labels = unique_labels(["a", "b", "a", "a"].into_iter());
        assert_eq!(labels, ["a", "b", "a (2)", "a (3)"]);
    }
}
