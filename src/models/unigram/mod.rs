//! The unigram language model: the most probable segmentation of a normalized text into
//! vocabulary pieces, by Viterbi over the lattice of all pieces that occur in it.
//!
//! This follows `unigram::Model::EncodeOptimized` of `sentencepiece` 0.2.3 to the bit, because
//! ties and rounding decide real outputs (runs of `─` in box drawings are the classic case):
//! - the best path *ending* at each byte position is kept (the lattice itself is never stored);
//!   positions are visited left to right, one UTF-8 character at a time, and every piece
//!   starting there (a common-prefix search in the double-array trie, shortest first) offers a
//!   candidate for the position where it ends;
//! - a candidate replaces the current best only when its score is *strictly* greater, so on a
//!   tie the path whose last piece starts earliest wins;
//! - all scores are `f32` and added in `f32`; user-defined pieces score `0.1 × (bytes − 1)`; a
//!   character no one-character piece covers gets the unknown piece at `min score − 10`;
//! - when the score of the path reaching the current position leaves ±100 000, every stored
//!   score from there to the furthest position reached is shifted by it (the reference's guard
//!   against float precision loss on long inputs), which changes later roundings exactly as
//!   there;
//! - UNUSED pieces are in the trie but never chosen.
//!
//! When no piece holds a `▁` after its first character, the text is segmented word by word
//! (a word is a `▁` and what follows up to the next one), and a word seen before reuses its
//! cached path when the running score provably cannot change it ([`guard`] has the proof).

mod first_char;
pub mod guard;
pub mod hf;
mod part;
mod sink;
#[cfg(test)]
mod tests;

use simdtok_kernels::{DoubleArray, Kernels, PruneTable};

use first_char::{FirstChar, FirstChars, bmp_code_point};
pub use sink::{IdSink, SegmentSink, UnknownAt};

use crate::cache::long::LongTokens;
use crate::cache::unigram::{MAX_KEY, MAX_LONG_WORD, PathPiece, UnigramCache, WordKey};
use crate::cache::word::new_owner;
use crate::load::spm_proto::PieceKind;
use crate::models::vocab::Vocab;
use crate::normalize::spm::one_char_len;
use crate::swar;

/// A piece of the segmentation: a byte range of the normalized text and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: u32,
    pub end: u32,
    pub id: u32,
}

/// Best path ending at one position.
#[derive(Clone, Copy, Debug)]
struct BestNode {
    score: f32,
    /// Start of the path's last piece; `u32::MAX` while no path ends here.
    start: u32,
    id: u32,
}

const NONE: u32 = u32::MAX;

/// Reusable buffers of one encoding thread, and its word cache.
#[derive(Default, Debug)]
pub struct UnigramScratch {
    best: Vec<BestNode>,
    /// The reference's pass's segments, last first, as its backtrack finds them.
    back: Vec<Segment>,
    exact: Vec<guard::ExactNode>,
    path: Vec<PathPiece>,
    cache: UnigramCache,
    /// A part's plan, before its running score is known ([`Unigram::encode_part`]).
    plan: part::PartPlan,
    /// The planned words whose reference pass replaces their planned segments.
    redone: part::Redone,
    /// Words whose cached path was reused, and words the guard sent to the full pass.
    #[cfg(test)]
    reused: usize,
    /// Long words (the long tier's) whose cached path was reused, and those whose path a
    /// part's plan took from the tier.
    #[cfg(test)]
    reused_long: usize,
    #[cfg(test)]
    planned_long: usize,
    #[cfg(test)]
    guarded: usize,
    /// Parts that planned some words, then took the plain pass once their score came.
    #[cfg(test)]
    switched: usize,
    /// Runs of planned words whose limits all held in the chain, runs that it ran again word
    /// by word, runs of them with a word that had no path, and planned words whose reference
    /// pass replaced their planned segments.
    #[cfg(test)]
    chained: usize,
    #[cfg(test)]
    rerun: usize,
    #[cfg(test)]
    pathless: usize,
    #[cfg(test)]
    replaced: usize,
    /// Walk at every position of a run of one character too (see [`RunCandidates`]).
    #[cfg(test)]
    no_runs: bool,
}

