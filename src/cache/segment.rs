//! A small cache of the short segments that safe cuts leave ([`crate::models::safe_cuts`]) and
//! their tokens.
//!
//! A Japanese text cuts into segments of one or two characters, nearly all of them among a few
//! thousand; each costs a lookup in a token table of megabytes (and a merge when it is no
//! token). This cache answers them from a table of 192 KiB. A segment's tokens depend on its
//! bytes and the model alone, so a cached result is exact; the cache remembers which model it
//! holds results of, and forgets them all when another model uses it (by a new stamp, not a
//! clearing).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cache::budget::{CacheBudget, Held, halved};
use crate::cache::owner::{CacheOwner, Claim, Stamp};
use crate::models::token::PieceToken;

/// Segments up to this many bytes are cached…
const MAX_SEGMENT: usize = 8;
/// … when they make at most this many tokens.
const MAX_TOKENS: usize = 2;
const SLOTS: usize = 1 << 13;

/// The table's bytes at its default size.
pub const FULL_BYTES: usize = SLOTS * std::mem::size_of::<Entry>();

static NEXT_MODEL: AtomicUsize = AtomicUsize::new(0);

/// A fresh model id for [`SegmentCache::claim`]: one per model.
pub fn new_model_id() -> usize {
    NEXT_MODEL.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Copy, Default, Debug)]
struct Entry {
    /// The segment's bytes, little-endian, zero-padded.
    key: u64,
    len: u8,
    /// Tokens (0 for none stored).
    n: u8,
    /// The cache's stamp when stored: entries of another stamp are empty.
    stamp: Stamp,
    lens: [u8; MAX_TOKENS],
    ids: [u32; MAX_TOKENS],
}

/// See the module documentation. Allocated on first use.
#[derive(Debug, Default)]
pub struct SegmentCache {
    owner: CacheOwner,
    entries: Vec<Entry>,
    /// How many times the budget in force halved the table ([`budget::CacheBudget`]).
    halvings: u32,
    held: Held,
}

/// The key of a segment of at most [`MAX_SEGMENT`] bytes and its slot among `2^bits`.
#[inline]
fn key_and_slot(segment: &[u8], bits: u32) -> (u64, usize) {
    let (key, _) = crate::models::token_table::words(segment);
    let h = (key ^ segment.len() as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(23)
        .wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (key, (h.checked_shr(64 - bits).unwrap_or(0)) as usize)
}

impl SegmentCache {
    /// Log2 of the slots (allocated or to be).
    #[inline]
    fn bits(&self) -> u32 {
        halved(SLOTS, self.halvings, 1).trailing_zeros()
    }

    /// Starts over, empty, at the size `budget` allows (its share of the largest BPE
    /// pipeline's caches, [`crate::cache::word::BPE_FULL_BYTES`]) when sized for another.
    /// Called where the pipeline claims its piece cache, so that a call that merges no
    /// segment still leaves this cache within its budget.
    pub fn fit(&mut self, budget: CacheBudget) {
        if budget.refit(&mut self.halvings, crate::cache::word::BPE_FULL_BYTES) {
            self.entries = Vec::new();
            self.held.set(0);
        }
    }

    /// Makes the cache hold results of `model` (forgetting another model's); `true` when it
    /// held another's.
    #[inline]
    pub fn claim(&mut self, model: usize) -> bool {
        match self.owner.claim(model) {
            Claim::Same => false,
            Claim::Changed => true,
            Claim::Wrapped => {
                self.entries.fill(Entry::default());
                true
            }
        }
    }

    /// Appends the cached tokens of `segment` to `out`; `false` (nothing appended) when they are
    /// not cached.
    #[inline]
    pub fn get(&self, segment: &[u8], out: &mut Vec<PieceToken>) -> bool {
        if segment.len() > MAX_SEGMENT || self.entries.is_empty() {
            return false;
        }
        let (key, slot) = key_and_slot(segment, self.bits());
        let e = &self.entries[slot];
        if e.stamp != self.owner.stamp() || e.key != key || e.len as usize != segment.len() {
            return false;
        }
        for i in 0..e.n as usize {
            out.push(PieceToken {
                id: e.ids[i],
                len: e.lens[i] as u32,
            });
        }
        true
    }

    /// Stores the tokens of `segment` (when they fit).
    #[inline]
    pub fn put(&mut self, segment: &[u8], tokens: &[PieceToken]) {
        if segment.len() > MAX_SEGMENT || tokens.is_empty() || tokens.len() > MAX_TOKENS {
            return;
        }
        if self.entries.is_empty() {
            self.entries = vec![Entry::default(); 1 << self.bits()];
            self.held
                .set(self.entries.capacity() * std::mem::size_of::<Entry>());
        }
        let (key, slot) = key_and_slot(segment, self.bits());
        let mut e = Entry {
            key,
            len: segment.len() as u8,
            n: tokens.len() as u8,
            stamp: self.owner.stamp(),
            ..Entry::default()
        };
        for (i, t) in tokens.iter().enumerate() {
            e.ids[i] = t.id;
            e.lens[i] = t.len as u8;
        }
        self.entries[slot] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(ids: &[u32]) -> Vec<PieceToken> {
        ids.iter().map(|&id| PieceToken { id, len: 1 }).collect()
    }

    #[test]
    fn returns_what_was_stored_for_its_model_only() {
        let mut cache = SegmentCache::default();
        let (m1, m2) = (new_model_id(), new_model_id());
        assert!(cache.claim(m1), "a new model");
        assert!(!cache.claim(m1), "the same model");
        let mut out = Vec::new();
        assert!(!cache.get(b"ab", &mut out));
        cache.put(b"ab", &tokens(&[7, 8]));
        cache.put(b"a\0", &tokens(&[9, 10]));
        assert!(cache.get(b"ab", &mut out));
        assert_eq!(out, tokens(&[7, 8]));
        // Zero bytes are no padding: "a" is not "a\0".
        out.clear();
        assert!(!cache.get(b"a", &mut out));
        assert!(cache.get(b"a\0", &mut out));
        // Too long or too many tokens: not stored.
        cache.put(b"abcdefghi", &tokens(&[1]));
        cache.put(b"abc", &tokens(&[1, 2, 3]));
        assert!(!cache.get(b"abcdefghi", &mut out));
        assert!(!cache.get(b"abc", &mut out));
        // Another model forgets everything, and so does coming back.
        assert!(cache.claim(m2));
        assert!(!cache.get(b"ab", &mut out));
        assert!(cache.claim(m1));
        assert!(!cache.get(b"ab", &mut out));
    }
}
