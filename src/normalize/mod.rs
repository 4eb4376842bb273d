//! Normalizers: the text transformations a model applies before segmenting.

pub mod spm;