/// Where a part ([`Unigram::encode_part`]) gets the running score at its start, and where it
/// hands the one at its end.
pub trait RunningScore {
    /// The score at the part's start, when it is known already.
    fn ready(&mut self) -> Option<f32>;
    /// The score at the part's start, waiting for it.
    fn wait(&mut self) -> f32;
    /// The score at the part's end.
    fn done(&mut self, score: f32);
}

/// What [`Unigram::for_each_candidate`] found at a position besides its candidates.
#[derive(Clone, Copy, Debug)]
struct Walked {
    /// The length of the character there (cut short at the text's end).
    mblen: usize,
    /// How many bytes from the position decide the candidates: any later position of the same
    /// text with these bytes has the same ones. At least the whole character (so `mblen` is its
    /// full length wherever they are found). A walk that read up to the text's end (and might
    /// have gone on in a longer text) needs bytes past the end at any later position, so it
    /// matches none.
    decided_by: usize,
}

/// The candidates of the last position of a run of one character ([`Unigram::viterbi`]).
/// Inside a run (`aaaa…`, `────…`, `日日日…`), every position reads the same bytes until the
/// walk leaves the trie, so it has the same candidates: they are offered again without a walk.
/// Only positions followed by the same character record theirs, so text without runs pays a
/// comparison of two characters per position.
#[derive(Clone, Copy, Debug, Default)]
struct RunCandidates {
    /// Where they were found, and how many bytes from there decided them (0: none held).
    at: usize,
    decided_by: usize,
    mblen: usize,
    n: usize,
    ids_lens: [(u32, u32); RUN_CANDIDATES],
    scores: [f32; RUN_CANDIDATES],
}

/// The most candidates [`RunCandidates`] holds (XLM-R has 16 pieces of `a`s alone).
const RUN_CANDIDATES: usize = 24;

impl RunCandidates {
    /// Whether the candidates held are those of position `pos` of `text`.
    #[inline]
    fn apply_at(&self, text: &[u8], pos: usize) -> bool {
        let d = self.decided_by;
        // The first byte alone rules out nearly every other position, without a call to
        // `memcmp`.
        d != 0
            && text[pos] == text[self.at]
            && text
                .get(pos..pos + d)
                .is_some_and(|here| here == &text[self.at..self.at + d])
    }

    #[inline]
    fn push(&mut self, len: usize, id: u32, score: f32) {
        if let Some(slot) = self.ids_lens.get_mut(self.n) {
            *slot = (id, len as u32);
            self.scores[self.n] = score;
        }
        self.n += 1;
    }
}

/// Whether the character at `pos` (of `len` bytes) is followed by the same character.
#[inline]
fn repeats_next(text: &[u8], pos: usize, len: usize) -> bool {
    // Byte by byte (a character is at most four): no call to `memcmp` at every position.
    pos + 2 * len <= text.len() && (0..len).all(|i| text[pos + i] == text[pos + len + i])
}

/// The bytes of U+2581, which starts every word of a normalized text.
const SPACE: [u8; 3] = [0xE2, 0x96, 0x81];

/// A unigram model over a vocabulary.
#[derive(Debug)]
pub struct Unigram {
    trie: DoubleArray,
    /// Per piece id, the score its lattice nodes get: the piece's own, or for user-defined
    /// pieces `0.1 × (bytes − 1)`; NaN for UNUSED pieces, which are never chosen.
    scores: Vec<f32>,
    unk_score: f32,
    unk_id: u32,
    /// First-byte pruning: per byte value, the byte length of the longest piece starting with
    /// it (0: none, so no walk; 255: 255 or more). The walk from a position never looks further.
    /// Looked up one position at a time: the Viterbi loop visits each character start once.
    prune: PruneTable,
    kernels: &'static Kernels,
    /// Whether no choosable piece holds a `▁` after its first character, so the text can be
    /// segmented word by word (see [`guard`]).
    words_independent: bool,
    /// This model's claim on a thread's word cache.
    cache_owner: usize,
    /// The bits of its widest piece id (the unknown piece's included), for the cache's packing.
    id_bits: u32,
    /// Where each character up to U+FFFF leads in `trie`, to start walks after it.
    first_chars: Option<FirstChars>,
}

