//! Model files, one module per format; each yields the parts a tokenizer is built from.

pub mod spm_proto;
pub mod tiktoken;
pub mod tokenizer_json;
pub mod vocab_txt;
