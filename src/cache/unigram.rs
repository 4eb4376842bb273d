//! The per-thread word cache of the unigram model ([`crate::models::unigram`]).
//!
//! Unlike the other encoders' caches, an entry is not a word's result: sentencepiece adds scores
//! in `f32` along the whole text, so a word's segmentation can depend on the running score where
//! it starts. An entry holds the word's segmentation in exact arithmetic together with the
//! largest running score (in magnitude) under which `f32` arithmetic provably chooses the same
//! path ([`crate::models::unigram::guard`]); the caller reuses it only below that bound.
//!
//! Layout: entries of half a cache line (32 bytes), two to a set and a set to a line — the
//! word's bytes (up to [`MAX_KEY`], compared whole on every hit, never a hash alone), the bound,
//! and a path packed in eight bytes by the model's id width (`Packing`: up to four pieces;
//! longer paths in a ring beside, four bytes a piece, 4 MiB at most) — the more recently used
//! way first. 65 536 entries (2 MiB), allocated on first use: the distinct words of English
//! prose (with and without the `▁` before them, punctuation attached) number some tens of
//! thousands, and the table is what the encoder waits for — entries of a full line held 1.9 MB
//! of the KJV's words, just over what a core's L2 cache keeps beside the text, and the same text
//! with a tenth of the distinct words ran 15–30 % faster. After 4096 evictions the table grows,
//! once, to four times that (8 MiB), keeping its entries: on 20 MB of the KJV and the Jargon
//! File (66 000 distinct words) the table of 2 MiB missed 1.4 % of lookups at every pass, each
//! miss an analysis of the word, and the one of 8 MiB 0.5 % (repeated passes with XLM-R 156 →
//! 171 MB/s, botchan 141 → 147). Once grown, a word whose set is full goes to a second set
//! (other bits of its hash) when that one has room, and a lookup that misses its first set
//! reads its second, while at most half the entries are taken: the words of crowded sets no
//! longer evict each other on every pass (XLM-R on that text: 16 770 misses a repeated pass →
//! 63). The ring keeps the paths of a small vocabulary's words (botchan's
//! 1000 pieces pack four to an entry; a third of the misses were words of five pieces or more):
//! it overwrites its oldest paths, where the arena of 3 MiB before it started over and lost them
//! all, three times a pass over that text with botchan (2.8 % of lookups missed). The table
//! belongs to one model at a time ([`CacheOwner`]) and watches its own hit rate
//! ([`CacheBypass`]): on text whose words do not repeat, a miss costs an extra analysis of the
//! word, so lookups stop for a while.
//!
//! Words of 17 to [`MAX_LONG_WORD`] bytes go to a long tier (the BPE caches' [`LongCache`]: an
//! arena of records, the bound as a record's tag), analysed and stored at their second sight
//! (a filter of hashes remembers the first): Japanese and Chinese text, with few `▁`s, has most
//! of its bytes in such words. XLM-R on a megabyte of Japanese lines (`examples/throughput`,
//! repeated passes): 68–73 → 102–122 MB/s.

use crate::cache::budget::{self, Held, halved};
use crate::cache::bypass::CacheBypass;
use crate::cache::long::{LONG_MAX_TOKENS, LongCache, LongTokens};
use crate::cache::owner::{CacheOwner, Claim, Stamp};
use crate::models::token::PieceToken;
use crate::swar;

/// Words up to this many bytes are cached (`▁` and 13 ASCII letters: nearly every English
/// word; `▁` and four CJK characters).
pub const MAX_KEY: usize = 16;

/// Longer words, up to this many bytes, go to the long tier ([`LongCache`], the one the BPE
/// caches use; a path's ends are one byte in the analysis). Japanese and Chinese text has few
/// `▁`s: most of its bytes are in words of 17 to 255 bytes (a clause, a line), which only
/// repeat as whole lines do, so the tier stores a word at its second sight.
pub const MAX_LONG_WORD: usize = 255;

/// The long tier's arena: twice the BPE caches' ([`crate::cache::long::LONG_BUDGET`]). A
/// unigram path takes more pieces than a BPE piece's tokens (a small vocabulary splits words
/// finely): the 7 MB of the UDHR's 532 languages hold some 51 000 distinct long words, whose
/// records at 4 MiB emptied the arena before most were seen again, each analysed for nothing
/// (botchan's model 7 % slower than without the tier; at 8 MiB, 4 % faster). Pages are touched
/// only as records fill them.
const LONG_BUDGET: usize = 8 << 20;

/// Sets to start with (2 MiB), and after growing (8 MiB).
const SETS: usize = 1 << 15;
const MAX_SETS: usize = 1 << 17;
/// Live entries evicted before the table grows. English prose of a small vocabulary (KJV) fits
/// the first table; text of many distinct words (the Jargon File: 45 000) ran 10–15 % faster
/// on the larger one (botchan and XLM-R), which a short text never pays for.
const GROW_AFTER: usize = 4096;
/// The pieces the ring of longer paths holds (4 MiB, allocated as it fills): a piece is its id
/// (28 bits at most) and its end within the word, in four bytes; its score is the model's.
const RING: usize = 1 << 20;

