//! Measuring simdtok where it runs: what the machine is ([`cpu`], behind `simdtok cpu`), and
//! the home of `simdtok bench` and `simdtok report` (encode throughput per model, tier and
//! thread count; the CPU-feature comparison report and its merge across machines). The CLI
//! only parses arguments and prints what this module returns.

pub mod build_info;
pub mod corpus;
pub mod cpu;
pub mod encode;
pub mod error;
pub mod inputs;
pub mod machine;
pub mod stats;
pub mod suite;
pub mod synth;
pub mod table;
pub mod units;
pub mod utc;
