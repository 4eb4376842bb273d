//! SentencePiece BPE: the text starts as one symbol per character (user-defined symbols whole
//! and frozen), and the adjacent pair whose concatenation is the best-scoring piece is merged
//! until no pair is a piece — `bpe::Model::SampleEncode` of `sentencepiece` without dropout.
//!
//! Symbols form a linked list over the text; candidate pairs wait in a max-heap ordered by score,
//! then by leftmost position. A pair whose symbols changed since it was queued is recognised by
//! its length and skipped (lazy deletion), so each merge costs O(log n): no rescan per merge.
//! A merge into an UNUSED piece is allowed and undone at the end by splitting the piece back
//! into the two halves it was made from, recursively, as the reference does.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use simdtok_kernels::{ByteSet, Kernels};

use crate::cache::word::{self as word_cache, Key, MAX_WORD, WordCache};

use crate::load::spm_proto::PieceKind;
use crate::models::rank_queue::RankQueue;
use crate::models::token::{PieceToken, WordToken};
use crate::models::unigram::Segment;
use crate::models::vocab::Vocab;
use crate::normalize::prefix_matcher::PrefixMatcher;
use crate::normalize::spm::{SPACE_SYMBOL, one_char_len};

#[derive(Clone, Copy, Debug)]
struct Symbol {
    start: u32,
    end: u32,
    prev: u32,
    next: u32,
    /// The id of the piece spelled by the symbol, or [`NIL`] when it spells none.
    id: u32,
    /// The piece this symbol and its successor spell together, as last queued: the one a still
    /// valid queue entry with this symbol on the left stands for (an entry goes stale whenever
    /// either symbol changes, and every change queues the pair again).
    pair_id: u32,
    frozen: bool,
}

const NIL: u32 = u32::MAX;

/// A queued pair, packed in one `u64` so that the queue is a min-heap of plain integers (half
/// the memory of a struct, which matters when one word has a million symbols): the rank of the
/// merged piece's score (0 = the highest score), then the left symbol's index, then the merged
/// length. Smaller is better, which is the reference's order: higher score first, then the
/// leftmost pair. The right symbol is the left one's current successor — equivalent to the
/// reference's stored one while the lengths still add up (symbols only grow, and the left one's
/// successor changes only when it absorbs it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pair(u64);

const LEN_BITS: u32 = 13; // pieces are shorter than 8000 bytes
const LEFT_BITS: u32 = 32;
/// At most 2^19 distinct scores fit beside a 32-bit index and a 13-bit length.
const MAX_RANKS: usize = 1 << (64 - LEN_BITS - LEFT_BITS);

impl Pair {
    fn new(rank: u32, left: u32, len: u32) -> Pair {
        debug_assert!((rank as usize) < MAX_RANKS && len < 1 << LEN_BITS);
        Pair(((rank as u64) << (LEFT_BITS + LEN_BITS)) | ((left as u64) << LEN_BITS) | len as u64)
    }
    fn rank(self) -> u32 {
        (self.0 >> (LEFT_BITS + LEN_BITS)) as u32
    }
    fn rest(self) -> u64 {
        self.0 & ((1 << (LEFT_BITS + LEN_BITS)) - 1)
    }
    fn left(self) -> u32 {
        (self.0 >> LEN_BITS) as u32
    }
    fn len(self) -> u32 {
        (self.0 & ((1 << LEN_BITS) - 1)) as u32
    }
}

/// Spans of at least this many symbols queue their candidates in a [`RankQueue`] instead of a
/// binary heap: a heap of a million candidates is mostly cache misses.
const LONG_SPAN: usize = 2048;

/// The merge candidates of one span: a binary heap, or a [`RankQueue`] for long spans; both pop
/// in the same order.
#[derive(Debug, Default)]
struct Candidates {
    heap: BinaryHeap<Reverse<Pair>>,
    ranks: RankQueue,
    long: bool,
}

impl Candidates {
    fn reset(&mut self, symbols: usize) {
        self.heap.clear();
        self.ranks.clear();
        self.long = symbols >= LONG_SPAN;
    }

