//! x86-64 tiers: SSE4.2 (16-byte vectors) and AVX2 (32-byte vectors, gathers).
//!
//! Each entry point is an `unsafe fn` with `#[target_feature]`: calling it is sound only on a CPU
//! with the tier's features, which holding the tier's [`crate::Kernels`] proves. They are public
//! (like `memchr::arch`) so that benchmarks and `asm-check` can reach each tier directly.

pub mod avx2;
mod escape;
pub mod sse42;