/// The reference's unknown penalty (`kUnkPenalty`).
const UNK_PENALTY: f32 = 10.0;

/// Path scores beyond ± this are shifted back to 0 (`kScoreResetThreshold`).
const SCORE_RESET: f32 = 100_000.0;

/// The running score at a word's start as the reference leaves it: shifted to exactly 0 once it
/// is past ±[`SCORE_RESET`] (at a word start the shift moves no other node: see [`guard`]).
#[inline(always)]
fn shifted_at_word_start(base: f32) -> f32 {
    if (-SCORE_RESET..=SCORE_RESET).contains(&base) {
        base
    } else {
        0.0
    }
}

/// `GetUserDefinedScore`: `0.1 × (length − 1)`, computed in double and stored as float; longer
/// user-defined pieces win, and any of them beats normal pieces (whose scores are ≤ 0).
fn user_defined_score(len: usize) -> f32 {
    (0.1 * (len as i32 - 1) as f64) as f32
}

impl Unigram {
    /// Builds the trie of the vocabulary's NORMAL, USER_DEFINED and UNUSED pieces.
    pub fn new(vocab: &Vocab, kernels: &'static Kernels) -> Result<Unigram, String> {
        let mut min_score = f32::MAX;
        let mut entries: Vec<(&[u8], u32)> = Vec::new();
        for (id, p) in vocab.pieces().iter().enumerate() {
            if p.kind == PieceKind::Normal {
                min_score = min_score.min(p.score);
            }
            let matchable = matches!(
                p.kind,
                PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused
            );
            if matchable && p.indexed {
                entries.push((p.text.as_bytes(), id as u32));
            }
        }
        if entries.is_empty() {
            return Err("the unigram model has no pieces to segment with".into());
        }
        let trie =
            DoubleArray::build(&entries).map_err(|e| format!("cannot index the pieces: {e}"))?;
        let mut longest = [0u8; 256];
        for (key, _) in &entries {
            let l = &mut longest[key[0] as usize];
            *l = (*l).max(key.len().min(255) as u8);
        }
        let words_independent = vocab.pieces().iter().all(|p| {
            let choosable = matches!(p.kind, PieceKind::Normal | PieceKind::UserDefined);
            let rest = p
                .text
                .get(p.text.chars().next().map_or(0, char::len_utf8)..);
            !(choosable && p.indexed)
                || (rest.is_some_and(|r| !r.contains('\u{2581}')) && p.score.is_finite())
        }) && (min_score - UNK_PENALTY).is_finite();
        let scores = vocab
            .pieces()
            .iter()
            .map(|p| match p.kind {
                PieceKind::Unused => f32::NAN,
                PieceKind::UserDefined => user_defined_score(p.text.len()),
                _ => p.score,
            })
            .collect::<Vec<f32>>();
        let unk_id = vocab.unknown_segment_id();
        let widest = unk_id.max(scores.len().saturating_sub(1) as u32);
        Ok(Unigram {
            id_bits: u32::BITS - widest.leading_zeros(),
            first_chars: FirstChars::build(&trie, &scores),
            prune: PruneTable::new(longest),
            trie,
            scores,
            unk_score: min_score - UNK_PENALTY,
            unk_id,
            kernels,
            words_independent,
            cache_owner: new_owner(),
        })
    }

    /// Bytes of memory the piece trie takes (with the table of where characters lead in it).
    pub fn trie_bytes(&self) -> usize {
        self.trie.memory_bytes()
            + self
                .first_chars
                .as_ref()
                .map_or(0, FirstChars::memory_bytes)
    }

