//! bench-peers: simdtok's SentencePiece encoding against peer libraries in the same process, on the
//! same input, on one thread. Prints Markdown tables (MB/s, ratios, load time and memory, ids that
//! differ from simdtok's, the targets of issue #3).
//!
//! ```text
//! cargo run --release -p bench-peers -- [--quick] [--model NAME]... [--corpus NAME]...
//!     [--impls simdtok,spm-cpp,spm-crate,kitoken,tokie] [--passes N] [--data DIR]
//! ```

mod measure;
mod peers;
mod python;

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use measure::{median, rss_bytes, time_pass};
use peers::{Encoder, Impl, ModelSpec};

/// The corpora, each read line by line (a line without its `\n`, and a `\r` before it, is a text,
/// as `simdtok encode` reads them).
const CORPORA: [&str; 6] = [
    "en_kjv_bible",
    "ja_debian_reference",
    "zh-cn_debian_reference",
    "code_python311_stdlib_sample.py",
    "multi_udhr_all_languages",
    "emoji_unicode15_emoji-test",
];

/// The prose that the repeated-character inputs are compared with.
const PROSE: &str = "en_kjv_bible";

/// The pathological inputs: about 1 MB (10^6 bytes) of one character, as one text.
const REPEATS: [(&str, char); 2] = [("repeat-a", 'a'), ("repeat-日", '日')];
const REPEAT_BYTES: usize = 1_000_000;

const USAGE: &str = "\
usage: bench-peers [--quick] [--model NAME]... [--corpus NAME]... [--impls LIST] [--passes N]
                   [--data DIR]

  --quick          3 passes, corpora cut to their first 256 KiB (the repeated inputs stay 1 MB)
  --model NAME     only models whose name contains NAME (repeatable)
  --corpus NAME    only inputs whose name contains NAME (repeatable; repeat-a and repeat-日 are
                   the 1 MB repeated-character inputs)
  --impls LIST     comma-separated, from simdtok,spm-cpp,spm-crate,kitoken,tokie (simdtok is
                   always run: it is the reference the others are checked against)
  --passes N       timed passes per cell (default 5; a warm-up pass that also checks ids comes first)
  --repeat-limit S skip an implementation on a repeated-character input when one pass is
                   estimated (from 16 and 64 KiB prefixes) to take over S seconds (default 30;
                   --quick: 5)
  --data DIR       shared data (default $SIMDTOK_SHARED_DATA, else ../shared/data beside the
                   workspace)";

struct Options {
    quick: bool,
    models: Vec<String>,
    corpora: Vec<String>,
    impls: Vec<Impl>,
    passes: usize,
    data: PathBuf,
    /// Seconds one cell may take before it gets fewer passes.
    cell_budget_s: f64,
    /// A repeated-character input estimated to take longer than this per pass is skipped.
    repeat_limit_s: f64,
    loads: usize,
}

fn default_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"))
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        models: Vec::new(),
        corpora: Vec::new(),
        impls: Impl::ALL.to_vec(),
        passes: 5,
        data: default_data(),
        cell_budget_s: 40.0,
        repeat_limit_s: 30.0,
        loads: 5,
    };
    let mut passes = None;
    let mut repeat_limit = None;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--model" => o.models.push(value("--model")?),
            "--corpus" => o.corpora.push(value("--corpus")?),
            "--impls" => {
                let list = value("--impls")?;
                let mut impls = vec![Impl::Simdtok];
                for key in list.split(',').filter(|k| !k.is_empty()) {
                    let imp = Impl::from_key(key).ok_or(format!("unknown implementation {key}"))?;
                    if !impls.contains(&imp) {
                        impls.push(imp);
                    }
                }
                impls.sort_by_key(|i| Impl::ALL.iter().position(|a| a == i));
                o.impls = impls;
            }
            "--passes" => {
                let v = value("--passes")?;
                passes = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or(format!("--passes {v}: not a positive integer"))?,
                );
            }
            "--data" => o.data = PathBuf::from(value("--data")?),
            "--repeat-limit" => {
                let v = value("--repeat-limit")?;
                repeat_limit = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|s| *s > 0.0)
                        .ok_or(format!("--repeat-limit {v}: not a positive number"))?,
                );
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.quick {
        o.passes = 3;
        o.loads = 3;
        o.cell_budget_s = 10.0;
        o.repeat_limit_s = 5.0;
    }
    if let Some(n) = passes {
        o.passes = n;
    }
    if let Some(s) = repeat_limit {
        o.repeat_limit_s = s;
    }
    Ok(o)
}

