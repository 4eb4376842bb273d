//! Segmentation algorithms over a vocabulary, independent of the file a model came from.

pub mod byte_bpe;
pub mod char_ids;
pub mod dense_ids;
pub mod merges_bpe;
pub mod pair_cuts;
pub mod pair_priorities;
pub mod part_runs;
pub mod rank_queue;
pub mod safe_cuts;
pub mod self_merges;
pub mod spm_bpe;
#[cfg(test)]
pub(crate) mod test_text;
pub mod token;
pub mod token_table;
pub mod unigram;
pub mod valid_pairs;
pub mod vocab;
pub mod wordpiece;
