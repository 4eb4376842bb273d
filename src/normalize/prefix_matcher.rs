//! The user-defined symbols of a SentencePiece model, matched longest first wherever they occur
//! (`PrefixMatcher` in the reference): the normalizer keeps them verbatim and BPE keeps them
//! whole and unmerged.

use simdtok_kernels::{DoubleArray, Kernels, TrieMatch};

/// The reference looks at only the first 64 matches of one lookup (`kResultSize`).
const RESULTS: usize = 64;

/// A trie of user-defined symbols.
#[derive(Debug)]
pub struct PrefixMatcher {
    trie: DoubleArray,
}

impl PrefixMatcher {
    /// `None` when there are no symbols.
    pub fn new(symbols: &[&str]) -> Result<Option<PrefixMatcher>, String> {
        if symbols.is_empty() {
            return Ok(None);
        }
        let entries: Vec<(&[u8], u32)> = symbols.iter().map(|s| (s.as_bytes(), 0)).collect();
        let trie =
            DoubleArray::build(&entries).map_err(|e| format!("user-defined symbols: {e}"))?;
        Ok(Some(PrefixMatcher { trie }))
    }

    /// The length of the longest symbol at the start of `text` (0: none).
    pub fn longest(&self, kernels: &Kernels, text: &[u8]) -> usize {
        longest_match(kernels, &self.trie, text, RESULTS).len as usize
    }

    /// The symbols' trie.
    pub fn trie(&self) -> &DoubleArray {
        &self.trie
    }

    /// For each byte value, whether a symbol starts with it.
    pub fn first_bytes(&self) -> [bool; 256] {
        self.trie.first_bytes()
    }
}

/// The longest of the first `cap` keys of `trie` that prefix `input` (length 0: none).
pub fn longest_match(kernels: &Kernels, trie: &DoubleArray, input: &[u8], cap: usize) -> TrieMatch {
    let mut longest = TrieMatch::default();
    let mut seen = 0;
    kernels.trie_prefix_walk(trie, input, |len, value| {
        if seen < cap {
            longest = TrieMatch { len, value };
        }
        seen += 1;
    });
    longest
}
