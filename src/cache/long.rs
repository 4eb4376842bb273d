//! The long tier of the per-thread piece cache ([`super::word`]): BPE pieces of 17 to
//! [`LONG_PIECE`] bytes — the letter runs of CJK text, where one piece is a whole clause and
//! costs dozens of merges — and short ones of many tokens.
//!
//! A hit should cost one cache miss, not three: a piece's bytes and tokens are one record in an
//! arena (not two allocations reached through a slot), and the table that finds records is
//! small — 4096 buckets of eight 8-byte ways, 256 KiB, each bucket one cache line — so that it
//! tends to stay in the CPU's caches while other work (another tokenizer, in a benchmark's round
//! robin) runs. Eight ways per bucket also keep pieces that share a bucket from evicting each
//! other (two ways lost some 7 % of a Japanese text's pieces on every pass).
//!
//! Once 4096 live ways were evicted, the table grows, once, to four times as many
//! buckets (1 MiB), keeping its ways. A small vocabulary makes many English words pieces of five
//! tokens or more, which come here: with SentencePiece BPE of 1000 pieces, 20 MB of the KJV and
//! the Jargon File have some 40 000 of them, and the small table missed 75 000–86 000 of its
//! 300 000 lookups on every pass, each miss a BPE of the word and a new record, which emptied
//! the arena once or twice a pass; the grown one misses 427 (repeated passes 118 → 146–153
//! MB/s). A megabyte of Japanese has some 8000 distinct long pieces and never grows it.
//!
//! The arena holds at most [`LONG_BUDGET`] bytes (or its owner's budget); a record that would
//! take it over empties the tier (table and arena) first. Under a [`CacheBudget`] every table,
//! the arena and the filter are halved as the owner says ([`LongCache::sized`]). Records evicted from their bucket stay
//! in the arena until then. All told the tier takes under 5.5 MiB (the unigram cache's, with its
//! larger arena, under 9.5).

#[cfg(doc)]
use crate::cache::budget::CacheBudget;
use crate::cache::budget::{Held, halved};
use crate::cache::owner::Stamp;
use crate::models::token::PieceToken;

/// Pieces up to this many bytes go to the long tier.
pub const LONG_PIECE: usize = 256;
/// … when they make at most this many tokens.
pub const LONG_MAX_TOKENS: usize = 64;
const _: () = assert!(LONG_PIECE <= 256 && LONG_MAX_TOKENS < 1 << 16);
/// The most bytes the arena of records may hold, unless the owner sets another
/// ([`LongCache::with_budget`]).
pub const LONG_BUDGET: usize = 4 << 20;
/// Buckets of [`WAYS`] entries: 32768 entries, where a megabyte of Japanese has some 8000
/// distinct long pieces and as many short ones of many tokens.
const BUCKETS: usize = 1 << 12;
/// Buckets after growing.
const MAX_BUCKETS: usize = 1 << 14;
const WAYS: usize = 8;
/// Live ways evicted before the table grows.
const GROW_AFTER: usize = 4096;

/// Bits of the filter of pieces seen (128 KiB).
const SEEN_BITS: usize = 1 << 20;

/// One bucket: a cache line of ways, the most recently used first. A way is 0 when empty, else
/// the piece's tag (16 bits of its hash) in bits 48..64, the stamp it was stored with in bits
/// 32..48, and its record's index in the arena in bits 0..32.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Bucket([u64; WAYS]);

/// See the module documentation.
pub struct LongCache {
    /// Allocated on first store.
    buckets: Vec<Bucket>,
    /// Records, each: a header word (the piece's length in bits 0..16, its token count in bits
    /// 16..32, the caller's tag in bits 32..64), the piece's bytes in little-endian words (the
    /// last one zero-padded), then the tokens, two to a word ([`pack`]; the first in the low
    /// half).
    arena: Vec<u64>,
    seen: SeenFilter,
    /// Ways of the current stamp evicted so far: the table grows when they reach
    /// [`GROW_AFTER`].
    evictions: usize,
    /// The most bytes the arena may hold.
    budget: usize,
    /// The table's buckets when first allocated, and after growing.
    first_buckets: usize,
    max_buckets: usize,
    /// Live ways evicted before the table grows.
    grow_after: usize,
    held: Held,
}

impl Default for LongCache {
    fn default() -> Self {
        LongCache::with_budget(LONG_BUDGET)
    }
}

/// The tokens of a cached piece, read from its record, and the tag stored with them.
pub struct LongTokens<'a> {
    /// The record's words of tokens, two to a word.
    words: &'a [u64],
    /// The next token, and how many there are.
    next: usize,
    n: usize,
    tag: u32,
}

