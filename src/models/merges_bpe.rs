//! BPE over a merges list, as Hugging Face `tokenizers`' `BPE` model applies it to one
//! pre-token: start from one symbol per character (here: per byte, for byte-level models, each
//! byte standing for its character of GPT-2's alphabet), then repeatedly apply the listed merge
//! of lowest rank among adjacent pairs, the leftmost first on ties (its `Word::merge_all`).
//! With `ignore_merges`, a pre-token that is itself in the vocabulary is that token.
//!
//! The ranks are the merges' positions in the list, not the ids of their results, so this is
//! not tiktoken's rule in general (see [`crate::models::byte_bpe`]); for files converted from
//! tiktoken the two agree.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::models::byte_bpe::PieceToken;
use crate::models::rank_queue::RankQueue;
use crate::models::token_table::TokenTable;

/// Hashes the packed (left, right) id pairs with one multiply: they are already well spread,
/// and SipHash would cost more than the rest of a lookup.
#[derive(Clone, Copy, Default, Debug)]
pub struct PairHash;

/// The hasher of [`PairHash`].
#[derive(Default)]
pub struct PairHasher(u64);

impl std::hash::BuildHasher for PairHash {
    type Hasher = PairHasher;
    fn build_hasher(&self) -> PairHasher {
        PairHasher(0)
    }
}

impl std::hash::Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// A merges-list BPE over bytes.
#[derive(Debug)]
pub struct MergesBpe {
    /// (left id, right id) → (rank, merged id).
    merges: HashMap<u64, (u32, u32), PairHash>,
    /// The id of each byte's symbol.
    byte_ids: [u32; 256],
    /// The id of every vocabulary entry, by its bytes.
    by_bytes: TokenTable,
    /// A piece in the vocabulary is that token, merges or not.
    ignore_merges: bool,
    /// The bytes of each id.
    tokens: Vec<Option<Box<[u8]>>>,
}

/// Buffers reused across pieces.
#[derive(Default, Debug)]
pub struct MergeScratch {
    /// The starting symbols' ids, for [`MergesBpe::merge_symbols`].
    pub ids: Vec<u32>,
    /// … and their lengths in bytes.
    pub lens: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    heap: Candidates,
}

/// Merge candidates `(rank, position, merged id)`, smallest first: a binary heap, or for long
/// sequences a [`RankQueue`], which pops in the same order at near O(1) per candidate. Both are
/// kept (with their allocations) between uses.
#[derive(Debug, Default)]
struct Candidates {
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
    ranks: RankQueue,
    long: bool,
}

/// Sequences of at least this many symbols queue their candidates in a [`RankQueue`].
const LONG: usize = 256;

impl Candidates {
    fn reset(&mut self, n: usize) {
        self.long = n >= LONG;
        if self.long {
            self.ranks.clear();
        } else {
            self.heap.clear();
        }
    }

