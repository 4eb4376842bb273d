//! Normalizers: the text transformations a model applies before segmenting.

pub mod bert;
pub mod bert_chars;
pub mod hf;
pub mod nfc;
pub mod prefix_matcher;
pub mod spm;