impl LongTokens<'_> {
    /// The tag the piece was stored with ([`LongCache::put`]).
    #[inline]
    pub fn tag(&self) -> u32 {
        self.tag
    }
}

impl Iterator for LongTokens<'_> {
    type Item = PieceToken;

    #[inline]
    fn next(&mut self) -> Option<PieceToken> {
        if self.next == self.n {
            return None;
        }
        let packed = (self.words[self.next / 2] >> (32 * (self.next % 2))) as u32;
        self.next += 1;
        Some(unpack(packed))
    }
}

impl LongCache {
    /// A tier whose arena holds at most `budget` bytes.
    pub fn with_budget(budget: usize) -> LongCache {
        LongCache::sized(budget, 0)
    }

    /// A tier whose arena holds at most `arena` bytes, its table and filter halved `halvings`
    /// times (at least a bucket, a word of filter): under a [`CacheBudget`].
    pub fn sized(arena: usize, halvings: u32) -> LongCache {
        let k = halvings;
        LongCache {
            buckets: Vec::new(),
            arena: Vec::new(),
            seen: SeenFilter::sized(halved(SEEN_BITS, k, 64)),
            evictions: 0,
            budget: arena,
            first_buckets: halved(BUCKETS, k, 1),
            max_buckets: halved(MAX_BUCKETS, k, 1),
            grow_after: halved(GROW_AFTER, k, 1),
            held: Held::default(),
        }
    }

    /// The most bytes a tier of arena `arena` takes once its table has grown.
    pub const fn full_bytes(arena: usize) -> usize {
        arena + MAX_BUCKETS * WAYS * 8 + SEEN_BITS / 8
    }

    /// Counts the tier's allocations in its thread's [`Held`] bytes.
    fn note_held(&mut self) {
        let bytes =
            self.buckets.capacity() * std::mem::size_of::<Bucket>() + self.arena.capacity() * 8;
        self.held.set(bytes);
    }

