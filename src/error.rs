//! Errors of the library: values, each naming what failed and why.

use simdtok_kernels::DispatchError;

/// What can go wrong loading a model or using it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A model file is malformed, truncated or not a model of the expected kind.
    #[error("{path}: {reason}")]
    Model {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A model file of a kind (or with a component) this version cannot load.
    #[error("{path}: {what} is not supported yet")]
    Unsupported {
        /// The file.
        path: String,
        /// What is not supported.
        what: String,
    },
    /// A load option that does not apply to this model, or that this version cannot honour.
    #[error("{path}: {reason}")]
    Option {
        /// The file.
        path: String,
        /// Which option and why.
        reason: String,
    },
    /// The requested SIMD tier cannot run here.
    #[error(transparent)]
    Tier(#[from] DispatchError),
    /// Decoding met an id outside the vocabulary.
    #[error("id {id} is out of range: the vocabulary has {size} pieces")]
    IdOutOfRange {
        /// The id.
        id: u32,
        /// The vocabulary size.
        size: usize,
    },
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
