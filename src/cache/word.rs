//! A per-thread cache of short words (or pre-tokenizer pieces) and their tokens.
//!
//! WordPiece of a word, and BPE of a piece, depend on its bytes alone, so a cached result is
//! exact. Prose repeats a few thousand words over and over (English text, some 40 000 distinct
//! pieces): a hit costs a 16-byte compare instead of a trie walk or a merge whose every step is
//! a dependent load. The short tier holds 65536 entries, two-way set associative: a new word
//! replaces the less recently used of its set's two — or, in the layouts that have one
//! ([`ShortSet::SECOND_SET`]: SentencePiece BPE's) and once the tier has grown, goes to a
//! second set when its first is full. Its entries are laid out per model
//! ([`crate::cache::short_entries`]): 40 bytes with up to four tokens for WordPiece and
//! SentencePiece BPE (2.5 MiB), 32 bytes with up to three, a set per cache line, for byte-level
//! BPE (2 MiB). Once `GROW_AFTER` BPE pieces have found their first set full it doubles, once,
//! to 131072 entries (5 or 4 MiB): English has
//! some 40 000 distinct pieces, and at 65536 entries a warm pass over 20 MB of it still missed
//! 40 000 times (conflicts), against 14 000 at 131072 (cl100k, repeated passes +8–11 %). It
//! grows after about 5 MB of English; a shorter text never pays for the larger table.
//!
//! BPE pieces of 17 to `LONG_PIECE` bytes — the letter runs of CJK text, where one piece is a
//! whole clause and costs dozens of merges — and short ones of many tokens have a second tier
//! ([`LongCache`]), allocated on first use: under 5.5 MiB. All told a thread's cache stays
//! under 11 MiB ([`BPE_FULL_BYTES`]); a [`CacheBudget`] halves every table and arena to fit.

use std::sync::atomic::{AtomicUsize, Ordering};

use simdtok_kernels::HugeSlice;

use crate::cache::budget::{self, CacheBudget, Held, halved};
use crate::cache::bypass::CacheBypass;
pub use crate::cache::key::{Key, MAX_WORD};
use crate::cache::long::{LONG_BUDGET, LongCache, LongTokens};
#[cfg(test)]
use crate::cache::long::{LONG_MAX_TOKENS, LONG_PIECE};
use crate::cache::owner::{CacheOwner, Claim, Stamp};
pub use crate::cache::seeds::PieceSeeds;
use crate::cache::seeds::SeededOwners;
use crate::cache::short_entries::{HIT_TOKENS, ShortEntry, ShortSet};
pub use crate::cache::short_entries::{PieceSet, WordSet};
use crate::models::token::PieceToken;
use crate::models::token::WordToken;
use crate::pipeline::sink::{IdsCursor, Sink, push_each};

static NEXT_OWNER: AtomicUsize = AtomicUsize::new(0);

/// A fresh owner id for [`WordCache::claim`]: one per tokenizer.
pub fn new_owner() -> usize {
    NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
}

/// 65536 slots to start with: English text has tens of thousands of distinct pieces, and every
/// miss is a lookup in a token table of megabytes.
const SLOTS: usize = 1 << 16;
/// The slots after growing. Twice as many again (then 10 MiB, at 40 bytes a slot) missed less
/// still but was slower: the hits' lines fell out of the L2 cache.
const MAX_SLOTS: usize = 1 << 17;
/// Words that found their first set full (evicting a live entry, or going to their second
/// set) before the tier grows: some hundred for a megabyte of English, a few thousand by its
/// third megabyte.
const GROW_AFTER: usize = 4096;

/// The most bytes the caches of one BPE or WordPiece thread take at their default sizes: the
/// short tier grown, in the larger layout, the long tier full, the segment cache and the pair
/// memos (of merges, and of compatible pairs for CJK pieces).
pub const BPE_FULL_BYTES: usize = MAX_SLOTS / 2 * std::mem::size_of::<WordSet>()
    + LongCache::full_bytes(LONG_BUDGET)
    + crate::cache::segment::FULL_BYTES
    + 2 * crate::cache::pair_memo::FULL_BYTES;

/// The cache of one thread for one tokenizer, its short tier's sets of layout `S`: [`WordSet`]
/// for WordPiece and SentencePiece BPE, [`PieceSet`] for byte-level BPE.
pub struct WordCache<S: ShortSet = WordSet> {
    /// The tokenizer whose results it holds: switching costs no clearing (see [`CacheOwner`]).
    owner: CacheOwner,
    /// On huge pages when large ([`HugeSlice`]): its probes hit at random all over it.
    sets: HugeSlice<S>,
    /// `64 - log2(sets.len())`: a key's hash shifted by this is its set.
    shift: u32,
    /// Words stored so far that found their first set full: the tier grows when they reach
    /// [`GROW_AFTER`].
    crowded: usize,
    long: LongCache,
    /// Whether [`cached_piece`] leaves the cache out (text whose pieces do not repeat).
    bypass: CacheBypass,
    /// The sets after growing.
    max_sets: usize,
    /// Words that find their first set full before the tier grows.
    grow_after: usize,
    /// How many times the budget it was built under halved its tables.
    halvings: u32,
    /// The owners whose seeds it has taken.
    seeded: SeededOwners,
    held: Held,
}