    fn push(&mut self, p: Pair) {
        if self.long {
            self.ranks.push(p.rank(), p.rest());
        } else {
            self.heap.push(Reverse(p));
        }
    }

    fn pop(&mut self) -> Option<Pair> {
        if self.long {
            self.ranks
                .pop()
                .map(|(rank, rest)| Pair(((rank as u64) << (LEFT_BITS + LEN_BITS)) | rest))
        } else {
            self.heap.pop().map(|Reverse(p)| p)
        }
    }
}

/// Reusable buffers of one encoding thread.
#[derive(Default)]
pub struct BpeScratch {
    symbols: Vec<Symbol>,
    heap: Candidates,
    /// Merged UNUSED piece → the two pieces it was made from (byte ranges of the text).
    unmerge: HashMap<Box<[u8]>, (u32, u32, u32, u32)>,
    /// Segments of recently seen words, for one model at a time (see [`WordCache::claim`]).
    cache: WordCache,
    /// The segments of the word being encoded (relative to the word), and the same as the
    /// cache's tiers take them.
    word: Vec<Segment>,
    word_tokens: Vec<WordToken>,
    piece_tokens: Vec<PieceToken>,
}

/// A SentencePiece BPE model over a vocabulary.
#[derive(Debug)]
pub struct SpmBpe {
    user_symbols: Option<PrefixMatcher>,
    /// Whether the text may be cut into words before each U+2581 that follows another
    /// character (see [`SpmBpe::encode`]).
    word_split: bool,
    /// Distinguishes this model's entries in the per-thread word cache.
    cache_owner: usize,
    /// Per piece id, the rank of its score among the distinct scores, highest first.
    ranks: Vec<u32>,
    /// (left piece, right piece) → the piece they spell together, for every way of cutting
    /// every mergeable piece into two pieces: pair lookups by id instead of by bytes.
    pairs: HashMap<u64, u32, IdPairHasher>,
    /// The piece id of each one-byte ASCII symbol, or [`NIL`].
    ascii_ids: [u32; 128],
    /// No pair longer than the longest mergeable piece is looked up.
    max_piece_len: usize,
    space_lead: ByteSet,
    kernels: &'static Kernels,
}

impl SpmBpe {
    /// `user_symbols` are the model's USER_DEFINED pieces.
    pub fn new(
        vocab: &Vocab,
        user_symbols: &[&str],
        kernels: &'static Kernels,
    ) -> Result<SpmBpe, String> {
        let user_symbols_trie = PrefixMatcher::new(user_symbols)?;
        let mut scores: Vec<f32> = vocab.pieces().iter().map(|p| p.score).collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.dedup_by(|a, b| a.to_bits() == b.to_bits());
        if scores.len() > MAX_RANKS {
            return Err(format!(
                "BPE models with more than {MAX_RANKS} distinct piece scores are not supported"
            ));
        }
        let ranks = vocab
            .pieces()
            .iter()
            .map(|p| {
                scores.partition_point(|s| s.total_cmp(&p.score) == std::cmp::Ordering::Greater)
                    as u32
            })
            .collect();
        let mut pairs = HashMap::with_hasher(IdPairHasher);
        for (id, p) in vocab.pieces().iter().enumerate() {
            let mergeable = matches!(
                p.kind,
                PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused
            );
            if !mergeable || !p.indexed {
                continue;
            }
            let t = p.text.as_bytes();
            for k in 1..t.len() {
                if let (Some(a), Some(b)) = (vocab.id_of(&t[..k]), vocab.id_of(&t[k..])) {
                    pairs.insert(pair_key(a, b), id as u32);
                }
            }
        }
        let ascii_ids = std::array::from_fn(|b| vocab.id_of(&[b as u8]).unwrap_or(NIL));
        let max_piece_len = vocab
            .pieces()
            .iter()
            .map(|p| p.text.len())
            .max()
            .unwrap_or(0);
        Ok(SpmBpe {
            max_piece_len,
            ranks,
            pairs,
            ascii_ids,
            user_symbols: user_symbols_trie,
            word_split: words_are_independent(vocab),
            cache_owner: word_cache::new_owner(),
            space_lead: ByteSet::of_bytes(&SPACE_SYMBOL[..1]),
            kernels,
        })
    }

