//! Pipelines: normalizer + model + post-processing, one per tokenizer family.

pub mod spm;