    #[inline]
    fn push(&mut self, rank: u32, pos: u32, new: u32) {
        if self.long {
            self.ranks.push(rank, ((pos as u64) << 32) | new as u64);
        } else {
            self.heap.push(Reverse((rank, pos, new)));
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<(u32, u32, u32)> {
        if self.long {
            self.ranks
                .pop()
                .map(|(rank, rest)| (rank, (rest >> 32) as u32, rest as u32))
        } else {
            self.heap.pop().map(|Reverse(k)| k)
        }
    }
}

const NONE: u32 = u32::MAX;

#[inline]
fn key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

impl MergesBpe {
    /// The model of a vocabulary (token bytes and id, after undoing the byte-level alphabet)
    /// and a merges list (pairs of token bytes, in rank order). Merges whose parts or result are
    /// not in the vocabulary are an error, as in the reference.
    pub fn new(
        vocab: Vec<(Vec<u8>, u32)>,
        merges: Vec<(Vec<u8>, Vec<u8>)>,
        ignore_merges: bool,
    ) -> Result<MergesBpe, String> {
        let size = vocab
            .iter()
            .map(|&(_, id)| id as usize + 1)
            .max()
            .unwrap_or(0);
        let mut tokens: Vec<Option<Box<[u8]>>> = vec![None; size];
        let mut by_bytes: HashMap<Box<[u8]>, u32> = HashMap::with_capacity(vocab.len());
        for (bytes, id) in vocab {
            let bytes: Box<[u8]> = bytes.into_boxed_slice();
            by_bytes.insert(bytes.clone(), id);
            tokens[id as usize] = Some(bytes);
        }
        // Byte-level models have a token for every byte; others start from characters
        // ([`MergesBpe::merge_symbols`]) and never read this.
        let mut byte_ids = [NONE; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            if let Some(&id) = by_bytes.get(&[b as u8][..]) {
                *slot = id;
            }
        }
        let mut map = HashMap::with_capacity_and_hasher(merges.len(), PairHash);
        for (rank, (a, b)) in merges.into_iter().enumerate() {
            let id = |t: &[u8]| {
                by_bytes.get(t).copied().ok_or_else(|| {
                    format!(
                        "merge #{rank}: {:?} is not in the vocabulary",
                        String::from_utf8_lossy(t)
                    )
                })
            };
            let (ia, ib) = (id(&a)?, id(&b)?);
            let mut joined = a;
            joined.extend_from_slice(&b);
            let new = id(&joined)?;
            // A pair listed twice keeps its first (lowest) rank.
            map.entry(key(ia, ib)).or_insert((rank as u32, new));
        }
        Ok(MergesBpe {
            merges: map,
            byte_ids,
            by_bytes: TokenTable::new(by_bytes.iter().map(|(b, &id)| (&b[..], id))),
            ignore_merges,
            tokens,
        })
    }

    /// One past the largest id.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether every byte has a token (what byte-level models need).
    pub fn covers_every_byte(&self) -> bool {
        !self.byte_ids.contains(&NONE)
    }

    /// The id of the vocabulary entry that is exactly `bytes`.
    #[inline]
    pub fn bytes_id(&self, bytes: &[u8]) -> Option<u32> {
        self.by_bytes.get(bytes)
    }

    /// The bytes of `id`.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.tokens.get(id as usize)?.as_deref()
    }

    /// Appends the tokens of `piece` (non-empty) to `out`, one starting symbol per byte.
    pub fn encode_piece(
        &self,
        piece: &[u8],
        scratch: &mut MergeScratch,
        out: &mut Vec<PieceToken>,
    ) {
        if self.ignore_merges
            && let Some(id) = self.by_bytes.get(piece)
        {
            out.push(PieceToken {
                id,
                len: piece.len() as u32,
            });
            return;
        }
        scratch.ids.clear();
        scratch.lens.clear();
        scratch
            .ids
            .extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
        scratch.lens.resize(piece.len(), 1);
        self.merge_symbols(scratch, out);
    }

    /// Merges the starting symbols in `scratch.ids` (each `scratch.lens` bytes long) and appends
    /// the resulting tokens to `out`.
    pub fn merge_symbols(&self, scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        let MergeScratch {
            ids,
            lens,
            next,
            prev,
            heap,
        } = scratch;
        let n = ids.len();
        next.clear();
        prev.clear();
        heap.reset(n);
        next.extend(1..=n as u32);
        prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        for i in 0..n.saturating_sub(1) {
            if let Some(&(rank, new)) = self.merges.get(&key(ids[i], ids[i + 1])) {
                heap.push(rank, i as u32, new);
            }
        }
        while let Some((_, pos, new)) = heap.pop() {
            let p = pos as usize;
            if ids[p] == NONE {
                continue; // merged into its left neighbour
            }
            let right = next[p] as usize;
            if right >= n {
                continue;
            }
            // Expired: the pair at `pos` is not the one this entry was made for.
            match self.merges.get(&key(ids[p], ids[right])) {
                Some(&(_, id)) if id == new => {}
                _ => continue,
            }
            ids[p] = new;
            lens[p] += lens[right];
            ids[right] = NONE;
            let after = next[right];
            next[p] = after;
            if (after as usize) < n {
                prev[after as usize] = pos;
            }
            let before = prev[p];
            if before != u32::MAX
                && let Some(&(rank, id)) = self.merges.get(&key(ids[before as usize], new))
            {
                heap.push(rank, before, id);
            }
            if (after as usize) < n
                && let Some(&(rank, id)) = self.merges.get(&key(new, ids[after as usize]))
            {
                heap.push(rank, pos, id);
            }
        }
        let mut s = 0usize;
        while s < n {
            out.push(PieceToken {
                id: ids[s],
                len: lens[s],
            });
            s = next[s] as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_by_list_rank_not_by_id() {
        let mut vocab: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        vocab.push((b"ab".to_vec(), 256));
        vocab.push((b"bc".to_vec(), 257));
        vocab.push((b"abc".to_vec(), 258));
        // "bc" merges first although "ab" has the smaller id.
        let merges = vec![
            (b"b".to_vec(), b"c".to_vec()),
            (b"a".to_vec(), b"b".to_vec()),
            (b"ab".to_vec(), b"c".to_vec()),
        ];
        let bpe = MergesBpe::new(vocab, merges, false).unwrap();
        let mut out = Vec::new();
        bpe.encode_piece(b"abc", &mut MergeScratch::default(), &mut out);
        let ids: Vec<u32> = out.iter().map(|t| t.id).collect();
        assert_eq!(ids, vec![97, 257]);
        out.clear();
        bpe.encode_piece(b"abab", &mut MergeScratch::default(), &mut out);
        let ids: Vec<u32> = out.iter().map(|t| t.id).collect();
        assert_eq!(ids, vec![256, 256]);
    }
}
