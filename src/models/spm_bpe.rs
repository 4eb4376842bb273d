//! SentencePiece BPE: the text starts as one symbol per character (user-defined symbols whole
//! and frozen), and the adjacent pair whose concatenation is the best-scoring piece is merged
//! until no pair is a piece — `bpe::Model::SampleEncode` of `sentencepiece` without dropout.
//!
//! Symbols form a linked list over the text; candidate pairs wait in a max-heap ordered by score,
//! then by leftmost position. A pair whose symbols changed since it was queued is recognised by
//! its length and skipped (lazy deletion), so each merge costs O(log n): no rescan per merge.
//! A merge into an UNUSED piece is allowed and undone at the end by splitting the piece back
//! into the two halves it was made from, recursively, as the reference does.
//!
//! Two shortcuts give the same segments faster: words (cut before each `▁`, where no merge can
//! cross) go through the per-thread word cache shared with the other BPE encoders, and a long
//! span that is a few runs of one character (a megabyte of `a`) merges whole runs at a time
//! (`SpmBpe::encode_runs`, over [`crate::models::part_runs`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use simdtok_kernels::Kernels;

use crate::cache::long::LONG_PIECE;
use crate::cache::word::{self as word_cache, Key, MAX_WORD, WordCache};

use crate::load::spm_proto::PieceKind;
use crate::models::part_runs::{MAX_START_RUNS, Run, merge_runs};
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
    /// The runs of equal parts of a span made of a few runs ([`SpmBpe::encode_runs`]), and the
    /// byte ranges of its characters that spell no piece.
    runs: Vec<Run>,
    unspelled: Vec<(usize, usize)>,
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
    /// Whether spans may be merged as runs ([`SpmBpe::encode_runs`]): the model has no UNUSED
    /// piece, and its ids stay below [`UNSPELLED`].
    runs_allowed: bool,
    /// Per piece id, the rank of its score among the distinct scores, highest first.
    ranks: Vec<u32>,
    /// (left piece, right piece) → the piece they spell together, for every way of cutting
    /// every mergeable piece into two pieces: pair lookups by id instead of by bytes.
    pairs: HashMap<u64, u32, IdPairHasher>,
    /// The piece id of each one-byte ASCII symbol, or [`NIL`].
    ascii_ids: [u32; 128],
    /// No pair longer than the longest mergeable piece is looked up.
    max_piece_len: usize,
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
            runs_allowed: vocab.len() < UNSPELLED as usize
                && vocab.pieces().iter().all(|p| p.kind != PieceKind::Unused),
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

    /// Whether words are encoded one by one (see [`SpmBpe::encode`]): no merge crosses a
    /// `▁` that follows another character.
    pub fn splits_words(&self) -> bool {
        self.word_split
    }

    /// Segments `normalized` into `out` (cleared first).
    ///
    /// When the vocabulary allows it, the text is cut into words before each U+2581 that
    /// follows another character and the words are encoded one by one, through the per-thread
    /// word cache. This gives the reference's result exactly: no piece contains a
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
        let n = normalized.len();
        let key_of = |start: usize, end: usize| {
            (end - start <= MAX_WORD).then(|| Key::in_text(normalized, start, end - start))
        };
        let mut start = 0;
        let mut end = self.word_end(normalized, 0);
        let mut key = key_of(0, end);
        while start < n {
            // The next word's bounds and key, and its cache set on its way while this word
            // is done.
            let next_end = if end < n {
                self.word_end(normalized, end)
            } else {
                n
            };
            let next_key = if end < n { key_of(end, next_end) } else { None };
            if let Some(k) = &next_key {
                scratch.cache.prefetch(k);
            }
            self.encode_word(vocab, normalized, start..end, key, scratch, out);
            start = end;
            end = next_end;
            key = next_key;
        }
    }

    /// The end of the word that starts at `start` (not the text's end): the next U+2581 that
    /// follows another character, or the text's end.
    #[inline]
    fn word_end(&self, normalized: &[u8], start: usize) -> usize {
        crate::swar::find_from(normalized, start + 1, SPACE_SYMBOL, |p| {
            !normalized[..p].ends_with(SPACE_SYMBOL)
        })
        .unwrap_or(normalized.len())
    }

    /// Appends the segments of the word `text[span]`, from the cache when it is there: a word
    /// of up to [`MAX_WORD`] bytes (`key`, computed ahead) and four pieces in the short tier,
    /// any other in the long one (which stores a word the second time it is seen).
    fn encode_word(
        &self,
        vocab: &Vocab,
        text: &[u8],
        span: std::ops::Range<usize>,
        key: Option<Key>,
        scratch: &mut BpeScratch,
        out: &mut Vec<Segment>,
    ) {
        let word = &text[span.clone()];
        let base = span.start as u32;
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
            _ if word.len() <= LONG_PIECE => {
                piece_tokens.clear();
                piece_tokens.extend(segs.iter().map(|s| PieceToken {
                    id: s.id,
                    len: s.end - s.start,
                }));
                cache.put_long(word, piece_tokens);
            }
            _ => {}
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
        if normalized.is_empty()
            || (normalized.len() >= RUNS_FROM && self.encode_runs(vocab, normalized, scratch, out))
        {
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
            self.emit(vocab, normalized, unmerge, s, 0, out);
            index = s.next;
        }
    }

    /// When `text` starts as a few runs of one symbol each (a million `a`, `▁` and a line of
    /// `=`), merges it as runs of equal parts ([`merge_runs`]: the highest score first, the
    /// leftmost of equal scores, whole runs at a time where that provably gives what merging
    /// one pair at a time gives), appends its segments and returns `true`; `false`, with nothing
    /// appended, when it does not start so or `merge_runs` gives up. Only for models without
    /// UNUSED pieces (whose splitting back needs the merge history) and texts without
    /// user-defined symbols (which never merge).
    fn encode_runs(
        &self,
        vocab: &Vocab,
        text: &[u8],
        scratch: &mut BpeScratch,
        out: &mut Vec<Segment>,
    ) -> bool {
        if !self.runs_allowed {
            return false;
        }
        let BpeScratch {
            runs, unspelled, ..
        } = scratch;
        runs.clear();
        unspelled.clear();
        let mut at = 0;
        while at < text.len() {
            let (len, frozen) = self.first_symbol(&text[at..]);
            if frozen {
                return false;
            }
            let bytes = &text[at..at + len];
            let mut id = self.symbol_id(vocab, bytes);
            if id == NIL {
                // A character that spells no piece: an id of its own, past the vocabulary's,
                // so that a run of it stays one run and a run of another stays apart.
                let known = unspelled.iter().position(|&(s, e)| &text[s..e] == bytes);
                let k = match known {
                    Some(k) => k,
                    None if unspelled.len() == MAX_START_RUNS => return false,
                    None => {
                        unspelled.push((at, at + len));
                        unspelled.len() - 1
                    }
                };
                id = UNSPELLED + k as u32;
            }
            match runs.last_mut() {
                // One id, one spelling: the same length.
                Some(last) if last.id == id => last.count += 1,
                _ => {
                    if runs.len() == MAX_START_RUNS {
                        return false;
                    }
                    runs.push(Run {
                        id,
                        len: len as u32,
                        count: 1,
                    });
                }
            }
            at += len;
        }
        let part_bytes = |run: &Run| match run.id.checked_sub(UNSPELLED) {
            Some(k) => {
                let (s, e) = unspelled[k as usize];
                &text[s..e]
            }
            None => vocab.piece(run.id).text.as_bytes(),
        };
        // `merged_id` for parts: the pair table when both spell pieces, else the bytes.
        let merge = |a: &Run, b: &Run| -> (u32, u32) {
            if (a.len + b.len) as usize > self.max_piece_len {
                return (u32::MAX, NIL);
            }
            let merged = if a.id < UNSPELLED && b.id < UNSPELLED {
                self.pairs.get(&pair_key(a.id, b.id)).copied()
            } else {
                vocab.normal_id(&[part_bytes(a), part_bytes(b)].concat())
            };
            match merged {
                Some(id) => (self.ranks[id as usize], id),
                None => (u32::MAX, NIL),
            }
        };
        if !merge_runs(runs, merge) {
            return false;
        }
        let mut start = 0u32;
        for run in runs.iter() {
            // As `emit`: a part is its piece when that is NORMAL or USER_DEFINED (a merged
            // part always is), else unknown.
            let id = match run.id {
                id if id < UNSPELLED
                    && matches!(vocab.kind(id), PieceKind::Normal | PieceKind::UserDefined) =>
                {
                    id
                }
                _ => vocab.unknown_segment_id(),
            };
            out.extend((0..run.count as u32).map(|i| Segment {
                start: start + i * run.len,
                end: start + (i + 1) * run.len,
                id,
            }));
            start += run.count as u32 * run.len;
        }
        true
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
        heap.push(Pair::new(self.ranks[id as usize], left, r.end - l.start));
        // The kind from the vocabulary's compact array: a piece's full entry (40 bytes) is a
        // likely cache miss, paid here for every pair queued.
        if vocab.kind(id) == PieceKind::Unused {
            // Keyed by the piece's bytes; the last split queued wins, as in the reference.
            let key: Box<[u8]> = text[l.start as usize..r.end as usize].into();
            unmerge.insert(key, (l.start, l.end, r.start, r.end));
        }
    }

    /// Appends the piece of `symbol` (`text[start..end]`), split back into the halves it was
    /// merged from while it is UNUSED (`resegment`, at most [`MAX_RESEGMENT_DEPTH`] levels deep).
    /// Text that is no piece, or only a reserved one (control, byte, unknown), becomes the
    /// unknown id. The symbol's `id`, when known, is the piece its bytes spell (what
    /// `Vocab::id_of` would find, without hashing them again); [`NIL`] asks the vocabulary.
    fn emit(
        &self,
        vocab: &Vocab,
        text: &[u8],
        unmerge: &HashMap<Box<[u8]>, (u32, u32, u32, u32)>,
        symbol: Symbol,
        depth: usize,
        out: &mut Vec<Segment>,
    ) {
        let (start, end) = (symbol.start, symbol.end);
        if symbol.id != NIL
            && depth <= MAX_RESEGMENT_DEPTH
            && matches!(
                vocab.kind(symbol.id),
                PieceKind::Normal | PieceKind::UserDefined
            )
        {
            debug_assert_eq!(
                vocab.id_of(&text[start as usize..end as usize]),
                Some(symbol.id)
            );
            out.push(Segment {
                start,
                end,
                id: symbol.id,
            });
            return;
        }
        let w = &text[start as usize..end as usize];
        let unknown = vocab.unknown_segment_id();
        let id = match vocab.id_of(w) {
            Some(id) if depth > MAX_RESEGMENT_DEPTH => id,
            _ if depth > MAX_RESEGMENT_DEPTH => unknown,
            Some(id) if matches!(vocab.kind(id), PieceKind::Normal | PieceKind::UserDefined) => id,
            Some(id) if vocab.kind(id) == PieceKind::Unused => match unmerge.get(w) {
                Some(&(a, b, c, d)) => {
                    let half = |start, end| Symbol {
                        start,
                        end,
                        id: NIL,
                        ..symbol
                    };
                    self.emit(vocab, text, unmerge, half(a, b), depth + 1, out);
                    self.emit(vocab, text, unmerge, half(c, d), depth + 1, out);
                    return;
                }
                None => unknown,
            },
            _ => unknown,
        };
        out.push(Segment { start, end, id });
    }
}