    /// The first symbol of `text`: the longest user-defined symbol there (frozen), else one
    /// character by its lead byte (`PrefixMatcher::PrefixMatch`).
    fn first_symbol(&self, text: &[u8]) -> (usize, bool) {
        if let Some(user) = &self.user_symbols {
            let longest = user.longest(self.kernels, text);
            if longest > 0 {
                return (longest, true);
            }
        }
        (one_char_len(text[0]).min(text.len()), false)
    }

    /// Segments `normalized` into `out` (cleared first).
    ///
    /// When the vocabulary allows it, the text is cut into words before each U+2581 that
    /// follows another character and the words are encoded one by one, short ones through a
    /// per-thread cache. This gives the reference's result exactly: no piece contains a
    /// character followed by U+2581 unless that character is U+2581 too (checked when the model
    /// is built), so no merge ever crosses a cut, and merges on the two sides of a cut do not
    /// interact — the order in which the reference's single queue interleaves them changes
    /// nothing. (Models with UNUSED pieces are excluded: the reference remembers how such a
    /// piece was made in one map for the whole text.)
    pub fn encode(
        &self,
        vocab: &Vocab,
        normalized: &[u8],
        scratch: &mut BpeScratch,
        out: &mut Vec<Segment>,
    ) {
        out.clear();
        if !self.word_split {
            return self.encode_span(vocab, normalized, scratch, out);
        }
        scratch.cache.claim(self.cache_owner);
        let mut start = 0;
        let mut at = 1;
        while let Some(p) = self.kernels.find_in(&self.space_lead, normalized, at) {
            if normalized[p..].starts_with(SPACE_SYMBOL) && !normalized[..p].ends_with(SPACE_SYMBOL)
            {
                self.encode_word(vocab, normalized, start, p, scratch, out);
                start = p;
            }
            at = p + 1;
        }
        self.encode_word(vocab, normalized, start, normalized.len(), scratch, out);
    }

    /// Appends the segments of the word `text[start..end]`, from the cache when it is there: a
    /// word of up to [`MAX_WORD`] bytes and four pieces in the short tier, any other in the
    /// long one (which stores a word the second time it is seen).
    fn encode_word(
        &self,
        vocab: &Vocab,
        text: &[u8],
        start: usize,
        end: usize,
        scratch: &mut BpeScratch,
        out: &mut Vec<Segment>,
    ) {
        let word = &text[start..end];
        let base = start as u32;
        let key = (word.len() <= MAX_WORD).then(|| Key::in_text(text, start, word.len()));
        if let Some(key) = &key
            && scratch.cache.get(key, |id, s, e| {
                out.push(Segment {
                    start: base + s,
                    end: base + e,
                    id,
                })
            })
        {
            return;
        }
        if let Some(tokens) = scratch.cache.get_long(word) {
            let mut at = base;
            for t in tokens {
                out.push(Segment {
                    start: at,
                    end: at + t.len,
                    id: t.id,
                });
                at += t.len;
            }
            return;
        }
        let mut segs = std::mem::take(&mut scratch.word);
        segs.clear();
        self.encode_span(vocab, word, scratch, &mut segs);
        out.extend(segs.iter().map(|s| Segment {
            start: s.start + base,
            end: s.end + base,
            id: s.id,
        }));
        // The segments tile the word (every symbol is emitted, and no UNUSED piece is split
        // back when words are cut), as both tiers require.
        let BpeScratch {
            cache,
            word_tokens,
            piece_tokens,
            ..
        } = scratch;
        match &key {
            Some(key) if cache.fits(segs.len()) => {
                word_tokens.clear();
                word_tokens.extend(segs.iter().map(|s| WordToken {
                    id: s.id,
                    start: s.start,
                    end: s.end,
                }));
                cache.put(key, word_tokens);
                cache.grow_if_thrashing();
            }
            _ => {
                piece_tokens.clear();
                piece_tokens.extend(segs.iter().map(|s| PieceToken {
                    id: s.id,
                    len: s.end - s.start,
                }));
                cache.put_long(word, piece_tokens);
            }
        }
        scratch.word = segs;
    }

