//! Corpora in and out of the tokenizer: the files training pipelines read.
//!
//! - [`megatron`]: Megatron-LM's indexed dataset (`.bin` + `.idx`).

pub mod megatron;
