//! The tokens encoders produce, shared by the models and the caches that store their results.
//!
//! They live apart from any one model so that dependencies point one way: a model
//! ([`crate::models::byte_bpe`], [`crate::models::wordpiece`]) and its helpers and caches
//! ([`crate::models::safe_cuts`], [`crate::cache`]) all import them from here, and none of the
//! helpers has to import the model that uses it.

/// One token of a BPE piece: its id and its length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceToken {
    /// The id (the rank).
    pub id: u32,
    /// Bytes of the piece it covers.
    pub len: u32,
}

/// One sub-token of a WordPiece word: its id and its byte span in the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordToken {
    /// The token id.
    pub id: u32,
    /// First byte in the word.
    pub start: u32,
    /// One past the last byte in the word.
    pub end: u32,
}
