//! Instruction-set tiers: what each one is called, what it needs from the CPU, and whether this
//! build and this machine can run it.

use std::fmt;
use std::str::FromStr;

/// One implementation level of every kernel.
///
/// The order of [`Tier::ALL`] is the order of preference on each architecture, worst first:
/// automatic detection picks the last one that is compiled and supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Portable Rust; the semantic reference every other tier is tested against.
    Scalar,
    /// x86-64 with SSSE3 (`pshufb`), SSE4.1, SSE4.2 (`crc32`) and POPCNT: 16-byte vectors.
    Sse42,
    /// x86-64 with AVX2 (32-byte vectors, `vpgatherdd`) on top of everything `Sse42` needs.
    Avx2,
    /// AArch64 Advanced SIMD (16-byte vectors, `tbl`) with the CRC32 extension (`crc32c*`).
    Neon,
}

impl Tier {
    /// Every tier, in order of preference (worst first).
    pub const ALL: [Tier; 4] = [Tier::Scalar, Tier::Sse42, Tier::Avx2, Tier::Neon];

    /// The name used by `SIMDTOK_TIER`, `--tier` and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Sse42 => "sse4.2",
            Tier::Avx2 => "avx2",
            Tier::Neon => "neon",
        }
    }

    /// CPU features this tier's code is compiled with (`#[target_feature]` names), all of which
    /// the CPU must report before the tier may run.
    pub const fn required_features(self) -> &'static [&'static str] {
        match self {
            Tier::Scalar => &[],
            Tier::Sse42 => &["ssse3", "sse4.1", "sse4.2", "popcnt"],
            Tier::Avx2 => &["ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2"],
            Tier::Neon => &["neon", "crc"],
        }
    }

    /// The architecture whose code this tier contains (`None` for the portable tier).
    pub const fn arch(self) -> Option<&'static str> {
        match self {
            Tier::Scalar => None,
            Tier::Sse42 | Tier::Avx2 => Some("x86_64"),
            Tier::Neon => Some("aarch64"),
        }
    }

    /// Whether this build contains the tier's code (it targets the tier's architecture).
    pub const fn is_compiled(self) -> bool {
        match self {
            Tier::Scalar => true,
            Tier::Sse42 | Tier::Avx2 => cfg!(target_arch = "x86_64"),
            Tier::Neon => cfg!(target_arch = "aarch64"),
        }
    }

    /// The required features this CPU lacks (empty when the tier can run here). For a tier that
    /// is not compiled for this architecture, every feature is reported missing.
    pub fn missing_features(self) -> Vec<&'static str> {
        if !self.is_compiled() {
            return self.required_features().to_vec();
        }
        self.required_features()
            .iter()
            .copied()
            .filter(|f| !crate::cpu::has_feature(f))
            .collect()
    }

    /// Whether the tier is compiled into this build and the CPU has every feature it needs.
    pub fn is_supported(self) -> bool {
        self.is_compiled() && self.missing_features().is_empty()
    }

    /// The tiers compiled into this build.
    pub fn compiled() -> Vec<Tier> {
        Tier::ALL.into_iter().filter(|t| t.is_compiled()).collect()
    }

    /// The tiers this build can run on this CPU.
    pub fn supported() -> Vec<Tier> {
        Tier::ALL.into_iter().filter(|t| t.is_supported()).collect()
    }

    /// The best tier this build can run on this CPU.
    pub fn best_supported() -> Tier {
        Tier::ALL
            .into_iter()
            .rev()
            .find(|t| t.is_supported())
            .unwrap_or(Tier::Scalar)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tier name that is not one of [`Tier::ALL`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown tier {name:?}; valid tiers: scalar, sse4.2, avx2, neon")]
pub struct UnknownTier {
    /// The name as given.
    pub name: String,
}

impl FromStr for Tier {
    type Err = UnknownTier;

    /// Parses a tier name as spelled by [`Tier::name`], ignoring ASCII case and surrounding
    /// whitespace. `auto` is not a tier; see [`crate::TierRequest`].
    fn from_str(s: &str) -> Result<Tier, UnknownTier> {
        let wanted = s.trim();
        Tier::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| UnknownTier { name: s.to_owned() })
    }
}
