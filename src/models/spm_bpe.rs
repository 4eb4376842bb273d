//! SentencePiece BPE: the text starts as one symbol per character (user-defined symbols whole
//! and frozen), and the adjacent pair whose concatenation is the best-scoring piece is merged
//! until no pair is a piece — `bpe::Model::SampleEncode` of `sentencepiece` without dropout.
//!
//! Symbols form a linked list over the text; candidate pairs wait in a max-heap ordered by score,
//! then by leftmost position. A pair whose symbols changed since it was queued is recognised by
//! its length and skipped (lazy deletion), so each merge costs O(log n): no rescan per merge.
//! A merge into an UNUSED piece is allowed and undone at the end by splitting the piece back
//! into the two halves it was made from, recursively, as the reference does.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use simdtok_kernels::{ByteSet, DoubleArray, Kernels};

use crate::load::spm_proto::PieceKind;
use crate::models::unigram::Segment;
use crate::models::vocab::Vocab;
use crate::normalize::spm::{SPACE_SYMBOL, one_char_len};

#[derive(Clone, Copy, Debug)]
struct Symbol {
    start: u32,
    end: u32,
    prev: u32,
    next: u32,
    frozen: bool,
}

const NIL: u32 = u32::MAX;

/// A queued pair: merging symbol `left` with its right neighbour gives a piece of `score`,
/// `len` bytes long.
#[derive(Clone, Copy, Debug)]
struct Pair {
    score: f32,
    left: u32,
    right: u32,
    len: u32,
}

impl PartialEq for Pair {
    fn eq(&self, other: &Pair) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pair {}

impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Pair) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pair {
    /// Higher score first; on equal scores the leftmost pair first (the reference's comparator).
    fn cmp(&self, other: &Pair) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
    }
}

/// Reusable buffers of one encoding thread.
#[derive(Default, Debug)]
pub struct BpeScratch {
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Pair>,
    /// Merged UNUSED piece → the two pieces it was made from (byte ranges of the text).
    unmerge: HashMap<Box<[u8]>, (u32, u32, u32, u32)>,
    /// Segments of recently seen words (relative to the word), for the model `cache_owner`.
    cache: HashMap<Box<[u8]>, Box<[Segment]>>,
    cache_owner: Option<usize>,
    /// The segments of the word being encoded.
    word: Vec<Segment>,
}

/// A SentencePiece BPE model over a vocabulary.
#[derive(Debug)]
pub struct SpmBpe {
    user_symbols: Option<DoubleArray>,
    /// Whether the text may be cut into words before each U+2581 that follows another
    /// character (see [`SpmBpe::encode`]).
    word_split: bool,
    /// Distinguishes this model's entries in the per-thread word cache.
    id: usize,
    space_lead: ByteSet,
    kernels: &'static Kernels,
}

/// Words up to this many bytes are cached; the cache holds at most [`CACHE_WORDS`] of them per
/// thread and starts over when full, so its memory stays bounded.
const CACHE_WORD_BYTES: usize = 64;
const CACHE_WORDS: usize = 1 << 15;

impl SpmBpe {
    /// `user_symbols` are the model's USER_DEFINED pieces.
    pub fn new(
        vocab: &Vocab,
        user_symbols: &[&str],
        kernels: &'static Kernels,
    ) -> Result<SpmBpe, String> {
        static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
        let user_symbols_trie = if user_symbols.is_empty() {
            None
        } else {
            let entries: Vec<(&[u8], u32)> =
                user_symbols.iter().map(|s| (s.as_bytes(), 0)).collect();
            Some(DoubleArray::build(&entries).map_err(|e| format!("user-defined symbols: {e}"))?)
        };
        Ok(SpmBpe {
            user_symbols: user_symbols_trie,
            word_split: words_are_independent(vocab),
            id: NEXT_ID.fetch_add(1, AtomicOrdering::Relaxed),
            space_lead: ByteSet::of_bytes(&SPACE_SYMBOL[..1]),
            kernels,
        })
    }

