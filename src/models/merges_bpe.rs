//! BPE over a merges list, as Hugging Face `tokenizers`' `BPE` model applies it to one
//! pre-token: start from one symbol per character (here: per byte, for byte-level models, each
//! byte standing for its character of GPT-2's alphabet), then repeatedly apply the listed merge
//! of lowest rank among adjacent pairs, the leftmost first on ties (its `Word::merge_all`).
//! With `ignore_merges`, a pre-token that is itself in the vocabulary is that token.
//!
//! The ranks are the merges' positions in the list, not the ids of their results, so this is
//! not tiktoken's rule in general (see [`crate::models::byte_bpe`]); for files converted from
//! tiktoken the two agree.

use simdtok_kernels::Kernels;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::cache::pair_memo::PairMemo;
use crate::cache::segment as segment_cache;
use crate::models::dense_ids::check_dense_ids;
use crate::models::pair_cuts::PairCuts;
use crate::models::part_runs::{Run, merge_runs, push_runs, start_runs};
use crate::models::rank_queue::RankQueue;
use crate::models::safe_cuts::{CutBuffers, SafeCuts};
use crate::models::self_merges::SelfMerges;
use crate::models::token::PieceToken;
use crate::models::token_table::TokenTable;
use crate::models::valid_pairs::{LazyValidPairs, ValidPairs, ValidScratch};

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

/// Whether byte `b` can occur in UTF-8 text (every byte but `C0`, `C1` and `F5`–`FF`).
fn in_utf8(b: u8) -> bool {
    !matches!(b, 0xC0 | 0xC1 | 0xF5..=0xFF)
}

/// A merges-list BPE over bytes.
#[derive(Debug)]
pub struct MergesBpe {
    /// (left id, right id) → (rank, merged id).
    merges: HashMap<u64, (u32, u32), PairHash>,
    /// One bit per id that is the left part of some merge…
    lefts: Box<[u64]>,
    /// … and the right part of some merge: a pair of ids without both bits is not looked up
    /// (SentencePiece-style models' byte-fallback tokens never merge: in random text nearly
    /// every symbol is one).
    rights: Box<[u64]>,
    /// The id of each byte's symbol.
    byte_ids: [u32; 256],
    /// Whether some byte that UTF-8 text can hold has no token (Falcon's, StarCoder's
    /// vocabularies): pieces holding one are encoded as the reference does it
    /// ([`MergesBpe::encode_with_gaps`]).
    gaps: bool,
    /// The listed merge of each pair of single-byte symbols, `(rank, merged id)` by
    /// `first << 8 | second` (`(NONE, NONE)` when not listed): the first round of a byte-level
    /// piece's pairs without hashing.
    byte_pairs: Box<[(u32, u32)]>,
    /// The listed merge of each pair of ids below [`GRID_IDS`], `(rank, merged id)` by
    /// `left * GRID_IDS + right` (`(NONE, NONE)` when not listed): most merges that find a
    /// pair join two such ids (the bytes and the first merges), answered from one table
    /// instead of a probe of the merges map.
    grid: Box<[(u32, u32)]>,
    /// The id of every vocabulary entry, by its bytes.
    by_bytes: TokenTable,
    /// A piece in the vocabulary is that token, merges or not.
    ignore_merges: bool,
    /// The bytes of each id.
    tokens: Vec<Option<Box<[u8]>>>,
    /// Per id, whether its bytes merge back into exactly that token.
    self_merges: SelfMerges,
    /// Where long pieces can be cut (its tries built on first use).
    cuts: SafeCuts,
    /// Where any piece can be cut at a glance: between bytes no token holds side by side.
    pair_cuts: PairCuts,
    /// Encoding by compatible pairs, without merging, built the first time a piece wants it
    /// (`None`: no trie could be built; never asked with affixes).
    valid: LazyValidPairs,
    /// This model's results in a thread's [`SegmentCache`].
    model_id: usize,
    /// The starting symbols of a model with a `continuing_subword_prefix` or an
    /// `end_of_word_suffix` (`None` without).
    affixed: Option<Box<AffixedSymbols>>,
    kernels: &'static Kernels,
}

/// What the reference puts around a word's characters before merging: the prefix before every
/// character but the first, the suffix after the last (empty: none).
#[derive(Debug, Default, Clone)]
pub struct Affixes {
    pub prefix: Vec<u8>,
    pub suffix: Vec<u8>,
}

/// The id of each byte's starting symbol (`NONE` when the vocabulary lacks it) by its place in
/// the word: the only byte (with the suffix), the first (bare), a middle one (with the prefix),
/// the last (prefix and suffix).
#[derive(Debug)]
struct AffixedSymbols {
    only: [u32; 256],
    first: [u32; 256],
    middle: [u32; 256],
    last: [u32; 256],
}

/// Ids below this have their merges in [`MergesBpe::grid`].
const GRID_IDS: usize = 512;

/// Pieces longer than this with two non-ASCII characters in a row are cut at their safe cuts
/// ([`SafeCuts`]) before merging.
const CUT_ABOVE: usize = 16;

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
    parts: Vec<Part>,
    cut: CutBuffers,
    runs: Vec<Run>,
    /// The pairs this thread looked up, and the answers ([`PairMemo`]).
    memo: PairMemo,
    valid: ValidScratch,
}

impl MergeScratch {
    /// Sizes its caches for the cache budget in force ([`CutBuffers::fit_budget`]).
    #[inline]
    pub fn fit_budget(&mut self) {
        self.cut.fit_budget();
        self.memo.fit(crate::cache::budget::in_force());
        self.valid.fit_budget();
    }
}