/// The most bytes the cache takes at its default sizes: the sets grown, the ring full, the
/// long tier full. A [`budget::CacheBudget`] halves each to fit.
pub const FULL_BYTES: usize =
    MAX_SETS * std::mem::size_of::<Set>() + RING * 4 + LongCache::full_bytes(LONG_BUDGET);
const _: () = assert!(FULL_BYTES <= budget::FULL_BYTES);

/// `Entry::n`'s flag for a path in the ring.
const SPILLED: u8 = 0x80;

/// One cached word.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    /// The word's bytes, zero-padded, as little-endian words.
    key: [u64; 2],
    len: u8,
    /// The path's pieces, with [`SPILLED`] set when the path is in the ring.
    n: u8,
    stamp: u16,
    /// Reuse only when the running score's magnitude is below this.
    max_base: f32,
    /// The path ([`Packing`]), or for a spilled one where it starts among all the pieces
    /// written to the ring ([`UnigramCache::written`]).
    path: u64,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32);

/// A set: its two ways in one cache line, the more recently used first.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Set([Entry; 2]);

impl Set {
    /// Whether both ways hold `stamp`'s entries: entries go in first, so the second way is
    /// taken only when both are.
    #[inline(always)]
    fn full(&self, stamp: Stamp) -> bool {
        self.0[1].stamp == stamp.bits()
    }
}

/// How a path is packed in an entry's eight bytes, for ids of `id_bits` bits (the model's
/// widest). A one-piece path is its id and its score's bits, so that most hits read no other
/// table (a vocabulary of 250 000 pieces has a megabyte of scores). A longer one is its ids,
/// `id_bits` each, then the inner pieces' ends in four bits each (an inner piece ends before the
/// word, which is at most 16 bytes; the last ends with it); its scores are the model's for its
/// ids (checked when stored). As many pieces as fit: four of a vocabulary of up to 8192 pieces,
/// three up to 2^18 (XLM-R's 250 000), two up to 2^24.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Packing {
    id_bits: u32,
}

impl Packing {
    /// The most pieces a path packs.
    fn capacity(self) -> usize {
        if self.id_bits >= 32 {
            1
        } else {
            (68 / (self.id_bits + 4)) as usize
        }
    }

    /// `pieces` packed, if they fit and (for more than one) score as the model does.
    fn pack(self, pieces: &[PathPiece], score: impl Fn(u32) -> f32) -> Option<u64> {
        if let [one] = pieces {
            return Some(one.id as u64 | (one.score.to_bits() as u64) << 32);
        }
        let n = pieces.len() as u32;
        if pieces.len() > self.capacity()
            || pieces.iter().any(|p| {
                (p.id as u64) >> self.id_bits != 0 || p.score.to_bits() != score(p.id).to_bits()
            })
        {
            return None;
        }
        let mut packed = 0u64;
        for (i, p) in pieces.iter().enumerate() {
            packed |= (p.id as u64) << (i as u32 * self.id_bits);
        }
        for (i, p) in pieces[..pieces.len() - 1].iter().enumerate() {
            debug_assert!(p.end < 16);
            packed |= (p.end as u64) << (n * self.id_bits + 4 * i as u32);
        }
        Some(packed)
    }
}

/// A cached word: its path (held in the entry, or in the cache's ring of long paths) and the bound
/// on the running score's magnitude under which it may be reused.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CachedWord {
    pub max_base: f32,
    /// The path's pieces.
    pub n: usize,
    spilled: bool,
    /// The word's length in bytes (where its last piece ends).
    len: u8,
    path: u64,
    packing: Packing,
}

impl CachedWord {
    /// Whether the path is in the ring rather than in the entry.
    #[cfg(test)]
    fn spills(&self) -> bool {
        self.spilled
    }

    /// Calls `each` with the pieces of a path held in the entry (one that does not spill), in
    /// order; `score` gives a piece's score from its id (the model's, as when it was stored).
    #[inline(always)]
    fn for_each_packed(&self, score: impl Fn(u32) -> f32, mut each: impl FnMut(PathPiece)) {
        debug_assert!(!self.spilled && self.n >= 1);
        let p = self.path;
        if self.n == 1 {
            return each(PathPiece {
                id: p as u32,
                score: f32::from_bits((p >> 32) as u32),
                end: self.len,
            });
        }
        let bits = self.packing.id_bits;
        let ends_at = self.n as u32 * bits;
        for i in 0..self.n as u32 {
            let id = (p >> (i * bits) & ((1 << bits) - 1)) as u32;
            let end = if i + 1 == self.n as u32 {
                self.len
            } else {
                (p >> (ends_at + 4 * i) & 0xF) as u8
            };
            each(PathPiece {
                id,
                score: score(id),
                end,
            });
        }
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
    /// The owner's packing of paths.
    packing: Packing,
    /// Empty until first claimed.
    sets: Vec<Set>,
    /// The paths that do not pack, in a ring of [`RING`] pieces: an entry holds where its
    /// path starts among all the pieces ever written here.
    ring: Vec<u32>,
    /// Pieces written to the ring so far (gaps left at its end included): a path that starts at
    /// `at` is whole while `written - at <= RING`, i.e. until the ring's writes come round to
    /// it again.
    written: u64,
    /// Live entries evicted so far: the table grows when they reach [`GROW_AFTER`].
    evictions: usize,
    /// Entries stored into a free way since the owner claimed the table: an upper bound on
    /// its live entries, which decides whether words spill ([`UnigramCache::spills`]).
    stored: usize,
    bypass: CacheBypass,
    /// Words of more than [`MAX_KEY`] bytes: their paths as tokens (id and length), the bound
    /// as the record's tag.
    long: LongCache,
    /// A path being stored in the long tier.
    long_tokens: Vec<PieceToken>,
    /// The sizes the budget in force allows: the sets after growing, the evictions before it,
    /// the ring's pieces ([`SETS`], [`MAX_SETS`], [`GROW_AFTER`], [`RING`] halved
    /// `halvings` times).
    max_sets: usize,
    grow_after: usize,
    ring_len: usize,
    halvings: u32,
    held: Held,
}

impl std::fmt::Debug for UnigramCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnigramCache")
            .field("sets", &self.sets.len())
            .finish()
    }
}

