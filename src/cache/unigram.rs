//! The per-thread word cache of the unigram model ([`crate::models::unigram`]).
//!
//! Unlike the other encoders' caches, an entry is not a word's result: sentencepiece adds scores
//! in `f32` along the whole text, so a word's segmentation can depend on the running score where
//! it starts. An entry holds the word's segmentation in exact arithmetic together with the
//! largest running score (in magnitude) under which `f32` arithmetic provably chooses the same
//! path ([`crate::models::unigram::guard`]); the caller reuses it only below that bound.
//!
//! Layout: entries of one cache line (64 bytes) — the word's bytes (up to [`MAX_KEY`], compared
//! whole on every hit, never a hash alone), up to [`MAX_PIECES`] pieces (longer paths in an
//! arena beside, 3 MiB at most), the bound — in sets of two ways, the more recently used first.
//! 65 536 entries (4 MiB), allocated on first use, doubled once after 4096 evictions:
//! the distinct words of a large English corpus (with and without the `▁` before them) number
//! some tens of thousands. The table belongs to one model at a time ([`CacheOwner`]) and watches
//! its own hit rate ([`CacheBypass`]): on text whose words do not repeat, a miss costs an extra
//! analysis of the word, so lookups stop for a while.

use crate::cache::bypass::CacheBypass;
use crate::cache::owner::{CacheOwner, Claim, Stamp};

/// Words up to this many bytes are cached (`▁` and 17 ASCII letters: nearly every English
/// word).
pub const MAX_KEY: usize = 20;
/// The most pieces a cached word has.
pub const MAX_PIECES: usize = 4;

/// Sets to start with (4 MiB), and after growing (8 MiB).
const SETS: usize = 1 << 15;
const MAX_SETS: usize = 1 << 16;
/// Live entries evicted before the table grows. English prose of a small vocabulary (KJV) fits
/// the first table; text of many distinct words (the Jargon File: 45 000) ran 10–15 % faster
/// on the larger one (botchan and XLM-R), which a short text never pays for.
const GROW_AFTER: usize = 4096;
/// The most pieces the arena of longer paths holds (3 MiB) before it starts over.
const ARENA: usize = 1 << 18;

/// One cached word.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Entry {
    /// The word's bytes, zero-padded, as little-endian words: 16 bytes and the last 4.
    key: [u64; 2],
    key_tail: u32,
    len: u8,
    n: u8,
    stamp: u16,
    /// Reuse only when the running score's magnitude is below this.
    max_base: f32,
    ids: [u32; MAX_PIECES],
    /// Each piece's score, for the running score's chain of additions: here, a hit reads no
    /// other table (the model's scores are a megabyte for a vocabulary of 250 000).
    scores: [f32; MAX_PIECES],
    /// Each piece's end, relative to the word's start.
    ends: [u8; MAX_PIECES],
}

const _: () = assert!(std::mem::size_of::<Entry>() == 64);

/// A cached word: its path (the first `n` pieces' ids, scores and ends relative to the word's
/// start) and the bound on the running score's magnitude under which it may be reused.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CachedWord {
    pub max_base: f32,
    pub n: usize,
    pub ids: [u32; MAX_PIECES],
    pub scores: [f32; MAX_PIECES],
    pub ends: [u8; MAX_PIECES],
}

impl CachedWord {
    /// The path held in the entry itself (a word of at most [`MAX_PIECES`] pieces; a longer
    /// one is in [`UnigramCache::spilled`]).
    #[inline]
    pub fn inline_path(&self) -> impl Iterator<Item = PathPiece> + '_ {
        (0..self.n.min(MAX_PIECES)).map(|i| PathPiece {
            id: self.ids[i],
            score: self.scores[i],
            end: self.ends[i],
        })
    }
}

/// One piece of a cached path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathPiece {
    pub id: u32,
    pub score: f32,
    /// The piece's end, relative to the word's start.
    pub end: u8,
}

/// See the module documentation.
#[derive(Default)]
pub struct UnigramCache {
    owner: CacheOwner,
    /// Two entries per set; empty until first claimed.
    entries: Vec<Entry>,
    /// The paths of more than [`MAX_PIECES`] pieces (a small vocabulary splits a long word
    /// into many): their entries hold an offset here and the arena's generation.
    arena: Vec<PathPiece>,
    /// Bumped whenever the arena starts over, so that older entries read as missing.
    generation: u32,
    /// Live entries evicted so far: the table grows when they reach [`GROW_AFTER`].
    evictions: usize,
    bypass: CacheBypass,
}

