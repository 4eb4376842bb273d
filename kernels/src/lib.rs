//! SIMD kernels for simdtok, each in four tiers (scalar, SSE4.2, AVX2, NEON) chosen at run time.
//!
//! Four kernel families:
//! - **byte classes** ([`ByteClassSpec`] → [`ByteClassTable`], [`ByteSet`]): classify a buffer
//!   into per-class 64-bit masks per 64-byte block, find the first byte in / not in a set, count
//!   UTF-8 characters, measure the ASCII prefix, escape spaces as SentencePiece's `▁`
//!   ([`spec::space_escape`]);
//! - **CRC-32C** hashing of byte strings, identical on every tier;
//! - **first-byte pruning** ([`PruneTable`]): a 256-entry byte → byte lookup over a buffer and the
//!   next position with a non-zero value;
//! - **double-array trie walks** ([`DoubleArray`], darts-clone layout): common-prefix search from
//!   one position, and batched from many.
//!
//! ```
//! use simdtok_kernels::{ByteClassSpec, ByteSet, ClassSet, Kernels};
//!
//! let kernels = Kernels::active().expect("SIMDTOK_TIER is valid");
//! let spaces = ByteSet::of_classes(&ByteClassSpec::standard(), ClassSet::WHITESPACE);
//! let text = b"hello world";
//! assert_eq!(kernels.find_in(&spaces, text, 0), Some(5));
//! assert_eq!(kernels.crc32c(b"123456789"), 0xE306_9283);
//! ```
//!
//! Beside them, two memory helpers for the tables the kernels' callers probe at random:
//! [`prefetch_read`] and [`HugeSlice`] (large tables on transparent huge pages).
//!
//! Layout (after the `memchr` crate): [`spec`] holds the ISA-independent definitions and table
//! builders, [`scalar`] the portable reference, `generic` the algorithms written once over a
//! 64-byte vector block, and `x86_64::{sse42, avx2}` / `aarch64::neon` the thin
//! `#[target_feature]` entry points. [`Kernels`] is a per-tier table of those entry points.

#![warn(missing_docs)]

pub mod cpu;
mod dispatch;
mod generic;
mod huge_pages;
mod prefetch;
pub mod scalar;
pub mod spec;
mod table;
mod tier;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

pub use dispatch::{Choice, DispatchError, Origin, Source, TIER_ENV, TierRequest, choose_from_env};
pub use huge_pages::{HUGE_PAGE, HugeSlice};
pub use prefetch::prefetch_read;
pub use spec::byte_class::{BlockMasks, ByteClassSpec, ByteClassTable, ClassSet};
pub use spec::byte_set::ByteSet;
pub use spec::double_array::{DoubleArray, TrieError, TrieMatch, TrieNode, WalkFrom};
pub use spec::prune::PruneTable;
pub use spec::space_escape::{SPACE_SYMBOL, escape_capacity};
pub use table::{Kernels, TrieBatch};
pub use tier::{Tier, UnknownTier};