/// A symbol of a short sequence and the merge it could make with the next one.
#[derive(Clone, Copy, Debug)]
struct Part {
    id: u32,
    len: u32,
    /// The rank of the merge with the next symbol (`NONE` when there is none)…
    rank: u32,
    /// … and the id it makes.
    new: u32,
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

/// Sequences of up to this many symbols merge by scanning for the lowest rank, as tiktoken does:
/// for the short pieces that make up nearly all text this beats any queue.
const SHORT: usize = 48;
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
    /// and a merges list (pairs of token bytes, in rank order; a pair listed more than once
    /// has the rank of its last place, as in the reference). Merges whose parts or result are
    /// not in the vocabulary are an error, as in the reference.
    pub fn new(
        vocab: Vec<(Vec<u8>, u32)>,
        merges: Vec<(Vec<u8>, Vec<u8>)>,
        ignore_merges: bool,
        kernels: &'static Kernels,
    ) -> Result<MergesBpe, String> {
        Self::with_affixes(vocab, merges, ignore_merges, Affixes::default(), kernels)
    }

    /// [`MergesBpe::new`] with `affixes` around each word's symbols. A merge then joins its
    /// left part with its right part less the prefix (which the right part must start with).
    pub fn with_affixes(
        vocab: Vec<(Vec<u8>, u32)>,
        merges: Vec<(Vec<u8>, Vec<u8>)>,
        ignore_merges: bool,
        affixes: Affixes,
        kernels: &'static Kernels,
    ) -> Result<MergesBpe, String> {
        check_dense_ids(vocab.iter().map(|&(_, id)| id), vocab.len(), "id")?;
        let size = vocab
            .iter()
            .map(|&(_, id)| id as usize + 1)
            .max()
            .unwrap_or(0);
        let mut tokens: Vec<Option<Box<[u8]>>> = vec![None; size];
        let cuts = SafeCuts::new(vocab.iter().map(|(b, id)| (*id, &b[..])));
        let pair_cuts = PairCuts::new(vocab.iter().map(|(b, _)| &b[..]));
        // Bytes listed twice keep their last id (the map's), as the reference's vocabulary map
        // does. Every lookup after this one goes through the token table: its hash is a few
        // multiplies where the map's SipHash and `memcmp` made the merges list (three lookups
        // per merge) a third of a 200k-merge file's load time.
        let mut unique: HashMap<Box<[u8]>, u32> = HashMap::with_capacity(vocab.len());
        for (bytes, id) in vocab {
            let bytes: Box<[u8]> = bytes.into_boxed_slice();
            unique.insert(bytes.clone(), id);
            tokens[id as usize] = Some(bytes);
        }
        let by_bytes = TokenTable::new(unique.iter().map(|(b, &id)| (&b[..], id)));
        drop(unique);
        // Byte-level models have a token for every byte; others start from characters
        // ([`MergesBpe::merge_symbols`]) and never read this.
        let mut byte_ids = [NONE; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            if let Some(id) = by_bytes.get(&[b as u8][..]) {
                *slot = id;
            }
        }
        let mut map = HashMap::with_capacity_and_hasher(merges.len(), PairHash);
        let mut lefts = vec![0u64; size.div_ceil(64)].into_boxed_slice();
        let mut rights = lefts.clone();
        let mut byte_pairs = vec![(NONE, NONE); 1 << 16].into_boxed_slice();
        let mut grid = vec![(NONE, NONE); GRID_IDS * GRID_IDS].into_boxed_slice();
        for (rank, (a, b)) in merges.into_iter().enumerate() {
            let id = |t: &[u8]| {
                by_bytes.get(t).ok_or_else(|| {
                    format!(
                        "merge #{rank}: {:?} is not in the vocabulary",
                        String::from_utf8_lossy(t)
                    )
                })
            };
            let (ia, ib) = (id(&a)?, id(&b)?);
            let bytes = (a.len() == 1 && b.len() == 1).then(|| (a[0], b[0]));
            let Some(rest) = b.strip_prefix(&affixes.prefix[..]) else {
                return Err(format!(
                    "merge #{rank}: {:?} does not start with the continuing_subword_prefix",
                    String::from_utf8_lossy(&b)
                ));
            };
            let mut joined = a;
            joined.extend_from_slice(rest);
            let new = id(&joined)?;
            // A pair listed twice keeps its last rank, as in the reference, which collects the
            // list into a map (`[a b, b c, a b]` merges `abc` as `a bc`): each later entry
            // overwrites the map's, the grid's and the byte pairs' (the result is the same
            // token, the pair's two parts joined).
            let merge = (rank as u32, new);
            map.insert(key(ia, ib), merge);
            if ((ia | ib) as usize) < GRID_IDS {
                grid[ia as usize * GRID_IDS + ib as usize] = merge;
            }
            lefts[ia as usize / 64] |= 1 << (ia % 64);
            rights[ib as usize / 64] |= 1 << (ib % 64);
            if let Some((x, y)) = bytes {
                byte_pairs[(x as usize) << 8 | y as usize] = merge;
            }
        }
        let affixed = (!affixes.prefix.is_empty() || !affixes.suffix.is_empty()).then(|| {
            let table = |prefix: &[u8], suffix: &[u8]| {
                std::array::from_fn(|b| {
                    let symbol = [prefix, &[b as u8], suffix].concat();
                    by_bytes.get(&symbol[..]).unwrap_or(NONE)
                })
            };
            let (p, s) = (&affixes.prefix[..], &affixes.suffix[..]);
            Box::new(AffixedSymbols {
                only: table(&[], s),
                first: table(&[], &[]),
                middle: table(p, &[]),
                last: table(p, s),
            })
        });
        Ok(MergesBpe {
            valid: LazyValidPairs::default(),
            merges: map,
            lefts,
            rights,
            affixed,
            byte_ids,
            gaps: byte_ids
                .iter()
                .enumerate()
                .any(|(b, &id)| id == NONE && in_utf8(b as u8)),
            by_bytes,
            ignore_merges,
            byte_pairs,
            grid,
            self_merges: SelfMerges::new(size),
            cuts,
            pair_cuts,
            model_id: segment_cache::new_model_id(),
            kernels,
            tokens,
        })
    }