    /// The first symbol of `text`: the longest user-defined symbol there (frozen), else one
    /// character by its lead byte (`PrefixMatcher::PrefixMatch`).
    fn first_symbol(&self, text: &[u8]) -> (usize, bool) {
        if let Some(user) = &self.user_symbols {
            let mut longest = 0;
            self.kernels
                .trie_prefix_walk(user, text, |len, _| longest = len as usize);
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
        if scratch.cache_owner != Some(self.id) {
            scratch.cache.clear();
            scratch.cache_owner = Some(self.id);
        }
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

    /// Appends the segments of the word `text[start..end]`, from the cache when it is there.
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
        let shift = |segs: &[Segment], out: &mut Vec<Segment>| {
            out.extend(segs.iter().map(|s| Segment {
                start: s.start + start as u32,
                end: s.end + start as u32,
                id: s.id,
            }));
        };
        if word.len() <= CACHE_WORD_BYTES
            && let Some(segs) = scratch.cache.get(word)
        {
            shift(segs, out);
            return;
        }
        let mut segs = std::mem::take(&mut scratch.word);
        segs.clear();
        self.encode_span(vocab, word, scratch, &mut segs);
        shift(&segs, out);
        if word.len() <= CACHE_WORD_BYTES {
            if scratch.cache.len() >= CACHE_WORDS {
                scratch.cache.clear();
            }
            scratch.cache.insert(word.into(), segs.as_slice().into());
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
        heap.clear();
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
                frozen,
            });
            at += len;
        }
        if let Some(last) = symbols.last_mut() {
            last.next = NIL;
        }
        for right in 1..symbols.len() as u32 {
            self.queue(vocab, normalized, symbols, heap, unmerge, right - 1, right);
        }
        while let Some(top) = heap.pop() {
            let (l, r) = (symbols[top.left as usize], symbols[top.right as usize]);
            // Stale: one side was merged away, or grew, since the pair was queued.
            if l.start == l.end
                || r.start == r.end
                || (l.end - l.start) + (r.end - r.start) != top.len
            {
                continue;
            }
            let merged = Symbol {
                end: r.end,
                next: r.next,
                ..l
            };
            symbols[top.left as usize] = merged;
            if r.next != NIL {
                symbols[r.next as usize].prev = top.left;
            }
            symbols[top.right as usize].end = symbols[top.right as usize].start; // now empty
            if merged.prev != NIL {
                self.queue(
                    vocab,
                    normalized,
                    symbols,
                    heap,
                    unmerge,
                    merged.prev,
                    top.left,
                );
            }
            if merged.next != NIL {
                self.queue(
                    vocab,
                    normalized,
                    symbols,
                    heap,
                    unmerge,
                    top.left,
                    merged.next,
                );
            }
        }
        let mut index = 0u32;
        while index != NIL {
            let s = symbols[index as usize];
            self.emit(vocab, normalized, unmerge, s.start, s.end, 0, out);
            index = s.next;
        }
    }

    /// Queues the pair `left`+`right` if their concatenation is a piece and neither is frozen.
    #[allow(clippy::too_many_arguments)]
    fn queue(
        &self,
        vocab: &Vocab,
        text: &[u8],
        symbols: &[Symbol],
        heap: &mut BinaryHeap<Pair>,
        unmerge: &mut HashMap<Box<[u8]>, (u32, u32, u32, u32)>,
        left: u32,
        right: u32,
    ) {
        let (l, r) = (symbols[left as usize], symbols[right as usize]);
        if l.frozen || r.frozen {
            return;
        }
        let Some(id) = vocab.normal_id(&text[l.start as usize..r.end as usize]) else {
            return;
        };
        let piece = vocab.piece(id);
        heap.push(Pair {
            score: piece.score,
            left,
            right,
            len: r.end - l.start,
        });
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
