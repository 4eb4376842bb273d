//! A small direct-mapped cache of short words (or pre-tokenizer pieces) and their tokens.
//!
//! WordPiece of a word, and BPE of a piece, depend on its bytes alone, so a cached result is
//! exact. Prose
//! repeats a few thousand words over and over: a hit costs a 16-byte compare instead of a trie
//! walk whose every step is a dependent load. The cache is per thread, bounded (4096 entries of
//! 40 bytes), and a colliding word simply replaces the entry.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::models::byte_bpe::PieceToken;
use crate::models::wordpiece::WordToken;
use crate::pipeline::sink::Sink;

static NEXT_OWNER: AtomicUsize = AtomicUsize::new(0);

/// A fresh owner id for [`WordCache::claim`]: one per tokenizer.
pub fn new_owner() -> usize {
    NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
}

/// Words up to this many bytes are cached.
pub const MAX_WORD: usize = 16;
/// Results of up to this many tokens are cached.
const MAX_TOKENS: usize = 4;
const SLOTS: usize = 4096;

#[derive(Clone, Copy, Default)]
struct Entry {
    key: [u64; 2],
    len: u8,
    /// Tokens; 0 for an empty slot.
    n: u8,
    ends: [u8; MAX_TOKENS],
    ids: [u32; MAX_TOKENS],
}

/// The cache of one thread for one tokenizer.
pub struct WordCache {
    owner: usize,
    entries: Box<[Entry]>,
}

impl Default for WordCache {
    fn default() -> Self {
        WordCache {
            owner: usize::MAX,
            entries: vec![Entry::default(); SLOTS].into_boxed_slice(),
        }
    }
}

/// A word as a cache key: its bytes zero-padded to 16, and its length.
#[derive(Clone, Copy)]
pub struct Key {
    words: [u64; 2],
    len: u8,
    slot: usize,
}

impl Key {
    /// The key of `word` (at most [`MAX_WORD`] bytes).
    #[inline]
    pub fn new(word: &[u8]) -> Key {
        debug_assert!(word.len() <= MAX_WORD);
        let (lo, hi) = crate::models::token_table::words(word);
        Key::from_words(lo, hi, word.len())
    }