/// A word's key and length, computed ahead of its lookup.
#[derive(Clone, Copy)]
pub struct WordKey(Key, usize);

/// A word's bytes (at most [`MAX_KEY`]), zero-padded, as two words, and its hash.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    words: [u64; 2],
    hash: u64,
}

impl Key {
    /// The key of the word `text[at..at + len]`. When the text holds 16 bytes from `at`, reads
    /// them in two loads and masks what is past the word: no byte copy, so no store-forwarding
    /// stall when the words are read back (which cost a tenth of the encoding time).
    #[inline]
    fn in_text(text: &[u8], at: usize, len: usize) -> Key {
        debug_assert!(len <= MAX_KEY && at + len <= text.len());
        let kept = match text.get(at..at + 16) {
            Some(w) => {
                // One mask over the 16 bytes, with no branch on the length (words of about
                // eight bytes would mispredict one).
                let bytes = u128::from_le_bytes(w.try_into().expect("16 bytes"));
                debug_assert!(len >= 1);
                bytes & (u128::MAX >> (128 - 8 * len as u32))
            }
            // Near the text's end: its last 16 bytes, shifted down to the word (no branch on the
            // length; two or three words of a line of English come here).
            None if text.len() >= 16 => {
                let tail = &text[text.len() - 16..];
                let bytes = u128::from_le_bytes(tail.try_into().expect("16 bytes"));
                let skipped = at - (text.len() - 16);
                (bytes >> (8 * skipped)) & (u128::MAX >> (128 - 8 * len as u32))
            }
            // A text of fewer than 16 bytes (every one-word text).
            None => swar::load_short(&text[at..at + len]),
        };
        Key::of_words([kept as u64, (kept >> 64) as u64], len)
    }

    /// The key of a word of `len` bytes held zero-padded in `words`.
    #[inline]
    fn of_words(words: [u64; 2], len: usize) -> Key {
        let hash = (words[0].wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (words[1] ^ ((len as u64) << 59)).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .rotate_left(29)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Key { words, hash }
    }

    /// The key's set among `sets` (a power of two).
    #[inline]
    fn set(&self, sets: usize) -> usize {
        ((self.hash >> 40) as usize) & (sets - 1)
    }

    /// The key's second set among `sets` (at most [`MAX_SETS`]): bits of the hash apart from
    /// the first set's.
    #[inline]
    fn second_set(&self, sets: usize) -> usize {
        ((self.hash >> 17) as usize) & (sets - 1)
    }
}

impl UnigramCache {
    /// Makes the cache the model `owner`'s, whose piece ids are below `2^id_bits` (allocating it
    /// on first use); another owner's entries then read as empty.
    #[inline]
    pub fn claim(&mut self, owner: usize, id_bits: u32) {
        self.packing = Packing { id_bits };
        let halvings = budget::in_force().halvings(FULL_BYTES);
        if self.sets.is_empty() || halvings != self.halvings {
            self.size(halvings);
        }
        match self.owner.claim(owner) {
            Claim::Same => {}
            Claim::Changed => {
                self.bypass = CacheBypass::default();
                self.stored = 0;
                self.long.restart();
            }
            Claim::Wrapped => {
                self.sets.fill(Set::default());
                self.bypass = CacheBypass::default();
                self.stored = 0;
                self.long.clear();
                self.long.restart();
            }
        }
    }

    /// Empties the cache at its default sizes halved `halvings` times (at least two sets, a
    /// ring of one path).
    #[cold]
    fn size(&mut self, halvings: u32) {
        let k = halvings;
        self.halvings = k;
        self.sets = vec![Set::default(); halved(SETS, k, 2)];
        self.max_sets = halved(MAX_SETS, k, 2);
        self.grow_after = halved(GROW_AFTER, k, 1);
        self.ring_len = halved(RING, k, MAX_KEY);
        self.ring = Vec::new();
        self.written = 0;
        self.evictions = 0;
        self.stored = 0;
        self.long = LongCache::sized(halved(LONG_BUDGET, k, 0), k);
        self.note_held();
    }

