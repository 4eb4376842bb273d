//! The portable tier: plain Rust over the same tables, and the semantic reference every SIMD tier
//! is tested against. Every function here is safe; the `unsafe fn` signatures of the dispatch
//! table are satisfied by thin wrappers in `crate::table`.

pub mod classes;
pub mod crc32c;
pub mod prune;
pub mod space_escape;
pub mod trie;
