//! Pipelines: normalizer + model + post-processing, one per tokenizer family.

pub mod added_tokens;
pub mod bert_load;
pub mod spm;
pub mod word_cache;
pub mod wordpiece;