    /// The same model walking from the root at every position (tests compare the two).
    #[cfg(test)]
    fn without_first_chars(mut self) -> Unigram {
        self.first_chars = None;
        self
    }

    /// Whether the text is segmented word by word, with the word cache.
    pub fn caches_words(&self) -> bool {
        self.words_independent
    }

    /// Segments `normalized` (valid UTF-8) into `out` (cleared first), left to right.
    pub fn encode(&self, normalized: &[u8], scratch: &mut UnigramScratch, out: &mut Vec<Segment>) {
        self.encode_with(normalized, scratch, out, self.words_independent);
    }

    /// [`Unigram::encode`] into any sink (not cleared): the ids alone, for one.
    pub fn encode_to(
        &self,
        normalized: &[u8],
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) {
        self.segment_into(normalized, scratch, out, self.words_independent);
    }

    /// Appends the segments of `normalized` to `out`: word by word with the cache when
    /// `by_words` (which the model must allow), else in one pass.
    fn segment_into(
        &self,
        normalized: &[u8],
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
        by_words: bool,
    ) {
        if normalized.is_empty() {
            return;
        }
        if by_words {
            self.encode_words(normalized, 0, 0.0, scratch, out);
        } else {
            self.viterbi(normalized, 0, 0.0, scratch, out);
        }
    }

    /// Analyses a long word seen before (its path into `scratch.path`) and stores it in the
    /// long tier; returns its bound.
    fn analyze_long(&self, word: &[u8], scratch: &mut UnigramScratch) -> f32 {
        let max_base = self.analyze(word, &mut scratch.exact, &mut scratch.path);
        scratch.cache.put_long(word, max_base, &scratch.path);
        max_base
    }

    /// The pieces of a path from the long tier (ids and byte lengths) with their scores and
    /// their ends within the word (at most [`MAX_LONG_WORD`] bytes: an end fits a byte).
    #[inline]
    fn long_path(&self, tokens: LongTokens<'_>) -> impl Iterator<Item = PathPiece> {
        let mut end = 0u32;
        tokens.map(move |t| {
            end += t.len;
            PathPiece {
                id: t.id,
                score: self.piece_score(t.id),
                end: end as u8,
            }
        })
    }

    /// [`Unigram::encode`], word by word with the cache when `by_words` (which the model must
    /// allow), else in one pass: the two give the same segments (tests compare them).
    pub fn encode_with(
        &self,
        normalized: &[u8],
        scratch: &mut UnigramScratch,
        out: &mut Vec<Segment>,
        by_words: bool,
    ) {
        out.clear();
        self.segment_into(normalized, scratch, out, by_words);
    }

    /// The word-by-word pass over `normalized` (not empty) from the word start `from` on, from
    /// the running score `base` there, appending to `out`; returns the running score at its end.
    fn encode_words(
        &self,
        normalized: &[u8],
        from: usize,
        mut base: f32,
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) -> f32 {
        assert!(self.words_independent, "the model's pieces span words");
        scratch.cache.claim(self.cache_owner, self.id_bits);
        for_each_word(normalized, from, scratch, |scratch, span, key| {
            base = self.encode_word(normalized, span, key, base, scratch, out);
            true
        });
        base
    }