/// The cache of the byte-level BPE pipelines.
pub type PieceCache = WordCache<PieceSet>;

/// [`WordCache::halvings`] of a cache not yet sized: its tables are allocated at its first
/// claim, at the size the budget then in force allows (a thread's scratch that holds caches
/// of several kinds, SentencePiece's, allocates only the one its model uses).
const UNSIZED: u32 = u32::MAX;

impl<S: ShortSet> Default for WordCache<S> {
    /// An empty cache, allocated at its first claim.
    fn default() -> Self {
        WordCache {
            owner: CacheOwner::default(),
            sets: HugeSlice::empty(),
            shift: 64,
            crowded: 0,
            long: LongCache::default(),
            bypass: CacheBypass::default(),
            max_sets: 0,
            grow_after: GROW_AFTER,
            halvings: UNSIZED,
            seeded: SeededOwners::default(),
            held: Held::default(),
        }
    }
}

impl<S: ShortSet> WordCache<S> {
    /// A cache of its default sizes halved `halvings` times (at least two sets, a bucket).
    fn sized(halvings: u32) -> Self {
        let k = halvings;
        let sets = halved(SLOTS / 2, k, 2);
        let mut cache = WordCache {
            owner: CacheOwner::default(),
            sets: HugeSlice::filled(sets, S::default()),
            shift: 64 - sets.trailing_zeros(),
            crowded: 0,
            long: LongCache::sized(halved(LONG_BUDGET, k, 0), k),
            bypass: CacheBypass::default(),
            max_sets: halved(MAX_SLOTS / 2, k, 2),
            grow_after: halved(GROW_AFTER, k, 1),
            halvings: k,
            seeded: SeededOwners::default(),
            held: Held::default(),
        };
        cache.note_held();
        cache
    }

    /// Counts the short tier in its thread's held bytes (the long tier counts its own).
    fn note_held(&mut self) {
        self.held.set(std::mem::size_of_val(&*self.sets));
    }

    /// Builds the cache, empty, at its first claim, and again when the budget in force differs
    /// from the one it was built under (a claim by a tokenizer of another budget).
    #[inline]
    fn fit(&mut self, budget: CacheBudget) {
        let halvings = budget.halvings(BPE_FULL_BYTES);
        if halvings != self.halvings {
            let owner = std::mem::take(&mut self.owner);
            *self = WordCache::sized(halvings);
            self.owner = owner;
        }
    }

