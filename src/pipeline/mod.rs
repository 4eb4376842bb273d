//! Pipelines: normalizer + model + post-processing, one per tokenizer family.

pub mod added_tokens;
pub mod bert_load;
pub mod hf_bpe;
pub mod hf_bpe_load;
pub mod hf_spm_bpe;
pub(crate) mod sink;
pub mod spm;
pub mod tiktoken;
pub mod word_cache;
pub mod wordpiece;