    /// Segments the word `text[span]`, whose path starts from the running score `base`,
    /// appending to `out`; returns the running score at its end. `key` is its cache key,
    /// computed ahead (`None` for a word too long for the cache).
    fn encode_word(
        &self,
        text: &[u8],
        span: std::ops::Range<usize>,
        key: Option<WordKey>,
        mut base: f32,
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) -> f32 {
        let (start, end) = (span.start, span.end);
        base = shifted_at_word_start(base);
        let word = &text[start..end];
        if word.len() > MAX_KEY {
            if word.len() <= MAX_LONG_WORD {
                return self.encode_long_word(word, start, base, scratch, out);
            }
            return self.viterbi(word, start, base, scratch, out);
        }
        if scratch.cache.skips() {
            return self.viterbi(word, start, base, scratch, out);
        }
        let len = word.len();
        let key = key.unwrap_or_else(|| UnigramCache::word_key(text, start, len));
        let Some(hit) = scratch.cache.get_keyed(&key) else {
            let max_base = self.analyze(word, &mut scratch.exact, &mut scratch.path);
            scratch
                .cache
                .put_path(text, start, len, max_base, &scratch.path, |id| {
                    self.piece_score(id)
                });
            return self.analysed(word, start, base, max_base, scratch, out);
        };
        if base.abs() >= hit.max_base {
            return self.guarded(word, start, base, scratch, out);
        }
        #[cfg(test)]
        {
            scratch.reused += 1;
        }
        let mut laid = LaidPath::new(start, base);
        scratch
            .cache
            .for_each_piece(&hit, |id| self.piece_score(id), |p| laid.push(p, out));
        laid.base
    }

    /// [`Unigram::encode_word`] for a word of more than [`MAX_KEY`] bytes (at most
    /// [`MAX_LONG_WORD`]) at `start`, from the running score `base` (already shifted): its path
    /// from the long tier under the same guard as the table's; a word seen for the first time
    /// takes the reference's pass, and at its second sight it is analysed and stored.
    fn encode_long_word(
        &self,
        word: &[u8],
        start: usize,
        base: f32,
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) -> f32 {
        let seen = match scratch.cache.get_long(word) {
            Err(seen) => seen,
            Ok((max_base, tokens)) => {
                if base.abs() < max_base {
                    let mut laid = LaidPath::new(start, base);
                    for p in self.long_path(tokens) {
                        laid.push(p, out);
                    }
                    #[cfg(test)]
                    {
                        scratch.reused_long += 1;
                    }
                    return laid.base;
                }
                return self.guarded(word, start, base, scratch, out);
            }
        };
        if !seen {
            return self.viterbi(word, start, base, scratch, out);
        }
        let max_base = self.analyze_long(word, scratch);
        self.analysed(word, start, base, max_base, scratch, out)
    }

    /// The word at `start` from the running score `base`, just analysed (its path in
    /// `scratch.path`, its bound `max_base`): the path where the guard allows it, else the
    /// reference's pass.
    fn analysed(
        &self,
        word: &[u8],
        start: usize,
        base: f32,
        max_base: f32,
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) -> f32 {
        if base.abs() >= max_base {
            return self.guarded(word, start, base, scratch, out);
        }
        reuse(start, base, scratch.path.iter().copied(), out)
    }

    /// The reference's pass over a word whose cached path the guard refused.
    #[cold]
    fn guarded(
        &self,
        word: &[u8],
        start: usize,
        base: f32,
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) -> f32 {
        #[cfg(test)]
        {
            scratch.guarded += 1;
        }
        self.viterbi(word, start, base, scratch, out)
    }

