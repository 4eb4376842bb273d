//! The `simdtok` command line (see `docs/cli.md` for the contract).

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use simdtok::kernels::TierRequest;

use cli::align::AlignArgs;
use cli::bench::BenchArgs;
use cli::count::CountArgs;
use cli::decode::DecodeArgs;
use cli::encode::EncodeArgs;
use cli::report::ReportArgs;
use cli::train::TrainArgs;

#[derive(Parser)]
#[command(
    name = "simdtok",
    version,
    about = "Exact subword tokenization, SIMD-fast"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encode texts into token ids (or token strings, offsets, binary arrays).
    Encode(EncodeArgs),
    /// Decode lines of ids back into texts.
    Decode(DecodeArgs),
    /// Count the tokens of each text (the total goes to stderr).
    Count(CountArgs),
    /// Align tokenizations: pairs of token lists (--pairs), or a model's tokens with the words
    /// of each text (--model).
    Align(AlignArgs),
    /// Architecture, CPU features, compiled and supported tiers, the active tier and why.
    Cpu {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Force a tier (as SIMDTOK_TIER does): scalar, sse4.2, avx2, neon or auto.
        #[arg(long, value_name = "TIER")]
        tier: Option<TierRequest>,
    },
    /// Encode throughput: every bundled model (or --model) over the bundled corpus (or --input),
    /// every tier this CPU supports, one thread and all threads, as one table.
    Bench(BenchArgs),
    /// The CPU-feature comparison report: every kernel and bundled model on every tier, written
    /// as report.json, .md, .svg and .html (--out DIR); or a merge of several machines' reports
    /// (--compare A.json B.json … --out DIR).
    Report(ReportArgs),
    /// Train a BPE model (merges identical to Hugging Face's BpeTrainer) and write it as a
    /// tokenizer.json or a tiktoken rank file.
    TrainBpe(TrainArgs),
}

fn main() -> ExitCode {
    // Usage errors exit with status 2 (clap's own convention, and the contract's).
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Encode(args) => cli::encode::run(args),
        Command::Decode(args) => cli::decode::run(args),
        Command::Count(args) => cli::count::run(args),
        Command::Align(args) => cli::align::run(args),
        Command::Cpu { json, tier } => cli::cpu::run(json, tier),
        Command::Bench(args) => cli::bench::run(args),
        Command::Report(args) => cli::report::run(args),
        Command::TrainBpe(args) => cli::train::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if let Some(message) = failure.message {
                eprintln!("simdtok: {message}");
            }
            ExitCode::from(failure.status)
        }
    }
}
