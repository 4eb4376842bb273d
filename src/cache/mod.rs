//! Exact per-thread caches of encoded pieces and segments, shared by the encoders.
//!
//! A piece's tokens (a pre-tokenizer piece for BPE, a word for WordPiece, a segment of a cut BPE
//! piece) depend on its bytes and the model alone, so a cached result is the result: every hit
//! compares the whole key, never a hash alone. Each pipeline keeps its cache in a `thread_local`
//! scratch, so no lock or shared counter sits on the hot path.
//!
//! - [`word`]: the piece cache. Its short tier holds pieces of up to 16 bytes in two-way sets,
//!   with an entry layout per model ([`short_entries`]); its long tier ([`long`]) holds BPE
//!   pieces of 17 to 256 bytes (CJK clauses) and short ones of many tokens, in an arena.
//!   Keys ([`key`]) are a piece's 16 bytes and its length, compared whole on every hit.
//! - [`seeds`]: the vocabulary entries that encode as themselves, stored in a thread's piece
//!   cache the first time it holds a tokenizer's results, so that text never seen before finds
//!   its one-token pieces in the cache.
//! - [`segment`]: the short segments that safe cuts leave of long BPE pieces
//!   ([`crate::models::safe_cuts`]), in a table of 192 KiB.
//! - [`bypass`]: when a cache stops paying (text whose pieces never repeat: random characters,
//!   hashes), lookups and stores are skipped for a while; a bypassed piece is encoded, exactly as
//!   a miss would be.
//! - [`budget`]: how much memory a thread's caches may hold ([`budget::CacheBudget`]: each
//!   halves its tables to fit; ids never change) and how much they hold.
//! - [`owner`]: a thread's cache holds the results of one model at a time. A tokenizer claims it
//!   before use; a claim by another tokenizer takes a new stamp, so the old entries read as empty
//!   without being touched (they are cleared only when the stamps wrap around).

pub mod budget;
pub mod bypass;
pub mod key;
pub mod long;
pub mod owner;
pub mod pair_memo;
pub mod seeds;
pub mod segment;
pub mod short_entries;
pub mod unigram;
pub mod word;