/// Spans of at least this many bytes try [`SpmBpe::encode_runs`] first: a word is rarely a few
/// runs, and a short one merges fast either way.
const RUNS_FROM: usize = 64;

/// The ids [`SpmBpe::encode_runs`] gives characters that spell no piece: this and the next
/// [`MAX_START_RUNS`] - 1, above any vocabulary's ids.
const UNSPELLED: u32 = u32::MAX - MAX_START_RUNS as u32;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::spm_proto::SpmPiece;
    use crate::models::test_text::TestText;

    fn piece(text: &str, score: f32, kind: PieceKind) -> SpmPiece {
        SpmPiece {
            text: text.to_owned(),
            score,
            kind,
            indexed: true,
        }
    }

    /// A vocabulary over `▁`, `a`, `b` (and `c`, which spells no piece alone but is in `cc` and
    /// `cca`): runs of `a` of random lengths, `▁` and `b` joined to a few of them, each with a
    /// score drawn from a handful, so that many pairs tie.
    fn run_vocab(g: &mut TestText) -> Vocab {
        let score = |g: &mut TestText| -(g.below(6) as f32);
        let mut pieces = vec![
            piece("<unk>", 0.0, PieceKind::Unknown),
            piece("▁", -1.0, PieceKind::Normal),
            piece("a", -1.0, PieceKind::Normal),
            piece("b", -1.0, PieceKind::Normal),
        ];
        for k in 2..=12 {
            if g.below(3) != 0 {
                pieces.push(piece(&"a".repeat(k), score(g), PieceKind::Normal));
            }
            for prefix in ["▁", "b", "▁b", "cc"] {
                if g.below(4) == 0 {
                    let text = format!("{prefix}{}", "a".repeat(k - 1));
                    pieces.push(piece(&text, score(g), PieceKind::Normal));
                }
            }
        }
        for extra in ["ab", "ba", "bb", "▁b", "cc", "cca"] {
            pieces.push(piece(extra, score(g), PieceKind::Normal));
        }
        pieces.sort_by(|x, y| x.text.cmp(&y.text));
        pieces.dedup_by(|x, y| x.text == y.text);
        let unk = pieces.iter().position(|p| p.kind == PieceKind::Unknown);
        Vocab::new(pieces, unk.map(|u| u as u32), Kernels::scalar())
    }

    /// The reference's loop, one merge at a time: the pair that spells the best-scoring piece,
    /// the leftmost of equal scores, until no pair spells a piece.
    fn naive(vocab: &Vocab, text: &[u8]) -> Vec<Segment> {
        let mut parts: Vec<(usize, usize)> = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let n = one_char_len(text[at]);
            parts.push((at, at + n));
            at += n;
        }
        loop {
            let mut best: Option<(f32, usize)> = None;
            for i in 0..parts.len().saturating_sub(1) {
                if let Some(id) = vocab.normal_id(&text[parts[i].0..parts[i + 1].1]) {
                    let score = vocab.piece(id).score;
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            parts[i].1 = parts.remove(i + 1).1;
        }
        parts
            .iter()
            .map(|&(s, e)| Segment {
                start: s as u32,
                end: e as u32,
                id: vocab
                    .id_of(&text[s..e])
                    .filter(|&id| vocab.kind(id) == PieceKind::Normal)
                    .unwrap_or(vocab.unknown_segment_id()),
            })
            .collect()
    }

    /// A text of up to four runs of `▁`, `a`, `b` or `c`, long enough to take the runs path.
    fn run_text(g: &mut TestText) -> String {
        let mut text = String::from("▁");
        for _ in 0..1 + g.below(4) {
            let symbol = ["a", "a", "b", "c", "▁"][g.below(5) as usize];
            let count = [1, 2, 3, 7, 64, 65, 200][g.below(7) as usize];
            text.push_str(&symbol.repeat(count));
        }
        while text.len() < RUNS_FROM {
            text.push('a');
        }
        text
    }

    /// Merging a few runs at once gives the reference's segments, as the one-merge-at-a-time
    /// path does, on vocabularies full of ties.
    #[test]
    fn runs_merge_as_the_reference_and_the_general_path() {
        let mut g = TestText::new(0x510E_527F);
        let (mut took_runs, mut scratch) = (0, BpeScratch::default());
        for _ in 0..200 {
            let vocab = run_vocab(&mut g);
            let mut model = SpmBpe::new(&vocab, &[], Kernels::scalar()).unwrap();
            for _ in 0..20 {
                let text = run_text(&mut g);
                let want = naive(&vocab, text.as_bytes());
                let mut got = Vec::new();
                model.runs_allowed = true;
                if model.encode_runs(&vocab, text.as_bytes(), &mut scratch, &mut got) {
                    took_runs += 1;
                    assert_eq!(got, want, "runs, {text:?}");
                }
                got.clear();
                model.runs_allowed = false;
                model.encode_span(&vocab, text.as_bytes(), &mut scratch, &mut got);
                assert_eq!(got, want, "one merge at a time, {text:?}");
            }
        }
        assert!(
            took_runs > 200 * 20 / 2,
            "took the runs path {took_runs} times"
        );
    }

    /// A million `a` (after `▁`) in time that does not grow with the run, through the whole
    /// model, with a vocabulary as training makes them (a longer run scores lower than its
    /// halves): the segments tile the text, and begin as a shorter run's do.
    #[test]
    fn a_long_run_takes_the_runs_path() {
        let mut pieces = vec![
            piece("<unk>", 0.0, PieceKind::Unknown),
            piece("▁", -1.0, PieceKind::Normal),
            piece("a", -1.0, PieceKind::Normal),
            piece("▁a", -2.5, PieceKind::Normal),
        ];
        for k in 2..=16 {
            pieces.push(piece(&"a".repeat(k), -(k as f32), PieceKind::Normal));
        }
        let vocab = Vocab::new(pieces, Some(0), Kernels::scalar());
        let model = SpmBpe::new(&vocab, &[], Kernels::scalar()).unwrap();
        let text = format!("▁{}", "a".repeat(1_000_000));
        let mut scratch = BpeScratch::default();
        let mut got = Vec::new();
        assert!(model.encode_runs(&vocab, text.as_bytes(), &mut scratch, &mut got));
        let mut at = 0;
        for s in &got {
            assert_eq!(s.start, at);
            at = s.end;
        }
        assert_eq!(at as usize, text.len());
        let short = naive(&vocab, &text.as_bytes()[..1003]);
        assert_eq!(got[..short.len() - 2], short[..short.len() - 2]);
    }

    /// Word by word through the cache (keys computed a word ahead, sets prefetched) gives the
    /// single pass's segments: words of every length around the short tier's limit, runs of
    /// `▁` (which stay with the word after them), `▁` first, last and alone, repeated words
    /// (cache hits) and unknown characters.
    #[test]
    fn word_by_word_equals_the_single_pass() {
        let mut g = TestText::new(0x9B05_688C);
        for _ in 0..60 {
            let vocab = run_vocab(&mut g);
            let model = SpmBpe::new(&vocab, &[], Kernels::scalar()).unwrap();
            assert!(model.word_split, "the vocabulary allows words");
            let mut scratch = BpeScratch::default();
            let words: Vec<String> = (0..12)
                .map(|_| {
                    let len =
                        [1, 2, 5, MAX_WORD - 1, MAX_WORD, MAX_WORD + 1, 40][g.below(7) as usize];
                    (0..len)
                        .map(|_| ["a", "a", "b", "c", "d"][g.below(5) as usize])
                        .collect()
                })
                .collect();
            for _ in 0..20 {
                let mut text = String::new();
                for _ in 0..g.below(30) {
                    text.push_str(&"▁".repeat([0, 1, 1, 1, 2, 3][g.below(6) as usize]));
                    text.push_str(&words[g.below(words.len() as u32) as usize]);
                }
                text.push_str(&"▁".repeat(g.below(3) as usize));
                let (mut by_words, mut whole) = (Vec::new(), Vec::new());
                model.encode(&vocab, text.as_bytes(), &mut scratch, &mut by_words);
                model.encode_span(&vocab, text.as_bytes(), &mut scratch, &mut whole);
                assert_eq!(by_words, whole, "{text:?}");
            }
        }
    }

    #[test]
    fn words_stay_exact_as_the_cache_grows_and_spills() {
        // Sixteen letters, every pair of them a piece and `▁` before each: enough distinct
        // words of a few tokens for the short tier to grow and words to go to their second
        // sets. Two passes, so that the second is answered from the cache — every word as the
        // single pass gives it.
        let mut g = TestText::new(0x51_7E7E);
        let letters: Vec<char> = ('a'..='p').collect();
        let mut pieces = vec![
            piece("<unk>", 0.0, PieceKind::Unknown),
            piece("▁", -1.0, PieceKind::Normal),
        ];
        for &x in &letters {
            pieces.push(piece(&x.to_string(), -1.0, PieceKind::Normal));
            pieces.push(piece(
                &format!("▁{x}"),
                -(g.below(8) as f32),
                PieceKind::Normal,
            ));
            for &y in &letters {
                pieces.push(piece(
                    &format!("{x}{y}"),
                    -(g.below(8) as f32),
                    PieceKind::Normal,
                ));
            }
        }
        let vocab = Vocab::new(pieces, Some(0), Kernels::scalar());
        let model = SpmBpe::new(&vocab, &[], Kernels::scalar()).unwrap();
        let mut scratch = BpeScratch::default();
        let words: Vec<String> = (0..200_000)
            .map(|_| {
                let word: String = (0..4 + g.below(4))
                    .map(|_| letters[g.below(16) as usize])
                    .collect();
                format!("▁{word}")
            })
            .collect();
        let (mut cached, mut whole) = (Vec::new(), Vec::new());
        for pass in 0..2 {
            for word in &words {
                model.encode(&vocab, word.as_bytes(), &mut scratch, &mut cached);
                whole.clear();
                model.encode_span(&vocab, word.as_bytes(), &mut scratch, &mut whole);
                assert_eq!(cached, whole, "pass {pass}: {word:?}");
            }
        }
        assert!(scratch.cache.slots() > 1 << 16, "the short tier grew");
    }
}