    /// Calls `offer(len, id, score)` for each candidate of the lattice that starts at `pos`
    /// of `text` (a character start), in the reference's order: every piece the trie finds
    /// there, shortest first (UNUSED pieces are skipped), then — when none of them is exactly
    /// the character at `pos` — the unknown piece over that character. Returns the character's
    /// length, and how many bytes from `pos` decide the candidates (see [`Walked`]). The
    /// reference's pass and the guard's analysis both read the lattice through this.
    #[inline(always)]
    fn for_each_candidate(
        &self,
        text: &[u8],
        pos: usize,
        mut offer: impl FnMut(usize, u32, f32),
    ) -> Walked {
        let n = text.len();
        let char_len = one_char_len(text[pos]);
        let mblen = char_len.min(n - pos);
        let mut has_single = false;
        let cap = self.prune.value(text[pos]) as usize;
        // Without a walk, the character alone decides.
        let mut read = 0;
        let first = match &self.first_chars {
            // A whole character that the walk would cross (pieces as long as it start with its
            // first byte): the table has what the walk finds over it.
            Some(table) if cap >= char_len && pos + char_len <= n => {
                bmp_code_point(&text[pos..pos + char_len]).map(|cp| table.get(cp))
            }
            _ => None,
        };
        if let Some(&FirstChar { from, id, score }) = first {
            if id != FirstChar::NO_PIECE {
                offer(char_len, id, score);
                has_single = true;
            }
            read = char_len;
            if let Some(from) = from {
                let end = if cap == 255 { n } else { n.min(pos + cap) };
                read += self.kernels.trie_prefix_walk_from(
                    &self.trie,
                    from,
                    &text[pos + char_len..end],
                    |len, id| {
                        let score = self.scores[id as usize];
                        if !score.is_nan() {
                            offer(char_len + len as usize, id, score);
                        }
                    },
                );
            }
        } else if cap > 0 {
            let end = if cap == 255 { n } else { n.min(pos + cap) };
            read = self
                .kernels
                .trie_prefix_walk(&self.trie, &text[pos..end], |len, id| {
                    let score = self.scores[id as usize];
                    if score.is_nan() {
                        return; // UNUSED
                    }
                    let len = len as usize;
                    offer(len, id, score);
                    has_single |= len == mblen;
                });
        }
        if !has_single {
            offer(mblen, self.unk_id, self.unk_score);
        }
        let decided_by = read.max(char_len);
        Walked {
            mblen,
            decided_by: if pos + decided_by <= n { decided_by } else { 0 },
        }
    }

    /// The score a segment of piece `id` added (the unknown piece's penalty included).
    #[inline]
    fn piece_score(&self, id: u32) -> f32 {
        if id == self.unk_id {
            self.unk_score
        } else {
            self.scores[id as usize]
        }
    }

    /// The reference's pass over `text` (a whole text, or a whole word of one: see [`guard`]),
    /// from the running score `base`, appending its segments to `out` with positions offset by
    /// `offset`; returns the running score at its end.
    fn viterbi(
        &self,
        normalized: &[u8],
        offset: usize,
        base: f32,
        scratch: &mut UnigramScratch,
        out: &mut impl SegmentSink,
    ) -> f32 {
        #[cfg(test)]
        let runs = !scratch.no_runs;
        #[cfg(not(test))]
        let runs = true;
        let best = &mut scratch.best;
        let n = normalized.len();
        best.clear();
        best.resize(
            n + 1,
            BestNode {
                score: 0.0,
                start: NONE,
                id: 0,
            },
        );
        best[0].score = base;
        // The furthest position any candidate has reached (for the score shift below).
        let mut frontier = 0usize;
        let mut run = RunCandidates::default();
        let mut pos = 0usize;
        while pos < n {
            let mut base = best[pos].score;
            if !(-SCORE_RESET..=SCORE_RESET).contains(&base) {
                for (i, node) in best.iter_mut().enumerate().take(frontier + 1).skip(pos) {
                    if i == pos || node.start != NONE {
                        node.score -= base;
                    }
                }
                base = 0.0;
            }
            let mut offer = |len: usize, id: u32, score: f32| {
                frontier = frontier.max(pos + len);
                let candidate = score + base;
                let node = &mut best[pos + len];
                if node.start == NONE || candidate > node.score {
                    *node = BestNode {
                        score: candidate,
                        start: pos as u32,
                        id,
                    };
                }
            };
            let mblen = if runs && run.apply_at(normalized, pos) {
                for i in 0..run.n {
                    let (id, len) = run.ids_lens[i];
                    offer(len as usize, id, run.scores[i]);
                }
                run.mblen
            } else if runs && repeats_next(normalized, pos, one_char_len(normalized[pos])) {
                run.n = 0;
                let walked = self.for_each_candidate(normalized, pos, |len, id, score| {
                    run.push(len, id, score);
                    offer(len, id, score);
                });
                run.at = pos;
                run.mblen = walked.mblen;
                run.decided_by = if run.n <= RUN_CANDIDATES {
                    walked.decided_by
                } else {
                    0
                };
                walked.mblen
            } else {
                self.for_each_candidate(normalized, pos, offer).mblen
            };
            pos += mblen;
        }
        let back = &mut scratch.back;
        back.clear();
        let mut end = n;
        while end > 0 {
            let node = best[end];
            back.push(Segment {
                start: node.start + offset as u32,
                end: (end + offset) as u32,
                id: node.id,
            });
            end = node.start as usize;
        }
        for &seg in back.iter().rev() {
            out.push(seg);
        }
        best[n].score
    }
}