    /// Counts the sets and the ring in the thread's held bytes (the long tier counts its own).
    fn note_held(&mut self) {
        self.held
            .set(self.sets.capacity() * std::mem::size_of::<Set>() + self.ring.capacity() * 4);
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
        if self.sets.is_empty() {
            return;
        }
        simdtok_kernels::prefetch_read(&self.sets[key.0.set(self.sets.len())]);
    }

    /// The entry of the word `text[at..at + len]` (at most [`MAX_KEY`] bytes), if cached.
    /// Counts the lookup.
    #[inline]
    pub fn get(&mut self, text: &[u8], at: usize, len: usize) -> Option<CachedWord> {
        self.get_keyed(&Self::word_key(text, at, len))
    }

    /// [`UnigramCache::get`] by the word's key.
    #[inline(always)]
    pub fn get_keyed(&mut self, key: &WordKey) -> Option<CachedWord> {
        let WordKey(key, len) = *key;
        debug_assert!(len <= MAX_KEY && !self.sets.is_empty());
        let stamp = self.owner.stamp();
        let written = self.written;
        let ring_len = self.ring_len;
        let holds = |e: &Entry| {
            e.key == key.words
                && e.len as usize == len
                && e.stamp == stamp.bits()
                && (e.n & SPILLED == 0 || written - e.path <= ring_len as u64)
        };
        let mut set = key.set(self.sets.len());
        let mut found = self.sets[set].0.iter().position(holds);
        // A word is in its second set only if its first was full when it was stored, and a
        // set, once full, stays so while the owner keeps the table: a miss in a set with room
        // (most first sights of words) reads no second set.
        let first_full = self.sets[set].full(stamp);
        if found.is_none() && first_full && self.spills() {
            set = key.second_set(self.sets.len());
            found = self.sets[set].0.iter().position(holds);
        }
        self.bypass.record(found.is_some());
        let way = found?;
        let ways = &mut self.sets[set].0;
        if way == 1 {
            ways.swap(0, 1);
        }
        let e = &ways[0];
        Some(CachedWord {
            max_base: e.max_base,
            n: (e.n & !SPILLED) as usize,
            spilled: e.n & SPILLED != 0,
            len: e.len,
            path: e.path,
            packing: self.packing,
        })
    }

    /// The path of a word of more than [`MAX_KEY`] bytes (and at most [`MAX_LONG_WORD`]) from
    /// the long tier, and its bound: pieces as ids and byte lengths, in order. On a miss,
    /// whether the word was seen before (this sighting is recorded): then it is worth
    /// analysing and storing with [`UnigramCache::put_long`].
    #[inline]
    pub fn get_long(&mut self, word: &[u8]) -> Result<(f32, LongTokens<'_>), bool> {
        debug_assert!(word.len() > MAX_KEY && word.len() <= MAX_LONG_WORD);
        let stamp = self.owner.stamp();
        let tokens = self.long.get_or_sight(stamp, word)?;
        Ok((f32::from_bits(tokens.tag()), tokens))
    }

    /// Stores the path `pieces` (ends relative to the word's start) of a long word and its
    /// bound. A path of more pieces than a record holds
    /// ([`crate::cache::long::LONG_MAX_TOKENS`]) is stored as no pieces and the bound 0, which
    /// no running score is below: the word then takes the reference's pass at once, where
    /// without a record it would be analysed again at every sight.
    pub fn put_long(&mut self, word: &[u8], max_base: f32, pieces: &[PathPiece]) {
        debug_assert!(word.len() > MAX_KEY && word.len() <= MAX_LONG_WORD);
        let mut tokens = std::mem::take(&mut self.long_tokens);
        tokens.clear();
        let mut bound = max_base;
        if pieces.len() <= LONG_MAX_TOKENS {
            let mut start = 0u32;
            tokens.extend(pieces.iter().map(|p| {
                let len = p.end as u32 - start;
                start = p.end as u32;
                PieceToken { id: p.id, len }
            }));
            debug_assert_eq!(start as usize, word.len());
        } else {
            bound = 0.0;
        }
        let stamp = self.owner.stamp();
        self.long
            .put(stamp, word, bound.to_bits(), &tokens, usize::MAX);
        self.long_tokens = tokens;
    }

    /// The table's sets and the pieces written to the ring so far (for tests).
    #[cfg(test)]
    pub(crate) fn sizes(&self) -> (usize, u64) {
        (self.sets.len(), self.written)
    }

    /// Calls `each` with the pieces of the path of `word` (a hit of this cache), in order;
    /// `score` gives a piece's score from its id (the model's, as when it was stored).
    #[inline(always)]
    pub fn for_each_piece(
        &self,
        word: &CachedWord,
        score: impl Fn(u32) -> f32,
        mut each: impl FnMut(PathPiece),
    ) {
        if !word.spilled {
            return word.for_each_packed(score, each);
        }
        let at = (word.path % self.ring_len as u64) as usize;
        for &piece in &self.ring[at..at + word.n] {
            let id = piece >> 4;
            each(PathPiece {
                id,
                score: score(id),
                end: (piece & 0xF) as u8 + 1,
            });
        }
    }

