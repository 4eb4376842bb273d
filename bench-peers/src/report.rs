//! The pieces of the Markdown report that the SentencePiece, WordPiece and BPE sections share: the
//! opening lines, table headings, footnotes, MB/s and ratio cells, the model load table and the
//! list of ids that differ.

use std::fmt::Write as _;

use crate::measure;
use crate::peers::{Impl, ModelSpec};
use crate::{Cell, LoadCell, ModelResult, Row, Verdict};

/// CPU time ÷ wall time above which a cell is marked as not on one thread (one thread gives at most
/// 1, less the time waiting for the CPU).
pub const MORE_THAN_ONE_THREAD: f64 = 1.15;

/// Numbered footnotes.
#[derive(Default)]
pub struct Notes(Vec<String>);

impl Notes {
    pub fn mark(&mut self, text: &str) -> String {
        let i = match self.0.iter().position(|t| t == text) {
            Some(i) => i,
            None => {
                self.0.push(text.to_owned());
                self.0.len() - 1
            }
        };
        format!(" [{}]", i + 1)
    }

    /// The footnotes, each after a blank line.
    pub fn write(&self, out: &mut String) {
        for (i, n) in self.0.iter().enumerate() {
            let _ = writeln!(out, "\n[{}] {n}", i + 1);
        }
    }
}

pub fn fmt_mbps(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn fmt_cell(cell: &Cell, notes: &mut Notes) -> String {
    match cell {
        Cell::NotLoaded(_) => "n/a".to_owned(),
        Cell::Skipped(reason) => format!("skipped{}", notes.mark(reason)),
        Cell::Done {
            mbps,
            passes,
            reduced,
            verdict,
            ..
        } => {
            let mut s = fmt_mbps(*mbps);
            if *reduced {
                s += &notes.mark(&format!(
                    "median of {passes} passes: one pass took too long for more"
                ));
            }
            match verdict {
                Verdict::Same => {}
                Verdict::Differs { lines, total, .. } if *total > 1 => {
                    let _ = write!(s, " ≠{lines}");
                }
                Verdict::Differs { .. } => s.push_str(" ≠"),
                Verdict::Unverified => s.push_str(" (unverified)"),
            }
            s
        }
    }
}

/// A WordPiece or BPE cell: like [`fmt_cell`], but a model that did not load says why in a
/// footnote, and a figure that was not on one thread is marked.
pub fn fmt_cell_marked(cell: &Cell, label: &str, spec: &ModelSpec, notes: &mut Notes) -> String {
    match cell {
        Cell::NotLoaded(why) => {
            // The same reason for every model makes one footnote: the path goes.
            let why = why.replace(&format!("{}: ", spec.path.display()), "");
            format!("n/a{}", notes.mark(&format!("{label} cannot load: {why}")))
        }
        Cell::Done {
            cpu_per_wall: Some(r),
            ..
        } if *r > MORE_THAN_ONE_THREAD => {
            // Marked on the figure itself: it is not a one-thread figure.
            let s = fmt_cell(cell, notes);
            let (figure, rest) = s.split_once(' ').unwrap_or((&s, ""));
            let mark = notes.mark(&format!(
                "{label} used more than one thread here: the process's CPU time was {r:.2}× the \
                 wall time of the timed passes"
            ));
            format!(
                "{figure}{mark}{}{rest}",
                if rest.is_empty() { "" } else { " " }
            )
        }
        other => fmt_cell(other, notes),
    }
}

pub fn ratio(simdtok: Option<f64>, peer: Option<f64>) -> String {
    match (simdtok, peer) {
        (Some(s), Some(p)) if p > 0.0 => format!("{:.2}×", s / p),
        _ => String::new(),
    }
}

/// Whether a cell's ids differ from the reference's.
pub fn differs(cell: &Cell) -> bool {
    matches!(
        cell,
        Cell::Done {
            verdict: Verdict::Differs { .. },
            ..
        }
    )
}

/// The fastest of some peers' cells: (implementation, MB/s, ids differ).
pub fn fastest<'a>(cells: impl Iterator<Item = (Impl, &'a Cell)>) -> Option<(Impl, f64, bool)> {
    cells
        .filter_map(|(i, c)| Some((i, c.mbps()?, differs(c))))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// simdtok ÷ the fastest peer, then that peer's name (and `≠` if its ids differ).
pub fn fmt_ratio_peer(
    simdtok: Option<f64>,
    peer: Option<(Impl, f64, bool)>,
    label: fn(Impl) -> &'static str,
) -> String {
    match peer {
        Some((p, v, d)) => {
            let r = ratio(simdtok, Some(v));
            if r.is_empty() {
                r
            } else {
                format!("{r} ({}{})", label(p), if d { " ≠" } else { "" })
            }
        }
        None => String::new(),
    }
}

/// A one-text input against prose: per-byte time ÷ prose's, else the input's MB/s alone.
pub fn vs_prose(prose: Option<f64>, input: Option<f64>) -> Option<String> {
    match (prose, input) {
        (Some(p), Some(a)) if a > 0.0 => Some(format!("{:.2}×", p / a)),
        (_, Some(a)) => Some(format!("({} MB/s)", fmt_mbps(a))),
        _ => None,
    }
}

pub fn find_row<'a>(m: &'a ModelResult, input: &str) -> Option<&'a Row> {
    m.rows.iter().find(|r| r.input == input)
}

