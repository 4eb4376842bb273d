//! Byte-level BPE over a rank table, as tiktoken defines it: a piece that is a token is that
//! token; otherwise start from single bytes and repeatedly merge the adjacent pair whose
//! concatenation has the lowest rank (the leftmost of equal ranks) until no adjacent pair is a
//! token.
//!
//! Parts are always adjacent ranges of the piece, so a pair's concatenation is a slice of the
//! piece: ranks are looked up by slice (hashed with the CRC-32C kernel), nothing is copied —
//! or, when both parts are among the first 512 ids, read from a grid of their joins.
//! Short pieces — nearly all of them — use tiktoken's own loop (a linear scan for the minimum
//! over a small array); long ones a linked list of parts and a [`RankQueue`] of candidate
//! merges (a heap's order, but near O(1) per merge), with the same choice at every step: the
//! minimum (rank, start), starts being unique. A long non-ASCII piece (a CJK clause) is first cut
//! where no token can span ([`SafeCuts`]) and its segments merged one by one.

use std::collections::HashMap;

use simdtok_kernels::Kernels;

use crate::cache::pair_memo::PairMemo;
use crate::cache::segment as segment_cache;
use crate::models::dense_ids::check_dense_ids;
use crate::models::pair_cuts::PairCuts;
use crate::models::part_runs::{Run, merge_runs, push_runs, start_runs};
use crate::models::rank_queue::RankQueue;
use crate::models::safe_cuts::{CutBuffers, SafeCuts};
use crate::models::self_merges::SelfMerges;
pub use crate::models::token::PieceToken;
use crate::models::token_table::TokenTable;
use crate::models::valid_pairs::{LazyValidPairs, ValidPairs, ValidScratch};
use crate::models::vocab::Crc32cState;

/// Pieces up to this many bytes take tiktoken's quadratic loop, which is faster there.
const SHORT_PIECE: usize = 64;
/// Pieces longer than this with two non-ASCII characters in a row are cut at their safe cuts
/// ([`SafeCuts`]) before merging.
const CUT_ABOVE: usize = 16;
const NONE: u32 = u32::MAX;
/// Ids below this (the bytes and the first merges: ` t`, `in`, ` the`, …) have the ranks of
/// their concatenations in a grid ([`ByteBpe::joined_rank`]).
const GRID_IDS: usize = 512;

/// A rank table and its encoder.
#[derive(Debug)]
pub struct ByteBpe {
    ranks: TokenTable,
    /// The rank of each single byte, and of each two-byte string (`NONE` when not a token):
    /// the first round of lookups of every merge, without hashing.
    byte_ranks: [u32; 256],
    pair_ranks: Box<[u32]>,
    /// `grid[a * GRID_IDS + b]`: the rank of token `a`'s bytes then token `b`'s (`NONE` when
    /// not a token), for ids below [`GRID_IDS`]. On English, three quarters of the lookups
    /// after a merge that find a token join two such parts; the grid answers them from one
    /// small table instead of a line of the token table each.
    grid: Box<[u32]>,
    /// The bytes of each id (`None` for ids no token has).
    tokens: Vec<Option<Box<[u8]>>>,
    /// Per id, whether merging its bytes makes it (for segments of cut pieces).
    self_merges: SelfMerges,
    /// Where long pieces can be cut (its tries built on first use).
    cuts: SafeCuts,
    /// Where any piece can be cut at a glance: between bytes no token holds side by side.
    pair_cuts: PairCuts,
    /// The length of the longest token.
    longest_token: usize,
    /// Encoding by compatible pairs, without merging, built the first time a piece wants it
    /// (`None`: no trie could be built).
    valid: LazyValidPairs,
    /// This model's results in a thread's [`SegmentCache`].
    model_id: usize,
    kernels: &'static Kernels,
}

/// Buffers reused across pieces.
#[derive(Default, Debug)]
pub struct BpeScratch {
    parts: Vec<(u32, u32, u32)>,
    next: Vec<u32>,
    prev: Vec<u32>,
    rank: Vec<u32>,
    queue: RankQueue,
    cut: CutBuffers,
    /// The rank of each run length of the repeated byte, for [`ByteBpe::merge_long`].
    run_ranks: Vec<u32>,
    runs: Vec<Run>,
    /// The pairs of tokens this thread joined, and the joins' ranks ([`PairMemo`]).
    memo: PairMemo,
    valid: ValidScratch,
}