/// An implementation and what loading the model gave it.
type Loaded = (Impl, Result<Box<dyn Encoder>, String>);

/// One input: texts as spans of one string.
struct Input {
    name: String,
    text: String,
    spans: Vec<Range<usize>>,
    /// Bytes encoded (line ends excluded).
    bytes: usize,
    one_text: bool,
}

impl Input {
    fn corpus(path: &Path, name: &str, limit: Option<usize>) -> Result<Input, String> {
        let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut text =
            String::from_utf8(raw).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?;
        if let Some(limit) = limit.filter(|&l| l < text.len()) {
            // Cut after the line end at or past the limit.
            let end = text.as_bytes()[limit..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| limit + i + 1);
            text.truncate(end);
        }
        let mut spans = Vec::new();
        let mut start = 0;
        let bytes = text.as_bytes();
        while start < bytes.len() {
            let (end, next) = match text[start..].find('\n') {
                Some(i) => {
                    let nl = start + i;
                    let end = if nl > start && bytes[nl - 1] == b'\r' {
                        nl - 1
                    } else {
                        nl
                    };
                    (end, nl + 1)
                }
                None => (bytes.len(), bytes.len()),
            };
            spans.push(start..end);
            start = next;
        }
        let total = spans.iter().map(|s| s.len()).sum();
        Ok(Input {
            name: name.to_owned(),
            text,
            spans,
            bytes: total,
            one_text: false,
        })
    }

    fn repeated(name: &str, ch: char, bytes: usize) -> Input {
        let text: String = std::iter::repeat_n(ch, bytes.div_ceil(ch.len_utf8())).collect();
        Input {
            name: name.to_owned(),
            spans: std::iter::once(0..text.len()).collect(),
            bytes: text.len(),
            text,
            one_text: true,
        }
    }

    fn lines(&self) -> usize {
        self.spans.len()
    }
}

/// How a peer's ids compare with simdtok's on an input.
#[derive(Clone, Debug)]
enum Verdict {
    Same,
    Differs {
        lines: usize,
        total: usize,
        example: String,
    },
    /// simdtok itself did not run on this input.
    Unverified,
}

#[derive(Clone, Debug)]
enum Cell {
    /// The implementation could not load the model (the reason).
    NotLoaded(String),
    /// Not run (the reason).
    Skipped(String),
    Done {
        mbps: f64,
        passes: usize,
        reduced: bool,
        verdict: Verdict,
    },
}

