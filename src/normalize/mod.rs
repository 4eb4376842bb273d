//! Normalizers: the text transformations a model applies before segmenting.

pub mod prefix_matcher;
pub mod spm;