    /// Prepares now what a first sight of a piece would otherwise build or learn, at the cost of
    /// a merge or a build in the middle of encoding (text never seen before pays it on most
    /// pieces; a fresh tokenizer's first texts paid every trie's build):
    /// - the safe cuts' tries, every lead byte's ([`SafeCuts::build_tries`]): DeepSeek V3's
    ///   first 130 kB of Chinese 3–4 → 11–20 MB/s; 35–45 ms of load;
    /// - whether each token's bytes merge back into it, so that a piece that is a token costs a
    ///   probe and a byte load (Qwen 3, English first sights 78 → 90 MB/s; about 0.25 µs a token
    ///   on a core, Qwen 3's 151 643 in 37 ms). Only without `ignore_merges` or affixes: with
    ///   those, nothing asks.
    ///
    /// Each is spread over up to four threads.
    pub fn prepare_first_sights(&self) {
        self.cuts
            .build_tries(|id| self.token_bytes(id).unwrap_or_default());
        if self.ignore_merges || self.affixed.is_some() {
            return;
        }
        self.self_merges
            .learn_all(|id, scratch: &mut MergeScratch| {
                if let Some(bytes) = self.token_bytes(id) {
                    self.merges_to_itself(id, bytes, scratch);
                }
            });
    }

    /// One past the largest id.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether every byte that UTF-8 text can hold has a token — in every place in a word, with
    /// the affixes the model puts there (what a model with affixes needs; one without drops a
    /// byte without a token, as the reference does: `MergesBpe::encode_with_gaps`). The
    /// bytes `C0`, `C1` and `F5`–`FF` never occur in UTF-8, so no text asks for them (MPT's and
    /// GPT-NeoX's vocabularies have no token for them).
    pub fn covers_every_byte(&self) -> bool {
        let covered = |ids: &[u32; 256]| {
            ids.iter()
                .enumerate()
                .all(|(b, &id)| id != NONE || !in_utf8(b as u8))
        };
        match &self.affixed {
            None => covered(&self.byte_ids),
            Some(a) => [&a.only, &a.first, &a.middle, &a.last]
                .iter()
                .all(|t| covered(t)),
        }
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

    /// The bytes of `id` when [`MergesBpe::encode_piece`] of them gives `id` alone: the entry
    /// is the piece's own token (`ignore_merges`) or its bytes merge back into it (learnt by
    /// [`MergesBpe::prepare_first_sights`]; computed here otherwise). `None` with affixes,
    /// whose symbols are not the bare bytes.
    pub fn encodes_as_itself(&self, id: u32, scratch: &mut MergeScratch) -> Option<&[u8]> {
        let bytes = self.token_bytes(id)?;
        let whole = self.affixed.is_none()
            && self.pair_cuts.could_be_token(bytes)
            && self.by_bytes.get(bytes) == Some(id)
            && (self.ignore_merges || self.merges_to_itself(id, bytes, scratch));
        whole.then_some(bytes)
    }

    /// Appends the tokens of `piece` (non-empty) to `out`, one starting symbol per byte.
    pub fn encode_piece(
        &self,
        piece: &[u8],
        scratch: &mut MergeScratch,
        out: &mut Vec<PieceToken>,
    ) {
        if let Some(affixed) = &self.affixed {
            return self.merge_affixed(affixed, piece, scratch, out);
        }
        if self.gaps && piece.iter().any(|&b| self.byte_ids[b as usize] == NONE) {
            return self.encode_with_gaps(piece, scratch, out);
        }
        if self.pair_cuts.could_be_token(piece)
            && let Some(id) = self.by_bytes.get(piece)
            && (self.ignore_merges || self.merges_to_itself(id, piece, scratch))
        {
            out.push(PieceToken {
                id,
                len: piece.len() as u32,
            });
            return;
        }
        if let Some(build_now) = ValidPairs::serves(piece)
            && self.encode_valid(piece, build_now, scratch, out)
        {
            // Found as compatible pairs.
        } else if piece.len() > CUT_ABOVE && self.merge_clusters(piece, true, scratch, out) {
            // Merged cluster by cluster.
        } else if piece.len() <= CUT_ABOVE
            || !SafeCuts::cuts_pay(piece, SHORT)
            || (piece.len() <= SHORT
                && SafeCuts::few_pairs_merge(piece, |a, b| {
                    self.byte_pairs[(a as usize) << 8 | b as usize].0 != NONE
                }))
        {
            self.merge_bytes(piece, scratch, out);
        } else {
            self.merge_cut(piece, scratch, out);
        }
    }

    /// The tokens of a piece holding a byte without a token, with the reference's ids: such a
    /// byte (its byte-level character) is no symbol of the word, so the bytes around it merge as
    /// if side by side (`tokenizers` 0.23 gives `abc` without a token for `b` the one token
    /// `ac`). With `ignore_merges`, the whole piece is still looked up first. A piece of such
    /// bytes alone has no tokens.
    ///
    /// Offsets are NOT the reference's here: each token spans its kept bytes, counted from the
    /// piece's start without the dropped ones (`ac` at `0..2`, as the reference has it), while
    /// the reference maps its byte-level characters back to the text's characters, which gives
    /// a token after a dropped byte the span of another character (`x中y` with `E4` dropped:
    /// `y` at `中`'s span) and can give several tokens one span. Only pieces holding such a byte
    /// differ (a toy GPT-2 vocabulary without eight byte tokens: the reference's ids on all
    /// 4 863 golden cases, other offsets in 20).
    fn encode_with_gaps(
        &self,
        piece: &[u8],
        scratch: &mut MergeScratch,
        out: &mut Vec<PieceToken>,
    ) {
        if self.taken_whole(piece, out) {
            return;
        }
        let kept: Vec<u8> = piece
            .iter()
            .copied()
            .filter(|&b| self.byte_ids[b as usize] != NONE)
            .collect();
        if !kept.is_empty() {
            self.merge_bytes(&kept, scratch, out);
        }
    }

    /// With `ignore_merges`, `piece` as its one token when the vocabulary has it (appended,
    /// `true`); the reference looks the bare piece up before any merge.
    fn taken_whole(&self, piece: &[u8], out: &mut Vec<PieceToken>) -> bool {
        let id = self
            .ignore_merges
            .then(|| self.by_bytes.get(piece))
            .flatten();
        if let Some(id) = id {
            out.push(PieceToken {
                id,
                len: piece.len() as u32,
            });
        }
        id.is_some()
    }

    /// The tokens of `piece` for a model with affixes: as the reference does it, from the
    /// affixed starting symbols (no whole-piece shortcut but `ignore_merges`', which looks the
    /// bare piece up; no safe cuts, whose reasoning is about bare bytes).
    fn merge_affixed(
        &self,
        affixed: &AffixedSymbols,
        piece: &[u8],
        scratch: &mut MergeScratch,
        out: &mut Vec<PieceToken>,
    ) {
        if self.taken_whole(piece, out) {
            return;
        }
        let n = piece.len();
        scratch.ids.clear();
        scratch.ids.extend(piece.iter().enumerate().map(|(i, &b)| {
            let table = match (i == 0, i + 1 == n) {
                (true, true) => &affixed.only,
                (true, false) => &affixed.first,
                (false, false) => &affixed.middle,
                (false, true) => &affixed.last,
            };
            table[b as usize]
        }));
        scratch.lens.clear();
        scratch.lens.resize(n, 1);
        self.merge_symbols(scratch, out);
    }

    /// The merges of `piece` cut between the bytes no token holds side by side ([`PairCuts`]):
    /// each cluster alone, one- and two-byte ones from the flat tables. (Every part is a token
    /// whose bytes are its symbols' bytes: a merge makes the token of the joined bytes.) With
    /// `only_sparse`, only a sparse piece; `false` (and nothing merged) for another.
    fn merge_clusters(
        &self,
        piece: &[u8],
        only_sparse: bool,
        scratch: &mut MergeScratch,
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
        scratch: &mut MergeScratch,
        out: &mut Vec<PieceToken>,
    ) {
        let byte = |b: u8| PieceToken {
            id: self.byte_ids[b as usize],
            len: 1,
        };
        match e - s {
            1 => out.push(byte(piece[s])),
            2 => match self.byte_pairs[(piece[s] as usize) << 8 | piece[s + 1] as usize] {
                (NONE, _) => out.extend([byte(piece[s]), byte(piece[s + 1])]),
                (_, id) => out.push(PieceToken { id, len: 2 }),
            },
            3 => self.merge_three(
                [piece[s], piece[s + 1], piece[s + 2]],
                &mut scratch.memo,
                out,
            ),
            _ => buffers.cached_segment(self.model_id, &piece[s..e], out, |out| {
                self.merge_bytes(&piece[s..e], scratch, out)
            }),
        }
    }

    /// [`MergesBpe::merge_bytes`] of three bytes without its buffers (random text's clusters
    /// are mostly of one or three bytes): the pair of lower rank merges first (the left one of
    /// equal ranks), then what it made with the third byte, if that is listed.
    #[inline]
    fn merge_three(&self, [a, b, c]: [u8; 3], memo: &mut PairMemo, out: &mut Vec<PieceToken>) {
        let byte = |x: u8| PieceToken {
            id: self.byte_ids[x as usize],
            len: 1,
        };
        let (left, made_left) = self.byte_pairs[(a as usize) << 8 | b as usize];
        let (right, made_right) = self.byte_pairs[(b as usize) << 8 | c as usize];
        if left == NONE && right == NONE {
            return out.extend([byte(a), byte(b), byte(c)]);
        }
        let (pair, whole) = if left <= right {
            let pair = PieceToken {
                id: made_left,
                len: 2,
            };
            (pair, self.merge_memo(memo, made_left, byte(c).id))
        } else {
            let pair = PieceToken {
                id: made_right,
                len: 2,
            };
            (pair, self.merge_memo(memo, byte(a).id, made_right))
        };
        match whole {
            (NONE, _) if left <= right => out.extend([pair, byte(c)]),
            (NONE, _) => out.extend([byte(a), pair]),
            (_, id) => out.push(PieceToken { id, len: 3 }),
        }
    }

    /// The merges of `piece`, segment by segment between its safe cuts.
    fn merge_cut(&self, piece: &[u8], scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        let mut buffers = std::mem::take(&mut scratch.cut);
        self.cuts.merge_segments(
            self.kernels,
            piece,
            &mut buffers,
            self.model_id,
            scratch,
            out,
            |id| self.token_bytes(id).unwrap_or_default(),
            |b| self.by_bytes.get(b),
            &self.self_merges,
            |b, scratch, out| self.merge_bytes(b, scratch, out),
        );
        scratch.cut = buffers;
    }

    /// Whether the bytes of token `id` (`piece`) merge into exactly that token.
    fn merges_to_itself(&self, id: u32, piece: &[u8], scratch: &mut MergeScratch) -> bool {
        self.self_merges
            .check(id, piece, scratch, |b, scratch, out| {
                self.merge_bytes(b, scratch, out)
            })
    }

    /// The merges of `piece` from one symbol per byte.
    fn merge_bytes(&self, piece: &[u8], scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        if piece.len() <= SHORT {
            let parts = &mut scratch.parts;
            parts.clear();
            for (i, &b) in piece.iter().enumerate() {
                let (rank, new) = match piece.get(i + 1) {
                    Some(&next) => self.byte_pairs[(b as usize) << 8 | next as usize],
                    None => (NONE, NONE),
                };
                parts.push(Part {
                    id: self.byte_ids[b as usize],
                    len: 1,
                    rank,
                    new,
                });
            }
            return self.scan_merges(parts, &mut scratch.memo, out);
        }
        scratch.ids.clear();
        scratch.lens.clear();
        scratch
            .ids
            .extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
        scratch.lens.resize(piece.len(), 1);
        self.merge_symbols(scratch, out);
    }

    /// [`ValidPairs::encode`] of `piece`, when the model has them (built now if `build_now`,
    /// else only if some piece built them before).
    #[inline]
    fn encode_valid(
        &self,
        piece: &[u8],
        build_now: bool,
        scratch: &mut MergeScratch,
        out: &mut Vec<PieceToken>,
    ) -> bool {
        let build = || {
            ValidPairs::new(
                &self.tokens,
                ValidPairs::in_scope,
                |b| self.by_bytes.get(b),
                |a, b, _| self.merge_of(a, b).0,
                |x, y, _| self.merge_of(x, y).0,
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

    /// [`MergesBpe::merge_of`] through the thread's memo (which this model claims).
    #[inline]
    fn merge_memo(&self, memo: &mut PairMemo, left: u32, right: u32) -> (u32, u32) {
        if ((left | right) as usize) < GRID_IDS {
            return self.grid[left as usize * GRID_IDS + right as usize];
        }
        memo.claim(self.model_id);
        memo.get(left, right, |left, right| self.merge_of(left, right))
    }

    /// [`MergesBpe::listed`] through the thread's memo.
    #[inline]
    fn listed_memo(&self, memo: &mut PairMemo, left: u32, right: u32) -> Option<(u32, u32)> {
        let merge = self.merge_memo(memo, left, right);
        (merge.0 != NONE).then_some(merge)
    }

    /// The listed merge of `left` then `right`: `(rank, merged id)`, or `(NONE, NONE)`.
    #[inline]
    fn merge_of(&self, left: u32, right: u32) -> (u32, u32) {
        self.listed(left, right).unwrap_or((NONE, NONE))
    }

    /// The listed merge of `left` then `right`, if any: `(rank, merged id)`.
    #[inline]
    fn listed(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        if ((left | right) as usize) < GRID_IDS {
            let merge = self.grid[left as usize * GRID_IDS + right as usize];
            return (merge.0 != NONE).then_some(merge);
        }
        let has = |bits: &[u64], id: u32| {
            bits.get(id as usize / 64)
                .is_some_and(|w| w & (1 << (id % 64)) != 0)
        };
        if !has(&self.lefts, left) || !has(&self.rights, right) {
            return None;
        }
        self.merges.get(&key(left, right)).copied()
    }

    /// Merges the starting symbols in `scratch.ids` (each `scratch.lens` bytes long) and appends
    /// the resulting tokens to `out`.
    pub fn merge_symbols(&self, scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        if scratch.ids.len() <= SHORT {
            self.merge_short(scratch, out);
        } else if !self.merge_few_runs(scratch, out) {
            self.merge_queued(scratch, out);
        }
    }

    /// When the symbols are a few runs of one symbol each (a line of `=`, `▁` and a thousand
    /// `a`), merges them as runs of equal parts ([`merge_runs`]) and returns `true`; `false`
    /// when they are not, or when that gives up.
    fn merge_few_runs(&self, scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) -> bool {
        let MergeScratch {
            ids, lens, runs, ..
        } = scratch;
        let symbols = ids.iter().copied().zip(lens.iter().copied());
        let listed = |a: &Run, b: &Run| self.merge_of(a.id, b.id);
        if !start_runs(symbols, runs) || !merge_runs(runs, listed) {
            return false;
        }
        push_runs(runs, out);
        true
    }

    /// [`MergesBpe::merge_symbols`] by scanning the parts for the lowest-ranked merge, the
    /// leftmost of equal ranks: the order the reference's heap pops them in.
    fn merge_short(&self, scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        let MergeScratch {
            ids,
            lens,
            parts,
            memo,
            ..
        } = scratch;
        parts.clear();
        for (i, (&id, &len)) in ids.iter().zip(lens.iter()).enumerate() {
            let (rank, new) = match ids.get(i + 1) {
                Some(&right) => self.merge_memo(memo, id, right),
                None => (NONE, NONE),
            };
            parts.push(Part { id, len, rank, new });
        }
        self.scan_merges(parts, memo, out);
    }

    /// Merges `parts` (each with its pair's merge), the lowest rank first, the leftmost of equal
    /// ranks, and appends the resulting tokens to `out`.
    fn scan_merges(&self, parts: &mut Vec<Part>, memo: &mut PairMemo, out: &mut Vec<PieceToken>) {
        loop {
            let mut min = (NONE, 0usize);
            for (i, p) in parts.iter().enumerate() {
                if p.rank < min.0 {
                    min = (p.rank, i);
                }
            }
            if min.0 == NONE {
                break;
            }
            let i = min.1;
            let right = parts.remove(i + 1);
            let id = parts[i].new;
            let (rank, new) = match parts.get(i + 1) {
                Some(next) => self.merge_memo(memo, id, next.id),
                None => (NONE, NONE),
            };
            parts[i] = Part {
                id,
                len: parts[i].len + right.len,
                rank,
                new,
            };
            if i > 0 {
                (parts[i - 1].rank, parts[i - 1].new) =
                    self.merge_memo(memo, parts[i - 1].id, parts[i].id);
            }
        }
        out.extend(parts.iter().map(|p| PieceToken {
            id: p.id,
            len: p.len,
        }));
    }

    /// [`MergesBpe::merge_symbols`] with a queue of candidates over a linked list of symbols.
    fn merge_queued(&self, scratch: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        let MergeScratch {
            ids,
            lens,
            next,
            prev,
            heap,
            memo,
            ..
        } = scratch;
        let n = ids.len();
        next.clear();
        prev.clear();
        heap.reset(n);
        next.extend(1..=n as u32);
        prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        for i in 0..n.saturating_sub(1) {
            if let Some((rank, new)) = self.listed_memo(memo, ids[i], ids[i + 1]) {
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
            match self.listed_memo(memo, ids[p], ids[right]) {
                Some((_, id)) if id == new => {}
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
                && let Some((rank, id)) = self.listed_memo(memo, ids[before as usize], new)
            {
                heap.push(rank, before, id);
            }
            if (after as usize) < n
                && let Some((rank, id)) = self.listed_memo(memo, new, ids[after as usize])
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
    use crate::models::test_text::TestText;

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
        let bpe = MergesBpe::new(vocab, merges, false, Kernels::scalar()).unwrap();
        let mut out = Vec::new();
        bpe.encode_piece(b"abc", &mut MergeScratch::default(), &mut out);
        let ids: Vec<u32> = out.iter().map(|t| t.id).collect();
        assert_eq!(ids, vec![97, 257]);
        out.clear();
        bpe.encode_piece(b"abab", &mut MergeScratch::default(), &mut out);
        let ids: Vec<u32> = out.iter().map(|t| t.id).collect();
        assert_eq!(ids, vec![256, 256]);
    }

    #[test]
    fn the_grid_answers_as_the_merges_map() {
        // 700 merges of random pairs of earlier tokens: results below GRID_IDS and above,
        // joins of low ids listed late, some bytes made by two listed pairs, pairs listed
        // twice (one of two bytes, one of any ids): as in the reference, the last rank counts.
        let mut g = TestText::new(0xBB67_AE85);
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut merges: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        while merges.len() < 700 {
            let pick = |g: &mut TestText, n: usize| g.below(n.min(600) as u32) as usize;
            let (a, b) = (pick(&mut g, tokens.len()), pick(&mut g, tokens.len()));
            let joined = [&tokens[a][..], &tokens[b][..]].concat();
            if !tokens.contains(&joined) {
                tokens.push(joined);
            }
            merges.push((tokens[a].clone(), tokens[b].clone()));
        }
        let bytes = merges
            .iter()
            .position(|(a, b)| a.len() == 1 && b.len() == 1);
        merges.push(merges[bytes.unwrap()].clone());
        merges.push(merges[3].clone());
        let vocab = tokens.iter().cloned().zip(0..).collect();
        let bpe = MergesBpe::new(vocab, merges.clone(), false, Kernels::scalar()).unwrap();
        assert!(bpe.len() > GRID_IDS);
        for a in 0..bpe.len().min(GRID_IDS + 50) as u32 {
            for b in 0..bpe.len().min(GRID_IDS + 50) as u32 {
                let map = bpe.merges.get(&key(a, b)).copied();
                assert_eq!(bpe.listed(a, b), map, "({a}, {b})");
            }
        }
        // Every pair has the rank of its last place in the list, in the map, the grid and the
        // byte pairs alike.
        let id = |t: &[u8]| tokens.iter().position(|x| x == t).unwrap() as u32;
        let mut twice = 0;
        for (i, (a, b)) in merges.iter().enumerate() {
            let last = merges.iter().rposition(|m| (&m.0, &m.1) == (a, b)).unwrap();
            twice += (last != i) as usize;
            let want = (last as u32, id(&[&a[..], &b[..]].concat()));
            let (ia, ib) = (id(a), id(b));
            assert_eq!(bpe.merges.get(&key(ia, ib)), Some(&want), "merge #{i}");
            assert_eq!(bpe.listed(ia, ib), Some(want), "merge #{i}");
            if a.len() == 1 && b.len() == 1 {
                let pair = bpe.byte_pairs[(a[0] as usize) << 8 | b[0] as usize];
                assert_eq!(pair, want, "merge #{i}");
            }
        }
        assert!(twice >= 2, "{twice}");
        assert_eq!(bpe.merges[&key(id(&merges[3].0), id(&merges[3].1))].0, 701);
        for x in 0..=255u8 {
            for y in 0..=255u8 {
                let (a, b) = (bpe.byte_ids[x as usize], bpe.byte_ids[y as usize]);
                let pair = bpe.byte_pairs[(x as usize) << 8 | y as usize];
                assert_eq!(pair, bpe.merge_of(a, b), "({x}, {y})");
            }
        }
    }

    #[test]
    fn a_pair_listed_twice_merges_at_its_last_rank() {
        // `[a b, b c, a b]`: the reference collects the list into a map, so `a b` has rank 2
        // and `abc` is `a bc` (with its first rank, it would be `ab c`). `[b c, a b, b c]` the
        // other way round. The merged ids below GRID_IDS (the grid) and above (the map).
        let ab_bc: &[(&[u8], &[u8])] = &[(b"a", b"b"), (b"b", b"c"), (b"a", b"b")];
        let bc_ab: &[(&[u8], &[u8])] = &[(b"b", b"c"), (b"a", b"b"), (b"b", b"c")];
        let filler: Vec<Vec<u8>> = (0..300u32)
            .map(|i| vec![0xF8, (i >> 8) as u8, i as u8])
            .collect();
        for high in [false, true] {
            let mut extra: Vec<&[u8]> = Vec::new();
            if high {
                extra.extend(filler.iter().map(|t| &t[..]));
            }
            extra.extend([&b"ab"[..], b"bc"]);
            let (ab, bc) = (256 + extra.len() as u32 - 2, 256 + extra.len() as u32 - 1);
            assert_eq!(ab as usize >= GRID_IDS, high);
            let (a, c) = (b'a' as u32, b'c' as u32);
            for (merges, unit) in [(ab_bc, [a, bc]), (bc_ab, [ab, c])] {
                let bpe = model(&extra, merges, false);
                for k in [1, 2, 7, SHORT / 3 + 1, LONG / 3 + 1, 200] {
                    let piece = b"abc".repeat(k);
                    let want: Vec<u32> = unit.repeat(k);
                    assert_eq!(ids(&bpe, &piece), want, "{merges:?} × {k}");
                    let mut scratch = MergeScratch::default();
                    let mut out = Vec::new();
                    bpe.merge_bytes(&piece, &mut scratch, &mut out);
                    let got: Vec<u32> = out.iter().map(|t| t.id).collect();
                    assert_eq!(got, want, "{merges:?} × {k}, from bytes");
                    for queued in [false, true] {
                        scratch.ids.clear();
                        scratch.lens.clear();
                        scratch.ids.extend(piece.iter().map(|&b| b as u32));
                        scratch.lens.resize(piece.len(), 1);
                        out.clear();
                        if queued {
                            bpe.merge_queued(&mut scratch, &mut out);
                        } else if piece.len() <= SHORT {
                            bpe.merge_short(&mut scratch, &mut out);
                        } else {
                            bpe.merge_symbols(&mut scratch, &mut out);
                        }
                        let got: Vec<u32> = out.iter().map(|t| t.id).collect();
                        assert_eq!(got, want, "{merges:?} × {k}, queued {queued}");
                    }
                }
                let mut out = Vec::new();
                bpe.merge_three(*b"abc", &mut PairMemo::default(), &mut out);
                let got: Vec<u32> = out.iter().map(|t| t.id).collect();
                assert_eq!(got, unit, "{merges:?}, three bytes");
            }
        }
    }

    #[test]
    fn a_pair_listed_twice_merges_at_its_last_rank_with_affixes_too() {
        // `tokenizers` 0.23.3 with continuing_subword_prefix "##" and this vocabulary:
        // `[a ##b, ##b ##c, a ##b]` encodes "abc" as `a ##bc` (0, 4), `[##b ##c, a ##b, ##b ##c]`
        // as `ab ##c` (3, 2).
        let vocab: Vec<(Vec<u8>, u32)> = [&b"a"[..], b"##b", b"##c", b"ab", b"##bc", b"b", b"c"]
            .iter()
            .map(|t| t.to_vec())
            .zip(0..)
            .collect();
        let ab: (&[u8], &[u8]) = (b"a", b"##b");
        let bc: (&[u8], &[u8]) = (b"##b", b"##c");
        for (merges, want) in [([ab, bc, ab], [0, 4]), ([bc, ab, bc], [3, 2])] {
            let affixes = Affixes {
                prefix: b"##".to_vec(),
                suffix: Vec::new(),
            };
            let merges = merges
                .iter()
                .map(|(a, b)| (a.to_vec(), b.to_vec()))
                .collect();
            let bpe =
                MergesBpe::with_affixes(vocab.clone(), merges, false, affixes, Kernels::scalar())
                    .unwrap();
            assert_eq!(ids(&bpe, b"abc"), want);
        }
    }

    fn model(extra: &[&[u8]], merges: &[(&[u8], &[u8])], ignore_merges: bool) -> MergesBpe {
        let mut vocab: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (i, t) in extra.iter().enumerate() {
            vocab.push((t.to_vec(), 256 + i as u32));
        }
        let merges = merges
            .iter()
            .map(|(a, b)| (a.to_vec(), b.to_vec()))
            .collect();
        MergesBpe::new(vocab, merges, ignore_merges, Kernels::scalar()).unwrap()
    }

    fn ids(bpe: &MergesBpe, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        bpe.encode_piece(piece, &mut MergeScratch::default(), &mut out);
        assert_eq!(
            out.iter().map(|t| t.len as usize).sum::<usize>(),
            piece.len()
        );
        out.iter().map(|t| t.id).collect()
    }

    #[test]
    fn a_token_that_its_merges_never_make_is_not_taken_whole() {
        // "abc" is in the vocabulary but only ("a", "bc") makes it, and "ab" merges first.
        let merges: &[(&[u8], &[u8])] = &[(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")];
        let bpe = model(&[b"ab", b"bc", b"abc"], merges, false);
        for _ in 0..2 {
            // Twice: the second answer comes from the learnt per-id flag.
            assert_eq!(ids(&bpe, b"abc"), vec![256, 99]);
            assert_eq!(ids(&bpe, b"bc"), vec![257]);
        }
        let bpe = model(&[b"ab", b"bc", b"abc"], merges, true);
        assert_eq!(ids(&bpe, b"abc"), vec![258]);
    }

    #[test]
    fn scan_matches_queue_on_generated_sequences() {
        let merges: &[(&[u8], &[u8])] = &[
            (b"a", b"b"),
            (b"b", b"a"),
            (b"a", b"a"),
            (b"ab", b"ab"),
            (b"a", b"ab"),
            (b"b", b"b"),
            (b"b", b"ab"),
            (b"aa", b"aa"),
            (b"ab", b"ba"),
        ];
        let extra: &[&[u8]] = &[
            b"ab", b"ba", b"aa", b"abab", b"aab", b"bb", b"bab", b"aaaa", b"abba",
        ];
        let bpe = model(extra, merges, false);
        let mut g = TestText::new(12345);
        let mut scratch = MergeScratch::default();
        // Past LONG too, where the queue is a RankQueue rather than a heap.
        for len in (1..200).chain(250..270) {
            for _ in 0..20 {
                let piece = g.ab(len);
                let run = |queued: bool, scratch: &mut MergeScratch| {
                    scratch.ids.clear();
                    scratch.lens.clear();
                    scratch.ids.extend(piece.iter().map(|&b| b as u32));
                    scratch.lens.resize(piece.len(), 1);
                    let mut out = Vec::new();
                    if queued {
                        bpe.merge_queued(scratch, &mut out);
                    } else {
                        bpe.merge_short(scratch, &mut out);
                    }
                    out
                };
                let short = run(false, &mut scratch);
                let queued = run(true, &mut scratch);
                assert_eq!(short, queued, "{:?}", String::from_utf8_lossy(&piece));
                // From bytes: the first round's pairs come from the flat byte-pair table.
                let mut from_bytes = Vec::new();
                bpe.merge_bytes(&piece, &mut scratch, &mut from_bytes);
                assert_eq!(from_bytes, short, "{:?}", String::from_utf8_lossy(&piece));
            }
        }
    }

    #[test]
    fn one_symbol_runs_match_the_queue() {
        // Every run of `a` up to 12 is a token; random pairs of them are listed as merges, in a
        // random order (so `a`+`aa` and `aa`+`a` may both make `aaa`, at different ranks).
        let mut g = TestText::new(0x00C0_FFEE);
        let extra: Vec<Vec<u8>> = (2..=12).map(|k| vec![b'a'; k]).collect();
        let extra: Vec<&[u8]> = extra.iter().map(|t| &t[..]).collect();
        let mut took_runs = 0;
        for _ in 0..200 {
            let mut merges: Vec<(&[u8], &[u8])> = Vec::new();
            for _ in 0..1 + g.below(20) {
                let i = 1 + g.below(11) as usize;
                let j = 1 + g.below(12 - i as u32) as usize;
                let (a, b) = (&extra[10][..i], &extra[10][..j]);
                if !merges.contains(&(a, b)) {
                    merges.push((a, b));
                }
            }
            let bpe = model(&extra, &merges, false);
            let mut scratch = MergeScratch::default();
            for n in (SHORT + 1..300).step_by(5) {
                let symbols = |scratch: &mut MergeScratch| {
                    scratch.ids.clear();
                    scratch.lens.clear();
                    scratch.ids.resize(n, b'a' as u32);
                    scratch.lens.resize(n, 1);
                };
                let (mut by_runs, mut queued) = (Vec::new(), Vec::new());
                symbols(&mut scratch);
                if bpe.merge_few_runs(&mut scratch, &mut by_runs) {
                    took_runs += 1;
                    symbols(&mut scratch);
                    bpe.merge_queued(&mut scratch, &mut queued);
                    assert_eq!(by_runs, queued, "a × {n}, merges {merges:?}");
                }
            }
        }
        assert!(
            took_runs > 200 * 51 / 2,
            "runs merged only {took_runs} times"
        );
    }

    #[test]
    fn only_bytes_that_utf8_holds_need_a_token() {
        let without = |missing: &[u8]| {
            let vocab = (0..=255u8)
                .filter(|b| !missing.contains(b))
                .map(|b| vec![b])
                .zip(0..)
                .collect();
            MergesBpe::new(vocab, Vec::new(), false, Kernels::scalar()).unwrap()
        };
        let never: Vec<u8> = [0xC0, 0xC1].into_iter().chain(0xF5..=0xFF).collect();
        assert!(without(&never).covers_every_byte());
        for held in [0x03, 0x41, 0x80, 0xC2, 0xF1, 0xF4] {
            assert!(!without(&[held]).covers_every_byte(), "{held:#x}");
        }
    }

    #[test]
    fn a_byte_without_a_token_is_dropped_as_the_reference_drops_it() {
        // `tokenizers` 0.23.3 (a BPE over the byte-level alphabet without `b`, merges `a c`,
        // `ByteLevel` without its regex): `abc` -> `ac` at 0..2, `xbbby` -> `x` 0..1, `y` 1..2.
        let mut vocab: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .filter(|&b| b != b'b')
            .map(|b| vec![b])
            .zip(0..)
            .collect();
        vocab.push((b"ac".to_vec(), 255));
        // A token holding the byte without a token, which no merge makes.
        vocab.push((b"xb".to_vec(), 256));
        let (ac, xb) = (255, 256);
        let merges = vec![(b"a".to_vec(), b"c".to_vec())];
        for ignore_merges in [false, true] {
            let bpe = MergesBpe::new(
                vocab.clone(),
                merges.clone(),
                ignore_merges,
                Kernels::scalar(),
            )
            .unwrap();
            let mut scratch = MergeScratch::default();
            let encode = |piece: &[u8], scratch: &mut MergeScratch| {
                let mut out = Vec::new();
                bpe.encode_piece(piece, scratch, &mut out);
                out.iter().map(|t| (t.id, t.len)).collect::<Vec<_>>()
            };
            let id = |b: u8| bpe.bytes_id(&[b]).unwrap();
            assert_eq!(encode(b"abc", &mut scratch), [(ac, 2)]);
            assert_eq!(
                encode(b"xbbby", &mut scratch),
                [(id(b'x'), 1), (id(b'y'), 1)]
            );
            assert_eq!(encode(b"bb", &mut scratch), []);
            assert_eq!(encode(b"ac", &mut scratch), [(ac, 2)]);
            // `xb` whole only under `ignore_merges`, and a seed of the piece cache then only.
            let whole = if ignore_merges {
                vec![(xb, 2)]
            } else {
                vec![(id(b'x'), 1)]
            };
            assert_eq!(encode(b"xb", &mut scratch), whole);
            assert_eq!(
                bpe.encodes_as_itself(xb, &mut scratch).is_some(),
                ignore_merges
            );
            // `b` has no token: a model with affixes would be refused.
            assert!(!bpe.covers_every_byte());
        }
    }

    #[test]
    fn cut_pieces_merge_as_whole_ones() {
        let mut g = TestText::new(0x9E37_79B9);
        let mut clustered = 0;
        for round in 0..30 {
            // Merges grown bottom-up from substrings of random texts whose halves are tokens;
            // the smaller vocabularies leave byte pairs that no token holds.
            let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            let mut merges = Vec::new();
            for _ in 0..[3000, 300, 60][round % 3] {
                let t = g.mixed(3);
                let s = g.below(t.len() as u32 - 1) as usize;
                let e = s + 2 + g.below((t.len() - s - 1) as u32) as usize;
                let token = &t[s..e.min(t.len())];
                let k = 1 + g.below(token.len() as u32 - 1) as usize;
                let (a, b) = (&token[..k], &token[k..]);
                if vocab.iter().any(|v| v == a)
                    && vocab.iter().any(|v| v == b)
                    && !vocab.iter().any(|v| v == token)
                {
                    vocab.push(token.to_vec());
                    merges.push((a.to_vec(), b.to_vec()));
                }
            }
            let vocab = vocab.into_iter().zip(0..).collect();
            let bpe = MergesBpe::new(vocab, merges, false, Kernels::scalar()).unwrap();
            let mut scratch = MergeScratch::default();
            for _ in 0..100 {
                let chars = 6 + g.below(40) as usize;
                let piece = g.mixed(chars);
                let (mut cut, mut whole) = (Vec::new(), Vec::new());
                bpe.merge_cut(&piece, &mut scratch, &mut cut);
                bpe.merge_bytes(&piece, &mut scratch, &mut whole);
                assert_eq!(cut, whole, "{:?}", String::from_utf8_lossy(&piece));
                // And cut between the byte pairs no token holds.
                cut.clear();
                let mut ends = Vec::new();
                bpe.pair_cuts.cluster_ends(&piece, &mut ends);
                bpe.merge_clusters(&piece, false, &mut scratch, &mut cut);
                assert_eq!(cut, whole, "{:?}", String::from_utf8_lossy(&piece));
                clustered += (ends.len() > 1) as usize;
            }
        }
        assert!(clustered > 1000, "{clustered}");
    }
}
