//! AArch64 tier: NEON (16-byte vectors, `tbl`) with the CRC32 extension.
//!
//! Entry points are public `unsafe fn`s with `#[target_feature]`, like the x86 ones.

pub mod neon;
