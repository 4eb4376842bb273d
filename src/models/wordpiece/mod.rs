//! WordPiece: a word becomes the longest vocabulary entry that starts it, then the longest
//! continuation entry (`##…`) that starts the rest, and so on; when some position has no entry,
//! the whole word becomes the unknown token (Hugging Face `tokenizers`' `WordPiece::tokenize`).
//!
//! Two encoders give identical output:
//! - [`greedy`]: that definition, one trie walk per sub-token — O(n·m) for a word of n bytes
//!   and entries of up to m bytes, and the fastest on prose.
//! - [`linear`]: LinMaxMatch, one pass per word whatever the vocabulary — O(n).

pub mod greedy;
pub mod linear;

use std::collections::HashMap;

use simdtok_kernels::{DoubleArray, Kernels};

use crate::models::dense_ids::check_dense_ids;
pub use crate::models::token::WordToken;
use crate::options::WordPieceAlgorithm;

/// A WordPiece vocabulary and its encoders.
#[derive(Debug)]
pub struct WordPiece {
    /// Token of each id (`None` for an id whose line lost to a later duplicate).
    tokens: Vec<Option<Box<str>>>,
    ids: HashMap<Box<str>, u32>,
    prefix: Box<str>,
    unk_id: u32,
    max_input_chars_per_word: usize,
    /// Word-initial entries, keyed by their bytes.
    initial: DoubleArray,
    /// Continuation entries, keyed by their bytes after the prefix.
    continuation: DoubleArray,
    linear: Option<linear::LinMaxMatch>,
    algorithm: WordPieceAlgorithm,
    kernels: &'static Kernels,
}

impl WordPiece {
    /// Builds the encoders for a vocabulary given as (token, id) pairs. When a token occurs
    /// twice the later pair wins, as in the reference's hash map.
    pub fn new(
        vocab: Vec<(String, u32)>,
        unk_token: &str,
        prefix: &str,
        max_input_chars_per_word: usize,
        algorithm: WordPieceAlgorithm,
        kernels: &'static Kernels,
    ) -> Result<WordPiece, String> {
        check_dense_ids(vocab.iter().map(|&(_, id)| id), vocab.len(), "id")?;
        let mut ids: HashMap<Box<str>, u32> = HashMap::with_capacity(vocab.len());
        for (token, id) in vocab {
            ids.insert(token.into_boxed_str(), id);
        }
        let size = ids.values().map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut tokens: Vec<Option<Box<str>>> = vec![None; size];
        for (token, &id) in &ids {
            tokens[id as usize] = Some(token.clone());
        }
        let unk_id = *ids
            .get(unk_token)
            .ok_or_else(|| format!("the unknown token {unk_token:?} is not in the vocabulary"))?;
        // A double-array trie cannot hold empty keys or byte 0. Neither can ever match: the
        // reference looks up non-empty substrings of the word only (so an entry equal to the
        // prefix is never a continuation), and a NUL only survives normalization when
        // `clean_text` is off — a vocabulary entry with a NUL is then the one unsupported case.
        let usable = |k: &[u8]| !k.is_empty() && !k.contains(&0);
        let mut initial = Vec::new();
        let mut continuation = Vec::new();
        for (token, &id) in &ids {
            if usable(token.as_bytes()) {
                initial.push((token.as_bytes(), id));
            }
            if let Some(rest) = token.strip_prefix(prefix)
                && usable(rest.as_bytes())
            {
                continuation.push((rest.as_bytes(), id));
            }
        }
        let build = |entries: &[(&[u8], u32)]| {
            if entries.is_empty() {
                // An empty trie: a root with no children.
                DoubleArray::from_units(vec![0]).map_err(|e| e.to_string())
            } else {
                DoubleArray::build(entries).map_err(|e| format!("vocabulary trie: {e}"))
            }
        };
        let initial = build(&initial)?;
        let continuation = build(&continuation)?;
        let mut model = WordPiece {
            tokens,
            ids,
            prefix: prefix.into(),
            unk_id,
            max_input_chars_per_word,
            initial,
            continuation,
            linear: None,
            algorithm,
            kernels,
        };
        if algorithm == WordPieceAlgorithm::Linear {
            model.linear = Some(linear::LinMaxMatch::build(&model));
        }
        Ok(model)
    }

    /// The id of the unknown token.
    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    /// Words of more characters than this become the unknown token.
    pub fn max_input_chars_per_word(&self) -> usize {
        self.max_input_chars_per_word
    }

    /// The continuation prefix (`##`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The id of `token`.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// The token of `id` (`None` past the end, or for an id no token maps to).
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize)?.as_deref()
    }

    /// One past the largest id.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary is empty (never, once built: it holds the unknown token).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The encoder in use.
    pub fn algorithm(&self) -> WordPieceAlgorithm {
        self.algorithm
    }

    /// Appends the sub-tokens of `word` (already normalized, at most
    /// [`WordPiece::max_input_chars_per_word`] characters: the caller counts them) to `out`;
    /// `false`, with `out` as it was, when the word is unknown.
    #[inline]
    pub fn encode_word(&self, word: &[u8], out: &mut Vec<WordToken>) -> bool {
        match &self.linear {
            Some(linear) => linear.encode_word(word, out),
            None => greedy::encode_word(self, word, out),
        }
    }

    pub(crate) fn initial_trie(&self) -> &DoubleArray {
        &self.initial
    }

    pub(crate) fn continuation_trie(&self) -> &DoubleArray {
        &self.continuation
    }

    pub(crate) fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    /// Every (token bytes as matched in a word, id, continuation?) entry of the two tries.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&[u8], u32, bool)> {
        let initial = self
            .ids
            .iter()
            .filter(|(t, _)| !t.is_empty() && !t.as_bytes().contains(&0))
            .map(|(t, &id)| (t.as_bytes(), id, false));
        let continuation = self.ids.iter().filter_map(|(t, &id)| {
            let rest = t.strip_prefix(&*self.prefix)?;
            (!rest.is_empty() && !rest.as_bytes().contains(&0)).then_some((
                rest.as_bytes(),
                id,
                true,
            ))
        });
        initial.chain(continuation)
    }
}
