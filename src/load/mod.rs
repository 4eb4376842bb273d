//! Everything that turns a file into a model.
//!
//! One module per file format parses it into the parts a tokenizer is built from
//! ([`spm_proto`], [`tiktoken`], [`tokenizer_json`], [`vocab_txt`]); one module per pipeline
//! builds that pipeline from the parsed parts ([`bert`], [`hf_bpe`], [`hf_spm_bpe`]).

pub mod bert;
pub mod hf_bpe;
pub mod hf_spm_bpe;
pub mod spm_proto;
pub mod tiktoken;
pub mod tokenizer_json;
pub mod vocab_txt;
