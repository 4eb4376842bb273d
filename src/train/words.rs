//! Counting the unique pre-tokens (words) of a corpus: the only thing training keeps of the text,
//! so a corpus larger than memory is fine. Each thread counts into its own table; the tables
//! are added together at the end.

use std::collections::HashMap;

use memchr::memmem;
use simdtok_kernels::Kernels;

use crate::align::spans;
use crate::models::vocab::Crc32cState;
use crate::pretokenize::{Pattern, Splitter};

/// How texts are cut into words before training.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PreTokenizer {
    /// Byte-level, split by GPT-2's pattern.
    Gpt2,
    /// Byte-level, split by cl100k's pattern (the `tokenizer.json` spelling, digits in threes).
    #[default]
    Cl100k,
    /// Byte-level, split by o200k's pattern.
    O200k,
    /// Hugging Face's `Whitespace` (`\w+|[^\w\s]+`), over characters.
    Whitespace,
}

impl PreTokenizer {
    /// The split pattern of a byte-level pre-tokenizer.
    pub fn pattern(self) -> Option<Pattern> {
        match self {
            PreTokenizer::Gpt2 => Some(Pattern::Gpt2),
            PreTokenizer::Cl100k => Some(Pattern::Cl100k { digits: 3 }),
            PreTokenizer::O200k => Some(Pattern::O200k),
            PreTokenizer::Whitespace => None,
        }
    }

    /// Whether words are trained on as bytes (GPT-2's byte-to-character alphabet, all 256).
    pub fn byte_level(self) -> bool {
        self.pattern().is_some()
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PreTokenizer::Gpt2 => "gpt2",
            PreTokenizer::Cl100k => "cl100k",
            PreTokenizer::O200k => "o200k",
            PreTokenizer::Whitespace => "whitespace",
        }
    }
}

/// Unique words (their bytes: UTF-8 for every pre-tokenizer) with their counts.
#[derive(Debug)]
pub struct WordCounts {
    map: HashMap<Box<[u8]>, u64, Crc32cState>,
}

impl WordCounts {
    /// No words yet.
    pub fn new(kernels: &'static Kernels) -> WordCounts {
        WordCounts {
            map: HashMap::with_hasher(Crc32cState::new(kernels)),
        }
    }

    /// Counts one more occurrence of `word`.
    pub fn add(&mut self, word: &[u8]) {
        self.add_n(word, 1);
    }

    /// Counts `n` more occurrences of `word`.
    pub fn add_n(&mut self, word: &[u8], n: u64) {
        match self.map.get_mut(word) {
            Some(count) => *count += n,
            None => {
                self.map.insert(word.into(), n);
            }
        }
    }

    /// Adds the counts of `other` (the larger table absorbs the smaller).
    pub fn absorb(&mut self, mut other: WordCounts) {
        if other.map.len() > self.map.len() {
            std::mem::swap(self, &mut other);
        }
        self.map.reserve(other.map.len());
        for (word, n) in other.map {
            *self.map.entry(word).or_insert(0) += n;
        }
    }

    /// The number of unique words.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no word was counted.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The words and their counts, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.map.iter().map(|(w, &n)| (&w[..], n))
    }

    /// The words and their counts, sorted by their bytes (a deterministic order).
    pub fn sorted(&self) -> Vec<(&[u8], u64)> {
        let mut words: Vec<_> = self.iter().collect();
        words.sort_unstable();
        words
    }
}

/// Cuts texts into words and counts them: special tokens first (they are taken out of the text
/// and never counted, so no merge is learnt across or inside them), then the pre-tokenizer.
pub struct Counter {
    splitter: Option<Splitter>,
    specials: Vec<Vec<u8>>,
    counts: WordCounts,
}

impl Counter {
    /// A counter for `pre`, taking `specials` out of the texts.
    pub fn new(pre: PreTokenizer, specials: &[String], kernels: &'static Kernels) -> Counter {
        let mut specials: Vec<Vec<u8>> = specials
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.as_bytes().to_vec())
            .collect();
        // Longest first: at one position the longest special token is the one taken.
        specials.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Counter {
            splitter: pre.pattern().map(|p| Splitter::new(p, kernels)),
            specials,
            counts: WordCounts::new(kernels),
        }
    }

    /// Counts the words of one text.
    pub fn add(&mut self, text: &str) {
        if self.specials.is_empty() {
            self.add_segment(text);
            return;
        }
        let mut rest = text;
        while !rest.is_empty() {
            match self.next_special(rest.as_bytes()) {
                Some((at, len)) => {
                    self.add_segment(&rest[..at]);
                    rest = &rest[at + len..];
                }
                None => {
                    self.add_segment(rest);
                    break;
                }
            }
        }
    }

    /// The leftmost special token in `text` (the longest at that position): (start, length).
    fn next_special(&self, text: &[u8]) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for special in &self.specials {
            let limit = best.map_or(text.len(), |(at, _)| (at + special.len()).min(text.len()));
            if let Some(at) = memmem::find(&text[..limit], special)
                && best.is_none_or(|(b, _)| at < b)
            {
                best = Some((at, special.len()));
            }
        }
        best
    }

    fn add_segment(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let counts = &mut self.counts;
        match &self.splitter {
            Some(splitter) => splitter.split(text, |s, e| counts.add(&text.as_bytes()[s..e])),
            None => {
                for (s, e) in spans::words(text) {
                    counts.add(&text.as_bytes()[s..e]);
                }
            }
        }
    }

    /// The counts so far.
    pub fn into_counts(self) -> WordCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(pre: PreTokenizer, specials: &[&str], texts: &[&str]) -> Vec<(String, u64)> {
        let kernels = Kernels::active().unwrap();
        let specials: Vec<String> = specials.iter().map(|s| s.to_string()).collect();
        let mut counter = Counter::new(pre, &specials, kernels);
        for t in texts {
            counter.add(t);
        }
        let counts = counter.into_counts();
        counts
            .sorted()
            .into_iter()
            .map(|(w, n)| (String::from_utf8(w.to_vec()).unwrap(), n))
            .collect()
    }

    #[test]
    fn words_are_counted_across_texts() {
        let got = count(PreTokenizer::Cl100k, &[], &["the cat", "the dog", " cat"]);
        let want = [(" cat", 2), (" dog", 1), ("the", 2)];
        let want: Vec<(String, u64)> = want.iter().map(|&(w, n)| (w.to_string(), n)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn special_tokens_are_taken_out() {
        let got = count(
            PreTokenizer::Whitespace,
            &["<s>", "<s><s>"],
            &["a<s>b<s><s>c<s", "<s>"],
        );
        let want = [("<", 1), ("a", 1), ("b", 1), ("c", 1), ("s", 1)];
        let want: Vec<(String, u64)> = want.iter().map(|&(w, n)| (w.to_string(), n)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn absorb_adds_counts() {
        let kernels = Kernels::active().unwrap();
        let mut a = WordCounts::new(kernels);
        let mut b = WordCounts::new(kernels);
        a.add(b"x");
        b.add(b"x");
        b.add(b"y");
        b.add(b"z");
        a.absorb(b);
        assert_eq!(
            a.sorted(),
            vec![(&b"x"[..], 2), (&b"y"[..], 1), (&b"z"[..], 1)]
        );
    }
}
