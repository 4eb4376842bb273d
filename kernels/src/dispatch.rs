//! Choosing the active tier: an API override, else `SIMDTOK_TIER`, else the best tier the CPU
//! supports. Detection and the environment are read once and cached; a forced tier that is
//! unknown or unsupported is an error naming the valid tiers, never a silent fallback (which
//! would quietly turn a differential test into scalar-versus-scalar).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::{Kernels, Tier};

/// The environment variable that forces a tier: `scalar`, `sse4.2`, `avx2`, `neon` or `auto`.
pub const TIER_ENV: &str = "SIMDTOK_TIER";

/// What a user asked for: a specific tier or automatic detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TierRequest {
    /// The best tier this CPU supports.
    Auto,
    /// Exactly this tier, or an error.
    Exactly(Tier),
}

impl FromStr for TierRequest {
    type Err = crate::tier::UnknownTier;

    /// `auto` (any ASCII case; also the empty string) or a tier name.
    fn from_str(s: &str) -> Result<TierRequest, Self::Err> {
        let t = s.trim();
        if t.is_empty() || t.eq_ignore_ascii_case("auto") {
            Ok(TierRequest::Auto)
        } else {
            t.parse()
                .map(TierRequest::Exactly)
                .map_err(|_| crate::tier::UnknownTier { name: s.to_owned() })
        }
    }
}

impl fmt::Display for TierRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TierRequest::Auto => f.write_str("auto"),
            TierRequest::Exactly(t) => f.write_str(t.name()),
        }
    }
}

/// Where the active tier came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The best tier the CPU supports.
    Detected,
    /// The `SIMDTOK_TIER` environment variable.
    Env,
    /// [`Kernels::force`].
    Api,
}

impl Source {
    /// `detected`, `env` or `api`.
    pub const fn name(self) -> &'static str {
        match self {
            Source::Detected => "detected",
            Source::Env => "env",
            Source::Api => "api",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The active tier and why it is the active one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The tier.
    pub tier: Tier,
    /// Why.
    pub source: Source,
}

impl Choice {
    /// One sentence for reports: why this tier is active.
    pub fn reason(&self) -> String {
        match self.source {
            Source::Detected => format!("{} is the best tier this CPU supports", self.tier),
            Source::Env => format!("{TIER_ENV}={} forces it", self.tier),
            Source::Api => format!("forced to {} through the API", self.tier),
        }
    }
}

/// Who asked for a tier, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The `SIMDTOK_TIER` environment variable.
    Env,
    /// A caller of the library (or a command-line option such as `--tier`).
    Api,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Env => write!(f, "{TIER_ENV}"),
            Origin::Api => f.write_str("requested tier"),
        }
    }
}

fn names(tiers: &[Tier]) -> String {
    tiers
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A tier that cannot be used as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    /// The name is not a tier.
    #[error("{origin}: unknown tier {value:?}; valid tiers: scalar, sse4.2, avx2, neon, auto")]
    Unknown {
        /// Who asked.
        origin: Origin,
        /// What was asked for.
        value: String,
    },
    /// The tier exists but not in this build's architecture.
    #[error(
        "{origin}: tier {tier} is not compiled into this {arch} build; compiled tiers: {}",
        names(&Tier::compiled())
    )]
    NotCompiled {
        /// Who asked.
        origin: Origin,
        /// The tier.
        tier: Tier,
        /// This build's architecture.
        arch: &'static str,
    },
    /// The CPU lacks features the tier needs.
    #[error(
        "{origin}: tier {tier} is not supported by this CPU (missing {}); supported tiers: {}",
        missing.join(", "),
        names(&Tier::supported())
    )]
    Unsupported {
        /// Who asked.
        origin: Origin,
        /// The tier.
        tier: Tier,
        /// The features the CPU lacks.
        missing: Vec<&'static str>,
    },
}

/// Resolves a request to a table, or says why it cannot be had.
fn table_for(request: TierRequest, origin: Origin) -> Result<&'static Kernels, DispatchError> {
    let tier = match request {
        TierRequest::Auto => Tier::best_supported(),
        TierRequest::Exactly(t) => t,
    };
    if !tier.is_compiled() {
        return Err(DispatchError::NotCompiled {
            origin,
            tier,
            arch: crate::cpu::ARCH,
        });
    }
    Kernels::for_tier(tier).ok_or_else(|| DispatchError::Unsupported {
        origin,
        tier,
        missing: tier.missing_features(),
    })
}