    /// The BPE of `normalized` as one sequence of symbols, segments appended to `out`.
    fn encode_span(
        &self,
        vocab: &Vocab,
        normalized: &[u8],
        scratch: &mut BpeScratch,
        out: &mut Vec<Segment>,
    ) {
        if normalized.is_empty() {
            return;
        }
        let BpeScratch {
            symbols,
            heap,
            unmerge,
            ..
        } = scratch;
        symbols.clear();
        unmerge.clear();
        let mut at = 0usize;
        while at < normalized.len() {
            let (len, frozen) = self.first_symbol(&normalized[at..]);
            let index = symbols.len() as u32;
            symbols.push(Symbol {
                start: at as u32,
                end: (at + len) as u32,
                prev: if index == 0 { NIL } else { index - 1 },
                next: index + 1,
                id: self.symbol_id(vocab, &normalized[at..at + len]),
                pair_id: NIL,
                frozen,
            });
            at += len;
        }
        if let Some(last) = symbols.last_mut() {
            last.next = NIL;
        }
        heap.reset(symbols.len());
        for right in 1..symbols.len() as u32 {
            self.queue(vocab, normalized, symbols, heap, unmerge, right - 1, right);
        }
        while let Some(top) = heap.pop() {
            let left = top.left();
            let l = symbols[left as usize];
            if l.next == NIL {
                continue;
            }
            let right = l.next;
            let r = symbols[right as usize];
            // Stale: one side was merged away, or grew, since the pair was queued.
            if l.start == l.end
                || r.start == r.end
                || (l.end - l.start) + (r.end - r.start) != top.len()
            {
                continue;
            }
            let merged = Symbol {
                end: r.end,
                next: r.next,
                id: l.pair_id,
                ..l
            };
            symbols[left as usize] = merged;
            if r.next != NIL {
                symbols[r.next as usize].prev = left;
            }
            symbols[right as usize].end = symbols[right as usize].start; // now empty
            if merged.prev != NIL {
                self.queue(vocab, normalized, symbols, heap, unmerge, merged.prev, left);
            }
            if merged.next != NIL {
                self.queue(vocab, normalized, symbols, heap, unmerge, left, merged.next);
            }
        }
        let mut index = 0u32;
        while index != NIL {
            let s = symbols[index as usize];
            self.emit(vocab, normalized, unmerge, s.start, s.end, 0, out);
            index = s.next;
        }
    }

    /// The piece the two symbols make together, if they make one (NORMAL, USER_DEFINED or
    /// UNUSED: `PieceToIdNoReserved` minus the unknown and reserved pieces).
    #[inline]
    fn merged_id(&self, vocab: &Vocab, text: &[u8], l: Symbol, r: Symbol) -> Option<u32> {
        if l.id != NIL && r.id != NIL {
            // Both halves spell pieces (always, after the first merges): one integer lookup.
            self.pairs.get(&pair_key(l.id, r.id)).copied()
        } else {
            vocab.normal_id(&text[l.start as usize..r.end as usize])
        }
    }

    /// The id of the piece a symbol's bytes spell (any kind of piece), or [`NIL`].
    fn symbol_id(&self, vocab: &Vocab, bytes: &[u8]) -> u32 {
        match bytes {
            [b] if b.is_ascii() => self.ascii_ids[*b as usize],
            _ => vocab.id_of(bytes).unwrap_or(NIL),
        }
    }

