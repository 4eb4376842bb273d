//! What can go wrong while measuring or reporting: each error names the file, model, tier or
//! input concerned, for a one-line message on stderr.

use std::path::PathBuf;

/// An error of `bench` or `report`.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A corpus line is not UTF-8.
    #[error("{}:{line}: invalid UTF-8", path.display())]
    Utf8 {
        /// The corpus file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
    },
    /// A model failed to load (the library's error names the file).
    #[error("{0}")]
    Load(#[from] crate::Error),
    /// Encoding panicked on one of the worker threads.
    #[error("encoding with {model} on tier {tier} ({threads} threads) panicked")]
    Panicked {
        /// The model's label.
        model: String,
        /// The tier.
        tier: String,
        /// The thread count of the run.
        threads: usize,
    },
    /// A tier that cannot run: not supported by this CPU, or an invalid `SIMDTOK_TIER`.
    #[error("{0}")]
    Tier(String),
    /// Options that cannot be honoured (no texts, an unknown baseline, …).
    #[error("{0}")]
    Invalid(String),
    /// A report file that cannot be read as one.
    #[error("{}: {message}", path.display())]
    BadReport {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Two reports measured different bytes under the same input name: not comparable.
    #[error("{0}")]
    InputsDiffer(Box<InputMismatch>),
}

impl BenchError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> BenchError {
        BenchError::Io {
            path: path.into(),
            source,
        }
    }
}

/// The same input name with different digests in two reports.
#[derive(Debug, thiserror::Error)]
#[error(
    "input {input:?} differs between the reports: sha256 {first_sha256} in {first} \
     ({first_label}), {second_sha256} in {second} ({second_label}); rows measured on different \
     inputs are not compared"
)]
pub struct InputMismatch {
    /// The input's name.
    pub input: String,
    /// The first report's file.
    pub first: String,
    /// Its label.
    pub first_label: String,
    /// The input's digest there.
    pub first_sha256: String,
    /// The second report's file.
    pub second: String,
    /// Its label.
    pub second_label: String,
    /// The input's digest there.
    pub second_sha256: String,
}