impl BpeScratch {
    /// Sizes its caches for the cache budget in force ([`CutBuffers::fit_budget`]).
    #[inline]
    pub fn fit_budget(&mut self) {
        self.cut.fit_budget();
        self.memo.fit(crate::cache::budget::in_force());
        self.valid.fit_budget();
    }
}

impl ByteBpe {
    /// The table of `(token bytes, rank)` pairs. Every single byte must be a token (else some
    /// text could not be encoded); a token listed twice is an error.
    pub fn new(pairs: Vec<(Vec<u8>, u32)>, kernels: &'static Kernels) -> Result<ByteBpe, String> {
        check_dense_ids(pairs.iter().map(|&(_, r)| r), pairs.len(), "rank")?;
        let size = pairs
            .iter()
            .map(|&(_, r)| r as usize + 1)
            .max()
            .unwrap_or(0);
        let mut tokens: Vec<Option<Box<[u8]>>> = vec![None; size];
        let cuts = SafeCuts::new(pairs.iter().map(|(b, r)| (*r, &b[..])));
        let pair_cuts = PairCuts::new(pairs.iter().map(|(b, _)| &b[..]));
        let mut ranks = HashMap::with_capacity_and_hasher(pairs.len(), Crc32cState::new(kernels));
        for (bytes, rank) in pairs {
            if bytes.is_empty() {
                return Err(format!("rank {rank} has an empty token"));
            }
            let bytes: Box<[u8]> = bytes.into_boxed_slice();
            if ranks.insert(bytes.clone(), rank).is_some() {
                return Err(format!(
                    "token {:?} is listed twice",
                    String::from_utf8_lossy(&bytes)
                ));
            }
            if tokens[rank as usize].replace(bytes).is_some() {
                return Err(format!("rank {rank} is given to two tokens"));
            }
        }
        if let Some(b) = (0..=255u8).find(|&b| !ranks.contains_key(&[b][..])) {
            return Err(format!(
                "byte 0x{b:02X} has no token, so some texts cannot be encoded"
            ));
        }
        let byte_ranks = std::array::from_fn(|b| ranks[&[b as u8][..]]);
        let mut pair_ranks = vec![NONE; 1 << 16].into_boxed_slice();
        for (b, &r) in ranks.iter().filter(|(b, _)| b.len() == 2) {
            pair_ranks[(b[0] as usize) << 8 | b[1] as usize] = r;
        }
        let ranks = TokenTable::new(ranks.iter().map(|(b, &r)| (&b[..], r)));
        let longest_token = tokens.iter().flatten().map(|t| t.len()).max().unwrap_or(0);
        let grid = Self::grid(&ranks, &tokens, &pair_cuts, longest_token);
        Ok(ByteBpe {
            valid: LazyValidPairs::default(),
            ranks,
            byte_ranks,
            pair_ranks,
            grid,
            self_merges: SelfMerges::new(tokens.len()),
            tokens,
            cuts,
            pair_cuts,
            longest_token,
            model_id: segment_cache::new_model_id(),
            kernels,
        })
    }

    /// The [`ByteBpe::grid`] of the ids below [`GRID_IDS`].
    /// Joins whose bytes meet at a pair no token holds, or longer than any token, are not
    /// tokens and are not looked up (most of them: cl100k's build took half the time).
    fn grid(
        ranks: &TokenTable,
        tokens: &[Option<Box<[u8]>>],
        pair_cuts: &PairCuts,
        longest_token: usize,
    ) -> Box<[u32]> {
        let mut grid = vec![NONE; GRID_IDS * GRID_IDS].into_boxed_slice();
        let low = &tokens[..tokens.len().min(GRID_IDS)];
        let mut joined = Vec::new();
        for (a, x) in low.iter().enumerate() {
            let Some(x) = x else { continue };
            let last = x[x.len() - 1];
            for (b, y) in low.iter().enumerate() {
                let Some(y) = y else { continue };
                if !pair_cuts.joined(last, y[0]) || x.len() + y.len() > longest_token {
                    continue;
                }
                joined.clear();
                joined.extend_from_slice(x);
                joined.extend_from_slice(y);
                grid[a * GRID_IDS + b] = ranks.get(&joined).unwrap_or(NONE);
            }
        }
        grid
    }