pub fn cell_of(row: &Row, imp: Impl) -> Option<&Cell> {
    row.cells.iter().find(|(i, _)| *i == imp).map(|(_, c)| c)
}

/// The command and the machine: the report's first two lines.
pub fn preamble(out: &mut String, tier: &str, seconds: f64) {
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let command: Vec<String> = std::env::args().skip(1).collect();
    let _ = writeln!(
        out,
        "Command: `cargo run --release -p bench-peers --{}{}`  ",
        if command.is_empty() { "" } else { " " },
        command.join(" ")
    );
    let _ = writeln!(
        out,
        "Date: {}; CPU: {}; simdtok tier: {tier}; {rustc}; {} s in all.  ",
        measure::today(),
        measure::cpu_model(),
        seconds.round()
    );
}

/// What the description says of the passes' order.
pub fn round_robin(passes: usize) -> &'static str {
    if passes > 1 {
        " (round robin over the implementations)"
    } else {
        ""
    }
}

/// What the description says of the corpora under `--quick`.
pub fn quick_cut(quick: bool) -> &'static str {
    if quick {
        " (--quick: the first 256 KiB of each)"
    } else {
        ""
    }
}

/// A table's heading and rule: the leading columns, one right-aligned column per label, then the
/// trailing columns.
pub fn table_head(
    out: &mut String,
    lead: (&str, &str),
    labels: impl IntoIterator<Item = String>,
    tail: (&str, &str),
) {
    let (mut header, mut rule) = (lead.0.to_owned(), lead.1.to_owned());
    for l in labels {
        let _ = write!(header, " {l} |");
        rule.push_str("---:|");
    }
    header.push_str(tail.0);
    rule.push_str(tail.1);
    let _ = writeln!(out, "{header}\n{rule}");
}

/// The leading cells of a throughput row: model, input, MB, texts.
pub fn row_lead(out: &mut String, model: &str, row: &Row) {
    let _ = write!(
        out,
        "| {model} | `{}` | {:.2} | {} |",
        row.input,
        row.bytes as f64 / 1e6,
        row.lines
    );
}

/// The leading cells of a model load row: model, file, MB.
pub fn load_lead(out: &mut String, spec: &ModelSpec) {
    let size = std::fs::metadata(&spec.path).map_or(0, |md| md.len());
    let file = spec
        .path
        .file_name()
        .map_or(String::new(), |f| f.to_string_lossy().into_owned());
    let _ = write!(
        out,
        "| `{}` | `{file}` | {:.2} |",
        spec.name,
        size as f64 / 1e6
    );
}

/// A model load cell: median time and memory.
pub fn load_cell(cell: Option<&LoadCell>) -> String {
    match cell {
        Some(LoadCell::NotLoaded(_)) => "n/a".to_owned(),
        Some(LoadCell::Done {
            median_ms,
            rss_delta,
        }) => {
            let rss = rss_delta.map_or("?".to_owned(), |b| {
                format!("{:.1} MiB", b as f64 / 1048576.0)
            });
            format!("{median_ms:.1} ms, {rss}")
        }
        None => String::new(),
    }
}

/// Why an implementation could not load a model (in a load probe or in this process), once each.
pub fn load_reasons<'a>(
    out: &mut String,
    models: impl Iterator<Item = &'a ModelResult>,
    label: fn(Impl) -> &'static str,
) {
    let mut reasons: Vec<String> = Vec::new();
    for m in models {
        let in_process = m
            .rows
            .iter()
            .flat_map(|r| &r.cells)
            .filter_map(|(imp, c)| match c {
                Cell::NotLoaded(why) => Some((*imp, why)),
                _ => None,
            });
        let probed = m.loads.iter().filter_map(|(imp, c)| match c {
            LoadCell::NotLoaded(why) => Some((*imp, why)),
            LoadCell::Done { .. } => None,
        });
        for (imp, why) in probed.chain(in_process) {
            let line = format!("{} cannot load `{}`: {why}", label(imp), m.spec.name);
            if !reasons.contains(&line) {
                reasons.push(line);
            }
        }
    }
    if !reasons.is_empty() {
        out.push('\n');
        for r in reasons {
            let _ = writeln!(out, "- {r}");
        }
    }
}

/// How many texts differ: "the one text" or "N of M texts".
pub fn texts_differ(one_text: bool, lines: usize, total: usize) -> String {
    if one_text {
        "the one text".to_owned()
    } else {
        format!("{lines} of {total} texts")
    }
}

/// One line per cell whose ids differ, with its first difference, or `none` when none does.
pub fn differences<'a>(
    out: &mut String,
    results: &'a [ModelResult],
    cells: impl Fn(&'a Row) -> Vec<(Impl, &'a Cell)>,
    none: &str,
) {
    let mut any = false;
    for m in results {
        for row in &m.rows {
            for (imp, cell) in cells(row) {
                if let Cell::Done {
                    verdict:
                        Verdict::Differs {
                            lines,
                            total,
                            example,
                            ..
                        },
                    ..
                } = cell
                {
                    any = true;
                    let _ = writeln!(
                        out,
                        "- {} on `{}` × `{}`: {}. First: {example}",
                        imp.label(),
                        m.spec.name,
                        row.input,
                        texts_differ(row.one_text, *lines, *total)
                    );
                }
            }
        }
    }
    if !any {
        let _ = writeln!(out, "{none}");
    }
}
