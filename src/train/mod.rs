//! BPE training (issue 25): the greedy O(N log M) trainer — unique pre-tokens with their counts
//! as linked lists of symbols, the occurrences of each pair, a max-heap of pairs by count — with
//! merges identical to Hugging Face's `BpeTrainer`, the paper's non-overlapping counts, and the
//! exact search for the optimal merge sequence on tiny inputs.

pub mod exact;

/// How the pairs of a word are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Counting {
    /// Every adjacent pair counts, so `aaa` holds two `aa`: how `tokenizers`, `sentencepiece`
    /// and tiktoken's trainer count.
    #[default]
    Windows,
    /// The paper's count (Zouhar et al.): a run of k equal symbols holds ⌊k/2⌋ pairs `(x, x)`,
    /// as YouTokenToMe counts.
    NonOverlapping,
}

mod count_queue;
pub mod greedy;
mod heap;
mod output;
pub mod words;

use std::collections::BTreeSet;

pub use greedy::{Merge, Settings, Trained};
pub use words::{Counter, PreTokenizer, WordCounts};

use crate::load::tiktoken::byte_level_alphabet;

/// Why training cannot start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TrainError {
    /// The corpus holds no word to train on.
    #[error("the corpus has no text to train on (no words after pre-tokenization)")]
    EmptyCorpus,
    /// The vocabulary size leaves no room for the alphabet.
    #[error(
        "--vocab-size {vocab_size} is below the {specials} special token(s) plus the alphabet of \
         {alphabet} character(s): use at least {needed}"
    )]
    VocabTooSmall {
        /// The size asked for.
        vocab_size: usize,
        /// Special tokens.
        specials: usize,
        /// Alphabet characters (not already special tokens).
        alphabet: usize,
        /// The smallest size that works.
        needed: usize,
    },
    /// A special token is empty.
    #[error("a special token is empty")]
    EmptySpecial,
    /// A rank file was asked for a model that is not byte-level.
    #[error(
        "a tiktoken rank file holds byte-level tokens: train with a byte-level pre-tokenizer (gpt2, cl100k, o200k)"
    )]
    NotByteLevel,
}

/// A trained model: what the output files hold.
#[derive(Clone, Debug)]
pub struct Model {
    /// The pre-tokenizer it was trained with.
    pub pre_tokenizer: PreTokenizer,
    /// How many of the first tokens are special tokens.
    pub specials: usize,
    /// The tokens and merges.
    pub trained: Trained,
}

/// Trains on the words of `counts` (see [`greedy`] for the rules): ids are the special tokens
/// (in the order given, repeats dropped), then the alphabet in character order — all 256 of
/// GPT-2's byte characters for a byte-level pre-tokenizer, the characters seen otherwise —
/// then the merged tokens.
pub fn train(
    counts: &WordCounts,
    pre_tokenizer: PreTokenizer,
    special_tokens: &[String],
    settings: &Settings,
    on_merge: greedy::OnMerge<'_>,
) -> Result<Model, TrainError> {
    if special_tokens.iter().any(String::is_empty) {
        return Err(TrainError::EmptySpecial);
    }
    if counts.is_empty() {
        return Err(TrainError::EmptyCorpus);
    }
    let mut initial: Vec<(String, u32)> = Vec::new();
    let mut ids = std::collections::HashMap::new();
    for s in special_tokens {
        if !ids.contains_key(s) {
            ids.insert(s.clone(), initial.len() as u32);
            initial.push((s.clone(), s.chars().count() as u32));
        }
    }
    let specials = initial.len();
    let alphabet: BTreeSet<char> = if pre_tokenizer.byte_level() {
        byte_level_alphabet().into_iter().collect()
    } else {
        counts
            .iter()
            .flat_map(|(w, _)| std::str::from_utf8(w).expect("words are UTF-8").chars())
            .collect()
    };
    let mut char_ids = std::collections::HashMap::new();
    for c in &alphabet {
        let s = c.to_string();
        let id = *ids.entry(s.clone()).or_insert_with(|| {
            initial.push((s, 1));
            initial.len() as u32 - 1
        });
        char_ids.insert(*c, id);
    }
    if settings.vocab_size < initial.len() {
        return Err(TrainError::VocabTooSmall {
            vocab_size: settings.vocab_size,
            specials,
            alphabet: initial.len() - specials,
            needed: initial.len(),
        });
    }
    // Sorted by bytes, so that nothing depends on the order the threads counted in; turned
    // into ids one at a time as the trainer takes them.
    let words = counts.sorted();
    let trained = if pre_tokenizer.byte_level() {
        let table = byte_level_alphabet();
        let byte_ids: Vec<u32> = table.iter().map(|c| char_ids[c]).collect();
        let symbols = words.iter().map(|(w, _)| w.len()).sum();
        let words = words
            .iter()
            .map(|&(w, n)| (w.iter().map(|&b| byte_ids[b as usize]), n));
        greedy::train_words(initial, words, symbols, settings, on_merge)
    } else {
        fn text(w: &[u8]) -> &str {
            std::str::from_utf8(w).expect("words are UTF-8")
        }
        let symbols = words.iter().map(|(w, _)| text(w).chars().count()).sum();
        let words = words
            .iter()
            .map(|&(w, n)| (text(w).chars().map(|c| char_ids[&c]), n));
        greedy::train_words(initial, words, symbols, settings, on_merge)
    };
    Ok(Model {
        pre_tokenizer,
        specials,
        trained,
    })
}