    /// Stores the path `pieces` of the word `text[at..at + len]` and its bound. `score` is the
    /// model's score of a piece id: a path packed without its scores is stored only when they
    /// are those.
    pub fn put_path(
        &mut self,
        text: &[u8],
        at: usize,
        len: usize,
        max_base: f32,
        pieces: &[PathPiece],
        score: impl Fn(u32) -> f32,
    ) {
        debug_assert!(len <= MAX_KEY && pieces.len() <= len && !pieces.is_empty());
        let (n, path) = match self.packing.pack(pieces, &score) {
            Some(packed) => (pieces.len() as u8, packed),
            None => match self.spill(pieces, score) {
                Some(start) => (pieces.len() as u8 | SPILLED, start),
                None => return,
            },
        };
        let key = Key::in_text(text, at, len);
        let stamp: Stamp = self.owner.stamp();
        let e = Entry {
            key: key.words,
            len: len as u8,
            n,
            stamp: stamp.bits(),
            max_base,
            path,
        };
        // The first set, unless it is full and the second is not.
        let mut set = key.set(self.sets.len());
        if self.sets[set].full(stamp) && self.spills() {
            let second = key.second_set(self.sets.len());
            if !self.sets[second].full(stamp) {
                set = second;
            }
        }
        if self.sets[set].full(stamp) {
            self.evictions += 1;
        } else {
            self.stored += 1;
        }
        let ways = &mut self.sets[set].0;
        ways[1] = ways[0];
        ways[0] = e;
        if self.evictions == self.grow_after && self.sets.len() < self.max_sets {
            self.grow();
        }
    }

    /// Writes `pieces` (at most [`MAX_KEY`], ending within the word) to the ring and returns
    /// where they start among all pieces written, or `None` when they cannot be held there: an
    /// id of more than 28 bits, or a score that is not the model's (`score`). The oldest paths
    /// are overwritten first, so a path is lost only after [`RING`] pieces of newer ones, and
    /// only it: the other entries keep theirs.
    fn spill(&mut self, pieces: &[PathPiece], score: impl Fn(u32) -> f32) -> Option<u64> {
        if pieces
            .iter()
            .any(|p| p.id >> 28 != 0 || p.score.to_bits() != score(p.id).to_bits())
        {
            return None;
        }
        let n = pieces.len();
        let ring_len = self.ring_len;
        let mut at = (self.written % ring_len as u64) as usize;
        if at + n > ring_len {
            // A path is never split at the ring's end: the gap counts as written.
            self.written += (ring_len - at) as u64;
            at = 0;
        }
        if self.ring.len() < at + n {
            // All of the ring at once, so that its capacity never rounds past it (pages are
            // touched only as paths fill them).
            self.ring.reserve_exact(ring_len - self.ring.len());
            self.ring.resize(at + n, 0);
            self.note_held();
        }
        for (slot, p) in self.ring[at..at + n].iter_mut().zip(pieces) {
            debug_assert!((1..=MAX_KEY as u8).contains(&p.end));
            *slot = p.id << 4 | (p.end - 1) as u32;
        }
        let start = self.written;
        self.written += n as u64;
        Some(start)
    }

    /// Whether a word whose set is full goes to its second set: once the table has grown, while
    /// at most half of its entries are taken. With one set per word, 16 770 lookups a pass
    /// over 20 MB of English missed (XLM-R), the words of crowded sets evicting each other on
    /// every pass, each miss an analysis; with two, 63. A text of more distinct words than
    /// that fills the table anyway, and there spilling lost more than it saved: the UDHR's 532
    /// languages (botchan's model) missed 171 800 times a pass instead of 181 500, for 221 000
    /// second looks — repeated passes 66–67 → 61–62 MB/s.
    #[inline(always)]
    fn spills(&self) -> bool {
        self.sets.len() == self.max_sets && self.stored <= self.max_sets
    }