    /// The key of the ASCII word `text[at..at + len]` (`len` at most [`MAX_WORD`]), lowercased
    /// when `lowercase`. Reads the 16 bytes from `at` in two loads when the text has them, which
    /// avoids a byte copy (and the store-forwarding stall of reading it back).
    #[inline]
    pub fn ascii(text: &[u8], at: usize, len: usize, lowercase: bool) -> Key {
        debug_assert!(len <= MAX_WORD && text[at..at + len].is_ascii());
        let (lo, hi) = match text.get(at..at + MAX_WORD) {
            Some(w) => (
                u64::from_le_bytes(w[..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(w[8..].try_into().expect("8 bytes")),
            ),
            None => {
                let k = Key::new(&text[at..at + len]);
                (k.words[0], k.words[1])
            }
        };
        let keep = |n: usize| {
            if n >= 8 {
                u64::MAX
            } else {
                (1u64 << (8 * n)) - 1
            }
        };
        let (mut lo, mut hi) = (lo & keep(len), hi & keep(len.saturating_sub(8)));
        if lowercase {
            lo = ascii_lowercase(lo);
            hi = ascii_lowercase(hi);
        }
        Key::from_words(lo, hi, len)
    }

    fn from_words(lo: u64, hi: u64, len: usize) -> Key {
        let h = (lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
            .rotate_left(29)
            .wrapping_mul(0x1656_67B1_9E37_79F9);
        Key {
            words: [lo, hi],
            len: len as u8,
            slot: (h >> 52) as usize & (SLOTS - 1),
        }
    }

    /// The word's bytes (lowercased if the key was).
    #[inline]
    pub fn bytes(&self) -> ([u8; MAX_WORD], usize) {
        let mut buf = [0u8; MAX_WORD];
        buf[..8].copy_from_slice(&self.words[0].to_le_bytes());
        buf[8..].copy_from_slice(&self.words[1].to_le_bytes());
        (buf, self.len as usize)
    }
}

/// `to_ascii_lowercase` of eight ASCII bytes at once: `A-Z` get bit 5.
#[inline]
fn ascii_lowercase(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Bytes are below 0x80, so these sums never carry into the next byte.
    let at_least_a = x + ONES * (0x80 - b'A' as u64);
    let above_z = x + ONES * (0x80 - b'Z' as u64 - 1);
    let upper = at_least_a & !above_z & (ONES * 0x80);
    x | (upper >> 2)
}

impl WordCache {
    /// Empties the cache when it belongs to another tokenizer than `owner`.
    #[inline]
    pub fn claim(&mut self, owner: usize) {
        if self.owner != owner {
            self.entries.fill(Entry::default());
            self.owner = owner;
        }
    }

    /// Calls `emit(id, start, end)` for each cached token of the word; `false` on a miss.
    #[inline]
    pub fn get(&self, key: &Key, mut emit: impl FnMut(u32, u32, u32)) -> bool {
        let e = &self.entries[key.slot];
        if e.n == 0 || e.key != key.words || e.len != key.len {
            return false;
        }
        let mut start = 0u32;
        for i in 0..e.n as usize {
            let end = e.ends[i] as u32;
            emit(e.ids[i], start, end);
            start = end;
        }
        true
    }

    /// Stores the tokens of the word (when they fit).
    #[inline]
    pub fn put(&mut self, key: &Key, tokens: &[WordToken]) {
        if tokens.is_empty() || tokens.len() > MAX_TOKENS {
            return;
        }
        let mut e = Entry {
            key: key.words,
            len: key.len,
            n: tokens.len() as u8,
            ..Entry::default()
        };
        for (i, t) in tokens.iter().enumerate() {
            e.ends[i] = t.end as u8;
            e.ids[i] = t.id;
        }
        self.entries[key.slot] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_keys_match_copied_keys() {
        let text = b"Hello WORLD, a-Zz@[`{ 0123456789ABCDEFGHIJ";
        for at in 0..text.len() {
            for len in 0..=MAX_WORD.min(text.len() - at) {
                let word = &text[at..at + len];
                for lowercase in [false, true] {
                    let k = Key::ascii(text, at, len, lowercase);
                    let want: Vec<u8> = if lowercase {
                        word.to_ascii_lowercase()
                    } else {
                        word.to_vec()
                    };
                    let (bytes, n) = k.bytes();
                    assert_eq!(&bytes[..n], &want[..], "{at} {len} {lowercase}");
                    let w = Key::new(&want);
                    assert_eq!((k.words, k.len, k.slot), (w.words, w.len, w.slot));
                }
            }
        }
    }
}

/// Buffers for [`cached_piece`].
#[derive(Default)]
pub struct CachedPiece {
    tokens: Vec<PieceToken>,
    spans: Vec<WordToken>,
}

/// The tokens of a pre-tokenizer piece at `at` in the input, from `cache` when it is there,
/// else from `encode` (which appends them to the vector it is given) and then cached — only
/// for pieces whose tokens depend on nothing but their bytes.
#[inline]
pub(crate) fn cached_piece<S: Sink>(
    cache: &mut WordCache,
    piece: &[u8],
    buffers: &mut CachedPiece,
    sink: &mut S,
    at: usize,
    encode: impl FnOnce(&mut Vec<PieceToken>),
) {
    let key = (piece.len() <= MAX_WORD).then(|| Key::new(piece));
    if let Some(key) = &key
        && cache.get(key, |id, s, e| {
            sink.push(id, at + s as usize, at + e as usize)
        })
    {
        return;
    }
    buffers.tokens.clear();
    encode(&mut buffers.tokens);
    buffers.spans.clear();
    let mut start = 0u32;
    for t in &buffers.tokens {
        sink.push(t.id, at + start as usize, at + (start + t.len) as usize);
        buffers.spans.push(WordToken {
            id: t.id,
            start,
            end: start + t.len,
        });
        start += t.len;
    }
    if let Some(key) = &key {
        cache.put(key, &buffers.spans);
    }
}
