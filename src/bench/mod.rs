//! Measuring simdtok where it runs. The CLI only parses arguments and prints what this module
//! returns.
//!
//! - `simdtok cpu`: [`cpu`], with the machine's facts from [`machine`] (CPU brand, cores,
//!   caches, memory, OS and kernel).
//! - `simdtok bench`: [`corpus`] (the bundled models and texts, or the user's) → [`encode`]
//!   (a worker pool per tier × thread count, timed passes) → [`suite`] (rows, speed-up over
//!   scalar, the ids check) → [`table`] (text or JSON).
//! - `simdtok report`: [`kernel_cases`] (each kernel family on [`synth`]'s generated inputs,
//!   timed by [`sampler`]) and [`encode`], within a time budget, gathered and rendered by
//!   [`report`]; `--compare` merges reports of several machines.
//! - Shared: [`inputs`] (sha256 digests of what was measured), [`stats`], [`units`],
//!   [`build_info`] (commit and compiler, from `build.rs`), [`utc`], [`error`].

pub mod build_info;
pub mod corpus;
pub mod cpu;
pub mod encode;
pub mod error;
pub mod inputs;
pub mod kernel_cases;
pub mod machine;
pub mod report;
pub mod sampler;
pub mod stats;
pub mod suite;
pub mod synth;
pub mod table;
pub mod units;
pub mod utc;