    /// The rank of the bytes `joined`, which are token `a`'s then token `b`'s (so a function
    /// of the two ids: the thread's memo answers it when it can).
    #[inline(always)]
    fn joined_rank(&self, memo: &mut PairMemo, a: u32, b: u32, joined: &[u8]) -> u32 {
        if ((a | b) as usize) < GRID_IDS {
            self.grid[a as usize * GRID_IDS + b as usize]
        } else {
            memo.claim(self.model_id);
            memo.get(a, b, |_, _| {
                let rank = self.rank_or_none(joined);
                (rank, rank)
            })
            .0
        }
    }

    /// One past the largest id.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the table is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The bytes of `id`.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.tokens.get(id as usize)?.as_deref()
    }

    /// The bytes of `id` when [`ByteBpe::encode_piece`] of them gives `id` alone: for every
    /// token (tiktoken's whole-piece rule, the first thing `encode_piece` asks).
    pub fn encodes_as_itself(&self, id: u32) -> Option<&[u8]> {
        let bytes = self.token_bytes(id)?;
        (self.pair_cuts.could_be_token(bytes) && self.rank(bytes) == Some(id)).then_some(bytes)
    }

    /// The rank of exactly `bytes`.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.ranks.get(bytes)
    }

    /// Appends the tokens of `piece` (non-empty) to `out`.
    #[inline]
    pub fn encode_piece(&self, piece: &[u8], scratch: &mut BpeScratch, out: &mut Vec<PieceToken>) {
        if let Some(id) = self
            .pair_cuts
            .could_be_token(piece)
            .then(|| self.rank(piece))
            .flatten()
        {
            out.push(PieceToken {
                id,
                len: piece.len() as u32,
            });
        } else if let Some(build_now) = ValidPairs::serves(piece)
            && self.encode_valid(piece, build_now, scratch, out)
        {
            // Found as compatible pairs.
        } else if piece.len() <= CUT_ABOVE {
            self.merge(piece, scratch, out);
        } else if self.merge_clusters(piece, true, scratch, out) {
            // Merged cluster by cluster.
        } else if !SafeCuts::cuts_pay(piece, SHORT_PIECE)
            || (piece.len() <= SHORT_PIECE
                && SafeCuts::few_pairs_merge(piece, |a, b| {
                    self.pair_ranks[(a as usize) << 8 | b as usize] != NONE
                }))
        {
            self.merge(piece, scratch, out);
        } else {
            self.merge_cut(piece, scratch, out);
        }
    }

    /// [`ValidPairs::encode`] of `piece`, when the model has them (built now if `build_now`,
    /// else only if some piece built them before).
    #[inline]
    fn encode_valid(
        &self,
        piece: &[u8],
        build_now: bool,
        scratch: &mut BpeScratch,
        out: &mut Vec<PieceToken>,
    ) -> bool {
        let build = || {
            ValidPairs::new(
                &self.tokens,
                ValidPairs::in_scope,
                |b| self.rank(b),
                |_, _, joined| self.rank_or_none(joined),
                |_, _, t| t,
            )
        };
        self.valid.encode(
            build_now,
            build,
            self.kernels,
            piece,
            &mut scratch.valid,
            out,
            |x, y| self.pair_cuts.joined(x, y),
        )
    }

    /// The merges of a piece cut between the bytes no token holds side by side
    /// ([`PairCuts`]): each cluster alone, one- and two-byte ones from the flat tables, longer
    /// ones through the segment cache. With `only_sparse`, only a sparse piece; `false` (and
    /// nothing merged) for another.
    fn merge_clusters(
        &self,
        piece: &[u8],
        only_sparse: bool,
        scratch: &mut BpeScratch,
        out: &mut Vec<PieceToken>,
    ) -> bool {
        let mut cut = std::mem::take(&mut scratch.cut);
        let merged = cut.clusters(&self.pair_cuts, piece, only_sparse, |s, e, cut| {
            self.merge_cluster(piece, (s, e), cut, scratch, out)
        });
        scratch.cut = cut;
        merged
    }

    /// The tokens of the cluster `piece[s..e]`.
    #[inline(always)]
    fn merge_cluster(
        &self,
        piece: &[u8],
        (s, e): (usize, usize),
        buffers: &mut CutBuffers,
        scratch: &mut BpeScratch,
        out: &mut Vec<PieceToken>,
    ) {
        match e - s {
            1 => out.push(PieceToken {
                id: self.byte_ranks[piece[s] as usize],
                len: 1,
            }),
            2 => match self.pair_ranks[(piece[s] as usize) << 8 | piece[s + 1] as usize] {
                NONE => {
                    for &b in &piece[s..e] {
                        out.push(PieceToken {
                            id: self.byte_ranks[b as usize],
                            len: 1,
                        });
                    }
                }
                id => out.push(PieceToken { id, len: 2 }),
            },
            3 => self.merge_three([piece[s], piece[s + 1], piece[s + 2]], out),
            _ => buffers.cached_segment(self.model_id, &piece[s..e], out, |out| {
                self.merge(&piece[s..e], scratch, out)
            }),
        }
    }

    /// [`ByteBpe::merge`] of three bytes without its buffers (random text's clusters are
    /// mostly of one or three bytes): the pair of lower rank merges first (the left one of
    /// equal ranks), then the whole, if it is a token.
    #[inline]
    fn merge_three(&self, [a, b, c]: [u8; 3], out: &mut Vec<PieceToken>) {
        let byte = |x: u8| PieceToken {
            id: self.byte_ranks[x as usize],
            len: 1,
        };
        let left = self.pair_ranks[(a as usize) << 8 | b as usize];
        let right = self.pair_ranks[(b as usize) << 8 | c as usize];
        if left == NONE && right == NONE {
            return out.extend([byte(a), byte(b), byte(c)]);
        }
        if let Some(id) = self.rank(&[a, b, c]) {
            return out.push(PieceToken { id, len: 3 });
        }
        if left <= right {
            out.extend([PieceToken { id: left, len: 2 }, byte(c)]);
        } else {
            out.extend([byte(a), PieceToken { id: right, len: 2 }]);
        }
    }

    /// The merges of a piece that is not a token, segment by segment between its safe cuts.
    fn merge_cut(&self, piece: &[u8], scratch: &mut BpeScratch, out: &mut Vec<PieceToken>) {
        let mut buffers = std::mem::take(&mut scratch.cut);
        self.cuts.merge_segments(
            self.kernels,
            piece,
            &mut buffers,
            self.model_id,
            scratch,
            out,
            |id| self.token_bytes(id).unwrap_or_default(),
            |b| self.rank(b),
            &self.self_merges,
            |b, scratch, out| self.merge(b, scratch, out),
        );
        scratch.cut = buffers;
    }

    /// The merges of `piece` from its bytes, without the whole-piece rule.
    fn merge(&self, piece: &[u8], scratch: &mut BpeScratch, out: &mut Vec<PieceToken>) {
        if piece.len() <= SHORT_PIECE {
            self.merge_short(piece, scratch, out);
        } else {
            self.merge_long(piece, scratch, out);
        }
    }

    fn rank_or_none(&self, bytes: &[u8]) -> u32 {
        self.rank(bytes).unwrap_or(NONE)
    }

    /// tiktoken's `_byte_pair_merge`: `parts[i] = (start, rank of merging part i with i + 1)`.
    fn merge_short(&self, piece: &[u8], scratch: &mut BpeScratch, out: &mut Vec<PieceToken>) {
        // parts[i] = (start, rank of merging part i with part i + 1, the part's own id): the
        // id of a merged part is the rank that merged it (a rank is an id).
        let BpeScratch { parts, memo, .. } = scratch;
        parts.clear();
        for w in piece.windows(2) {
            let start = parts.len() as u32;
            let pair = self.pair_ranks[(w[0] as usize) << 8 | w[1] as usize];
            parts.push((start, pair, self.byte_ranks[w[0] as usize]));
        }
        let last = piece.len() - 1;
        parts.push((last as u32, NONE, self.byte_ranks[piece[last] as usize]));
        parts.push((piece.len() as u32, NONE, NONE));
        // The rank of merging part i (token a) with part i + 1 (token b) once it has absorbed
        // part i + 2: the bytes from part i to part i + 3.
        let mut joined = |parts: &[(u32, u32, u32)], i: usize, a: u32, b: u32| {
            if i + 3 < parts.len() {
                let bytes = &piece[parts[i].0 as usize..parts[i + 3].0 as usize];
                self.joined_rank(memo, a, b, bytes)
            } else {
                NONE
            }
        };
        loop {
            let mut min = (NONE, 0usize);
            for (i, &(_, r, _)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < min.0 {
                    min = (r, i);
                }
            }
            if min.0 == NONE {
                break;
            }
            let (merged, i) = min;
            if i > 0 {
                parts[i - 1].1 = joined(parts, i - 1, parts[i - 1].2, merged);
            }
            // Part i + 2 becomes part i + 1 once i + 1 is removed.
            let after = parts.get(i + 2).map_or(NONE, |p| p.2);
            parts[i].1 = joined(parts, i, merged, after);
            parts[i].2 = merged;
            parts.remove(i + 1);
        }
        for w in parts.windows(2) {
            out.push(PieceToken {
                id: w[0].2,
                len: w[1].0 - w[0].0,
            });
        }
    }

    /// The same merges: as runs of equal parts when the piece is a few runs of one byte each,
    /// otherwise with a queue of (rank, start) over a linked list of parts.
    fn merge_long(&self, piece: &[u8], scratch: &mut BpeScratch, out: &mut Vec<PieceToken>) {
        if self.merge_few_runs(piece, scratch, out) {
            return;
        }
        let first = piece[0];
        if !piece.iter().all(|&b| b == first) {
            let rank = |s: usize, e: usize| self.rank_or_none(&piece[s..e]);
            let mut queue = std::mem::take(&mut scratch.queue);
            queue.clear();
            self.merge_linked(piece.len(), scratch, &mut queue, out, rank, rank);
            scratch.queue = queue;
            return;
        }
        // One byte repeated, under a made-up rank order that fragments the runs: every part is
        // that byte repeated, so a part's rank depends on its length alone — a table, not a
        // hash. The queue is keyed by the rank's place among the run's token ranks (the same
        // order): a few small ranks, so its buckets stay in cache.
        let longest = self.longest_token.min(piece.len());
        let mut ranks = std::mem::take(&mut scratch.run_ranks);
        ranks.clear();
        ranks.push(NONE);
        ranks.extend((1..=longest).map(|k| self.rank_or_none(&piece[..k])));
        let mut sorted: Vec<u32> = ranks.iter().copied().filter(|&r| r != NONE).collect();
        sorted.sort_unstable();
        let order: Vec<u32> = ranks
            .iter()
            .map(|r| match sorted.binary_search(r) {
                Ok(i) => i as u32,
                Err(_) => NONE,
            })
            .collect();
        let key = |s: usize, e: usize| order.get(e - s).copied().unwrap_or(NONE);
        let id = |s: usize, e: usize| ranks.get(e - s).copied().unwrap_or(NONE);
        let mut queue = std::mem::take(&mut scratch.queue);
        queue.clear();
        self.merge_linked(piece.len(), scratch, &mut queue, out, key, id);
        scratch.queue = queue;
        scratch.run_ranks = ranks;
    }

    /// When `piece` is a few runs of one byte each (a line of `=`, a run of spaces after a
    /// letter), merges it as runs of equal parts ([`merge_runs`]) and returns `true`; `false`
    /// when it is not, or when that gives up.
    fn merge_few_runs(
        &self,
        piece: &[u8],
        scratch: &mut BpeScratch,
        out: &mut Vec<PieceToken>,
    ) -> bool {
        let runs = &mut scratch.runs;
        let bytes = piece.iter().map(|&b| (self.byte_ranks[b as usize], 1));
        // tiktoken's rule: the rank of the two parts' bytes, one after the other.
        let concatenated = |a: &Run, b: &Run| {
            let len = (a.len + b.len) as usize;
            if len > self.longest_token {
                return (NONE, NONE);
            }
            let (x, y) = (
                self.token_bytes(a.id).unwrap_or_default(),
                self.token_bytes(b.id).unwrap_or_default(),
            );
            let mut buf = [0u8; 256];
            let r = if len <= buf.len() {
                buf[..x.len()].copy_from_slice(x);
                buf[x.len()..len].copy_from_slice(y);
                self.rank_or_none(&buf[..len])
            } else {
                self.rank_or_none(&[x, y].concat())
            };
            (r, r)
        };
        if !start_runs(bytes, runs) || !merge_runs(runs, concatenated) {
            return false;
        }
        push_runs(runs, out);
        true
    }

    /// The merges of a piece of `n` bytes over a linked list of parts and `queue` (empty): the
    /// byte range `[s, e)` is merged by the order of `rank_of(s, e)` (`NONE` when it is not a
    /// token; any order-preserving map of the ranks) and is token `id_of(s, e)`.
    fn merge_linked(
        &self,
        n: usize,
        scratch: &mut BpeScratch,
        queue: &mut RankQueue,
        out: &mut Vec<PieceToken>,
        rank_of: impl Fn(usize, usize) -> u32,
        id_of: impl Fn(usize, usize) -> u32,
    ) {
        let BpeScratch {
            next, prev, rank, ..
        } = scratch;
        next.clear();
        prev.clear();
        rank.clear();
        // Part starting at byte i (while alive): next[i] is the start of the next part (n for
        // none), rank[i] the rank of merging it with that part.
        next.extend(1..=n as u32);
        prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        for i in 0..n {
            let r = if i + 1 < n { rank_of(i, i + 2) } else { NONE };
            rank.push(r);
            if r != NONE {
                queue.push(r, i as u64);
            }
        }
        // A removed part gets this in `rank`.
        const DEAD: u32 = NONE - 1;
        let pair_rank = |next: &[u32], start: u32| -> u32 {
            let mid = next[start as usize];
            if mid as usize >= n {
                return NONE;
            }
            rank_of(start as usize, next[mid as usize] as usize)
        };
        while let Some((r, start)) = queue.pop() {
            let start = start as u32;
            let s = start as usize;
            if rank[s] != r {
                continue; // stale: the part is gone or its pair changed
            }
            // Merge part `start` with the next one.
            let mid = next[s] as usize;
            let after = next[mid];
            next[s] = after;
            if (after as usize) < n {
                prev[after as usize] = start;
            }
            rank[mid] = DEAD;
            let new = pair_rank(next, start);
            rank[s] = new;
            if new != NONE {
                queue.push(new, start as u64);
            }
            let p = prev[s];
            if p != u32::MAX {
                let pr = pair_rank(next, p);
                rank[p as usize] = pr;
                if pr != NONE {
                    queue.push(pr, p as u64);
                }
            }
        }
        let mut s = 0usize;
        while s < n {
            let e = next[s] as usize;
            out.push(PieceToken {
                id: id_of(s, e),
                len: (e - s) as u32,
            });
            s = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_text::TestText;

    fn table(extra: &[&[u8]]) -> ByteBpe {
        let mut pairs: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (i, t) in extra.iter().enumerate() {
            pairs.push((t.to_vec(), 256 + i as u32));
        }
        ByteBpe::new(pairs, Kernels::scalar()).unwrap()
    }

    fn both(bpe: &ByteBpe, piece: &[u8]) -> Vec<PieceToken> {
        let mut scratch = BpeScratch::default();
        let (mut short, mut long) = (Vec::new(), Vec::new());
        bpe.merge_short(piece, &mut scratch, &mut short);
        bpe.merge_long(piece, &mut scratch, &mut long);
        assert_eq!(short, long, "{:?}", String::from_utf8_lossy(piece));
        short
    }

    #[test]
    fn lowest_rank_first_leftmost_on_ties() {
        let bpe = table(&[b"ab", b"bc", b"abc", b"aa", b"aaaa"]);
        let ids = |t: &[PieceToken]| t.iter().map(|t| t.id).collect::<Vec<_>>();
        assert_eq!(ids(&both(&bpe, b"abc")), vec![258]);
        assert_eq!(ids(&both(&bpe, b"aaa")), vec![259, 97]);
        assert_eq!(ids(&both(&bpe, b"aaaaa")), vec![260, 97]);
        assert_eq!(ids(&both(&bpe, b"xbc")), vec![120, 257]);
    }

    #[test]
    fn punctuation_pieces_found_as_pairs_once_built_are_their_merges() {
        // Runs of dashes, and the joins of a table's border, ranked shorter first (every one
        // monotone, so the pairs find most pieces), and a CJK word to build the pairs.
        let mut extra: Vec<Vec<u8>> = (2..=9).map(|n| vec![b'-'; n]).collect();
        for t in [
            "-+", "+-", " |", "|-", "-|", "-+-", "  ", "--+", "+--", "++",
        ] {
            extra.push(t.as_bytes().to_vec());
        }
        for t in [
            &[0xE6, 0x97][..],
            "日".as_bytes(),
            &[0xE6, 0x9C],
            "本".as_bytes(),
        ] {
            extra.push(t.to_vec());
        }
        extra.push("日本".as_bytes().to_vec());
        let refs: Vec<&[u8]> = extra.iter().map(|t| &t[..]).collect();
        let bpe = table(&refs);
        let mut scratch = BpeScratch::default();
        let border = b" |---------+--------+-----+";
        let mut out = Vec::new();
        assert!(ValidPairs::pays_once_built(border));
        assert!(!bpe.encode_valid(border, false, &mut scratch, &mut out));
        assert!(out.is_empty(), "nothing built, nothing appended");
        bpe.encode_piece("日本日本".as_bytes(), &mut scratch, &mut out);
        assert_eq!(out.len(), 2);
        let mut g = TestText::new(0x5EED_0A5C);
        let mut found = 0;
        for len in 17..120 {
            for _ in 0..10 {
                let piece: Vec<u8> = (0..len).map(|_| b"-----+| "[g.below(8) as usize]).collect();
                assert!(ValidPairs::pays_once_built(&piece));
                let want = both(&bpe, &piece);
                let mut got = Vec::new();
                if bpe.encode_valid(&piece, false, &mut scratch, &mut got) {
                    found += 1;
                    assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
                }
                let mut whole = Vec::new();
                bpe.encode_piece(&piece, &mut scratch, &mut whole);
                assert_eq!(whole, want, "{:?}", String::from_utf8_lossy(&piece));
            }
        }
        assert!(found > 900, "{found} of 1030 found as pairs");
    }

    #[test]
    fn heap_matches_scan_on_generated_pieces() {
        let bpe = table(&[
            b"ab", b"ba", b"aa", b"abab", b"aab", b"bb", b"bab", b"aaaa", b"abba",
        ]);
        let mut g = TestText::new(12345);
        for len in 2..200 {
            for _ in 0..20 {
                both(&bpe, &g.ab(len));
            }
        }
    }

    #[test]
    fn grid_and_token_table_give_the_same_merges() {
        // Vocabularies of 300 to 700 merged tokens: some merges join ids below GRID_IDS (the
        // grid answers), some above (the token table does), some one of each. merge_short
        // reads the grid, merge_long never does.
        let mut g = TestText::new(0x6A09_E667);
        for size in [300, 500, 700] {
            let bpe = substrings_table(&mut g, size, 3, |g, left| g.below(left.min(4)));
            assert!(bpe.len() > GRID_IDS || size < GRID_IDS);
            let mut scratch = BpeScratch::default();
            for _ in 0..2000 {
                let chars = 1 + g.below(20) as usize;
                let piece = g.mixed(chars);
                let (mut short, mut long) = (Vec::new(), Vec::new());
                bpe.merge_short(&piece, &mut scratch, &mut short);
                bpe.merge_long(&piece, &mut scratch, &mut long);
                assert_eq!(short, long, "{:?}", String::from_utf8_lossy(&piece));
            }
            // The grid's ids, and some above it (answered by the memo the second time).
            let ids: Vec<u32> = (0..GRID_IDS.min(bpe.len()) as u32)
                .chain((GRID_IDS as u32..bpe.len() as u32).step_by(7).take(64))
                .collect();
            let mut memo = PairMemo::default();
            for _ in 0..2 {
                for &a in &ids {
                    for &b in &ids {
                        let (Some(x), Some(y)) = (bpe.token_bytes(a), bpe.token_bytes(b)) else {
                            continue;
                        };
                        let joined = [x, y].concat();
                        let rank = bpe.joined_rank(&mut memo, a, b, &joined);
                        assert_eq!(rank, bpe.rank_or_none(&joined));
                    }
                }
            }
        }
    }

    /// The table of up to `n` distinct random substrings (whole characters, and byte ranges
    /// that start or end inside one) of random texts of `chars` characters: each starts
    /// somewhere and is 2 more bytes than `longer(bytes left after its start)` long.
    fn substrings_table(
        g: &mut TestText,
        n: usize,
        chars: usize,
        longer: impl Fn(&mut TestText, u32) -> u32,
    ) -> ByteBpe {
        let mut extra: Vec<Vec<u8>> = Vec::new();
        for _ in 0..n {
            let text = g.mixed(chars);
            let s = g.below(text.len() as u32) as usize;
            let e = s + 2 + longer(g, (text.len() - s) as u32) as usize;
            let token = text[s..e.min(text.len())].to_vec();
            if token.len() >= 2 && !extra.contains(&token) {
                extra.push(token);
            }
        }
        let extra: Vec<&[u8]> = extra.iter().map(|t| &t[..]).collect();
        table(&extra)
    }

    /// Asserts that `cut_merge` gives `piece` the tokens of the merge of the whole piece.
    fn merges_as_whole(
        bpe: &ByteBpe,
        piece: &[u8],
        scratch: &mut BpeScratch,
        cut_merge: fn(&ByteBpe, &[u8], &mut BpeScratch, &mut Vec<PieceToken>),
    ) {
        let (mut cut, mut whole) = (Vec::new(), Vec::new());
        cut_merge(bpe, piece, scratch, &mut cut);
        bpe.merge(piece, scratch, &mut whole);
        assert_eq!(cut, whole, "{:?}", String::from_utf8_lossy(piece));
    }

    #[test]
    fn cut_pieces_merge_as_whole_ones() {
        // Tokens spanning characters block cuts, the rest not.
        let mut g = TestText::new(0x2545_F491);
        for _ in 0..30 {
            let bpe = substrings_table(&mut g, 60, 4, |g, left| g.below(left));
            let mut scratch = BpeScratch::default();
            for _ in 0..200 {
                let chars = 6 + g.below(40) as usize;
                let piece = g.mixed(chars);
                merges_as_whole(&bpe, &piece, &mut scratch, ByteBpe::merge_cut);
            }
        }
    }

    #[test]
    fn clustered_pieces_merge_as_whole_ones() {
        // Random substrings of random texts as tokens (cutting characters anywhere), pieces of
        // the same alphabet: clusters of every length, ranks out of position order.
        let mut g = TestText::new(0x6A09_E667);
        for _ in 0..30 {
            let bpe = substrings_table(&mut g, 40, 3, |g, _| g.below(6));
            let mut scratch = BpeScratch::default();
            let mut clustered = 0;
            for _ in 0..300 {
                let chars = 1 + g.below(60) as usize;
                let piece = g.mixed(chars);
                let mut ends = Vec::new();
                bpe.pair_cuts.cluster_ends(&piece, &mut ends);
                let (mut cut, mut whole) = (Vec::new(), Vec::new());
                bpe.merge_clusters(&piece, false, &mut scratch, &mut cut);
                bpe.merge(&piece, &mut scratch, &mut whole);
                assert_eq!(cut, whole, "{:?}", String::from_utf8_lossy(&piece));
                clustered += (ends.len() > 1) as usize;
            }
            assert!(clustered > 100, "{clustered}");
        }
    }

    #[test]
    fn runs_of_one_byte_match_the_general_merge() {
        // Run lengths whose ranks are out of length order (4 before 3, 7 before 5, …).
        let mut extra: Vec<Vec<u8>> = [2, 4, 8, 3, 7, 16, 5, 11, 6, 32, 9]
            .iter()
            .map(|&k| vec![b' '; k])
            .collect();
        extra.extend(
            [
                &b"aa"[..],
                b"aaaa",
                b"aaa",
                b"xa",
                b"x ",
                b"a ",
                b"  a",
                b"xaa",
            ]
            .iter()
            .map(|t| t.to_vec()),
        );
        let extra: Vec<&[u8]> = extra.iter().map(|t| &t[..]).collect();
        let bpe = table(&extra);
        let mut scratch = BpeScratch::default();
        for byte in [b' ', b'a', b'b'] {
            // One byte repeated, and a few runs: behind `x`, before `a`.
            let pieces = (1..400).flat_map(|n| {
                let run = vec![byte; n];
                [
                    run.clone(),
                    [b"x", &run[..]].concat(),
                    [&run[..], b"a"].concat(),
                ]
            });
            for piece in pieces {
                let n = piece.len();
                let mut run = Vec::new();
                bpe.merge_long(&piece, &mut scratch, &mut run);
                let rank = |s: usize, e: usize| bpe.rank_or_none(&piece[s..e]);
                let (mut general, mut queue) = (Vec::new(), RankQueue::default());
                bpe.merge_linked(n, &mut scratch, &mut queue, &mut general, rank, rank);
                assert_eq!(run, general, "{:?}", String::from_utf8_lossy(&piece));
                if n <= SHORT_PIECE {
                    let mut short = Vec::new();
                    bpe.merge_short(&piece, &mut scratch, &mut short);
                    assert_eq!(run, short, "{:?}", String::from_utf8_lossy(&piece));
                }
            }
        }
    }
}
