//! Counting the unique pre-tokens (words) of a corpus: the only thing training keeps of the text,
//! so a corpus larger than memory is fine. Each thread counts into its own table; the tables
//! are added together at the end.

use std::collections::HashMap;

use memchr::memmem;
use simdtok_kernels::Kernels;

use crate::align::spans;
use crate::cache::key::{Key, MAX_WORD};
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

/// Unique words (their bytes: UTF-8 for every pre-tokenizer) with their counts: words of up to
/// [`MAX_WORD`] bytes (nearly all) in a table that holds their bytes in place, longer ones in a
/// map of boxed keys.
#[derive(Debug)]
pub struct WordCounts {
    short: ShortCounts,
    long: HashMap<Box<[u8]>, u64, Crc32cState>,
}

impl WordCounts {
    /// No words yet.
    pub fn new(kernels: &'static Kernels) -> WordCounts {
        WordCounts {
            short: ShortCounts::default(),
            long: HashMap::with_hasher(Crc32cState::new(kernels)),
        }
    }

    /// Counts one more occurrence of `word`.
    pub fn add(&mut self, word: &[u8]) {
        self.add_n(word, 1);
    }

    /// Counts `n` more occurrences of `word`.
    pub fn add_n(&mut self, word: &[u8], n: u64) {
        if word.len() <= MAX_WORD {
            self.short.add(Key::new(word), n);
        } else {
            self.add_long(word, n);
        }
    }

    /// Counts one more occurrence of the word `text[start..end]` (read in place when short).
    #[inline]
    fn add_in(&mut self, text: &[u8], start: usize, end: usize) {
        if end - start <= MAX_WORD {
            self.short.add(Key::in_text(text, start, end - start), 1);
        } else {
            self.add_long(&text[start..end], 1);
        }
    }

    fn add_long(&mut self, word: &[u8], n: u64) {
        match self.long.get_mut(word) {
            Some(count) => *count += n,
            None => {
                self.long.insert(word.into(), n);
            }
        }
    }

    /// Adds the counts of `other` (the larger table absorbs the smaller: fewer words placed
    /// again).
    pub fn absorb(&mut self, mut other: WordCounts) {
        if other.len() > self.len() {
            std::mem::swap(self, &mut other);
        }
        for slot in other.short.slots.iter().filter(|s| s.len != 0) {
            let key = Key::new(&slot.bytes[..slot.len as usize]);
            self.short.add(key, slot.count);
        }
        self.long.reserve(other.long.len());
        for (word, n) in other.long {
            *self.long.entry(word).or_insert(0) += n;
        }
    }

    /// The number of unique words.
    pub fn len(&self) -> usize {
        self.short.len + self.long.len()
    }

    /// Whether no word was counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words and their counts, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        let short = self
            .short
            .slots
            .iter()
            .filter(|s| s.len != 0)
            .map(|s| (&s.bytes[..s.len as usize], s.count));
        short.chain(self.long.iter().map(|(w, &n)| (&w[..], n)))
    }

    /// The words and their counts, sorted by their bytes (a deterministic order).
    pub fn sorted(&self) -> Vec<(&[u8], u64)> {
        let mut words: Vec<_> = self.iter().collect();
        words.sort_unstable();
        words
    }
}

/// A word of up to [`MAX_WORD`] bytes and its count; `len` 0 is a free slot (words are never
/// empty).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct ShortSlot {
    /// The word's bytes, zero-padded.
    bytes: [u8; MAX_WORD],
    count: u64,
    len: u64,
}

/// The short words: open addressing with linear probing, at most three quarters full. A slot holds the
/// word's bytes, so a lookup reads one slot (a cache line at most) where a map of boxed keys
/// reads its control bytes, its bucket and the key behind the box: counting 100 MB of English
/// spent half its time in those lookups.
#[derive(Debug, Default)]
struct ShortCounts {
    slots: Vec<ShortSlot>,
    len: usize,
}

impl ShortCounts {
    /// Slots to start with (128 KiB).
    const FIRST: usize = 1 << 12;

    #[inline]
    fn add(&mut self, key: Key, n: u64) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow();
        }
        let [lo, hi] = key.words();
        let len = key.len() as u64;
        let mask = self.slots.len() - 1;
        let mut at = (key.hash() >> 32) as usize & mask;
        loop {
            let slot = &mut self.slots[at];
            if slot.len == len && slot_words(slot) == (lo, hi) {
                slot.count += n;
                return;
            }
            if slot.len == 0 {
                slot.bytes[..8].copy_from_slice(&lo.to_le_bytes());
                slot.bytes[8..].copy_from_slice(&hi.to_le_bytes());
                slot.len = len;
                slot.count = n;
                self.len += 1;
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Doubles the table (or makes the first), placing every word again.
    #[cold]
    fn grow(&mut self) {
        let size = (2 * self.slots.len()).max(Self::FIRST);
        let old = std::mem::replace(&mut self.slots, vec![ShortSlot::default(); size]);
        self.len = 0;
        for slot in old.iter().filter(|s| s.len != 0) {
            self.add(Key::new(&slot.bytes[..slot.len as usize]), slot.count);
        }
    }
}

/// A slot's bytes as the two little-endian words of a [`Key`].
#[inline(always)]
fn slot_words(slot: &ShortSlot) -> (u64, u64) {
    (
        u64::from_le_bytes(slot.bytes[..8].try_into().expect("8 bytes")),
        u64::from_le_bytes(slot.bytes[8..].try_into().expect("8 bytes")),
    )
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
            Some(splitter) => splitter.split(text, |s, e| counts.add_in(text.as_bytes(), s, e)),
            None => {
                for (s, e) in spans::words(text) {
                    counts.add_in(text.as_bytes(), s, e);
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
    use crate::test_rng::Rng;

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

    /// The table of short words against a plain map: words of every length around
    /// [`MAX_WORD`], of bytes that include NUL (so that `a` and `a\0`, the same zero-padded
    /// bytes, must differ by their length), read in place up to the text's end, enough of them
    /// for the table to grow several times, and tables added together.
    #[test]
    fn counts_equal_a_plain_maps() {
        let kernels = Kernels::active().unwrap();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut random = |bound: usize| rng.below(bound as u64) as usize;
        let text: Vec<u8> = (0..400_000)
            .map(|_| [0u8, b'a', b'b', 0xE2][random(4)])
            .collect();
        let mut want: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut halves = [WordCounts::new(kernels), WordCounts::new(kernels)];
        let mut start = 0;
        let mut i = 0;
        while start < text.len() {
            let len = (1 + random(MAX_WORD + 3)).min(text.len() - start);
            let word = &text[start..start + len];
            *want.entry(word.to_vec()).or_insert(0) += 1;
            halves[i % 2].add_in(&text, start, start + len);
            // Words overlap, so the same bytes come back at other offsets.
            start += 1 + random(len);
            i += 1;
        }
        let [mut a, b] = halves;
        assert!(
            a.short.slots.len() >= 8 * ShortCounts::FIRST,
            "the table grew three times or more"
        );
        a.absorb(b);
        let mut want: Vec<(Vec<u8>, u64)> = want.into_iter().collect();
        want.sort_unstable();
        let got: Vec<(Vec<u8>, u64)> = a
            .sorted()
            .into_iter()
            .map(|(w, n)| (w.to_vec(), n))
            .collect();
        assert_eq!(a.len(), want.len());
        assert_eq!(got, want);
        // `add_n` finds the words `add_in` stored.
        let (word, n) = got[got.len() / 2].clone();
        a.add_n(&word, 5);
        assert!(a.sorted().contains(&(&word[..], n + 5)));
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
