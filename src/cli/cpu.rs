//! `simdtok cpu`: architecture, detected features, compiled and supported tiers, the active tier
//! and why.

use simdtok::bench::cpu::CpuReport;
use simdtok::kernels::{Kernels, TierRequest};

use super::{CliResult, Failure};

/// Prints the report (text, or one JSON object with `json`), after forcing `tier` if given.
pub fn run(json: bool, tier: Option<TierRequest>) -> CliResult {
    if let Some(request) = tier {
        // A tier this machine cannot run is a usage error, never a silent fallback.
        Kernels::force(request).map_err(|e| Failure::usage(format!("--tier: {e}")))?;
    }
    // An invalid SIMDTOK_TIER is reported here, also as a usage error.
    let report = CpuReport::gather().map_err(Failure::usage)?;
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