impl Cell {
    fn mbps(&self) -> Option<f64> {
        match self {
            Cell::Done { mbps, .. } => Some(*mbps),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
enum LoadCell {
    NotLoaded(String),
    Done {
        median_ms: f64,
        rss_delta: Option<i64>,
    },
}

struct Row {
    input: String,
    bytes: usize,
    lines: usize,
    one_text: bool,
    cells: Vec<(Impl, Cell)>,
}

struct ModelResult {
    spec: ModelSpec,
    loads: Vec<(Impl, LoadCell)>,
    rows: Vec<Row>,
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--load-probe") {
        args.next();
        return load_probe(args.collect());
    }
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("bench-peers: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
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

fn matches(filters: &[String], name: &str) -> bool {
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn run(opts: &Options) -> Result<String, String> {
    if !opts.data.is_dir() {
        return Err(format!(
            "shared data not found at {} (set SIMDTOK_SHARED_DATA or --data)",
            opts.data.display()
        ));
    }
    let models: Vec<ModelSpec> = peers::models(&opts.data)
        .into_iter()
        .filter(|m| matches(&opts.models, m.name))
        .collect();
    if models.is_empty() {
        return Err("no model matches --model".to_owned());
    }
    let limit = opts.quick.then_some(256 << 10);
    let mut inputs = Vec::new();
    for name in CORPORA.iter().filter(|n| matches(&opts.corpora, n)) {
        let path = opts.data.join("corpora").join(format!("{name}.txt"));
        inputs.push(Input::corpus(&path, name, limit)?);
    }
    for (name, ch) in REPEATS.iter().filter(|(n, _)| matches(&opts.corpora, n)) {
        inputs.push(Input::repeated(name, *ch, REPEAT_BYTES));
    }
    if inputs.is_empty() {
        return Err("no input matches --corpus".to_owned());
    }

    let started = Instant::now();
    let mut results = Vec::new();
    for spec in &models {
        eprintln!("== {} ({})", spec.name, spec.algorithm);
        let loads = opts
            .impls
            .iter()
            .map(|&imp| (imp, probe_load(opts, imp, spec)))
            .collect::<Vec<_>>();
        let mut encoders: Vec<Loaded> = opts
            .impls
            .iter()
            .filter(|i| i.in_process())
            .map(|&imp| (imp, peers::load(imp, spec)))
            .collect();
        for (imp, e) in &encoders {
            if let Err(e) = e {
                eprintln!("   {}: {e}", imp.key());
            }
        }
        let pieces = simdtok::Tokenizer::from_file(&spec.path).ok();
        let mut rows = Vec::new();
        for input in &inputs {
            let mut cells = run_input(opts, &mut encoders, input, pieces.as_ref());
            if opts.impls.contains(&Impl::SpmPy) {
                let cell = run_python(opts, spec, input, &cells, pieces.as_ref());
                cells.push((Impl::SpmPy, cell));
            }
            rows.push(Row {
                input: input.name.clone(),
                bytes: input.bytes,
                lines: input.lines(),
                one_text: input.one_text,
                cells,
            });
        }
        results.push(ModelResult {
            spec: spec.clone(),
            loads,
            rows,
        });
    }
    eprintln!("done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(report(opts, &results, started.elapsed().as_secs_f64()))
}

/// Times and checks every implementation on one input.
fn run_input(
    opts: &Options,
    encoders: &mut [Loaded],
    input: &Input,
    pieces: Option<&simdtok::Tokenizer>,
) -> Vec<(Impl, Cell)> {
    let mut cells: Vec<(Impl, Option<Cell>)> = Vec::new();
    // Reference ids (simdtok's): flat, with the start of each line.
    let mut reference: Option<(Vec<u32>, Vec<usize>)> = None;
    // Per implementation: the warm-up time, or its final cell.
    let mut warm: Vec<Option<f64>> = Vec::new();
    for (imp, enc) in encoders.iter_mut() {
        let enc = match enc {
            Ok(e) => e,
            Err(e) => {
                cells.push((*imp, Some(Cell::NotLoaded(e.clone()))));
                warm.push(None);
                continue;
            }
        };
        if input.one_text
            && let Some(reason) = too_slow(enc.as_mut(), input, opts.repeat_limit_s)
        {
            eprintln!("   {:<28} {:<10} skipped: {reason}", input.name, imp.key());
            cells.push((*imp, Some(Cell::Skipped(reason))));
            warm.push(None);
            continue;
        }
        // Warm-up pass, which also checks the ids against simdtok's.
        let start = Instant::now();
        let verdict = if *imp == Impl::Simdtok {
            let mut ids = Vec::new();
            let mut starts = Vec::with_capacity(input.spans.len() + 1);
            for span in &input.spans {
                starts.push(ids.len());
                if let Ok(got) = enc.encode(&input.text[span.clone()]) {
                    ids.extend_from_slice(got);
                }
            }
            starts.push(ids.len());
            reference = Some((ids, starts));
            Verdict::Same
        } else {
            match &reference {
                Some((ids, starts)) => compare(enc.as_mut(), input, ids, starts, *imp, pieces),
                None => Verdict::Unverified,
            }
        };
        let t = start.elapsed().as_secs_f64();
        cells.push((
            *imp,
            Some(Cell::Done {
                mbps: 0.0,
                passes: 0,
                reduced: false,
                verdict,
            }),
        ));
        warm.push(Some(t));
    }

    // Timed passes, round robin so that drifts of the machine hit every implementation alike.
    let passes: Vec<usize> = warm
        .iter()
        .map(|w| match w {
            Some(t) if t * opts.passes as f64 > opts.cell_budget_s => {
                ((opts.cell_budget_s / t) as usize).clamp(1, opts.passes)
            }
            Some(_) => opts.passes,
            None => 0,
        })
        .collect();
    let most = passes.iter().copied().max().unwrap_or(0);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); encoders.len()];
    for pass in 0..most {
        for (i, (_, enc)) in encoders.iter_mut().enumerate() {
            if pass < passes[i]
                && let Ok(enc) = enc
            {
                times[i].push(time_pass(enc.as_mut(), &input.text, &input.spans));
            }
        }
    }
    cells
        .into_iter()
        .enumerate()
        .map(|(i, (imp, cell))| {
            let cell = match cell.expect("cell") {
                Cell::Done { verdict, .. } => {
                    let mbps = input.bytes as f64 / median(&times[i]) / 1e6;
                    let cell = Cell::Done {
                        mbps,
                        passes: passes[i],
                        reduced: passes[i] < opts.passes,
                        verdict,
                    };
                    eprintln!(
                        "   {:<28} {:<10} {:>9.2} MB/s  {}",
                        input.name,
                        imp.key(),
                        mbps,
                        verdict_short(&cell)
                    );
                    cell
                }
                other => other,
            };
            (imp, cell)
        })
        .collect()
}

/// The Python library on one input, in its own process; its ids are checked against simdtok's
/// (the `Simdtok` cell's warm-up ids are recomputed here, which costs one more simdtok pass).
fn run_python(
    opts: &Options,
    spec: &ModelSpec,
    input: &Input,
    cells: &[(Impl, Cell)],
    pieces: Option<&simdtok::Tokenizer>,
) -> Cell {
    let simdtok_ran = cells
        .iter()
        .any(|(i, c)| *i == Impl::Simdtok && matches!(c, Cell::Done { .. }));
    let texts: Vec<&str> = input.spans.iter().map(|s| &input.text[s.clone()]).collect();
    let limits = python::Limits {
        passes: opts.passes,
        budget_s: opts.cell_budget_s,
        repeat_limit_s: opts.repeat_limit_s,
    };
    let cell = match python::run(&spec.path, &texts, input.one_text, &limits) {
        python::Outcome::Failed(e) => Cell::NotLoaded(e),
        python::Outcome::Skipped(reason) => Cell::Skipped(reason),
        python::Outcome::Done { times, ids } => {
            let verdict = match pieces {
                Some(tok) if simdtok_ran => {
                    let mut differing = 0;
                    let mut example = None;
                    for (i, (text, got)) in texts.iter().zip(&ids).enumerate() {
                        let want = tok.encode(text);
                        if want != *got {
                            differing += 1;
                            if example.is_none() {
                                example = Some(describe(
                                    i,
                                    text,
                                    &want,
                                    Ok(got),
                                    Impl::SpmPy,
                                    input.one_text,
                                    pieces,
                                ));
                            }
                        }
                    }
                    match example {
                        None => Verdict::Same,
                        Some(example) => Verdict::Differs {
                            lines: differing,
                            total: texts.len(),
                            example,
                        },
                    }
                }
                _ => Verdict::Unverified,
            };
            Cell::Done {
                mbps: input.bytes as f64 / median(&times) / 1e6,
                passes: times.len(),
                reduced: times.len() < opts.passes,
                verdict,
            }
        }
    };
    match &cell {
        Cell::Done { mbps, .. } => eprintln!(
            "   {:<28} {:<10} {:>9.2} MB/s  {}",
            input.name,
            Impl::SpmPy.key(),
            mbps,
            verdict_short(&cell)
        ),
        Cell::Skipped(r) | Cell::NotLoaded(r) => {
            eprintln!("   {:<28} {:<10} {r}", input.name, Impl::SpmPy.key())
        }
    }
    cell
}

fn verdict_short(cell: &Cell) -> String {
    match cell {
        Cell::Done {
            verdict: Verdict::Differs { lines, total, .. },
            ..
        } => format!("ids differ on {lines} of {total} texts"),
        Cell::Done {
            verdict: Verdict::Unverified,
            ..
        } => "unverified".to_owned(),
        _ => String::new(),
    }
}

/// For a one-text input: a reason to skip `enc` when a pass over the whole input would take more
/// than `limit_s` seconds, estimated from 16 KiB and 64 KiB prefixes (catches quadratic peers).
fn too_slow(enc: &mut dyn Encoder, input: &Input, limit_s: f64) -> Option<String> {
    let prefix = |n: usize| {
        let mut end = n.min(input.text.len());
        while !input.text.is_char_boundary(end) {
            end -= 1;
        }
        &input.text[..end]
    };
    let small = prefix(16 << 10);
    let large = prefix(64 << 10);
    let time = |enc: &mut dyn Encoder, t: &str| {
        let start = Instant::now();
        let _ = std::hint::black_box(enc.encode(t).map(|ids| ids.len()));
        start.elapsed().as_secs_f64()
    };
    time(enc, small);
    let t_small = time(enc, small).max(1e-9);
    let t_large = time(enc, large).max(1e-9);
    let growth = (t_large / t_small).ln() / (large.len() as f64 / small.len() as f64).ln();
    let growth = growth.clamp(1.0, 3.0);
    let estimate = t_large * (input.text.len() as f64 / large.len() as f64).powf(growth);
    (estimate > limit_s).then(|| {
        format!(
            "one pass estimated at {estimate:.0} s (64 KiB took {:.2} s, {:.2} MB/s; time grows as size^{growth:.1})",
            t_large,
            large.len() as f64 / t_large / 1e6
        )
    })
}

/// Checks `enc`'s ids against the reference, line by line.
fn compare(
    enc: &mut dyn Encoder,
    input: &Input,
    ref_ids: &[u32],
    starts: &[usize],
    imp: Impl,
    pieces: Option<&simdtok::Tokenizer>,
) -> Verdict {
    let mut differing = 0;
    let mut example = None;
    for (i, span) in input.spans.iter().enumerate() {
        let want = &ref_ids[starts[i]..starts[i + 1]];
        let text = &input.text[span.clone()];
        let got = enc.encode(text);
        let same = matches!(&got, Ok(g) if *g == want);
        if !same {
            differing += 1;
            if example.is_none() {
                example = Some(describe(i, text, want, got, imp, input.one_text, pieces));
            }
        }
    }
    match example {
        None => Verdict::Same,
        Some(example) => Verdict::Differs {
            lines: differing,
            total: input.spans.len(),
            example,
        },
    }
}

/// One differing text, for the report: where and how the ids first differ.
fn describe(
    line: usize,
    text: &str,
    want: &[u32],
    got: Result<&[u32], String>,
    imp: Impl,
    one_text: bool,
    pieces: Option<&simdtok::Tokenizer>,
) -> String {
    let shown: String = if text.chars().count() > 100 {
        text.chars().take(100).collect::<String>() + "…"
    } else {
        text.to_owned()
    };
    let where_ = if one_text {
        "the text".to_owned()
    } else {
        format!("line {}", line + 1)
    };
    let got = match got {
        Ok(g) => g,
        Err(e) => {
            return format!("{where_} {}: {} fails: {e}", code_span(&shown), imp.label());
        }
    };
    let first = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let window = |ids: &[u32]| {
        let lo = first.saturating_sub(2);
        let hi = (first + 4).min(ids.len());
        let mut s = String::new();
        if lo > 0 {
            s.push_str("… ");
        }
        for &id in &ids[lo.min(ids.len())..hi] {
            let piece = pieces.and_then(|p| p.id_to_piece(id)).unwrap_or("?");
            let _ = write!(s, "{id}:{piece:?} ");
        }
        if hi < ids.len() {
            s.push('…');
        }
        s.trim_end().to_owned()
    };
    format!(
        "{where_} {}: first difference at token {first} of {} (simdtok) / {} ({}); simdtok `{}` vs {} `{}`",
        code_span(&shown),
        want.len(),
        got.len(),
        imp.label(),
        window(want),
        imp.label(),
        window(got)
    )
}

fn code_span(s: &str) -> String {
    let s = s.replace('`', "'").replace('|', "\\|");
    format!("`{s}`")
}

// ---- model loading, measured in a fresh process ----

/// Runs `--load-probe` in a child process, so that the resident-memory growth is the model's alone.
fn probe_load(opts: &Options, imp: Impl, spec: &ModelSpec) -> LoadCell {
    if imp == Impl::SpmPy {
        return match python::probe_load(&spec.path, opts.loads) {
            Ok((median_ms, rss_delta)) => LoadCell::Done {
                median_ms,
                rss_delta,
            },
            Err(e) => LoadCell::NotLoaded(e),
        };
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return LoadCell::NotLoaded(format!("cannot re-run myself: {e}")),
    };
    let out = std::process::Command::new(exe)
        .arg("--load-probe")
        .arg(imp.key())
        .arg(spec.name)
        .arg(&opts.data)
        .arg(opts.loads.to_string())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => return LoadCell::NotLoaded(format!("cannot re-run myself: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    let fields: Vec<&str> = line.split('\t').collect();
    let cell = match fields.as_slice() {
        ["ok", ms, rss, _loads] => LoadCell::Done {
            median_ms: ms.parse().unwrap_or(f64::NAN),
            rss_delta: rss.parse().ok(),
        },
        ["err", msg] => LoadCell::NotLoaded((*msg).to_owned()),
        _ => LoadCell::NotLoaded(format!(
            "load probe failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    };
    if let LoadCell::Done {
        median_ms,
        rss_delta,
        ..
    } = &cell
    {
        eprintln!(
            "   load {:<10} {median_ms:>8.1} ms  RSS +{:.1} MiB",
            imp.key(),
            rss_delta.unwrap_or(0) as f64 / 1048576.0
        );
    }
    cell
}

/// The child side: `--load-probe IMPL MODEL DATA LOADS`. Prints `ok\tMEDIAN_MS\tRSS_DELTA\tLOADS`
/// or `err\tMESSAGE`.
fn load_probe(args: Vec<String>) -> ExitCode {
    let [key, name, data, loads] = args.as_slice() else {
        eprintln!("--load-probe IMPL MODEL DATA LOADS");
        return ExitCode::from(2);
    };
    let (Some(imp), Some(spec), Ok(loads)) = (
        Impl::from_key(key),
        peers::models(Path::new(data))
            .into_iter()
            .find(|m| m.name == name),
        loads.parse::<usize>(),
    ) else {
        eprintln!("--load-probe: bad arguments");
        return ExitCode::from(2);
    };
    let before = rss_bytes();
    let start = Instant::now();
    let kept = match peers::load(imp, &spec) {
        Ok(k) => k,
        Err(e) => {
            println!("err\t{}", e.replace(['\t', '\n'], " "));
            return ExitCode::SUCCESS;
        }
    };
    let mut times = vec![start.elapsed().as_secs_f64() * 1e3];
    let after = rss_bytes();
    for _ in 1..loads.max(1) {
        let start = Instant::now();
        let again = peers::load(imp, &spec);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        drop(again);
    }
    drop(kept);
    let delta = match (before, after) {
        (Some(b), Some(a)) => (a as i64 - b as i64).to_string(),
        _ => "-".to_owned(),
    };
    println!("ok\t{}\t{delta}\t{}", median(&times), times.len());
    ExitCode::SUCCESS
}

// ---- the report ----

fn fmt_mbps(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn fmt_cell(cell: &Cell, notes: &mut Notes) -> String {
    match cell {
        Cell::NotLoaded(_) => "n/a".to_owned(),
        Cell::Skipped(reason) => format!("skipped{}", notes.mark(reason)),
        Cell::Done {
            mbps,
            passes,
            reduced,
            verdict,
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

/// Numbered footnotes.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn mark(&mut self, text: &str) -> String {
        let i = match self.0.iter().position(|t| t == text) {
            Some(i) => i,
            None => {
                self.0.push(text.to_owned());
                self.0.len() - 1
            }
        };
        format!(" [{}]", i + 1)
    }
}

fn ratio(simdtok: Option<f64>, peer: Option<f64>) -> String {
    match (simdtok, peer) {
        (Some(s), Some(p)) if p > 0.0 => format!("{:.2}×", s / p),
        _ => String::new(),
    }
}

fn find_row<'a>(m: &'a ModelResult, input: &str) -> Option<&'a Row> {
    m.rows.iter().find(|r| r.input == input)
}

fn cell_of(row: &Row, imp: Impl) -> Option<&Cell> {
    row.cells.iter().find(|(i, _)| *i == imp).map(|(_, c)| c)
}

fn report(opts: &Options, results: &[ModelResult], seconds: f64) -> String {
    let mut out = String::new();
    let mut notes = Notes::default();
    let tier = results
        .first()
        .and_then(|m| simdtok::Tokenizer::from_file(&m.spec.path).ok())
        .map_or("?".to_owned(), |t| t.kernels().tier().to_string());
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
    let _ = writeln!(
        out,
        "MB/s = 10^6 input bytes (line ends excluded) / median seconds of {} timed passes{}, one \
         thread, after a warm-up pass that also checks every text's ids against simdtok's. Texts \
         are the lines of each corpus{}; `repeat-a` and `repeat-日` are 10^6 bytes of one \
         character as one text. `≠N`: the peer's ids differ from simdtok's on N texts (see below); \
         `n/a`: the peer cannot load the model. Ratio columns: simdtok MB/s ÷ peer MB/s.",
        opts.passes,
        if opts.passes > 1 {
            " (round robin over the implementations)"
        } else {
            ""
        },
        if opts.quick {
            " (--quick: the first 256 KiB of each)"
        } else {
            ""
        },
    );
    out.push('\n');
    let _ = writeln!(out, "Implementations:\n");
    for imp in &opts.impls {
        let what = match imp {
            Impl::Simdtok => format!(
                "the `{tier}` tier, `Tokenizer::encode_ids_into` with a reused vector (ids only, like the peers)"
            ),
            Impl::SpmCpp => "the reference C++ library 0.2.1 as bundled by `sentencepiece-sys` \
                             0.14.0 (built here with cmake, RelWithDebInfo: `-O2`), \
                             `SentencePieceProcessor::Encode(text, &ids)` through \
                             `bench-peers/cpp/spm_ids.cc`"
                .to_owned(),
            Impl::SpmCrate => {
                "the `sentencepiece` crate 0.14.0, `encode` (its only encode: pieces \
                               and ids of the same C++ library, through a serialized proto)"
                    .to_owned()
            }
            Impl::SpmPy => format!(
                "Python `sentencepiece` {} (the version simdtok's goldens come from) **in its own \
                 process**, `encode(lines, num_threads=1)` timed with `perf_counter`; includes \
                 building Python lists: only roughly comparable",
                python::version().unwrap_or_else(|e| format!("(unavailable: {e})"))
            ),
            Impl::Kitoken => "`kitoken` 0.11.1, `Kitoken::from_sentencepiece_file`, \
                              `encode(text, false)`"
                .to_owned(),
            Impl::Tokie => "`tokie` 0.1.4: reads Hugging Face `tokenizer.json` or its own `.tkz`, \
                            not `.model` (`Tokenizer::from_file` is tried on the `.model`)"
                .to_owned(),
        };
        let _ = writeln!(out, "- {}: {what}", imp.label());
    }
    out.push('\n');

    let peers: Vec<Impl> = opts
        .impls
        .iter()
        .copied()
        .filter(|&i| i != Impl::Simdtok)
        .collect();
    // Throughput.
    let mut header = "| model | input | MB | texts | simdtok |".to_owned();
    let mut rule = "|:---|:---|---:|---:|---:|".to_owned();
    for p in &peers {
        let _ = write!(header, " {} |", p.label());
        rule.push_str("---:|");
    }
    for p in &peers {
        let _ = write!(header, " ÷ {} |", p.label());
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for m in results {
        for (k, row) in m.rows.iter().enumerate() {
            let s = cell_of(row, Impl::Simdtok);
            let model = if k == 0 {
                format!("`{}` ({})", m.spec.name, m.spec.algorithm)
            } else {
                String::new()
            };
            let _ = write!(
                out,
                "| {model} | `{}` | {:.2} | {} | {} |",
                row.input,
                row.bytes as f64 / 1e6,
                row.lines,
                s.map_or(String::new(), |c| fmt_cell(c, &mut notes))
            );
            for p in &peers {
                let c = cell_of(row, *p).map_or(String::new(), |c| fmt_cell(c, &mut notes));
                let _ = write!(out, " {c} |");
            }
            for p in &peers {
                let r = ratio(
                    s.and_then(Cell::mbps),
                    cell_of(row, *p).and_then(Cell::mbps),
                );
                let _ = write!(out, " {r} |");
            }
            out.push('\n');
        }
    }
    for (i, n) in notes.0.iter().enumerate() {
        let _ = writeln!(out, "\n[{}] {n}", i + 1);
    }
    // Repeated characters against prose.
    let _ = writeln!(
        out,
        "\n**One repeated character vs prose** (simdtok; prose = `{PROSE}`, same model; target: \
         per-byte time within 3× of prose's):\n"
    );
    let _ = writeln!(
        out,
        "| model | prose MB/s | input | MB/s | per-byte time ÷ prose's | within 3× |\n|:---|---:|:---|---:|---:|:---:|"
    );
    for m in results {
        let prose = find_row(m, PROSE)
            .and_then(|r| cell_of(r, Impl::Simdtok))
            .and_then(Cell::mbps);
        for (name, _) in REPEATS {
            let Some(row) = find_row(m, name) else {
                continue;
            };
            let rep = cell_of(row, Impl::Simdtok).and_then(Cell::mbps);
            let (slow, ok) = match (prose, rep) {
                (Some(p), Some(r)) if r > 0.0 => (
                    format!("{:.2}×", p / r),
                    if p / r <= 3.0 { "yes" } else { "**no**" },
                ),
                _ => (String::new(), "?"),
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | `{name}` | {} | {slow} | {ok} |",
                m.spec.name,
                prose.map_or("–".to_owned(), fmt_mbps),
                rep.map_or("–".to_owned(), fmt_mbps)
            );
        }
    }

    // Loading.
    let _ = writeln!(
        out,
        "\n**Model load** (median of {} loads in a fresh process; RSS = growth of the process's \
         resident set from before the first load to after it, model kept; /proc/self/statm):\n",
        opts.loads
    );
    let mut header = "| model | file MB |".to_owned();
    let mut rule = "|:---|---:|".to_owned();
    for imp in &opts.impls {
        let _ = write!(header, " {} |", imp.label());
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for m in results {
        let size = std::fs::metadata(&m.spec.path).map_or(0, |md| md.len());
        let _ = write!(out, "| `{}` | {:.2} |", m.spec.name, size as f64 / 1e6);
        for (_, cell) in &m.loads {
            let c = match cell {
                LoadCell::NotLoaded(_) => "n/a".to_owned(),
                LoadCell::Done {
                    median_ms,
                    rss_delta,
                } => {
                    let rss = rss_delta.map_or("?".to_owned(), |b| {
                        format!("{:.1} MiB", b as f64 / 1048576.0)
                    });
                    format!("{median_ms:.1} ms, {rss}")
                }
            };
            let _ = write!(out, " {c} |");
        }
        out.push('\n');
    }
    let mut reasons: Vec<String> = Vec::new();
    for m in results {
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
            let line = format!("{} cannot load `{}`: {why}", imp.label(), m.spec.name);
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

    // Differences.
    let _ = writeln!(out, "\n**Ids that differ from simdtok's:**\n");
    let mut any = false;
    for m in results {
        for row in &m.rows {
            for (imp, cell) in &row.cells {
                if let Cell::Done {
                    verdict:
                        Verdict::Differs {
                            lines,
                            total,
                            example,
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
                        if row.one_text {
                            "the one text".to_owned()
                        } else {
                            format!("{lines} of {total} texts")
                        }
                    );
                }
            }
        }
    }
    if !any {
        let _ = writeln!(
            out,
            "none: every peer that ran agreed with simdtok on every text."
        );
    }

    // Targets.
    let _ = writeln!(
        out,
        "\n**Against the targets of issue #3** (on `{PROSE}`; fastest peer = the highest MB/s of \
         any peer, agreeing or not):\n"
    );
    let _ = writeln!(
        out,
        "| target | model | simdtok MB/s | fastest peer | simdtok ÷ fastest | verdict |\n|:---|:---|---:|:---|---:|:---|"
    );
    for m in results {
        let (target, floor) = match m.spec.algorithm {
            "unigram" if m.spec.name != "kyoto_ja_unigram_8000" => (
                "unigram English ≥ 150 MB/s and ≥ 3× the fastest peer",
                150.0,
            ),
            "bpe" => (
                "SentencePiece BPE ≥ 100 MB/s and ≥ 3× the fastest peer",
                100.0,
            ),
            _ => continue,
        };
        let Some(row) = find_row(m, PROSE) else {
            continue;
        };
        let Some(s) = cell_of(row, Impl::Simdtok).and_then(Cell::mbps) else {
            continue;
        };
        let fastest = row
            .cells
            .iter()
            .filter(|(i, _)| *i != Impl::Simdtok)
            .filter_map(|(i, c)| c.mbps().map(|v| (*i, v, c)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let (peer, r) = match fastest {
            Some((imp, v, c)) => {
                let differs = matches!(
                    c,
                    Cell::Done {
                        verdict: Verdict::Differs { .. },
                        ..
                    }
                );
                (
                    format!(
                        "{} {}{}",
                        imp.label(),
                        fmt_mbps(v),
                        if differs { " (ids differ)" } else { "" }
                    ),
                    Some(s / v),
                )
            }
            None => ("none ran".to_owned(), None),
        };
        let verdict = match r {
            Some(r) if s >= floor && r >= 3.0 => "met".to_owned(),
            Some(r) => {
                let mut missed = Vec::new();
                if s < floor {
                    missed.push(format!("{} < {floor:.0} MB/s", fmt_mbps(s)));
                }
                if r < 3.0 {
                    missed.push(format!("{r:.2}× < 3×"));
                }
                format!("**not met**: {}", missed.join(", "))
            }
            None => "?".to_owned(),
        };
        let _ = writeln!(
            out,
            "| {target} | `{}` | {} | {peer} | {} | {verdict} |",
            m.spec.name,
            fmt_mbps(s),
            r.map_or(String::new(), |r| format!("{r:.2}×"))
        );
    }
    out
}