impl std::fmt::Debug for UnigramCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnigramCache")
            .field("entries", &self.entries.len())
            .finish()
    }
}

/// A word's key and length, computed ahead of its lookup.
#[derive(Clone, Copy)]
pub struct WordKey(Key, usize);

/// A word's bytes (at most [`MAX_KEY`]), zero-padded, as two words and a tail, and its hash.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    words: [u64; 2],
    tail: u32,
    hash: u64,
}

impl Key {
    /// The key of the word `text[at..at + len]`. When the text holds 24 bytes from `at`, reads
    /// them in three loads and masks what is past the word: no byte copy, so no store-forwarding
    /// stall when the words are read back (which cost a tenth of the encoding time).
    #[inline]
    fn in_text(text: &[u8], at: usize, len: usize) -> Key {
        debug_assert!(len <= MAX_KEY && at + len <= text.len());
        let mut lanes = [0u64; 3];
        match text.get(at..at + 24) {
            Some(w) => {
                for (i, lane) in lanes.iter_mut().enumerate() {
                    let word = u64::from_le_bytes(w[8 * i..8 * i + 8].try_into().expect("8"));
                    let keep = len.saturating_sub(8 * i).min(8);
                    *lane = if keep == 8 {
                        word
                    } else {
                        word & ((1u64 << (8 * keep)) - 1)
                    };
                }
            }
            None => {
                let mut buf = [0u8; 24];
                buf[..len].copy_from_slice(&text[at..at + len]);
                for (i, lane) in lanes.iter_mut().enumerate() {
                    *lane = u64::from_le_bytes(buf[8 * i..8 * i + 8].try_into().expect("8"));
                }
            }
        }
        let tail = lanes[2] as u32;
        let hash = (lanes[0].wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ lanes[1].wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (tail as u64 ^ ((len as u64) << 40)).wrapping_mul(0x27D4_EB2F_1656_67C5))
        .rotate_left(29)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Key {
            words: [lanes[0], lanes[1]],
            tail,
            hash,
        }
    }

    /// The key's set among `sets` (a power of two).
    #[inline]
    fn set(&self, sets: usize) -> usize {
        ((self.hash >> 40) as usize) & (sets - 1)
    }
}

impl UnigramCache {
    /// Makes the cache the model `owner`'s (allocating it on first use); another owner's
    /// entries then read as empty.
    #[inline]
    pub fn claim(&mut self, owner: usize) {
        if self.entries.is_empty() {
            self.entries = vec![Entry::default(); 2 * SETS];
            self.evictions = 0;
        }
        match self.owner.claim(owner) {
            Claim::Same => {}
            Claim::Changed => self.bypass = CacheBypass::default(),
            Claim::Wrapped => {
                self.entries.fill(Entry::default());
                self.bypass = CacheBypass::default();
            }
        }
    }

    /// Whether this word goes around the cache (the hit rate was too low lately).
    #[inline]
    pub fn skips(&mut self) -> bool {
        self.bypass.skips()
    }

    /// The key of the word `text[at..at + len]` (at most [`MAX_KEY`] bytes), for
    /// [`UnigramCache::prefetch`] and [`UnigramCache::get_keyed`].
    #[inline]
    pub fn word_key(text: &[u8], at: usize, len: usize) -> WordKey {
        WordKey(Key::in_text(text, at, len), len)
    }

    /// Starts loading the set of `key`, to be looked up soon.
    #[inline]
    pub fn prefetch(&self, key: &WordKey) {
        if self.entries.is_empty() {
            return;
        }
        let set = key.0.set(self.entries.len() / 2);
        // The set's more recently used way, where most hits are.
        simdtok_kernels::prefetch_read(&self.entries[2 * set]);
    }

    /// The entry of the word `text[at..at + len]` (at most [`MAX_KEY`] bytes), if cached.
    /// Counts the lookup.
    #[inline]
    pub fn get(&mut self, text: &[u8], at: usize, len: usize) -> Option<CachedWord> {
        self.get_keyed(&Self::word_key(text, at, len))
    }

