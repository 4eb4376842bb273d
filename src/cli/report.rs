//! `simdtok report`: the CPU-feature comparison report of this machine (`--out DIR`), or the
//! merge of several machines' reports (`--compare A.json B.json … --out DIR`). The measuring,
//! merging and rendering are the library's (`simdtok::bench::report`); this module parses
//! options and says what it wrote.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use simdtok::bench::corpus;
use simdtok::bench::error::BenchError;
use simdtok::bench::report::compare;
use simdtok::bench::report::files::{read_report, write_outputs};
use simdtok::bench::report::gather::{ReportOptions, gather};
use simdtok::bench::report::view;
use simdtok::bench::suite;
use simdtok::kernels::Tier;

use super::bench::failure;
use super::{CliResult, Failure};

/// Options of `simdtok report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The directory to write report.json, report.md, report.svg and report.html into.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The time to spend measuring, in seconds (loading models and warm-ups add a little).
    /// Smaller budgets take fewer samples; every row is still measured.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 75.0,
        conflicts_with = "compare"
    )]
    pub budget: f64,
    /// This machine's name in comparisons; default: the CPU brand.
    #[arg(long, value_name = "NAME", conflicts_with = "compare")]
    pub label: Option<String>,
    /// A model to encode (repeatable); default: every bundled model.
    #[arg(long, value_name = "PATH", conflicts_with = "compare")]
    pub model: Vec<PathBuf>,
    /// A file of texts, one per line (repeatable); default: the bundled corpus.
    #[arg(long, value_name = "PATH", conflicts_with = "compare")]
    pub input: Vec<PathBuf>,
    /// The "all threads" encode rows' thread count; 0 (the default) is one per core.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        conflicts_with = "compare"
    )]
    pub threads: usize,
    /// Only these tiers (repeatable or comma-separated); scalar always runs, as the reference.
    #[arg(
        long,
        value_name = "TIER",
        value_delimiter = ',',
        conflicts_with = "compare"
    )]
    pub tier: Vec<Tier>,
    /// Merge these reports (of different machines) instead of measuring: rows are matched on
    /// their keys, and inputs with the same name must have the same sha256.
    #[arg(long, value_name = "REPORT", num_args = 2..)]
    pub compare: Vec<PathBuf>,
    /// The machine the comparison's relative columns divide by; default: the first report's.
    #[arg(long, value_name = "LABEL", requires = "compare")]
    pub baseline: Option<String>,
}

/// Measures (or merges) and writes the four files.
pub fn run(args: ReportArgs) -> CliResult {
    if args.compare.is_empty() {
        measure(&args)
    } else {
        merge(&args)
    }
}

fn measure(args: &ReportArgs) -> CliResult {
    if !args.budget.is_finite() || args.budget < 0.0 || args.budget > 86_400.0 {
        return Err(Failure::usage(
            "--budget: a number of seconds from 0 to 86400",
        ));
    }
    let options = options(args).map_err(failure)?;
    // A directory that cannot be made fails now, not after the measuring.
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::runtime(format!("{}: {e}", args.out.display())))?;
    let progress = std::io::stderr().is_terminal();
    let report = gather(&options, |step| {
        if progress {
            eprint!("\r\x1b[2Kmeasuring {step}");
        }
    })
    .map_err(failure)?;
    if progress {
        eprint!("\r\x1b[2K");
    }
    let doc = view::report_doc(&report);
    let (series, panels) = view::report_chart(&report);
    let paths = write_outputs(&args.out, &report, &doc, &series, &panels).map_err(failure)?;
    let bad = report.results.iter().filter(|r| !r.equal_to_scalar).count();
    eprintln!(
        "simdtok report: {} rows in {:.1} s, written to {}",
        report.results.len(),
        report.run.elapsed_s,
        list(&paths)
    );
    if bad > 0 {
        return Err(Failure::runtime(format!(
            "✗ {bad} rows differ from the scalar tier's results (see report.md)"
        )));
    }
    Ok(())
}

fn merge(args: &ReportArgs) -> CliResult {
    let mut reports = Vec::new();
    for path in &args.compare {
        reports.push((
            path.display().to_string(),
            read_report(path).map_err(failure)?,
        ));
    }
    let comparison = compare::compare(&reports, args.baseline.as_deref()).map_err(|e| match e {
        BenchError::Invalid(m) => Failure::usage(m),
        other => Failure::runtime(other),
    })?;
    let doc = compare::comparison_doc(&comparison);
    let (series, panels) = compare::comparison_chart(&comparison);
    let paths = write_outputs(&args.out, &comparison, &doc, &series, &panels).map_err(failure)?;
    eprintln!(
        "simdtok report --compare: {} machines, {} rows, written to {}",
        comparison.machines.len(),
        comparison.rows.len(),
        list(&paths)
    );
    Ok(())
}

fn options(args: &ReportArgs) -> Result<ReportOptions, BenchError> {
    let models = if args.model.is_empty() {
        corpus::bundled_models()?
    } else {
        corpus::models_from_paths(&args.model)
    };
    let corpus_files = if args.input.is_empty() {
        corpus::bundled_corpus()?
    } else {
        args.input.clone()
    };
    Ok(ReportOptions {
        budget: Duration::from_secs_f64(args.budget),
        label: args.label.clone(),
        models,
        corpus: corpus_files,
        tiers: suite::tiers_with_scalar(&args.tier)?,
        threads: suite::thread_counts((args.threads > 0).then_some(args.threads)),
    })
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
