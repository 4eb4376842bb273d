//! `simdtok bench`: encode throughput of every bundled model (or `--model`s) over the bundled
//! corpus (or `--input`s) on every tier this CPU supports, one thread and all threads, as one
//! table. The measuring is the library's (`simdtok::bench`); this module parses options and
//! prints.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use simdtok::bench::corpus::{self, Corpus};
use simdtok::bench::encode::{PassIds, PassPlan};
use simdtok::bench::error::BenchError;
use simdtok::bench::machine;
use simdtok::bench::suite::{self, BenchConfig};
use simdtok::bench::table;
use simdtok::kernels::Tier;

use super::{CliResult, Failure};

/// Without `--passes`: enough passes for a steady median on a busy machine (a pass over the
/// bundled corpus takes 5–15 ms on one core), and the default run well under a minute.
const DEFAULT_PLAN: PassPlan = PassPlan {
    min_passes: 5,
    max_passes: 200,
    time_per_config: Duration::from_millis(400),
};

/// Options of `simdtok bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// A model to measure (repeatable); default: every bundled model.
    #[arg(long, value_name = "PATH")]
    pub model: Vec<PathBuf>,
    /// A file of texts, one per line (repeatable); default: the bundled corpus.
    #[arg(long, value_name = "PATH")]
    pub input: Vec<PathBuf>,
    /// The "all threads" run's thread count; 0 (the default) is one per core. 1 runs one thread
    /// only.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Only these tiers (repeatable or comma-separated); scalar always runs, as the reference.
    #[arg(long, value_name = "TIER", value_delimiter = ',')]
    pub tier: Vec<Tier>,
    /// Exactly N timed passes per configuration, after one warm-up pass; the median is shown.
    /// Default: as many as fit in 0.4 s per configuration, at least 5 and at most 200.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub passes: Option<u32>,
    /// Keep every id of a timed pass, in one vector per thread, as a batch call that returns
    /// all its ids does (the Python binding's `encode_batch`); by default each text's ids go
    /// into one reused buffer, which measures the encoder alone.
    #[arg(long)]
    pub keep_ids: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The most memory each worker thread's caches hold (e.g. 4MiB, 0); default: their tuned
    /// sizes. The table's `cache/thread` column says what they held.
    #[arg(long, value_name = "SIZE", default_value = "default")]
    pub cache_budget: simdtok::CacheBudget,
}

/// Measures and prints; exit status 1 when a tier's ids differ from scalar's.
pub fn run(args: BenchArgs) -> CliResult {
    let config = config(&args).map_err(failure)?;
    let cpu = machine::cpu_brand().unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let progress = std::io::stderr().is_terminal() && !args.json;
    if !args.json {
        print!("{}", table::heading(&config, &cpu));
        println!();
    }
    let started = Instant::now();
    let total = config.models.len();
    let mut done = 0;
    let rows = suite::run(&config, |rows| {
        done += 1;
        if progress {
            let model = rows.first().map_or("", |r| r.model.as_str());
            eprint!("\r\x1b[2Kmeasured {model} ({done}/{total})");
        }
    })
    .map_err(failure)?;
    if progress {
        eprint!("\r\x1b[2K");
    }
    let (ok, verdict) = table::verdict(&rows);
    if args.json {
        let json = table::to_json(&config, &cpu, &rows);
        println!(
            "{}",
            serde_json::to_string_pretty(&json).map_err(Failure::runtime)?
        );
    } else {
        print!("{}", table::render(&rows));
        println!();
        println!("{verdict}");
        println!("measured in {:.1} s", started.elapsed().as_secs_f64());
    }
    if ok {
        Ok(())
    } else {
        Err(Failure::runtime(verdict))
    }
}

fn config(args: &BenchArgs) -> Result<BenchConfig, BenchError> {
    let models = if args.model.is_empty() {
        corpus::bundled_models()?
    } else {
        corpus::models_from_paths(&args.model)
    };
    let files = if args.input.is_empty() {
        corpus::bundled_corpus()?
    } else {
        args.input.clone()
    };
    let corpus = Corpus::load(&files)?;
    Ok(BenchConfig {
        models,
        corpus,
        tiers: suite::tiers_with_scalar(&args.tier)?,
        threads: suite::thread_counts((args.threads > 0).then_some(args.threads)),
        plan: args
            .passes
            .map_or(DEFAULT_PLAN, |n| PassPlan::fixed(n as usize)),
        pass_ids: if args.keep_ids {
            PassIds::Keep
        } else {
            PassIds::Discard
        },
        cache_budget: args.cache_budget,
    })
}

/// A tier that cannot run is a usage error (as `--tier` and `SIMDTOK_TIER` elsewhere);
/// anything else a runtime one.
pub fn failure(e: BenchError) -> Failure {
    match e {
        BenchError::Tier(_) => Failure::usage(e),
        other => Failure::runtime(other),
    }
}