    /// [`UnigramCache::get`] by the word's key.
    #[inline]
    pub fn get_keyed(&mut self, key: &WordKey) -> Option<CachedWord> {
        let WordKey(key, len) = *key;
        debug_assert!(len <= MAX_KEY && !self.entries.is_empty());
        let stamp = self.owner.stamp();
        let set = key.set(self.entries.len() / 2);
        let ways = &mut self.entries[2 * set..2 * set + 2];
        let generation = self.generation;
        let found = ways.iter().position(|e| {
            e.key == key.words
                && e.key_tail == key.tail
                && e.len as usize == len
                && e.stamp == stamp.bits()
                && (e.n as usize <= MAX_PIECES || e.ids[1] == generation)
        });
        self.bypass.record(found.is_some());
        let way = found?;
        if way == 1 {
            ways.swap(0, 1);
        }
        let e = &ways[0];
        Some(CachedWord {
            max_base: e.max_base,
            n: e.n as usize,
            ids: e.ids,
            scores: e.scores,
            ends: e.ends,
        })
    }

    /// The pieces of a cached word of more than [`MAX_PIECES`] pieces.
    #[inline]
    pub fn spilled(&self, word: &CachedWord) -> &[PathPiece] {
        debug_assert!(word.n > MAX_PIECES);
        let at = word.ids[0] as usize;
        &self.arena[at..at + word.n]
    }

    /// Stores the path `pieces` of the word `text[at..at + len]` and its bound.
    pub fn put_path(
        &mut self,
        text: &[u8],
        at: usize,
        len: usize,
        max_base: f32,
        pieces: &[PathPiece],
    ) {
        let mut word = CachedWord {
            max_base,
            n: pieces.len(),
            ..CachedWord::default()
        };
        if pieces.len() <= MAX_PIECES {
            for (i, p) in pieces.iter().enumerate() {
                (word.ids[i], word.scores[i], word.ends[i]) = (p.id, p.score, p.end);
            }
        } else {
            if self.arena.len() + pieces.len() > ARENA {
                self.arena.clear();
                self.generation = self.generation.wrapping_add(1);
            }
            word.ids[0] = self.arena.len() as u32;
            word.ids[1] = self.generation;
            self.arena.extend_from_slice(pieces);
        }
        self.put(text, at, len, &word);
    }

    /// Stores `word` as the entry of the word `text[at..at + len]`, in place of its set's less
    /// recently used entry.
    fn put(&mut self, text: &[u8], at: usize, len: usize, word: &CachedWord) {
        debug_assert!(len <= MAX_KEY && word.n <= u8::MAX as usize);
        let key = Key::in_text(text, at, len);
        let stamp: Stamp = self.owner.stamp();
        let e = Entry {
            key: key.words,
            key_tail: key.tail,
            len: len as u8,
            n: word.n as u8,
            stamp: stamp.bits(),
            max_base: word.max_base,
            ids: word.ids,
            scores: word.scores,
            ends: word.ends,
        };
        let set = key.set(self.entries.len() / 2);
        let ways = &mut self.entries[2 * set..2 * set + 2];
        if ways[1].stamp == stamp.bits() {
            self.evictions += 1;
        }
        ways[1] = ways[0];
        ways[0] = e;
        if self.evictions == GROW_AFTER && self.entries.len() < 2 * MAX_SETS {
            self.grow();
        }
    }