    /// The cached tokens of a piece in the long tier.
    #[inline]
    pub fn get_long(&mut self, piece: &[u8]) -> Option<LongTokens<'_>> {
        self.long
            .get(self.owner.stamp(), piece, S::LONG_FIRST_SIGHT)
    }

    /// Stores the tokens of a piece in the long tier (when they fit, and it is short enough
    /// for the layout's [`ShortSet::LONG_FIRST_SIGHT`] or was seen before).
    pub fn put_long(&mut self, piece: &[u8], tokens: &[PieceToken]) {
        self.long
            .put(self.owner.stamp(), piece, 0, tokens, S::LONG_FIRST_SIGHT);
    }

    /// Whether a short word of `n` tokens fits in the short tier.
    #[inline]
    pub fn fits(&self, n: usize) -> bool {
        (1..=S::Entry::MAX_TOKENS).contains(&n)
    }

    /// Empties the cache when it belongs to another tokenizer than `owner` (and sizes it for
    /// the budget in force).
    #[inline]
    pub fn claim(&mut self, owner: usize) {
        self.fit(budget::in_force());
        let claim = self.owner.claim(owner);
        if claim == Claim::Wrapped {
            self.sets.fill(S::default());
            self.long.clear();
        }
        if claim != Claim::Same {
            // Another tokenizer's records, sightings and hit rate say nothing about this one's.
            self.long.restart();
            self.bypass = CacheBypass::default();
        }
    }

    /// [`WordCache::claim`], then, the first time this cache holds `owner`'s results, fills
    /// it with `seeds` ([`PieceSeeds`]; not again while it remembers the owner, one of the last
    /// 16 it seeded). The short tier first grows to its full size when the seeds would crowd
    /// it: seeded, it holds a vocabulary besides the text's own pieces. About 1 ms for
    /// cl100k's 100 000 seeds.
    #[inline]
    pub fn claim_seeded(&mut self, owner: usize, seeds: &PieceSeeds) {
        let was = self.owner.stamp();
        self.claim(owner);
        if self.owner.stamp() != was && !seeds.is_empty() && self.seeded.first_time(owner) {
            self.seed(seeds);
        }
    }

    /// Stores every seed (see [`WordCache::claim_seeded`]); seeds that find their set full
    /// take the place of the older ones, and do not count towards growing.
    #[inline(never)]
    fn seed(&mut self, seeds: &PieceSeeds) {
        if seeds.len() > self.sets.len() && self.sets.len() < self.max_sets {
            self.grow();
        }
        let stamp = self.owner.stamp();
        // Seeds beyond the tier's entries would only evict each other (Gemma 3's 262 144, or a
        // small budget): the lowest ids, last in the list, are the ones stored.
        let keep = seeds.len().min(self.sets.len() * 2);
        for (key, id) in seeds.iter().skip(seeds.len() - keep) {
            let token = [WordToken {
                id,
                start: 0,
                end: key.len() as u32,
            }];
            if let Some(e) = S::Entry::new(&key, stamp, &token) {
                self.place(&key, e, stamp);
            }
        }
    }

    /// Calls `emit(id, start, end)` for each cached token of the word; `false` on a miss.
    #[inline]
    pub fn get(&mut self, key: &Key, mut emit: impl FnMut(u32, u32, u32)) -> bool {
        let Some(e) = self.find(key) else {
            return false;
        };
        let (ids, ends) = (e.ids(), e.ends());
        let mut start = 0u32;
        for i in 0..e.n() {
            let end = ends[i] as u32;
            emit(ids[i], start, end);
            start = end;
        }
        true
    }

    /// Starts loading the set of `key`, to be looked up soon.
    #[inline]
    pub fn prefetch(&self, key: &Key) {
        simdtok_kernels::prefetch_read(&self.sets[self.set_of(key)]);
    }

    /// The entry of the word, `None` on a miss.
    #[inline]
    fn find(&mut self, key: &Key) -> Option<&S::Entry> {
        let stamp = self.owner.stamp();
        let mut set = self.set_of(key);
        if !self.hit_in(set, key, stamp) {
            // A word is in its second set only if its first was full when it was stored, and a
            // set, once full, stays so while the owner keeps the cache: a miss in a set with
            // room (most first sights of words) reads no second set.
            if !self.spills() || !self.full(set, stamp) {
                return None;
            }
            set = self.alt_set_of(key);
            if !self.hit_in(set, key, stamp) {
                return None;
            }
        }
        Some(&self.sets[set].ways()[0])
    }

    /// Whether `set` holds the word, which it then makes its first (most recently used) entry.
    #[inline(always)]
    fn hit_in(&mut self, set: usize, key: &Key, stamp: Stamp) -> bool {
        let ways = self.sets[set].ways_mut();
        if !ways[0].holds(key, stamp) {
            if !ways[1].holds(key, stamp) {
                return false;
            }
            ways.swap(0, 1);
        }
        true
    }

    /// Stores the tokens of the word (when they fit: consecutive tokens that tile the word,
    /// as every caller's do, and not too many).
    #[inline]
    pub fn put(&mut self, key: &Key, tokens: &[WordToken]) {
        let stamp = self.owner.stamp();
        let Some(e) = S::Entry::new(key, stamp, tokens) else {
            return;
        };
        if self.place(key, e, stamp) {
            self.crowded += 1;
        }
    }

    /// Puts `e`, the entry of `key`, first in the key's first set when that has room, else
    /// (with [`ShortSet::SECOND_SET`]) in its second set when that has room, else in its first,
    /// dropping that set's least recently used entry. Returns whether the first set was full.
    ///
    /// Two sets per word: with one, the words of a set beyond its two ways evicted each other
    /// on every pass over a text (a pass over 20 MB of English with `llama-spm`, 131072 entries,
    /// missed 34 578 times, each a BPE of the word); with a second set to spill into, a word is
    /// lost only when both are full (991 misses).
    #[inline]
    fn place(&mut self, key: &Key, e: S::Entry, stamp: Stamp) -> bool {
        let first = self.set_of(key);
        if !self.full(first, stamp) {
            self.place_first(first, e);
            return false;
        }
        let second = self.alt_set_of(key);
        if self.spills() && !self.full(second, stamp) {
            self.place_first(second, e);
            return true;
        }
        self.place_first(first, e);
        true
    }

    /// Whether words go to a second set when their first is full: in the layouts that have
    /// one ([`ShortSet::SECOND_SET`]), once the tier has grown — so only for BPE words (see
    /// [`WordCache::grow_if_thrashing`]), whose misses cost a BPE each.
    #[inline(always)]
    fn spills(&self) -> bool {
        S::SECOND_SET && self.sets.len() == self.max_sets
    }

    /// Doubles the short tier once `GROW_AFTER` words found their first set full (once). For BPE
    /// pieces only: a WordPiece miss is a trie walk of a short word, far cheaper than a BPE miss
    /// (about 330 ns), and growing showed no gain for it (bert-base-uncased on `en-20mb`, within
    /// the ±5 % noise of those runs).
    #[inline]
    pub fn grow_if_thrashing(&mut self) {
        if self.crowded >= self.grow_after && self.sets.len() < self.max_sets {
            self.grow();
        }
    }

    /// Puts `e` first in `set` (the most recently used), its first entry second, dropping the
    /// second.
    #[inline]
    fn place_first(&mut self, set: usize, e: S::Entry) {
        let ways = self.sets[set].ways_mut();
        ways[1] = ways[0];
        ways[0] = e;
    }

    /// Whether both ways of `set` are live: entries go in first (see `place_first`), so the
    /// second is live only when both are.
    #[inline(always)]
    fn full(&self, set: usize, stamp: Stamp) -> bool {
        self.sets[set].ways()[1].is_live(stamp)
    }

    /// The key's first set: the top bits of its hash.
    #[inline]
    fn set_of(&self, key: &Key) -> usize {
        (key.hash() >> self.shift) as usize
    }

    /// The key's second set: bits of its hash below those of the first (at most 24 bits pick
    /// a set, so the two never share a bit).
    #[inline]
    fn alt_set_of(&self, key: &Key) -> usize {
        (key.hash().rotate_left(24) >> self.shift) as usize
    }

    /// The number of entries of the short tier.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.sets.len() * 2
    }

    /// Doubles the short tier, keeping its live entries (each set's first one first, so that it
    /// stays the more recently used where two meet again).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let larger = HugeSlice::filled(self.sets.len() * 2, S::default());
        let old = std::mem::replace(&mut self.sets, larger);
        self.shift -= 1;
        let stamp = self.owner.stamp();
        for way in [1, 0] {
            for e in old.iter().map(|set| &set.ways()[way]) {
                if e.is_live(stamp) {
                    self.place(&e.key(), *e, stamp);
                }
            }
        }
        self.note_held();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cache::short_entries::PieceEntry;
    use crate::encoding::Encoding;

    /// Encodes `piece` at `at` through the cache; the piece's "tokens" are its bytes in
    /// threes, so every result is known. Returns the encoding and whether `encode` ran.
    fn through(cache: &mut PieceCache, piece: &[u8], at: usize) -> (Encoding, bool) {
        let mut out = Encoding::default();
        let mut ran = false;
        // The piece inside a text, with bytes after it that its key must leave out.
        let mut text = vec![0xAB; at];
        text.extend_from_slice(piece);
        text.extend_from_slice(&[0xCD; 20][..at % 21]);
        cached_piece(
            cache,
            &text,
            (at, at + piece.len()),
            &mut CachedPiece::default(),
            &mut out,
            |v| {
                ran = true;
                for (i, c) in piece.chunks(3).enumerate() {
                    v.push(PieceToken {
                        id: c[0] as u32 * 1000 + i as u32,
                        len: c.len() as u32,
                    });
                }
            },
        );
        (out, ran)
    }

    #[test]
    fn seeds_answer_first_sights_once_per_owner() {
        let words: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("s{i}").into_bytes()).collect();
        // Id 900 000 + i: not what `through` would encode, so a hit shows it was the seed.
        let seeds = PieceSeeds::new(1_000_000, |id| {
            id.checked_sub(900_000)
                .and_then(|i| words.get(i as usize))
                .map(|w| &w[..])
        });
        assert_eq!(seeds.len(), words.len());
        let mut cache = PieceCache::default();
        cache.claim_seeded(1, &seeds);
        // Nearly all are answered by their seeds (a few sets took three or more of them).
        let mut answered = 0;
        for (i, w) in words.iter().enumerate() {
            let (enc, ran) = through(&mut cache, w, 3);
            if !ran {
                assert_eq!(enc.ids, [900_000 + i as u32]);
                assert_eq!(enc.offsets, [(3, 3 + w.len() as u32)]);
                answered += 1;
            }
        }
        assert!(answered > words.len() * 99 / 100, "{answered}");
        // Another owner: no seeds of the first's; back to the first: not seeded again.
        cache.claim_seeded(2, &PieceSeeds::none());
        assert!(through(&mut cache, &words[0], 0).1);
        cache.claim_seeded(1, &seeds);
        assert!(through(&mut cache, &words[1], 0).1);
        // A small budget keeps the lowest ids.
        let mut small = PieceCache::sized(8);
        small.claim_seeded(3, &seeds);
        assert!(!through(&mut small, &words[0], 0).1);
        let hits = words
            .iter()
            .filter(|w| !through(&mut small, w, 0).1)
            .count();
        assert!(hits > 0 && hits <= small.slots(), "{hits}");
    }

    #[test]
    fn both_tiers_return_what_was_stored() {
        let mut cache = PieceCache::default();
        cache.claim(7);
        let text: Vec<u8> = (0..400u32).map(|i| (i * 7 % 251) as u8).collect();
        // Short tier, long tier (several lengths around word sizes), and too long to cache.
        for len in [1, 5, 16, 17, 23, 24, 25, 64, 200, 256, 257, 300] {
            for start in [0, 3, 50] {
                let piece = &text[start..start + len];
                let (first, ran) = through(&mut cache, piece, 10);
                assert!(ran, "{len}");
                // The long tier stores a piece the second time it is seen.
                let long = len > MAX_WORD || len.div_ceil(3) > PieceEntry::MAX_TOKENS;
                if long {
                    assert!(through(&mut cache, piece, 10).1, "{len}");
                }
                let (again, ran) = through(&mut cache, piece, 10);
                let cached = len <= LONG_PIECE && len.div_ceil(3) <= LONG_MAX_TOKENS;
                assert_eq!(ran, !cached, "{len}");
                assert_eq!(
                    (&first.ids, &first.offsets),
                    (&again.ids, &again.offsets),
                    "{len}"
                );
                assert_eq!(first.offsets.last().unwrap().1 as usize, 10 + len);
            }
        }
        // Another tokenizer's claim empties both tiers.
        cache.claim(8);
        assert!(through(&mut cache, &text[..40], 0).1);
        assert!(through(&mut cache, &text[..3], 0).1);
        // … however many claims later: a stamp never comes back while an entry has it.
        through(&mut cache, &text[..4], 0);
        through(&mut cache, &text[..30], 0);
        let stored = cache.owner.stamp();
        for i in 0.. {
            cache.claim(9 + i % 2);
            if cache.owner.stamp() == stored {
                break;
            }
        }
        assert!(through(&mut cache, &text[..4], 0).1);
        assert!(through(&mut cache, &text[..30], 0).1);
    }

    #[test]
    fn pieces_that_never_repeat_go_around_the_cache_and_stay_exact() {
        use crate::cache::bypass::{FIRST_SKIP, WINDOW};
        let mut cache = PieceCache::default();
        cache.claim(3);
        let piece = |i: u32, long: bool| {
            let p = format!(
                "{i:x}.{}",
                if long { "x".repeat(20) } else { String::new() }
            );
            p.into_bytes()
        };
        let expected = |p: &[u8], at: usize| {
            let mut e = Encoding::default();
            for (i, c) in p.chunks(3).enumerate() {
                let s = at + 3 * i;
                e.ids.push(c[0] as u32 * 1000 + i as u32);
                e.offsets.push((s as u32, (s + c.len()) as u32));
            }
            e
        };
        // Distinct short and long pieces: after a window of misses the cache is left out
        // (neither asked nor filled), and every result is still the encoder's.
        let n = WINDOW + FIRST_SKIP + WINDOW;
        for i in 0..n {
            let p = piece(i, i % 3 == 0);
            let (got, ran) = through(&mut cache, &p, 5);
            assert!(ran, "{i}");
            assert_eq!(
                (&got.ids, &got.offsets),
                (&expected(&p, 5).ids, &expected(&p, 5).offsets)
            );
        }
        assert!(
            cache.bypass.is_bypassing(),
            "still bypassed after {n} distinct pieces"
        );
        // Another tokenizer starts with the cache asked: this one's hit rate says nothing of it.
        cache.claim(4);
        assert!(!cache.bypass.is_bypassing());
        cache.claim(3);
        // Once the text repeats, the cache is asked again and answers.
        let word = b"again";
        let mut answered = 0;
        for _ in 0..2 * (FIRST_SKIP + WINDOW) {
            let (got, ran) = through(&mut cache, word, 0);
            assert_eq!(got.ids, expected(word, 0).ids);
            answered += !ran as u32;
        }
        assert!(answered > WINDOW, "{answered}");
    }

    #[test]
    fn a_set_keeps_its_two_most_recently_used_words() {
        // Three words of one set: a, b, then a used again, then c evicts b (not a).
        let words: Vec<Vec<u8>> = (0..200_000u32)
            .map(|i| format!("w{i}").into_bytes())
            .collect();
        let probe = PieceCache::sized(0);
        let set = |w: &[u8]| probe.set_of(&Key::new(w));
        let a = &words[0];
        let mut same = words[1..].iter().filter(|w| set(w) == set(a));
        let (b, c) = (same.next().unwrap(), same.next().unwrap());
        let mut cache = PieceCache::default();
        cache.claim(1);
        for w in [a, b] {
            assert!(through(&mut cache, w, 0).1);
        }
        assert!(!through(&mut cache, a, 0).1);
        assert!(!through(&mut cache, b, 0).1);
        assert!(!through(&mut cache, a, 0).1);
        assert!(through(&mut cache, c, 0).1);
        assert!(!through(&mut cache, a, 0).1, "the most recently used stays");
        assert!(!through(&mut cache, c, 0).1);
        assert!(through(&mut cache, b, 0).1, "the least recently used went");
    }

    /// Stores `w` in a word cache as one token, as WordPiece's `[UNK]` would be.
    fn put_word(cache: &mut WordCache<WordSet>, w: &[u8]) {
        let token = [WordToken {
            id: w.len() as u32,
            start: 0,
            end: w.len() as u32,
        }];
        cache.put(&Key::new(w), &token);
    }

    /// Whether the word cache answers for `w` (with what `put_word` stored).
    fn has_word(cache: &mut WordCache<WordSet>, w: &[u8]) -> bool {
        let mut got = Vec::new();
        let hit = cache.get(&Key::new(w), |id, s, e| got.push((id, s, e)));
        if hit {
            assert_eq!(got, [(w.len() as u32, 0, w.len() as u32)]);
        }
        hit
    }

    #[test]
    fn a_word_spills_into_its_second_set_and_is_evicted_only_when_both_are_full() {
        let words: Vec<Vec<u8>> = (0..400_000u32)
            .map(|i| format!("w{i}").into_bytes())
            .collect();
        // Words spill once the tier has grown (BPE words only make it grow).
        let grown = || {
            let mut cache = WordCache::<WordSet>::sized(0);
            cache.grow();
            cache
        };
        let probe = grown();
        let first = |w: &[u8]| probe.set_of(&Key::new(w));
        let second = |w: &[u8]| probe.alt_set_of(&Key::new(w));
        let a = &words[0];
        let set = first(a);
        // Words of a's first set whose second sets differ from it and from each other.
        let mut same = words[1..]
            .iter()
            .filter(|w| first(w) == set && second(w) != set);
        let b = same.next().unwrap();
        let d = same.next().unwrap();
        let c = same.find(|w| second(w) != second(d)).unwrap();
        // Two words whose first set is c's second.
        let mut others = words[1..].iter().filter(|w| first(w) == second(c));
        let (y, z) = (others.next().unwrap(), others.next().unwrap());
        let mut cache = grown();
        cache.claim(1);
        for w in [a, b] {
            put_word(&mut cache, w);
        }
        // a is used again, so b is the set's least recently used.
        assert!(has_word(&mut cache, a));
        // d finds its first set full and goes to its second: nothing is lost.
        put_word(&mut cache, d);
        for w in [a, b, d] {
            assert!(has_word(&mut cache, w));
        }
        assert_eq!(cache.crowded, 1);
        assert!(has_word(&mut cache, a));
        // c finds both its sets full (y and z fill its second): the first set's least
        // recently used (b) goes.
        for w in [y, z, c] {
            put_word(&mut cache, w);
        }
        assert_eq!(cache.crowded, 2);
        for w in [a, c, d, y, z] {
            assert!(has_word(&mut cache, w));
        }
        assert!(!has_word(&mut cache, b), "the least recently used went");
        // Before the tier grows (WordPiece's words never make it), a full set evicts at once.
        let mut small = WordCache::<WordSet>::default();
        small.claim(1);
        let first = |w: &[u8]| small.set_of(&Key::new(w));
        let set = first(a);
        let mut same = words[1..].iter().filter(|w| first(w) == set);
        let (b, c) = (same.next().unwrap(), same.next().unwrap());
        for w in [a, b, c] {
            put_word(&mut small, w);
        }
        assert!(has_word(&mut small, c) && has_word(&mut small, b));
        assert!(!has_word(&mut small, a));
        // Byte-level pieces never spill: the `PieceCache` test above.
    }

    #[test]
    fn the_short_tier_grows_once_after_evictions_and_keeps_its_words() {
        let words: Vec<Vec<u8>> = (0..400_000u32)
            .map(|i| format!("w{i}").into_bytes())
            .collect();
        let mut cache = PieceCache::default();
        cache.claim(1);
        // Each new word is followed by a word seen before, so that the hit rate keeps the cache
        // from going around itself (see `CacheBypass`).
        let store = |cache: &mut PieceCache, w: &[u8]| {
            through(cache, w, 0);
            through(cache, b"again", 0);
        };
        // Ten thousand words evict a few (sets of three), not enough to grow.
        for w in &words[..10_000] {
            store(&mut cache, w);
        }
        assert!(cache.crowded > 0 && cache.crowded < GROW_AFTER);
        assert_eq!(cache.slots(), SLOTS);
        // More words: it grows, once.
        let mut grew_at = None;
        for (i, w) in words.iter().enumerate().skip(10_000) {
            store(&mut cache, w);
            if grew_at.is_none() && cache.slots() > SLOTS {
                grew_at = Some(i);
                // The words just stored are still there after the move.
                for w in &words[i - 200..=i] {
                    assert!(!through(&mut cache, w, 0).1, "{i}");
                }
            }
        }
        assert!(grew_at.is_some());
        assert_eq!(cache.slots(), MAX_SLOTS);
        // Every set still keeps its most recently used word first, and answers both.
        let n = words.len();
        for w in &words[n - 1000..] {
            assert!(!through(&mut cache, w, 0).1);
        }
        // WordPiece's words (`put` alone) never make it grow.
        let mut words_only = WordCache::<WordSet>::default();
        words_only.claim(2);
        for w in &words {
            // One token covering the word, as WordPiece's `[UNK]` does.
            let token = [WordToken {
                id: 1,
                start: 0,
                end: w.len() as u32,
            }];
            words_only.put(&Key::new(w), &token);
        }
        assert!(words_only.crowded >= GROW_AFTER);
        assert_eq!(words_only.slots(), SLOTS);
    }
}

