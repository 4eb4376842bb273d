//! The pieces whose tokens are known before any text is seen: the vocabulary entries of up to
//! [`MAX_WORD`] bytes that a model encodes as themselves (tiktoken's whole-piece rule,
//! `ignore_merges`, or merges that rebuild the entry). A thread's piece cache is filled with them
//! the first time it holds a tokenizer's results ([`crate::cache::word::WordCache::claim_seeded`]),
//! so that the first sight of a piece that is one token costs a probe of the cache's prefetched
//! set, not a miss, a lookup in the token table and a store.
//!
//! Unseen English (cl100k, tokbench's slices): over half the pieces a slice sees for the first
//! time are a single token (3 107 of 5 501 in a slice of the Jargon File), and seeding took the
//! median slice from about 145 to 160 MB/s on an EPYC. Exactness: an entry holds what
//! `encode_piece` gives for its bytes, which each model's `encodes_as_itself` states and the
//! tests check for every entry of every test model.

use crate::cache::key::{Key, MAX_WORD};

/// One seed: the entry's bytes as its cache key's words, its length and its id.
#[derive(Clone, Copy, Debug)]
struct Seed {
    lo: u64,
    hi: u64,
    id: u32,
    len: u8,
}

/// See the module documentation. The seeds are kept in descending id order: seeded in that
/// order, the lowest ids (the earliest merges, the most frequent pieces) are stored last, so
/// that where a set holds fewer of them than map to it, they are the ones it keeps.
#[derive(Debug, Default)]
pub struct PieceSeeds {
    seeds: Box<[Seed]>,
}

impl PieceSeeds {
    /// The seeds of a vocabulary of `n` ids: the ids for which `as_itself(id)` gives the
    /// entry's bytes (`None` for an id that does not encode as itself, or has no entry).
    pub fn new<'a>(n: u32, mut as_itself: impl FnMut(u32) -> Option<&'a [u8]>) -> PieceSeeds {
        let seeds = (0..n)
            .rev()
            .filter_map(|id| {
                let bytes = as_itself(id).filter(|b| !b.is_empty() && b.len() <= MAX_WORD)?;
                let key = Key::new(bytes);
                let [lo, hi] = key.words();
                Some(Seed {
                    lo,
                    hi,
                    id,
                    len: bytes.len() as u8,
                })
            })
            .collect();
        PieceSeeds { seeds }
    }

    /// No seeds (models whose entries' encodings are not known without merging).
    pub fn none() -> PieceSeeds {
        PieceSeeds::default()
    }

    /// How many pieces seed a cache.
    pub fn len(&self) -> usize {
        self.seeds.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.seeds.is_empty()
    }

    /// Each seed as its key and its one token's id, in seeding order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Key, u32)> + '_ {
        self.seeds
            .iter()
            .map(|s| (Key::from_words(s.lo, s.hi, s.len as usize), s.id))
    }
}

#[cfg(test)]
impl PieceSeeds {
    /// Checks every seed against the model's own encoding of its bytes (`encode`, no cache):
    /// one token, the seed's, over all of them. The number of seeds, or the first that differs.
    pub(crate) fn check(
        &self,
        mut encode: impl FnMut(&[u8]) -> Vec<crate::models::token::PieceToken>,
    ) -> Result<usize, String> {
        for (key, id) in self.iter() {
            let (buf, n) = key.bytes();
            let got = encode(&buf[..n]);
            if got.len() != 1 || got[0].id != id || got[0].len as usize != n {
                return Err(format!(
                    "seed {:?} (id {id}) encodes as {:?}",
                    String::from_utf8_lossy(&buf[..n]),
                    got
                ));
            }
        }
        Ok(self.len())
    }
}

/// The owners whose seeds a cache took most recently: an owner among them is not seeded again,
/// so that a thread that switches between a few tokenizers call after call (each switch leaves
/// the other's entries stale) pays for seeding only at the first claim of each. A tokenizer
/// loaded after [`SEEDED_OWNERS`] others takes the place of the oldest, and is seeded.
#[derive(Debug, Default)]
pub(crate) struct SeededOwners {
    owners: Vec<usize>,
    /// Where the next owner goes once `owners` is full.
    next: usize,
}

/// How many owners a cache remembers having seeded.
pub(crate) const SEEDED_OWNERS: usize = 16;

impl SeededOwners {
    /// Whether `owner` is to be seeded now (not among the remembered), remembering it.
    pub(crate) fn first_time(&mut self, owner: usize) -> bool {
        if self.owners.contains(&owner) {
            return false;
        }
        if self.owners.len() < SEEDED_OWNERS {
            self.owners.push(owner);
        } else {
            self.owners[self.next] = owner;
            self.next = (self.next + 1) % SEEDED_OWNERS;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_the_short_entries_that_encode_as_themselves_highest_id_first() {
        let vocab: Vec<&[u8]> = vec![
            b"a",
            b"",
            b"abc",
            b"0123456789abcdefg",
            b"0123456789abcdef",
            b"xy",
        ];
        // Id 5 ("xy") does not encode as itself.
        let seeds = PieceSeeds::new(vocab.len() as u32 + 2, |id| {
            (id != 5).then(|| vocab.get(id as usize).copied()).flatten()
        });
        let got: Vec<(Vec<u8>, u32)> = seeds
            .iter()
            .map(|(key, id)| {
                let (buf, n) = key.bytes();
                (buf[..n].to_vec(), id)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (b"0123456789abcdef".to_vec(), 4),
                (b"abc".to_vec(), 2),
                (b"a".to_vec(), 0)
            ]
        );
        assert_eq!(seeds.len(), 3);
        assert!(PieceSeeds::none().is_empty());
    }

    #[test]
    fn owners_are_seeded_once_while_remembered() {
        let mut owners = SeededOwners::default();
        assert!(owners.first_time(7));
        assert!(!owners.first_time(7));
        for o in 0..SEEDED_OWNERS - 1 {
            assert!(owners.first_time(100 + o));
        }
        assert!(!owners.first_time(7), "16 remembered");
        // A seventeenth takes the oldest's place: 7 is seeded again, once.
        assert!(owners.first_time(99));
        assert!(owners.first_time(7));
        assert!(!owners.first_time(7));
        assert!(!owners.first_time(99));
    }
}
