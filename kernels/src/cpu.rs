//! Runtime CPU feature detection, by feature name.
//!
//! `std`'s detection macros take literal names and cache their answers; this module maps the
//! names the tiers need (and a few more worth reporting) onto them.

/// Expands to `fn has_feature(&str) -> bool` and `REPORTED`, the list of names it knows, for one
/// architecture's detection macro.
macro_rules! feature_table {
    ($detect:ident: $($name:tt),* $(,)?) => {
        /// Feature names this build can detect, in report order.
        pub const REPORTED: &[&str] = &[$($name),*];

        /// Whether the CPU running this process has the named feature. Unknown names are `false`.
        pub fn has_feature(name: &str) -> bool {
            match name {
                $($name => std::arch::$detect!($name),)*
                _ => false,
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
feature_table!(is_x86_feature_detected:
    "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "pclmulqdq", "avx", "avx2", "fma",
    "bmi1", "bmi2", "lzcnt", "avx512f", "avx512bw", "avx512vl", "avx512vbmi",
);

#[cfg(target_arch = "aarch64")]
feature_table!(is_aarch64_feature_detected:
    "neon", "crc", "aes", "sha2", "sha3", "lse", "rdm", "dotprod", "fp16", "i8mm", "bf16", "sve",
    "sve2",
);

/// Architectures without SIMD tiers here report no features.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const REPORTED: &[&str] = &[];

/// Architectures without SIMD tiers here report no features.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn has_feature(_name: &str) -> bool {
    false
}

/// The features of [`REPORTED`] this CPU has.
pub fn detected_features() -> Vec<&'static str> {
    REPORTED
        .iter()
        .copied()
        .filter(|f| has_feature(f))
        .collect()
}

/// The architecture this build targets, as `std::env::consts::ARCH` spells it.
pub const ARCH: &str = std::env::consts::ARCH;