/// The choice made from an environment value (`None` = unset): pure apart from CPU detection,
/// so it can be tested without touching the process environment.
pub fn choose_from_env(value: Option<&str>) -> Result<Choice, DispatchError> {
    let request = match value {
        None => TierRequest::Auto,
        Some(v) => v.parse().map_err(|_| DispatchError::Unknown {
            origin: Origin::Env,
            value: v.to_owned(),
        })?,
    };
    let table = table_for(request, Origin::Env)?;
    let source = match request {
        TierRequest::Auto => Source::Detected,
        TierRequest::Exactly(_) => Source::Env,
    };
    Ok(Choice {
        tier: table.tier(),
        source,
    })
}

/// The environment's choice, read once.
fn env_choice() -> &'static Result<Choice, DispatchError> {
    static CHOICE: OnceLock<Result<Choice, DispatchError>> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let value = std::env::var_os(TIER_ENV).map(|v| v.to_string_lossy().into_owned());
        choose_from_env(value.as_deref())
    })
}

/// The API override: 0 = none, else 1 + index in `Tier::ALL`.
static FORCED: AtomicU8 = AtomicU8::new(0);

impl Kernels {
    /// The table for a request from a caller (for example a `--tier` option), independent of the
    /// active choice: what a model built "with tier X" should hold.
    pub fn request(request: TierRequest) -> Result<&'static Kernels, DispatchError> {
        table_for(request, Origin::Api)
    }

    /// The active tier and where it came from: the API override if set, else `SIMDTOK_TIER`,
    /// else detection. An invalid `SIMDTOK_TIER` is an error here (unless the API overrides it).
    pub fn active_choice() -> Result<Choice, DispatchError> {
        match FORCED.load(Ordering::Acquire) {
            0 => env_choice().clone(),
            n => Ok(Choice {
                tier: Tier::ALL[n as usize - 1],
                source: Source::Api,
            }),
        }
    }

    /// The active table (see [`Kernels::active_choice`]).
    pub fn active() -> Result<&'static Kernels, DispatchError> {
        let choice = Kernels::active_choice()?;
        Ok(Kernels::for_tier(choice.tier).expect("active tiers are checked when chosen"))
    }

    /// Makes `request` the active choice for the whole process (models built afterwards pick it
    /// up; built ones keep theirs). `Auto` forces the detected best tier.
    pub fn force(request: TierRequest) -> Result<&'static Kernels, DispatchError> {
        let table = table_for(request, Origin::Api)?;
        let index = Tier::ALL
            .iter()
            .position(|&t| t == table.tier())
            .expect("every tier is in ALL");
        FORCED.store(index as u8 + 1, Ordering::Release);
        Ok(table)
    }

    /// Removes an API override: the environment or detection decides again.
    pub fn clear_forced() {
        FORCED.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!("auto".parse(), Ok(TierRequest::Auto));
        assert_eq!("AUTO".parse(), Ok(TierRequest::Auto));
        assert_eq!("".parse(), Ok(TierRequest::Auto));
        assert_eq!("sse4.2".parse(), Ok(TierRequest::Exactly(Tier::Sse42)));
        assert_eq!(" Avx2 ".parse(), Ok(TierRequest::Exactly(Tier::Avx2)));
        assert!("avx512".parse::<TierRequest>().is_err());
        assert!("sse42".parse::<TierRequest>().is_err());
    }

    #[test]
    fn env_unset_or_auto_is_detection() {
        let best = Tier::best_supported();
        for v in [None, Some("auto"), Some("")] {
            assert_eq!(
                choose_from_env(v),
                Ok(Choice {
                    tier: best,
                    source: Source::Detected
                })
            );
        }
    }

    #[test]
    fn env_forces_every_supported_tier() {
        for tier in Tier::supported() {
            assert_eq!(
                choose_from_env(Some(tier.name())),
                Ok(Choice {
                    tier,
                    source: Source::Env
                })
            );
        }
    }

    #[test]
    fn env_errors_name_the_valid_tiers() {
        let err = choose_from_env(Some("avx9000")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("SIMDTOK_TIER"), "{msg}");
        assert!(msg.contains("avx9000"), "{msg}");
        for name in ["scalar", "sse4.2", "avx2", "neon", "auto"] {
            assert!(msg.contains(name), "{msg}");
        }
        let foreign = if cfg!(target_arch = "aarch64") {
            "avx2"
        } else {
            "neon"
        };
        let err = choose_from_env(Some(foreign)).unwrap_err();
        assert!(matches!(err, DispatchError::NotCompiled { .. }), "{err}");
        assert!(err.to_string().contains("compiled tiers: scalar"), "{err}");
    }

    #[test]
    fn unsupported_tiers_are_errors() {
        for tier in Tier::compiled() {
            let result = choose_from_env(Some(tier.name()));
            if tier.is_supported() {
                assert!(result.is_ok());
            } else {
                let err = result.unwrap_err();
                assert!(matches!(err, DispatchError::Unsupported { .. }));
                assert!(err.to_string().contains("supported tiers: scalar"), "{err}");
            }
        }
    }
}