/// Buffers for `cached_piece`.
#[derive(Default)]
pub struct CachedPiece {
    tokens: Vec<PieceToken>,
    spans: Vec<WordToken>,
    /// The short tier's key of each piece of a batch ([`cached_pieces`]), made once for its
    /// prefetch and its probe.
    keys: Vec<Key>,
}

/// The tokens of the pre-tokenizer piece `text[at..end]`, from `cache` when it is there,
/// else from `encode` (which appends them to the vector it is given) and then cached — only
/// for pieces whose tokens depend on nothing but their bytes. While the cache's hit rate is
/// too low to pay for it ([`CacheBypass`]), pieces are encoded without it.
#[inline]
pub(crate) fn cached_piece<S: Sink>(
    cache: &mut PieceCache,
    text: &[u8],
    (at, end): (usize, usize),
    buffers: &mut CachedPiece,
    sink: &mut S,
    encode: impl FnOnce(&mut Vec<PieceToken>),
) {
    match short_hit(cache, text, (at, end)) {
        Some(hit) => sink.push_cached(at, &hit.ids, &hit.ends, hit.n),
        None => missed_piece(cache, text, (at, end), buffers, sink, encode),
    }
}

/// [`cached_piece`] for each piece of `spans`, in order; `encode(span, tokens)` encodes one.
/// Into an ids-only output the hits go through an [`IdsCursor`], four ids at a time.
#[inline]
pub(crate) fn cached_pieces<S: Sink>(
    cache: &mut PieceCache,
    text: &[u8],
    spans: &[(usize, usize)],
    buffers: &mut CachedPiece,
    sink: &mut S,
    mut encode: impl FnMut((usize, usize), &mut Vec<PieceToken>),
) {
    if let Some(ids) = sink.ids_only() {
        let mut keys = std::mem::take(&mut buffers.keys);
        prefetch_keyed_sets(cache, text, spans, &mut keys);
        // English makes a token or so per piece.
        let mut out = IdsCursor::new(ids, spans.len() + spans.len() / 4);
        for (&span, key) in spans.iter().zip(&keys) {
            match short_hit_keyed(cache, text, span, key) {
                Some(hit) => out.push_four(hit.ids, hit.n),
                None => out.with_vec(|ids| {
                    missed_piece_out_of_line(cache, text, span, buffers, ids, &mut encode)
                }),
            }
        }
        buffers.keys = keys;
        return;
    }
    prefetch_sets(cache, text, spans);
    for &span in spans {
        cached_piece(cache, text, span, buffers, sink, |t| encode(span, t));
    }
}