/// Calls `f(scratch, span, key)` for each word of `normalized` from the word start `from` on,
/// in order, with its cache key (`None` for a word too long for the cache), while the cache set
/// of the word after it is on its way and the one after that is prefetched in turn: a word's
/// lookup then rarely waits for memory. Stops before the first word for which `f` returns
/// false; returns where it stopped (that word's start, or the text's end).
#[inline(always)]
fn for_each_word(
    normalized: &[u8],
    from: usize,
    scratch: &mut UnigramScratch,
    mut f: impl FnMut(&mut UnigramScratch, std::ops::Range<usize>, Option<WordKey>) -> bool,
) -> usize {
    let n = normalized.len();
    if from >= n {
        return n;
    }
    let (mut end, mut key) = word_at(normalized, from);
    let (mut next_end, mut next_key) = if end < n {
        word_at(normalized, end)
    } else {
        (n, None)
    };
    if let Some(k) = &next_key {
        scratch.cache.prefetch(k);
    }
    let mut start = from;
    while start < n {
        let (after_end, after_key) = if next_end < n {
            word_at(normalized, next_end)
        } else {
            (n, None)
        };
        if let Some(k) = &after_key {
            scratch.cache.prefetch(k);
        }
        if !f(scratch, start..end, key) {
            return start;
        }
        start = end;
        (end, key) = (next_end, next_key);
        (next_end, next_key) = (after_end, after_key);
    }
    n
}

/// Appends the cached path `pieces` of the word at `start` to `out`; returns the running score
/// after it (see [`LaidPath`]).
#[inline]
fn reuse(
    start: usize,
    base: f32,
    pieces: impl Iterator<Item = PathPiece>,
    out: &mut impl SegmentSink,
) -> f32 {
    let mut laid = LaidPath::new(start, base);
    for p in pieces {
        laid.push(p, out);
    }
    laid.base
}

/// A cached path being laid out as segments of the word at `start`: the running score is
/// `base` plus each piece's score, one `f32` addition at a time, as the reference adds them
/// along the path it chose (the same one: see [`guard`]).
struct LaidPath {
    start: u32,
    /// Where the next piece starts.
    at: u32,
    base: f32,
}

impl LaidPath {
    fn new(start: usize, base: f32) -> LaidPath {
        LaidPath {
            start: start as u32,
            at: start as u32,
            base,
        }
    }

    #[inline(always)]
    fn push(&mut self, p: PathPiece, out: &mut impl SegmentSink) {
        let end = self.start + p.end as u32;
        out.push(Segment {
            start: self.at,
            end,
            id: p.id,
        });
        self.base += p.score;
        self.at = end;
    }
}

/// The word of `normalized` starting at `s` (below its length): its end and its cache key
/// (`None` for a word too long for the cache).
#[inline(always)]
fn word_at(normalized: &[u8], s: usize) -> (usize, Option<WordKey>) {
    let e = next_word_start(normalized, s);
    (
        e,
        (e - s <= MAX_KEY).then(|| UnigramCache::word_key(normalized, s, e - s)),
    )
}

/// Where the word after the one starting at `start` starts: the next `▁`, or the text's end.
#[inline]
fn next_word_start(text: &[u8], start: usize) -> usize {
    // The word's own `▁` (if it has one) is skipped: a word is at least one character.
    swar::find3_from(text, start + 1, &SPACE).unwrap_or(text.len())
}