    /// Empties the tier: every way and the arena (allocations kept).
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
        self.arena.clear();
    }

    /// Starts over for another tokenizer (whose stamp is new): the arena from its beginning,
    /// and the filter of seen pieces with its whole budget. The previous tokenizer's records
    /// and sightings would otherwise fill them, and their emptying during this one's first
    /// passes would drop what this one stored: after all the corpora on cl100k, Japanese on
    /// o200k ran a pass at half speed (62-66 MB/s in the peer round robin, 107-119 alone).
    /// Nothing is cleared: the ways of old records carry the old stamp and are never followed
    /// again, and the filter's old bits only make a few pieces pass for seen (stored at their
    /// first sight).
    pub fn restart(&mut self) {
        self.arena.clear();
        self.seen.count = 0;
    }

    /// The bytes the arena holds, and the bytes allocated for it.
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        (self.arena.len() * 8, self.arena.capacity() * 8)
    }

    /// The cached tokens of `piece`, stored with `stamp`; pieces of up to `first_sight` bytes
    /// are looked for whether or not they were seen (as [`LongCache::put`] stores them).
    #[inline]
    pub fn get(
        &mut self,
        stamp: Stamp,
        piece: &[u8],
        first_sight: usize,
    ) -> Option<LongTokens<'_>> {
        if piece.len() > LONG_PIECE {
            return None;
        }
        let hash = long_hash(piece);
        if piece.len() > first_sight && !self.seen.contains(hash) {
            return None;
        }
        let at = self.find(stamp, hash, piece)?;
        Some(self.tokens_at(at, piece.len()))
    }

    /// [`LongCache::get`] for a caller that does more work to store a piece than to use it
    /// once, and stores it (with [`LongCache::put`], `first_sight` at least its length) only
    /// when seen before: records this sighting, and on a miss says whether the piece was seen
    /// before (the filter of sightings says so; now and then it forgets, or takes another piece
    /// for this one).
    #[inline]
    pub fn get_or_sight(&mut self, stamp: Stamp, piece: &[u8]) -> Result<LongTokens<'_>, bool> {
        if piece.len() > LONG_PIECE {
            return Err(false);
        }
        let hash = long_hash(piece);
        if !self.seen.insert(hash) {
            return Err(false);
        }
        match self.find(stamp, hash, piece) {
            Some(at) => Ok(self.tokens_at(at, piece.len())),
            None => Err(true),
        }
    }

    /// Where the record of `piece` (of hash `hash`, stored with `stamp`) is in the arena, if
    /// its bucket has it (then it becomes the bucket's most recently used).
    #[inline]
    fn find(&mut self, stamp: Stamp, hash: u64, piece: &[u8]) -> Option<usize> {
        if self.buckets.is_empty() {
            return None;
        }
        let want = way_key(hash, stamp);
        let at_bucket = bucket_of(hash, self.buckets.len());
        let bucket = &mut self.buckets[at_bucket].0;
        let i = bucket.iter().position(|&way| {
            way >> 32 == want && record_holds(&self.arena, way as u32 as usize, piece)
        })?;
        // Most recently used first.
        let way = bucket[i];
        bucket.copy_within(0..i, 1);
        bucket[0] = way;
        Some(way as u32 as usize)
    }

    /// The tokens and tag of the record at `at`, of a piece of `len` bytes.
    #[inline]
    fn tokens_at(&self, at: usize, len: usize) -> LongTokens<'_> {
        let header = self.arena[at];
        let n = (header >> 16 & 0xFFFF) as usize;
        let tokens = at + 1 + len.div_ceil(8);
        LongTokens {
            words: &self.arena[tokens..tokens + n.div_ceil(2)],
            next: 0,
            n,
            tag: (header >> 32) as u32,
        }
    }

    /// Stores the tokens of `piece` and a `tag` (returned with them: [`LongTokens::tag`]) with
    /// `stamp`, when they fit and the piece is at most `first_sight` bytes or was seen before (a
    /// filter of hashes says). Called after [`LongCache::get`] missed, with the same
    /// `first_sight`.
    pub fn put(
        &mut self,
        stamp: Stamp,
        piece: &[u8],
        tag: u32,
        tokens: &[PieceToken],
        first_sight: usize,
    ) {
        if tokens.len() > LONG_MAX_TOKENS
            || piece.len() > LONG_PIECE
            || tokens.iter().any(|t| pack(t).is_none())
        {
            return;
        }
        let hash = long_hash(piece);
        if !self.seen.insert(hash) && piece.len() > first_sight {
            return;
        }
        let words = 1 + piece.len().div_ceil(8) + tokens.len().div_ceil(2);
        if words * 8 > self.budget {
            // A budget too small for this record: it goes uncached.
            return;
        }
        if self.buckets.is_empty() {
            self.buckets = vec![Bucket::default(); self.first_buckets];
            // All of the budget at once, so that growing never holds two copies or rounds the
            // capacity past the budget (pages are touched only as records fill them).
            self.arena.reserve_exact(self.budget / 8);
            self.note_held();
        }
        if (self.arena.len() + words) * 8 > self.budget {
            self.clear();
        }
        let at = self.arena.len();
        // Both fit in 16 bits: at most `LONG_PIECE` bytes and `LONG_MAX_TOKENS` tokens.
        self.arena
            .push(piece.len() as u64 | (tokens.len() as u64) << 16 | (tag as u64) << 32);
        self.arena.extend(piece.chunks(8).map(word));
        let packed = |t: &PieceToken| pack(t).expect("checked above") as u64;
        self.arena.extend(
            tokens
                .chunks(2)
                .map(|two| packed(&two[0]) | two.get(1).map_or(0, |t| packed(t) << 32)),
        );
        // In front; the least recently used way falls off the end.
        let at_bucket = bucket_of(hash, self.buckets.len());
        let bucket = &mut self.buckets[at_bucket].0;
        let evicted = bucket[WAYS - 1];
        bucket.copy_within(0..WAYS - 1, 1);
        bucket[0] = way_key(hash, stamp) << 32 | at as u64;
        if evicted != 0 && evicted >> 32 & 0xFFFF == stamp.bits() as u64 {
            self.evictions += 1;
            if self.evictions == self.grow_after && self.buckets.len() < self.max_buckets {
                self.grow(stamp);
            }
        }
    }

    /// Grows the table to its largest ([`MAX_BUCKETS`] unless halved), keeping the ways of `stamp` (each one's bucket from
    /// its record's bytes): a way's new bucket is its old one with more bits of its hash, so the
    /// ways of one new bucket come from one old bucket, in their order of use.
    #[cold]
    fn grow(&mut self, stamp: Stamp) {
        let max = self.max_buckets;
        let old = std::mem::replace(&mut self.buckets, vec![Bucket::default(); max]);
        let mut filled = vec![0u8; max];
        for bucket in &old {
            for &way in bucket.0.iter().filter(|&&w| w != 0) {
                if way >> 32 & 0xFFFF != stamp.bits() as u64 {
                    continue;
                }
                let at = way as u32 as usize;
                let len = (self.arena[at] & 0xFFFF) as usize;
                let bytes: Vec<u8> = self.arena[at + 1..at + 1 + len.div_ceil(8)]
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .take(len)
                    .collect();
                let new = bucket_of(long_hash(&bytes), max);
                self.buckets[new].0[filled[new] as usize] = way;
                filled[new] += 1;
            }
        }
        self.note_held();
    }
}

