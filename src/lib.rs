//! simdtok: exact subword tokenization (SentencePiece, WordPiece, byte-level BPE), fast on x86 and
//! ARM through the SIMD kernels of [`kernels`].

pub mod cpu_report;

pub use simdtok_kernels as kernels;