/// Starts loading the short tier's set of every piece of `spans`, a batch ahead of the probes,
/// so that their misses to L2 and L3 overlap instead of each stalling the probe loop in turn.
/// A pass of its own: hashing the keys again costs a few multiplies a piece, and the probes then
/// mostly hit L1. Unseen English, cl100k, one CPU of an EPYC: all-hit passes 190–240 → 255–285
/// MB/s (prefetching eight pieces ahead inside the probe loop was slower, in earlier sessions).
#[inline]
fn prefetch_sets(cache: &PieceCache, text: &[u8], spans: &[(usize, usize)]) {
    if cache.bypass.is_bypassing() {
        return;
    }
    for &(at, end) in spans {
        if end - at <= MAX_WORD {
            cache.prefetch(&Key::in_text(text, at, end - at));
        }
    }
}

/// [`prefetch_sets`], keeping each piece's key in `keys` (a piece too long for the short tier,
/// or every piece while the cache is bypassed, gets an empty key, which its probe never uses):
/// the probe then does not make it again (building and hashing the keys twice was a sixth of
/// Llama 3's instructions on unseen English).
#[inline]
fn prefetch_keyed_sets(
    cache: &PieceCache,
    text: &[u8],
    spans: &[(usize, usize)],
    keys: &mut Vec<Key>,
) {
    keys.clear();
    if cache.bypass.is_bypassing() {
        keys.resize(spans.len(), Key::new(&[]));
        return;
    }
    keys.extend(spans.iter().map(|&(at, end)| {
        if end - at <= MAX_WORD {
            let key = Key::in_text(text, at, end - at);
            cache.prefetch(&key);
            key
        } else {
            Key::new(&[])
        }
    }));
}