/// A token in four bytes: its id in bits 0..24, its length less one in bits 24..32 (a token
/// is 1 to [`LONG_PIECE`] bytes); `None` for an id of more than 24 bits (no vocabulary in use
/// comes near), which the tier then does not store. Half the eight bytes of a plain pair:
/// Japanese and the UDHR's many languages hold more distinct long pieces than the arena did.
#[inline]
fn pack(t: &PieceToken) -> Option<u32> {
    let fits = t.id < 1 << 24 && (1..=LONG_PIECE as u32).contains(&t.len);
    fits.then(|| t.id | (t.len - 1) << 24)
}

/// A token from [`pack`]'s four bytes.
#[inline]
fn unpack(packed: u32) -> PieceToken {
    PieceToken {
        id: packed & 0xFF_FFFF,
        len: (packed >> 24) + 1,
    }
}

/// Whether the record at `at` is of `piece`.
#[inline]
fn record_holds(arena: &[u64], at: usize, piece: &[u8]) -> bool {
    let len = (arena[at] & 0xFFFF) as usize;
    if len != piece.len() {
        return false;
    }
    let words = &arena[at + 1..at + 1 + len.div_ceil(8)];
    let mut chunks = piece.chunks_exact(8);
    // Whole words by one load each; the tail as `word` makes it, without its byte copy (a
    // `memcpy` call per word when the chunk's length is not known to be 8).
    let whole = words
        .iter()
        .zip(&mut chunks)
        .all(|(&w, chunk)| w == u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
    let tail = chunks.remainder();
    whole && (tail.is_empty() || words[words.len() - 1] == word(tail))
}

/// Up to 8 bytes as a little-endian word, zero-padded.
#[inline]
fn word(chunk: &[u8]) -> u64 {
    crate::models::token_table::words(chunk).0
}

/// The bucket of a piece among `buckets`: hash bits from 48 up, 12 or 14 of them (the filter of
/// seen pieces uses bits 0..20, tags bits 32..48).
#[inline]
fn bucket_of(hash: u64, buckets: usize) -> usize {
    (hash >> 48) as usize & (buckets - 1)
}

/// A way's upper half for `hash` stored with `stamp`: tag and stamp.
#[inline]
fn way_key(hash: u64, stamp: Stamp) -> u64 {
    (hash >> 32 & 0xFFFF) << 16 | stamp.bits() as u64
}

/// A hash of a piece: its 8-byte words folded by multiply and rotate, the last word read
/// overlapping so no byte is copied.
#[inline]
pub(crate) fn long_hash(piece: &[u8]) -> u64 {
    let n = piece.len();
    if n <= 8 {
        let (lo, _) = crate::models::token_table::words(piece);
        return fmix(lo ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
    let word = |i: usize| u64::from_le_bytes(piece[i..i + 8].try_into().expect("8 bytes"));
    let mut h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut i = 0;
    while i + 8 < n {
        h = (h ^ word(i))
            .wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            .rotate_left(29);
        i += 8;
    }
    h = (h ^ word(n - 8)).wrapping_mul(0x1656_67B1_9E37_79F9);
    fmix(h)
}

/// MurmurHash3's finalizer: every bit of `h` reaches every bit of the result, so pieces that
/// differ only in their last bytes (which a multiply carries only upwards) still get unrelated
/// buckets and filter bits.
#[inline]
fn fmix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// Which pieces were seen before, as a bitmap of their hashes, emptied when a sixteenth of its
/// bits are set (so that at most one piece in sixteen seen for the first time passes for seen).
///
/// The tier stores a piece the second time it is seen, not the first, and looks for a piece
/// only when it was seen: text where long pieces never repeat (random characters, identifiers)
/// would otherwise pay a copy per piece for nothing, and a look in the table. (Its caller may
/// have short pieces stored at their first sight: [`LongCache::put`].)
struct SeenFilter {
    bits: Vec<u64>,
    /// Bits set since it was last emptied.
    count: usize,
    /// Its bits when allocated ([`SEEN_BITS`] unless a budget halved it): a power of two.
    size: usize,
    held: Held,
}

impl SeenFilter {
    /// A filter of `size` bits (a power of two, at least 64), allocated on first use.
    fn sized(size: usize) -> SeenFilter {
        debug_assert!(size.is_power_of_two() && size >= 64);
        SeenFilter {
            bits: Vec::new(),
            count: 0,
            size,
            held: Held::default(),
        }
    }

    /// The word and bit of `hash`.
    fn bit(&self, hash: u64) -> (usize, u64) {
        let bit = hash as usize & (self.size - 1);
        (bit / 64, 1 << (bit % 64))
    }

    /// Whether a piece of hash `hash` may have been seen.
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        let (word, bit) = self.bit(hash);
        self.bits.get(word).is_some_and(|w| w & bit != 0)
    }

    /// Marks `hash` as seen; `true` when it already was.
    fn insert(&mut self, hash: u64) -> bool {
        if self.contains(hash) {
            return true;
        }
        if self.count >= self.size / 16 || self.bits.is_empty() {
            self.bits.clear();
            self.bits.resize(self.size / 64, 0);
            self.held.set(self.bits.capacity() * 8);
            self.count = 0;
        }
        let (word, bit) = self.bit(hash);
        self.bits[word] |= bit;
        self.count += 1;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cache::owner::CacheOwner;

    fn stamp() -> Stamp {
        let mut owner = CacheOwner::default();
        owner.claim(1);
        owner.stamp()
    }

    /// Made-up tokens of `piece`: its bytes in threes.
    fn tokens(piece: &[u8]) -> Vec<PieceToken> {
        piece
            .chunks(3)
            .enumerate()
            .map(|(i, c)| PieceToken {
                id: c[0] as u32 * 1000 + i as u32,
                len: c.len() as u32,
            })
            .collect()
    }

    /// The stamps of two owners, the first one's first.
    fn two_stamps() -> (Stamp, Stamp) {
        let mut owner = CacheOwner::default();
        owner.claim(1);
        let first = owner.stamp();
        owner.claim(2);
        (first, owner.stamp())
    }

    /// Stores `piece` with `stamp`: put at its second sight.
    fn store(cache: &mut LongCache, stamp: Stamp, piece: &[u8]) {
        for _ in 0..2 {
            cache.put(stamp, piece, 0, &tokens(piece), 0);
        }
    }

    fn get(cache: &mut LongCache, stamp: Stamp, piece: &[u8]) -> Option<Vec<PieceToken>> {
        cache.get(stamp, piece, 0).map(|t| t.collect())
    }

    #[test]
    fn tokens_come_back_at_the_ends_of_their_ranges_or_are_not_stored() {
        let s = stamp();
        let mut cache = LongCache::default();
        let text: Vec<u8> = (0..300u32).map(|i| (i * 11 % 239) as u8).collect();
        let biggest = (1 << 24) - 1;
        // Odd and even counts; the largest id, the longest and shortest tokens.
        let cases: [&[PieceToken]; 4] = [
            &[PieceToken {
                id: biggest,
                len: 20,
            }],
            &[
                PieceToken { id: 0, len: 1 },
                PieceToken {
                    id: biggest,
                    len: 19,
                },
            ],
            &[PieceToken { id: 7, len: 256 }],
            &[
                PieceToken { id: 5, len: 1 },
                PieceToken { id: 6, len: 1 },
                PieceToken {
                    id: biggest,
                    len: 18,
                },
            ],
        ];
        for (i, &want) in cases.iter().enumerate() {
            let len: usize = want.iter().map(|t| t.len as usize).sum();
            let piece = &text[i..i + len];
            cache.put(s, piece, 0, want, LONG_PIECE);
            assert_eq!(get(&mut cache, s, piece).as_deref(), Some(want), "case {i}");
        }
        // An id of 25 bits is not stored, nor the rest of its piece's tokens.
        let piece = &text[40..60];
        let wide = [
            PieceToken { id: 3, len: 10 },
            PieceToken {
                id: 1 << 24,
                len: 10,
            },
        ];
        cache.put(s, piece, 0, &wide, LONG_PIECE);
        assert_eq!(get(&mut cache, s, piece), None);
    }

    #[test]
    fn tags_come_back_with_their_tokens() {
        let s = stamp();
        let mut cache = LongCache::default();
        let text: Vec<u8> = (0..400u32).map(|i| (i * 13 % 241) as u8).collect();
        for (i, len) in [17, 64, 200, LONG_PIECE].into_iter().enumerate() {
            let piece = &text[i..i + len];
            // Every bit of the tag, and the widest header (the longest piece, most tokens).
            let tag = [u32::MAX, 0x8000_0001, 0x3F80_0000, 1][i];
            let want = vec![PieceToken { id: 3, len: 4 }; len / 4];
            assert!(
                matches!(cache.get_or_sight(s, piece), Err(false)),
                "new: {len}"
            );
            assert!(
                matches!(cache.get_or_sight(s, piece), Err(true)),
                "seen: {len}"
            );
            cache.put(s, piece, tag, &want, LONG_PIECE);
            let Ok(got) = cache.get_or_sight(s, piece) else {
                panic!("stored: {len}");
            };
            assert_eq!(got.tag(), tag, "{len}");
            assert_eq!(got.collect::<Vec<_>>(), want, "{len}");
        }
        let too_long = &text[..LONG_PIECE + 1];
        assert!(matches!(cache.get_or_sight(s, too_long), Err(false)));
        assert!(
            matches!(cache.get_or_sight(s, too_long), Err(false)),
            "never kept"
        );
    }

    #[test]
    fn records_return_what_was_stored_at_every_length() {
        let s = stamp();
        let mut cache = LongCache::default();
        let text: Vec<u8> = (0..400u32).map(|i| (i * 7 % 251) as u8).collect();
        for len in [1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 191, 192] {
            for start in [0, 3, 50] {
                let piece = &text[start..start + len];
                let want = tokens(piece);
                assert_eq!(get(&mut cache, s, piece), None, "{len}");
                cache.put(s, piece, 0, &want, 0);
                assert_eq!(
                    get(&mut cache, s, piece),
                    None,
                    "stored when seen twice: {len}"
                );
                cache.put(s, piece, 0, &want, 0);
                assert_eq!(get(&mut cache, s, piece), Some(want), "{len}");
                // A piece that differs in its last byte, or lacks its first, is another.
                let mut other = piece.to_vec();
                *other.last_mut().unwrap() ^= 1;
                assert_eq!(get(&mut cache, s, &other), None, "{len}");
                assert_eq!(get(&mut cache, s, &piece[1..]), None, "{len}");
            }
        }
        // The longest piece, in few tokens.
        let piece = &text[100..100 + LONG_PIECE];
        let few = vec![PieceToken { id: 9, len: 4 }; LONG_PIECE / 4];
        cache.put(s, piece, 0, &few, 0);
        cache.put(s, piece, 0, &few, 0);
        assert_eq!(get(&mut cache, s, piece), Some(few));
        // Too long, or too many tokens: never stored.
        let piece = &text[..LONG_PIECE + 1];
        for _ in 0..3 {
            cache.put(s, piece, 0, &tokens(piece), 0);
        }
        assert_eq!(get(&mut cache, s, piece), None);
        let piece = &text[..LONG_PIECE];
        let many = vec![PieceToken { id: 1, len: 1 }; LONG_MAX_TOKENS + 1];
        for _ in 0..3 {
            cache.put(s, piece, 0, &many, 0);
        }
        assert_eq!(get(&mut cache, s, piece), None);
    }

    #[test]
    fn a_record_holds_exactly_its_piece() {
        // Every length around the word size, every byte changed in turn (whole words and the
        // tail are compared apart), and one byte more or less.
        let text: Vec<u8> = (0..80u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in 1..=40 {
            let piece = &text[3..3 + len];
            let mut arena = vec![0u64; 5];
            arena.push(len as u64 | 7 << 32);
            arena.extend(piece.chunks(8).map(word));
            arena.push(u64::MAX);
            assert!(record_holds(&arena, 5, piece), "{len}");
            for i in 0..len {
                let mut other = piece.to_vec();
                other[i] ^= 0x40;
                assert!(!record_holds(&arena, 5, &other), "{len} {i}");
            }
            assert!(!record_holds(&arena, 5, &text[3..4 + len]), "{len}");
            assert!(!record_holds(&arena, 5, &piece[..len - 1]), "{len}");
        }
    }

    #[test]
    fn another_stamp_reads_as_empty() {
        let (first, second) = two_stamps();
        let mut cache = LongCache::default();
        let piece = b"a piece of some twenty bytes";
        store(&mut cache, first, piece);
        assert!(get(&mut cache, first, piece).is_some());
        assert_eq!(get(&mut cache, second, piece), None);
    }

    #[test]
    fn a_bucket_keeps_its_eight_most_recently_used_pieces() {
        let s = stamp();
        let pieces: Vec<Vec<u8>> = (0..400_000u32)
            .map(|i| format!("a long piece, number {i:>8}").into_bytes())
            .collect();
        let bucket = |p: &[u8]| bucket_of(long_hash(p), BUCKETS);
        let same: Vec<&Vec<u8>> = pieces
            .iter()
            .filter(|p| bucket(p) == bucket(&pieces[0]))
            .take(WAYS + 2)
            .collect();
        let mut cache = LongCache::default();
        for p in &same[..WAYS] {
            store(&mut cache, s, p);
        }
        for p in &same[..WAYS] {
            assert!(get(&mut cache, s, p).is_some());
        }
        // Used in order 0..8, then 0 again: 1 is the least recently used.
        assert!(get(&mut cache, s, same[0]).is_some());
        store(&mut cache, s, same[WAYS]);
        assert!(
            get(&mut cache, s, same[1]).is_none(),
            "the least recently used went"
        );
        for p in [same[0], same[WAYS]]
            .into_iter()
            .chain(same[2..WAYS].iter().copied())
        {
            assert!(get(&mut cache, s, p).is_some());
        }
    }

    #[test]
    fn the_arena_stays_within_its_budget_and_keeps_turning_over() {
        let s = stamp();
        // The default budget, and an owner's (records of 520 bytes: some 8000 fit in the
        // first, 2000 in the second).
        for (mut cache, budget) in [
            (LongCache::default(), LONG_BUDGET),
            (LongCache::with_budget(1 << 20), 1 << 20),
        ] {
            let full = vec![PieceToken { id: 1, len: 4 }; LONG_MAX_TOKENS];
            let (mut stored, mut early) = (0, 0);
            for i in 0..20_000u32 {
                let mut piece = vec![b'x'; LONG_PIECE];
                piece[..4].copy_from_slice(&i.to_le_bytes());
                cache.put(s, &piece, 0, &full, 0);
                // Only when the filter of seen pieces has this piece's bit from another one.
                early += get(&mut cache, s, &piece).is_some() as usize;
                cache.put(s, &piece, 0, &full, 0);
                // Stored: the newest record survives the emptying its store may cause.
                stored += get(&mut cache, s, &piece).is_some() as usize;
                let (held, allocated) = cache.held();
                assert!(held <= budget, "{held} bytes after {i}");
                assert_eq!(allocated, budget);
            }
            assert_eq!(stored, 20_000);
            assert!(early < 20_000 / 20, "{early} stored when first seen");
            // The latest records are still there.
            let recent = (19_000..20_000u32)
                .filter(|i| {
                    let mut piece = vec![b'x'; LONG_PIECE];
                    piece[..4].copy_from_slice(&i.to_le_bytes());
                    get(&mut cache, s, &piece).is_some()
                })
                .count();
            // Every record the arena holds since it was last emptied is one of the latest
            // pieces (twice for a piece stored early).
            let records = cache.held().0 / 520;
            assert!(
                recent >= 1000.min(records / 2),
                "{recent} of the last 1000 kept ({budget}, {records} records)"
            );
        }
    }

    #[test]
    fn another_tokenizers_records_and_sightings_leave_this_ones_budget_whole() {
        let mut owner = CacheOwner::default();
        owner.claim(1);
        let mut cache = LongCache::default();
        let piece = |i: u32, who: u8| format!("{who}-piece-{i:08}-of-some-length").into_bytes();
        // The first tokenizer's records nearly fill the arena…
        let full = vec![PieceToken { id: 1, len: 4 }; LONG_MAX_TOKENS];
        let mut i = 0u32;
        // (room for about half of the records the second one stores below)
        while cache.held().0 + 60_000 < LONG_BUDGET {
            let mut p = vec![b'y'; LONG_PIECE];
            p[..4].copy_from_slice(&i.to_le_bytes());
            cache.put(owner.stamp(), &p, 0, &full, 0);
            cache.put(owner.stamp(), &p, 0, &full, 0);
            i += 1;
        }
        // … and it sees nearly as many pieces as the filter takes before emptying.
        while cache.seen.count < SEEN_BITS / 16 - 10 {
            cache.seen.insert(long_hash(&piece(i, 1)));
            i += 1;
        }
        assert!(
            cache.held().0 + 60_000 >= LONG_BUDGET,
            "the arena is nearly full"
        );
        // Another one sees 1000 pieces, then sees them again: each is stored by its second
        // sighting at the latest (the first one's bits may make it pass for seen at its first),
        // and found at the third. Without the restart, the filter would empty after ten of them
        // and forget the rest, and the arena would empty after half of them.
        owner.claim(2);
        cache.restart();
        for round in 0..3 {
            for i in 0..1000 {
                let p = piece(i, 2);
                let got = get(&mut cache, owner.stamp(), &p);
                assert!(
                    round > 0 || got.is_none(),
                    "nothing of this tokenizer's yet"
                );
                assert!(round < 2 || got == Some(tokens(&p)), "piece {i} not stored");
                cache.put(owner.stamp(), &p, 0, &tokens(&p), 0);
            }
        }
    }

    #[test]
    fn seen_filter_empties_itself_when_a_sixteenth_full() {
        let mut f = SeenFilter::sized(SEEN_BITS);
        assert!(!f.contains(5));
        assert!(!f.insert(5));
        assert!(f.insert(5) && f.contains(5));
        let mut h = 6u64;
        while f.count < SEEN_BITS / 16 {
            h += 1;
            f.insert(h);
        }
        // The next new hash empties it first.
        assert!(!f.insert(h + 1));
        assert!(!f.contains(5));
        assert_eq!(f.count, 1);
    }

    /// Growing keeps every way of the current stamp, each in the bucket its hash takes among
    /// the new ones, in its order of use; another stamp's ways are dropped.
    #[test]
    fn growing_keeps_the_ways_in_order() {
        let (old, s) = two_stamps();
        let mut cache = LongCache::default();
        let old_piece = b"a piece of the old stamp";
        store(&mut cache, old, old_piece);
        // Which piece each record holds.
        let mut piece_at = std::collections::HashMap::new();
        for i in 0..20_000u32 {
            let p = format!("a long piece, number {i:>8}").into_bytes();
            for _ in 0..2 {
                // Stored at its second sight (or its first, when the filter takes it for seen).
                let at = cache.arena.len();
                cache.put(s, &p, 0, &tokens(&p), 0);
                if cache.arena.len() > at {
                    piece_at.insert(at, p.clone());
                }
            }
        }
        assert_eq!(
            cache.buckets.len(),
            BUCKETS,
            "not grown yet: the test grows it"
        );
        let mut expected = vec![Vec::new(); MAX_BUCKETS];
        for bucket in &cache.buckets {
            for &way in bucket
                .0
                .iter()
                .filter(|&&w| w >> 32 & 0xFFFF == s.bits() as u64)
            {
                let p = &piece_at[&(way as u32 as usize)];
                expected[bucket_of(long_hash(p), MAX_BUCKETS)].push(way);
            }
        }
        cache.grow(s);
        let after: Vec<Vec<u64>> = cache
            .buckets
            .iter()
            .map(|b| b.0.iter().copied().filter(|&w| w != 0).collect())
            .collect();
        assert_eq!(after, expected);
        for p in piece_at.values() {
            if let Some(t) = get(&mut cache, s, p) {
                assert_eq!(t, tokens(p));
            }
        }
        assert_eq!(get(&mut cache, old, old_piece), None);
    }

    /// Stores that evict enough live ways grow the table, once, and lookups keep finding what
    /// was stored.
    #[test]
    fn the_table_grows_once_after_enough_evictions() {
        let s = stamp();
        let mut cache = LongCache::default();
        // Records of 80 bytes: 40 000 fit the arena's budget.
        let pieces: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| format!("long piece {i:>6}").into_bytes())
            .collect();
        let mut grown_after = None;
        for (i, p) in pieces.iter().enumerate() {
            store(&mut cache, s, p);
            if grown_after.is_none() && cache.buckets.len() == MAX_BUCKETS {
                grown_after = Some(i + 1);
            }
        }
        let grown_after = grown_after.expect("the table grew");
        assert!(
            grown_after > BUCKETS * WAYS / 2,
            "grew after {grown_after} pieces"
        );
        assert_eq!(cache.buckets.len(), MAX_BUCKETS, "once");
        let found = pieces
            .iter()
            .filter(|p| {
                get(&mut cache, s, p)
                    .inspect(|t| assert_eq!(t, &tokens(p)))
                    .is_some()
            })
            .count();
        // The pieces evicted before the table grew are gone: some 4096 of them.
        assert!(found > pieces.len() * 4 / 5, "{found} found");
    }

    /// Pieces of up to `first_sight` bytes are stored, and found, at their first sight; longer
    /// ones at their second.
    #[test]
    fn short_pieces_may_be_stored_at_their_first_sight() {
        let s = stamp();
        let mut cache = LongCache::default();
        let text: Vec<u8> = (0..64u8).map(|i| b'a' + i % 26).collect();
        for len in [1, 8, 15, 16, 17, 40] {
            let piece = &text[..len];
            let want = tokens(piece);
            let got = |cache: &mut LongCache| cache.get(s, piece, 16).map(|t| t.collect());
            assert_eq!(got(&mut cache), None, "{len}");
            cache.put(s, piece, 0, &want, 16);
            assert_eq!(got(&mut cache), (len <= 16).then(|| want.clone()), "{len}");
            cache.put(s, piece, 0, &want, 16);
            assert_eq!(got(&mut cache), Some(want), "{len}");
        }
    }
}
