//! A thread's memo of a merges list's answers for pairs of ids ([`crate::models::merges_bpe`]);
//! the compatible-pairs search keeps a second one of its own answers, whether two neighbouring
//! tokens are compatible ([`crate::models::valid_pairs`]).
//!
//! Merging a piece looks up every pair of adjacent symbols, and again each pair a merge makes,
//! in a map of megabytes: two cache misses each (the map's control bytes, then its bucket),
//! the largest cost of a first sight for models whose symbols are not among the grid's few
//! hundred ids (SentencePiece-style models' characters, CJK and Cyrillic characters and the
//! first merges of byte-level models). The pairs repeat: a language's characters pair in a
//! few thousand ways, and its words' first merges make the same few thousand symbols. This
//! direct-mapped table of 256 KiB answers them from the core's own cache.
//!
//! Exact: an entry holds what the map gave for exactly its pair (listed or not), stamped with
//! the model that answered ([`CacheOwner`]), so another model's entries read as empty. Ids of
//! 2^24 and more (no real vocabulary has them) are not memoized: the key packs two ids of 24
//! bits with the stamp.

use crate::cache::budget::{CacheBudget, Held, halved};
use crate::cache::owner::{CacheOwner, Claim};

const SLOTS: usize = 1 << 14;

/// The table's bytes at its default size.
pub const FULL_BYTES: usize = SLOTS * std::mem::size_of::<Entry>();

/// Ids below this are memoized.
const ID_LIMIT: u32 = 1 << 24;

#[derive(Clone, Copy, Default, Debug)]
struct Entry {
    /// Left id (24 bits), right id (24 bits), stamp (16 bits); 0 is never a current key (the
    /// default stamp is never current).
    key: u64,
    rank: u32,
    new: u32,
}

/// See the module documentation. Allocated on first use.
#[derive(Debug, Default)]
pub struct PairMemo {
    owner: CacheOwner,
    entries: Vec<Entry>,
    /// How many times the budget in force halved the table ([`CacheBudget`]).
    halvings: u32,
    held: Held,
}

impl PairMemo {
    /// Starts over, empty, at the size `budget` allows (its share of the largest BPE
    /// pipeline's caches, [`crate::cache::word::BPE_FULL_BYTES`]) when sized for another.
    pub fn fit(&mut self, budget: CacheBudget) {
        if budget.refit(&mut self.halvings, crate::cache::word::BPE_FULL_BYTES) {
            self.entries = Vec::new();
            self.held.set(0);
        }
    }

    /// Makes the memo hold answers of `model` (another model's read as empty).
    #[inline]
    pub fn claim(&mut self, model: usize) {
        if self.owner.claim(model) == Claim::Wrapped {
            self.entries.fill(Entry::default());
        }
    }

    /// `listed(left, right)`, the claiming model's answer for the pair, from the memo when it
    /// holds it (else asked, and kept).
    #[inline]
    pub fn get(
        &mut self,
        left: u32,
        right: u32,
        listed: impl FnOnce(u32, u32) -> (u32, u32),
    ) -> (u32, u32) {
        if left >= ID_LIMIT || right >= ID_LIMIT {
            return listed(left, right);
        }
        if self.entries.is_empty() {
            let slots = halved(SLOTS, self.halvings, 1);
            self.entries = vec![Entry::default(); slots];
            self.held
                .set(self.entries.capacity() * std::mem::size_of::<Entry>());
        }
        let key = (left as u64) << 40 | (right as u64) << 16 | self.owner.stamp().bits() as u64;
        let slot =
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & (self.entries.len() - 1);
        let e = &mut self.entries[slot];
        if e.key == key {
            return (e.rank, e.new);
        }
        let (rank, new) = listed(left, right);
        *e = Entry { key, rank, new };
        (rank, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up merges list: pairs with an even sum are listed.
    fn listed(a: u32, b: u32) -> (u32, u32) {
        if a.wrapping_add(b).is_multiple_of(2) {
            (a ^ b, a.wrapping_add(b))
        } else {
            (u32::MAX, u32::MAX)
        }
    }

    #[test]
    fn answers_as_the_list_across_models_sizes_and_large_ids() {
        let mut memo = PairMemo::default();
        for budget in [
            CacheBudget::DEFAULT,
            CacheBudget::bytes(4 << 10),
            CacheBudget::bytes(0),
        ] {
            memo.fit(budget);
            for model in [1usize, 2, 1] {
                memo.claim(model);
                // Model 2 answers differently: a memo that kept model 1's would be caught.
                let answer = |a: u32, b: u32| {
                    let (r, n) = listed(a, b);
                    if model == 2 { (r, n ^ 1) } else { (r, n) }
                };
                for round in 0..2 {
                    for a in (0..300u32).chain([ID_LIMIT - 1, ID_LIMIT, u32::MAX - 1]) {
                        for b in [0, 1, 7, 255, 256, 70_000, ID_LIMIT - 1, ID_LIMIT] {
                            let mut asked = false;
                            let got = memo.get(a, b, |a, b| {
                                asked = true;
                                answer(a, b)
                            });
                            assert_eq!(got, answer(a, b), "({a}, {b}) model {model} round {round}");
                            if a >= ID_LIMIT || b >= ID_LIMIT {
                                assert!(asked, "large ids are never memoized");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_entry_is_not_trusted_when_its_stamp_comes_back_round() {
        let mut memo = PairMemo::default();
        memo.claim(0);
        let stamp = memo.owner.stamp();
        memo.get(3, 5, listed);
        // Other owners until the stamp is the entry's again: only through a wrap.
        let mut owner = 1;
        loop {
            memo.claim(owner);
            owner += 1;
            if memo.owner.stamp() == stamp {
                break;
            }
        }
        let mut asked = false;
        memo.get(3, 5, |a, b| {
            asked = true;
            listed(a, b)
        });
        assert!(asked);
    }
}
