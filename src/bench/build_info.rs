//! What this binary is: version, commit, compiler, target and profile, as `build.rs` recorded
//! them when it was built (a report read on another machine must say what produced it).

use simdtok_kernels::Tier;

/// The crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// `git rev-parse HEAD` at build time; `unknown` outside a git checkout.
pub const GIT_COMMIT: &str = env!("SIMDTOK_GIT_COMMIT");
/// `rustc --version` of the compiler that built this crate; `unknown` if it could not be asked.
pub const RUSTC: &str = env!("SIMDTOK_RUSTC_VERSION");
/// The target triple.
pub const TARGET: &str = env!("SIMDTOK_TARGET");
/// Cargo's profile: `release` or `debug` (timings of a debug build mean little).
pub const PROFILE: &str = env!("SIMDTOK_PROFILE");

/// The first 12 hex digits of [`GIT_COMMIT`] (all of it when it is not a hash).
pub fn short_commit() -> &'static str {
    if GIT_COMMIT.len() == 40 && GIT_COMMIT.bytes().all(|b| b.is_ascii_hexdigit()) {
        &GIT_COMMIT[..12]
    } else {
        GIT_COMMIT
    }
}

/// The tiers compiled into this build, by name.
pub fn compiled_tiers() -> Vec<String> {
    Tier::compiled()
        .into_iter()
        .map(|t| t.name().to_owned())
        .collect()
}