    /// Grows the table to [`MAX_SETS`], once, keeping the owner's entries: the words seen so far
    /// are the ones most likely to come back, and each dropped one would cost an analysis. An
    /// entry's new set is its old one with more bits of its hash, so the entries of one new set
    /// come from one old set: none is evicted, and each keeps its place (the more recently used
    /// way first).
    #[cold]
    fn grow(&mut self) {
        let max = self.max_sets;
        let old = std::mem::replace(&mut self.sets, vec![Set::default(); max]);
        let stamp = self.owner.stamp().bits();
        for set in &old {
            // The older way first: the newer one, put after it, goes in front.
            for e in set
                .0
                .iter()
                .rev()
                .filter(|e| e.len != 0 && e.stamp == stamp)
            {
                let key = Key::of_words(e.key, e.len as usize);
                let ways = &mut self.sets[key.set(max)].0;
                ways[1] = ways[0];
                ways[0] = *e;
            }
        }
        self.note_held();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scores the tests' model gives: a piece's id, negated and halved.
    fn model_score(id: u32) -> f32 {
        -(id as f32) / 2.0
    }

    fn pieces_of(ids: &[u32], ends: &[u8]) -> Vec<PathPiece> {
        ids.iter()
            .zip(ends)
            .map(|(&id, &end)| PathPiece {
                id,
                score: model_score(id),
                end,
            })
            .collect()
    }

    fn put(c: &mut UnigramCache, word: &[u8], ids: &[u32], ends: &[u8], max_base: f32) {
        c.put_path(
            word,
            0,
            word.len(),
            max_base,
            &pieces_of(ids, ends),
            model_score,
        );
    }

    fn get(c: &mut UnigramCache, word: &[u8]) -> Option<CachedWord> {
        c.get(word, 0, word.len())
    }

    /// A hit's path, from the entry or the ring.
    fn path(c: &UnigramCache, hit: &CachedWord) -> Vec<PathPiece> {
        let mut out = Vec::new();
        c.for_each_piece(hit, model_score, |p| out.push(p));
        out
    }

    fn set_of(word: &[u8]) -> usize {
        Key::in_text(word, 0, word.len()).set(SETS)
    }

    #[test]
    fn a_hit_is_the_same_word_and_another_owner_sees_nothing() {
        let mut c = UnigramCache::default();
        c.claim(7, 24);
        let the = b"\xe2\x96\x81the";
        assert_eq!(get(&mut c, the), None);
        put(&mut c, the, &[5, 9], &[3, 6], 1234.5);
        let hit = get(&mut c, the).expect("cached");
        assert_eq!(path(&c, &hit), pieces_of(&[5, 9], &[3, 6]));
        assert_eq!(hit.max_base, 1234.5);
        // A prefix, a longer word and the same bytes zero-padded are other words.
        assert_eq!(get(&mut c, b"\xe2\x96\x81th"), None);
        assert_eq!(get(&mut c, b"\xe2\x96\x81the\0"), None);
        // The same word inside a longer text (read in wide loads, masked) is the same key.
        let text = b"xx\xe2\x96\x81the and more than thirty-two bytes after it";
        assert_eq!(c.get(text, 2, the.len()).map(|h| h.n), Some(2));
        c.claim(8, 24);
        assert_eq!(get(&mut c, the), None);
    }

    /// A word's key is the same wherever the word lies: alone, inside a text with 16 bytes
    /// after it, near the end of a text of 16 bytes or more (read from the text's last 16),
    /// and in a text shorter than 16 bytes; every length up to the longest key.
    #[test]
    fn a_words_key_does_not_depend_on_where_it_lies() {
        let letters: Vec<u8> = (0..MAX_KEY as u8).map(|i| b'a' + i).collect();
        for len in 1..=MAX_KEY {
            let word = &letters[..len];
            let alone = Key::in_text(word, 0, len);
            for before in [0usize, 1, 3, 15, 40] {
                for after in 0..=20 {
                    let mut text = vec![b'-'; before];
                    text.extend_from_slice(word);
                    text.extend(std::iter::repeat_n(b'+', after));
                    let key = Key::in_text(&text, before, len);
                    assert!(key == alone, "{len} bytes, {before} before, {after} after");
                }
            }
        }
    }

    /// Every packing gives back the path stored: ids of every width a model may have, at the
    /// top of their width, inner ends up to 15, as many pieces as fit; paths that do not pack
    /// (one piece too many, an id too wide) come back whole from the ring, unless an id has more
    /// than 28 bits or a score is not the model's: those are not cached.
    #[test]
    fn paths_come_back_as_stored_packed_or_not() {
        let mut c = UnigramCache::default();
        let word = [b'w'; MAX_KEY];
        for (owner, id_bits) in [10u32, 13, 14, 16, 18, 24, 31, 32].into_iter().enumerate() {
            c.claim(owner + 1, id_bits);
            let top = (1u64 << id_bits) - 1;
            let capacity = Packing { id_bits }.capacity();
            assert_eq!(
                capacity,
                match id_bits {
                    10 | 13 => 4,
                    14 | 16 | 18 => 3,
                    24 => 2,
                    _ => 1,
                }
            );
            for n in 1..=capacity + 1 {
                // Inner ends from 15 down; the last piece ends with the word.
                let ends: Vec<u8> = (0..n)
                    .map(|i| {
                        if i + 1 == n {
                            16
                        } else {
                            15 - (n - 2 - i) as u8
                        }
                    })
                    .collect();
                let wide: Vec<u32> = (0..n).map(|i| (top - i as u64) as u32).collect();
                // A fresh owner for each put: an entry left from the last one is not taken for it.
                c.claim(100 * owner + n + 1, id_bits);
                put(&mut c, &word, &wide, &ends, 9.0);
                let hit = get(&mut c, &word);
                if n > capacity && id_bits > 28 {
                    assert_eq!(hit, None, "{id_bits} bits, {n} pieces: not cached");
                    continue;
                }
                let hit = hit.expect("cached");
                assert_eq!(hit.spills(), n > capacity, "{id_bits} bits, {n} pieces");
                assert_eq!(
                    path(&c, &hit),
                    pieces_of(&wide, &ends),
                    "{id_bits} bits, {n} pieces"
                );
                if n > 1 && id_bits < 28 {
                    let mut too_wide = wide.clone();
                    too_wide[n - 1] = 1 << id_bits;
                    put(&mut c, &word, &too_wide, &ends, 9.0);
                    let hit = get(&mut c, &word).expect("cached");
                    assert!(hit.spills(), "{id_bits} bits: an id too wide");
                    assert_eq!(path(&c, &hit), pieces_of(&too_wide, &ends));
                }
            }
        }
        // A one-piece path keeps its own score; longer ones are stored packed only when each
        // score is the model's.
        c.claim(20, 10);
        let odd = [PathPiece {
            id: 3,
            score: 0.25,
            end: 16,
        }];
        c.put_path(&word, 0, MAX_KEY, 1.0, &odd, model_score);
        let hit = get(&mut c, &word).unwrap();
        assert_eq!((hit.spills(), path(&c, &hit)), (false, odd.to_vec()));
        let odd = [
            PathPiece {
                id: 3,
                score: 0.25,
                end: 2,
            },
            PathPiece {
                id: 4,
                score: -2.0,
                end: 16,
            },
        ];
        c.claim(21, 10);
        c.put_path(&word, 0, MAX_KEY, 1.0, &odd, model_score);
        assert_eq!(
            get(&mut c, &word),
            None,
            "not the model's scores: not cached"
        );
    }

    #[test]
    fn the_table_grows_once_after_enough_evictions_and_keeps_working() {
        let mut c = UnigramCache::default();
        c.claim(5, 24);
        assert_eq!(c.sets.len(), SETS);
        let mut k = 0u32;
        while c.sets.len() == SETS {
            let w = format!("w{k}");
            put(&mut c, w.as_bytes(), &[k], &[w.len() as u8], 3.0);
            k += 1;
            assert!(k < 10 * SETS as u32, "never grew");
        }
        assert_eq!(c.sets.len(), MAX_SETS);
        for k in 0..3 * MAX_SETS as u32 {
            let w = format!("v{k}");
            put(&mut c, w.as_bytes(), &[k], &[w.len() as u8], 3.0);
            assert_eq!(get(&mut c, w.as_bytes()).map(|h| h.path as u32), Some(k));
        }
        assert_eq!(c.sets.len(), MAX_SETS, "it grows once");
    }

    /// Growing keeps every entry of the owner, with its path and bound, in the same order of
    /// use within its set; another owner's entries stay out.
    #[test]
    fn growing_keeps_the_entries() {
        let mut c = UnigramCache::default();
        c.claim(9, 24);
        put(&mut c, b"old owner", &[1], &[9], 1.0);
        c.claim(10, 24);
        let words: Vec<String> = (0..SETS as u32 / 2).map(|k| format!("g{k}")).collect();
        for (k, w) in words.iter().enumerate() {
            // One to five pieces (at most one a byte), the last ending with the word.
            let n = 1 + k % w.len().min(5);
            let ids: Vec<u32> = (0..n as u32).map(|i| k as u32 + i).collect();
            let ends: Vec<u8> = (1..n as u8).chain([w.len() as u8]).collect();
            put(&mut c, w.as_bytes(), &ids, &ends, k as f32);
        }
        assert_eq!(c.sets.len(), SETS, "no growth yet: the test grows it");
        let kept: Vec<(usize, CachedWord, Vec<PathPiece>)> = words
            .iter()
            .enumerate()
            .filter_map(|(k, w)| {
                let hit = get(&mut c, w.as_bytes())?;
                Some((k, hit, path(&c, &hit)))
            })
            .collect();
        assert!(
            kept.len() > words.len() * 9 / 10,
            "{} words kept",
            kept.len()
        );
        let stamp = c.owner.stamp().bits();
        let live = |set: &Set| -> Vec<Vec<u8>> {
            set.0
                .iter()
                .filter(|e| e.stamp == stamp && e.len > 0)
                .map(|e| e.key.map(u64::to_le_bytes).concat()[..e.len as usize].to_vec())
                .collect()
        };
        let before: Vec<Vec<Vec<u8>>> = c.sets.iter().map(live).collect();
        c.grow();
        assert_eq!(c.sets.len(), MAX_SETS);
        // Each new set holds the words of the old set they came from that its index took, in
        // their old order.
        let mut expected = vec![Vec::new(); MAX_SETS];
        for w in before.iter().flatten() {
            expected[Key::in_text(w, 0, w.len()).set(MAX_SETS)].push(w.clone());
        }
        let after: Vec<Vec<Vec<u8>>> = c.sets.iter().map(live).collect();
        assert_eq!(after, expected);
        for (k, old, pieces) in &kept {
            let hit = get(&mut c, words[*k].as_bytes()).expect("kept");
            assert_eq!((hit.max_base, hit.n), (old.max_base, old.n));
            assert_eq!(&path(&c, &hit), pieces);
        }
        assert_eq!(get(&mut c, b"old owner"), None);
    }

    /// The ring overwrites its oldest paths first: a long path stays while fewer than
    /// [`RING`] pieces of newer ones were written after it, and when it goes, the path written
    /// just after it stays.
    #[test]
    fn long_paths_live_in_the_ring_until_it_comes_round() {
        let mut c = UnigramCache::default();
        c.claim(3, 24);
        let ids: Vec<u32> = (100..109).collect();
        let ends: Vec<u8> = (1..=9).collect();
        let (first, second) = (&b"abcdefghi"[..], &b"jklmnopqr"[..]);
        put(&mut c, first, &ids, &ends, 77.0);
        let hit = get(&mut c, first).expect("cached");
        assert_eq!((hit.n, hit.max_base), (9, 77.0));
        assert_eq!(path(&c, &hit), pieces_of(&ids, &ends));
        let other: Vec<u32> = (200..209).collect();
        put(&mut c, second, &other, &ends, 1.0);
        // Words of other sets (at every size of the table) than the two.
        let mut fillers = (0u32..)
            .map(|k| format!("w{k:08}"))
            .filter(|w| ![set_of(first), set_of(second)].contains(&set_of(w.as_bytes())));
        // The two took 18 pieces: these leave the first whole, ending at RING - 4.
        for _ in 0..RING / 9 - 2 {
            put(&mut c, fillers.next().unwrap().as_bytes(), &ids, &ends, 1.0);
        }
        let hit = get(&mut c, first).expect("still whole");
        assert_eq!(path(&c, &hit), pieces_of(&ids, &ends));
        // The next one does not fit before the ring's end: it goes over the first.
        let last = fillers.next().unwrap();
        let mut last_ids = ids.clone();
        last_ids[0] = 7;
        put(&mut c, last.as_bytes(), &last_ids, &ends, 1.0);
        assert_eq!(get(&mut c, first), None);
        let hit = get(&mut c, second).expect("the next oldest stays");
        assert_eq!(path(&c, &hit), pieces_of(&other, &ends));
        let hit = get(&mut c, last.as_bytes()).expect("the newest");
        assert_eq!(path(&c, &hit), pieces_of(&last_ids, &ends));
    }

    #[test]
    fn the_two_most_recent_words_of_a_set_stay() {
        let mut c = UnigramCache::default();
        c.claim(1, 24);
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
        let first_id = |h: Option<CachedWord>| h.map(|h| h.path as u32);
        assert_eq!(get(&mut c, &same[0]), None, "the oldest was evicted");
        assert_eq!(first_id(get(&mut c, &same[1])), Some(1));
        assert_eq!(first_id(get(&mut c, &same[2])), Some(2));
        // Every length up to the longest key.
        for len in 1..=MAX_KEY {
            let w = vec![b'x'; len];
            put(&mut c, &w, &[len as u32], &[len as u8], 2.0);
            assert_eq!(first_id(get(&mut c, &w)), Some(len as u32));
            // Inside a long text of other bytes, read in wide loads and masked.
            let mut text = w.clone();
            text.extend([b'y'; 40]);
            assert_eq!(first_id(c.get(&text, 0, len)), Some(len as u32));
        }
    }

    #[test]
    fn once_grown_a_word_spills_into_its_second_set() {
        let mut c = UnigramCache::default();
        c.claim(1, 24);
        // Grown by hand (`grow` keeps entries; none yet).
        c.grow();
        let sets = c.sets.len();
        let key = |w: &[u8]| Key::in_text(w, 0, w.len());
        let words: Vec<Vec<u8>> = (0..2_000_000u32)
            .map(|i| format!("w{i}").into_bytes())
            .collect();
        let a = &words[0];
        let first = key(a).set(sets);
        // Words of a's first set whose second sets differ from it and from each other's.
        let mut same = words[1..].iter().filter(|w| {
            let k = key(w);
            k.set(sets) == first && k.second_set(sets) != first
        });
        let b = same.next().unwrap();
        let d = same.next().unwrap();
        let c_word = same
            .find(|w| key(w).second_set(sets) != key(d).second_set(sets))
            .unwrap();
        // Two words whose first set is c_word's second.
        let mut others = words[1..]
            .iter()
            .filter(|w| key(w).set(sets) == key(c_word).second_set(sets));
        let (y, z) = (others.next().unwrap(), others.next().unwrap());
        let id = |w: &[u8]| words.iter().position(|x| x == w).unwrap() as u32;
        let store = |c: &mut UnigramCache, w: &[u8]| put(c, w, &[id(w)], &[w.len() as u8], 1.0);
        let found = |c: &mut UnigramCache, w: &[u8]| get(c, w).map(|h| h.path as u32);
        for w in [a, b] {
            store(&mut c, w);
        }
        // d finds its first set full and goes to its second: nothing is lost.
        store(&mut c, d);
        for w in [a, b, d] {
            assert_eq!(found(&mut c, w), Some(id(w)));
        }
        // a was used last: c_word, finding both its sets full (y and z), evicts b.
        for w in [y, z] {
            store(&mut c, w);
        }
        assert_eq!(found(&mut c, a), Some(id(a)));
        store(&mut c, c_word);
        for w in [a, c_word, d, y, z] {
            assert_eq!(found(&mut c, w), Some(id(w)));
        }
        assert_eq!(found(&mut c, b), None, "the least recently used went");
        // Once more entries were stored than half the table holds, words no longer spill (nor
        // are looked for in their second sets): b, stored again, finds its first set full and
        // evicts the least recently used there, a.
        c.stored = MAX_SETS + 1;
        assert_eq!(found(&mut c, c_word), Some(id(c_word)));
        store(&mut c, b);
        assert_eq!(found(&mut c, b), Some(id(b)));
        assert_eq!(found(&mut c, a), None);
        assert_eq!(found(&mut c, c_word), Some(id(c_word)));
        assert_eq!(found(&mut c, d), None);
    }
}
