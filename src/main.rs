//! The `simdtok` command line (see `docs/cli.md` for the contract).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use simdtok::cpu_report::CpuReport;
use simdtok::kernels::{Kernels, TierRequest};

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
    /// Architecture, CPU features, compiled and supported tiers, the active tier and why.
    Cpu {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Force a tier (as SIMDTOK_TIER does): scalar, sse4.2, avx2, neon or auto.
        #[arg(long, value_name = "TIER")]
        tier: Option<TierRequest>,
    },
}

/// Exit statuses of the contract: 1 for bad input or a runtime error, 2 for a usage error.
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Cpu { json, tier } => {
            if let Some(request) = tier
                && let Err(e) = Kernels::force(request)
            {
                eprintln!("simdtok: --tier: {e}");
                return ExitCode::from(USAGE);
            }
            match CpuReport::gather() {
                Ok(report) if json => println!("{}", report.to_json()),
                Ok(report) => print!("{}", report.to_text()),
                Err(e) => {
                    eprintln!("simdtok: {e}");
                    return ExitCode::from(USAGE);
                }
            }
        }
    }
    ExitCode::SUCCESS
}