/// [`missed_piece`] into an ids-only output, as a call: inlined, it made the loop of hits in
/// [`cached_pieces`] too large for its registers.
#[inline(never)]
fn missed_piece_out_of_line(
    cache: &mut PieceCache,
    text: &[u8],
    span: (usize, usize),
    buffers: &mut CachedPiece,
    ids: &mut Vec<u32>,
    encode: &mut impl FnMut((usize, usize), &mut Vec<PieceToken>),
) {
    missed_piece(cache, text, span, buffers, ids, |t| encode(span, t));
}

/// A piece's tokens in the short tier: `n` ids, and their ends relative to the piece.
struct ShortHit {
    ids: [u32; HIT_TOKENS],
    ends: [u8; HIT_TOKENS],
    n: usize,
}

/// The short tier's tokens of `text[at..end]`, counted as a hit; `None` when the piece is too
/// long for the tier, the cache is bypassed, or the tier does not hold it (nothing counted:
/// [`missed_piece`] goes on from there).
#[inline(always)]
fn short_hit(cache: &mut PieceCache, text: &[u8], (at, end): (usize, usize)) -> Option<ShortHit> {
    if end - at > MAX_WORD || cache.bypass.is_bypassing() {
        return None;
    }
    hit_of(cache, &Key::in_text(text, at, end - at))
}