    /// Doubles the table, once. Entries are placed by more bits of their hash now, so the old
    /// ones are dropped (each costs one more analysis when its word comes back).
    #[cold]
    fn grow(&mut self) {
        self.entries = vec![Entry::default(); 2 * MAX_SETS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_is_the_same_word_and_another_owner_sees_nothing() {
        let mut c = UnigramCache::default();
        c.claim(7);
        let the = b"\xe2\x96\x81the";
        assert_eq!(get(&mut c, the), None);
        put(&mut c, the, &[5, 9], &[3, 6], 1234.5);
        let hit = get(&mut c, the).expect("cached");
        assert_eq!(
            (hit.n, hit.ids[..2].to_vec(), hit.ends[..2].to_vec()),
            (2, vec![5, 9], vec![3, 6])
        );
        assert_eq!(hit.max_base, 1234.5);
        // A prefix, a longer word and the same bytes zero-padded are other words.
        assert_eq!(get(&mut c, b"\xe2\x96\x81th"), None);
        assert_eq!(get(&mut c, b"\xe2\x96\x81the\0"), None);
        // The same word inside a longer text (read in wide loads, masked) is the same key.
        let text = b"xx\xe2\x96\x81the and more than thirty-two bytes after it";
        assert_eq!(c.get(text, 2, the.len()).map(|h| h.n), Some(2));
        c.claim(8);
        assert_eq!(get(&mut c, the), None);
    }

    fn put(c: &mut UnigramCache, word: &[u8], ids: &[u32], ends: &[u8], max_base: f32) {
        let pieces: Vec<PathPiece> = ids
            .iter()
            .zip(ends)
            .map(|(&id, &end)| PathPiece {
                id,
                score: -1.5,
                end,
            })
            .collect();
        c.put_path(word, 0, word.len(), max_base, &pieces);
    }

    fn get(c: &mut UnigramCache, word: &[u8]) -> Option<CachedWord> {
        c.get(word, 0, word.len())
    }

    fn set_of(word: &[u8]) -> usize {
        Key::in_text(word, 0, word.len()).set(SETS)
    }

    #[test]
    fn the_table_grows_once_after_enough_evictions_and_keeps_working() {
        let mut c = UnigramCache::default();
        c.claim(5);
        assert_eq!(c.entries.len(), 2 * SETS);
        let mut k = 0u32;
        while c.entries.len() == 2 * SETS {
            let w = format!("w{k}");
            put(&mut c, w.as_bytes(), &[k], &[w.len() as u8], 3.0);
            k += 1;
            assert!(k < 10 * SETS as u32, "never grew");
        }
        assert_eq!(c.entries.len(), 2 * MAX_SETS);
        for k in 0..3 * MAX_SETS as u32 {
            let w = format!("v{k}");
            put(&mut c, w.as_bytes(), &[k], &[w.len() as u8], 3.0);
            assert_eq!(get(&mut c, w.as_bytes()).map(|h| h.ids[0]), Some(k));
        }
        assert_eq!(c.entries.len(), 2 * MAX_SETS, "it grows once");
    }

    #[test]
    fn long_paths_live_in_the_arena_until_it_starts_over() {
        let mut c = UnigramCache::default();
        c.claim(3);
        let pieces: Vec<PathPiece> = (0..9)
            .map(|i| PathPiece {
                id: 100 + i,
                score: -(i as f32),
                end: i as u8 + 1,
            })
            .collect();
        c.put_path(b"abcdefghi", 0, 9, 77.0, &pieces);
        let hit = get(&mut c, b"abcdefghi").expect("cached");
        assert_eq!((hit.n, hit.max_base), (9, 77.0));
        assert_eq!(c.spilled(&hit), &pieces[..]);
        // Fill the arena: the word's entry is then gone, not another word's pieces.
        for k in 0..ARENA / 9 + 1 {
            let w = format!("w{k:08}");
            c.put_path(w.as_bytes(), 0, w.len(), 1.0, &pieces);
        }
        assert_eq!(get(&mut c, b"abcdefghi"), None);
    }

    #[test]
    fn the_two_most_recent_words_of_a_set_stay() {
        let mut c = UnigramCache::default();
        c.claim(1);
        // Words of one set: look for three.
        let target = set_of(b"w0");
        let mut same: Vec<Vec<u8>> = vec![b"w0".to_vec()];
        let mut i = 1u32;
        while same.len() < 3 {
            let w = format!("w{i}").into_bytes();
            if set_of(&w) == target {
                same.push(w);
            }
            i += 1;
        }
        for (k, w) in same.iter().enumerate() {
            put(&mut c, w, &[k as u32], &[w.len() as u8], 1.0);
        }
        assert_eq!(get(&mut c, &same[0]), None, "the oldest was evicted");
        assert_eq!(get(&mut c, &same[1]).map(|h| h.ids[0]), Some(1));
        assert_eq!(get(&mut c, &same[2]).map(|h| h.ids[0]), Some(2));
        // Every length up to the longest key.
        for len in 0..=MAX_KEY {
            let w = vec![b'x'; len];
            put(&mut c, &w, &[len as u32], &[len as u8], 2.0);
            assert_eq!(get(&mut c, &w).map(|h| h.ids[0]), Some(len as u32));
            // Inside a long text of other bytes, read in wide loads and masked.
            let mut text = w.clone();
            text.extend([b'y'; 40]);
            assert_eq!(c.get(&text, 0, len).map(|h| h.ids[0]), Some(len as u32));
        }
    }
}
