//! simdtok: exact subword tokenization (SentencePiece, WordPiece, byte-level BPE), fast on x86 and
//! ARM through the SIMD kernels of [`kernels`].
//!
//! ```no_run
//! let tok = simdtok::Tokenizer::from_file("model.model")?;
//! let ids = tok.encode("Hello world");
//! assert_eq!(tok.decode(&ids)?, "Hello world");
//! # Ok::<(), simdtok::Error>(())
//! ```

pub mod align;
pub mod bench;
pub mod cache;
pub mod corpus;
pub mod encoding;
pub mod error;
pub mod load;
pub mod models;
pub mod normalize;
pub mod options;
pub mod pipeline;
pub mod pretokenize;
mod swar;
#[cfg(test)]
mod test_rng;
pub mod tokenizer;
pub mod train;

pub use encoding::Encoding;
pub use error::{Error, Result};
pub use load::detect::ModelKind;
pub use load::document_tokens::{DocumentToken, DocumentTokens};
pub use options::{CacheBudget, LoadOptions, TiktokenEncoding, WordPieceAlgorithm};
pub use simdtok_kernels as kernels;
pub use tokenizer::Tokenizer;