/// [`short_hit`] with the piece's key made already ([`prefetch_keyed_sets`]); made here after
/// all when the batch began bypassed (its keys empty) and the cache has since come back.
#[inline(always)]
fn short_hit_keyed(
    cache: &mut PieceCache,
    text: &[u8],
    (at, end): (usize, usize),
    key: &Key,
) -> Option<ShortHit> {
    if end - at > MAX_WORD || cache.bypass.is_bypassing() {
        return None;
    }
    if key.len() as usize == end - at {
        hit_of(cache, key)
    } else {
        hit_of(cache, &Key::in_text(text, at, end - at))
    }
}

/// The short tier's tokens of the piece whose key is `key`, counted as a hit.
#[inline(always)]
fn hit_of(cache: &mut PieceCache, key: &Key) -> Option<ShortHit> {
    let e = cache.find(key)?;
    let hit = ShortHit {
        ids: e.ids(),
        ends: e.ends(),
        n: e.n(),
    };
    cache.bypass.record(true);
    Some(hit)
}

/// [`cached_piece`] for a piece [`short_hit`] did not answer: the bypass, the long tier, or the
/// encoder (whose result is then stored).
#[inline]
fn missed_piece<S: Sink>(
    cache: &mut PieceCache,
    text: &[u8],
    (at, end): (usize, usize),
    buffers: &mut CachedPiece,
    sink: &mut S,
    encode: impl FnOnce(&mut Vec<PieceToken>),
) {
    let piece = &text[at..end];
    if cache.bypass.skips() {
        return uncached_piece(buffers, sink, at, encode);
    }
    if piece.len() > MAX_WORD {
        return cached_long_piece(cache, piece, buffers, sink, at, encode);
    }
    // Short pieces of many tokens (rare in prose, common in code) live in the long tier.
    if let Some(tokens) = cache.get_long(piece) {
        push_each(sink, at, tokens);
        cache.bypass.record(true);
        return;
    }
    cache.bypass.record(false);
    buffers.tokens.clear();
    encode(&mut buffers.tokens);
    if !cache.fits(buffers.tokens.len()) {
        sink.push_tokens(at, &buffers.tokens);
        cache.put_long(piece, &buffers.tokens);
        return;
    }
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
    cache.put(&Key::in_text(text, at, piece.len()), &buffers.spans);
    cache.grow_if_thrashing();
}

/// [`cached_piece`] for a piece of more than [`MAX_WORD`] bytes: the long tier.
#[inline(never)]
fn cached_long_piece<S: Sink>(
    cache: &mut PieceCache,
    piece: &[u8],
    buffers: &mut CachedPiece,
    sink: &mut S,
    at: usize,
    encode: impl FnOnce(&mut Vec<PieceToken>),
) {
    if let Some(tokens) = cache.get_long(piece) {
        push_each(sink, at, tokens);
        cache.bypass.record(true);
        return;
    }
    cache.bypass.record(false);
    buffers.tokens.clear();
    encode(&mut buffers.tokens);
    sink.push_tokens(at, &buffers.tokens);
    cache.put_long(piece, &buffers.tokens);
}

/// [`cached_piece`] while the cache is bypassed.
#[inline(never)]
fn uncached_piece<S: Sink>(
    buffers: &mut CachedPiece,
    sink: &mut S,
    at: usize,
    encode: impl FnOnce(&mut Vec<PieceToken>),
) {
    buffers.tokens.clear();
    encode(&mut buffers.tokens);
    sink.push_tokens(at, &buffers.tokens);
}