    /// Queues the pair `left`+`right` if their concatenation is a piece and neither is frozen.
    #[allow(clippy::too_many_arguments)]
    fn queue(
        &self,
        vocab: &Vocab,
        text: &[u8],
        symbols: &mut [Symbol],
        heap: &mut Candidates,
        unmerge: &mut HashMap<Box<[u8]>, (u32, u32, u32, u32)>,
        left: u32,
        right: u32,
    ) {
        let (l, r) = (symbols[left as usize], symbols[right as usize]);
        if l.frozen || r.frozen || (r.end - l.start) as usize > self.max_piece_len {
            return;
        }
        let Some(id) = self.merged_id(vocab, text, l, r) else {
            return;
        };
        symbols[left as usize].pair_id = id;
        let piece = vocab.piece(id);
        heap.push(Pair::new(self.ranks[id as usize], left, r.end - l.start));
        if piece.kind == PieceKind::Unused {
            // Keyed by the piece's bytes; the last split queued wins, as in the reference.
            let key: Box<[u8]> = text[l.start as usize..r.end as usize].into();
            unmerge.insert(key, (l.start, l.end, r.start, r.end));
        }
    }

    /// Appends the piece `text[start..end]`, split back into the halves it was merged from while
    /// it is UNUSED (`resegment`, at most [`MAX_RESEGMENT_DEPTH`] levels deep). Text that is no
    /// piece, or only a reserved one (control, byte, unknown), becomes the unknown id.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        vocab: &Vocab,
        text: &[u8],
        unmerge: &HashMap<Box<[u8]>, (u32, u32, u32, u32)>,
        start: u32,
        end: u32,
        depth: usize,
        out: &mut Vec<Segment>,
    ) {
        let w = &text[start as usize..end as usize];
        let unknown = vocab.unknown_segment_id();
        let id = match vocab.id_of(w) {
            Some(id) if depth > MAX_RESEGMENT_DEPTH => id,
            _ if depth > MAX_RESEGMENT_DEPTH => unknown,
            Some(id) if matches!(vocab.kind(id), PieceKind::Normal | PieceKind::UserDefined) => id,
            Some(id) if vocab.kind(id) == PieceKind::Unused => match unmerge.get(w) {
                Some(&(a, b, c, d)) => {
                    self.emit(vocab, text, unmerge, a, b, depth + 1, out);
                    self.emit(vocab, text, unmerge, c, d, depth + 1, out);
                    return;
                }
                None => unknown,
            },
            _ => unknown,
        };
        out.push(Segment { start, end, id });
    }
}

/// How deep UNUSED pieces are split back (`kMaxBpeResegmentDepth`).
const MAX_RESEGMENT_DEPTH: usize = 100;

/// Whether a text may be cut before every U+2581 that follows another character: no pair
/// lookup can then join the two sides (no mergeable piece has a character other than U+2581
/// right before a U+2581), and no UNUSED piece can be merged (their splits are remembered per
/// text by the reference, see [`SpmBpe::encode`]).
fn words_are_independent(vocab: &Vocab) -> bool {
    vocab.pieces().iter().all(|p| {
        let mergeable = matches!(
            p.kind,
            PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused
        );
        if !mergeable || !p.indexed {
            return true;
        }
        if p.kind == PieceKind::Unused {
            return false;
        }
        let t = p.text.as_bytes();
        (1..t.len()).all(|i| !t[i..].starts_with(SPACE_SYMBOL) || t[..i].ends_with(SPACE_SYMBOL))
    })
}

/// The key of a pair of piece ids.
#[inline]
fn pair_key(left: u32, right: u32) -> u64 {
    ((left as u64) << 32) | right as u64
}

/// Hashes [`pair_key`]s: a multiply-shift of the two ids (they are dense small integers, so no
/// adversary controls them and a cryptographic hash would only cost).
#[derive(Clone, Copy, Debug, Default)]
struct IdPairHasher;

/// The state of [`IdPairHasher`].
#[derive(Default)]
struct IdPairState(u64);

impl std::hash::BuildHasher for IdPairHasher {
    type Hasher = IdPairState;
    fn build_hasher(&self) -> IdPairState {
        IdPairState(0)
    }
}

impl std::hash::Hasher for IdPairState {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        self.0 ^= self.0 >> 32;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
