//! A part of a text cut before a word, encoded while the part before it is still under way
//! ([`Unigram::encode_part`]): the words are planned (each one's cached path laid out as
//! segments) before the running score at the part's start is known, and the score is then run
//! through the plan.
//!
//! The running score decides nothing for a planned word whose bound holds at that score (see
//! [`guard`](super::guard)): its segments are its path. So once the score comes, the plan
//! takes one `f32` addition per segment, in the reference's order; only a word whose bound
//! fails (or that has no path) gets the reference's pass, and where that pass differs from
//! the planned segments it replaces them.

use std::ops::Range;

use super::{
    LaidPath, RunningScore, SCORE_RESET, Segment, Unigram, UnigramScratch, for_each_word,
    shifted_at_word_start,
};
use crate::cache::unigram::{MAX_KEY, MAX_LONG_WORD, PathPiece, WordKey};

/// How often a part that plans its words before its running score is known asks for the score
/// ([`Unigram::encode_part`]): a lock where the score comes from another thread, so not per
/// word. Small in tests, so that short texts switch from planning to the plain pass.
const READY_CHECK_BYTES: usize = if cfg!(test) { 64 } else { 16 << 10 };

/// How many words the chain runs through before it checks that every word's bound held
/// ([`Unigram::chain_plan`]); a run where one did not is run again word by word.
const CHAIN_RUN_WORDS: usize = 64;

/// The magnitudes below this are those the reference leaves unshifted at a word's start.
const UNSHIFTED_LIMIT: f32 = SCORE_RESET.next_up();

/// The words of a part planned before its running score is known.
#[derive(Default, Debug)]
pub(super) struct PartPlan {
    words: Vec<PlannedWord>,
    /// One per planned segment, in order.
    steps: Vec<ChainStep>,
    /// The words the plan has no path for (the cache did not take them), in order.
    pathless: Vec<u32>,
}

/// A word of a part and its cached path (its bound is in its first step). Eight bytes, so that
/// a part's plan (a word every six bytes of English) stays in the CPU's cache between the
/// planning and the chain over it.
#[derive(Clone, Debug)]
struct PlannedWord {
    start: u32,
    /// Its segments (and their steps) end here; they start where the word before's do (none
    /// for a word without a path).
    pieces_end: u32,
}

/// One segment of the plan in the chain of additions: the running score goes on through it
/// while its magnitude (before the addition) is below `limit`.
#[derive(Clone, Copy, Debug)]
struct ChainStep {
    score: f32,
    /// For a word's first segment, the word's bound capped at [`UNSHIFTED_LIMIT`]; for the
    /// others, infinity.
    limit: f32,
}

/// The reference's segments of the planned words whose bound failed, where they differ from
/// the planned ones, and the planned segments each replaces.
#[derive(Default, Debug)]
pub(super) struct Redone {
    segments: Vec<Segment>,
    /// The planned segments' range in the output, and the redone ones' in `segments`.
    replaced: Vec<(Range<usize>, Range<usize>)>,
    /// The output with the redone words put in (swapped with it).
    rebuilt: Vec<Segment>,
}

impl PartPlan {
    fn clear(&mut self) {
        self.words.clear();
        self.steps.clear();
        self.pathless.clear();
    }
}

impl Redone {
    fn clear(&mut self) {
        self.segments.clear();
        self.replaced.clear();
    }

    /// Puts the redone words in place of their planned segments in `out`, in one pass (a
    /// refusal can come every few words).
    fn put_in(&mut self, out: &mut Vec<Segment>) {
        if self.replaced.is_empty() {
            return;
        }
        self.rebuilt.clear();
        let mut kept = 0;
        for (old, new) in &self.replaced {
            self.rebuilt.extend_from_slice(&out[kept..old.start]);
            self.rebuilt.extend_from_slice(&self.segments[new.clone()]);
            kept = old.end;
        }
        self.rebuilt.extend_from_slice(&out[kept..]);
        std::mem::swap(out, &mut self.rebuilt);
    }
}

/// Where a part's words are planned: each cached path laid out as the segments a reused path
/// gives, and each piece's step beside its segment.
struct Plan<'a> {
    segments: &'a mut Vec<Segment>,
    steps: &'a mut Vec<ChainStep>,
}

impl<'a> Plan<'a> {
    /// Lays out the path `pieces` of the word at `start` whose bound is `max_base`.
    fn lay(&mut self, start: usize, max_base: f32, pieces: impl Iterator<Item = PathPiece>) {
        let mut laid = self.word(start, max_base);
        for p in pieces {
            laid.push(p);
        }
    }

    /// The word at `start` whose bound is `max_base`, to lay out piece by piece.
    fn word(&mut self, start: usize, max_base: f32) -> PlannedPath<'_, 'a> {
        PlannedPath {
            laid: LaidPath::new(start, 0.0),
            // The guard's bounds stay below the reset, so this is the bound itself; the cap
            // keeps the chain exact for any bound (a score past the reset is shifted first,
            // which the word-by-word pass does), and a NaN bound refuses, as there.
            limit: if max_base >= UNSHIFTED_LIMIT {
                UNSHIFTED_LIMIT
            } else {
                max_base
            },
            plan: self,
        }
    }
}

/// A word's path being laid out in a [`Plan`].
struct PlannedPath<'p, 'a> {
    laid: LaidPath,
    /// The next step's limit: the word's for its first piece, then none.
    limit: f32,
    plan: &'p mut Plan<'a>,
}

impl PlannedPath<'_, '_> {
    #[inline(always)]
    fn push(&mut self, p: PathPiece) {
        self.plan.steps.push(ChainStep {
            score: p.score,
            limit: self.limit,
        });
        self.limit = f32::INFINITY;
        self.laid.push(p, self.plan.segments);
    }
}

impl Unigram {
    /// [`Unigram::encode`] of one part of a normalized text cut before a word (a `▁`), the
    /// reference's pass over the whole text continued: `score` gives the running score where
    /// the part starts (0 for the first) and takes the one at its end (also returned), for the
    /// next part.
    /// Only for models that [cache words](Unigram::caches_words), whose paths all pass through
    /// every word start (see [`guard`](super::guard)): the pass over the text is then the pass
    /// over its parts in turn, each from the stored score at its start.
    ///
    /// When the score is not ready, the part does the work that needs no running score while it
    /// waits: each word's cached path and bound (looked up, or analysed and cached), laid out
    /// as the segments it gives when the bound holds, which is most of a word's cost. It asks
    /// for the score again every 16 KiB of words; once the score is there, it runs through the
    /// planned segments (an addition per segment, and the reference's pass over the words
    /// whose bound fails and those the cache does not hold), and the rest of the part takes the
    /// plain pass. A part planned to its end waits for the score, and
    /// hands the score at its end on as soon as it is known, before any planned segments are
    /// replaced.
    pub fn encode_part(
        &self,
        normalized: &[u8],
        score: &mut impl RunningScore,
        scratch: &mut UnigramScratch,
        out: &mut Vec<Segment>,
    ) -> f32 {
        out.clear();
        if normalized.is_empty() {
            let base = score.ready().unwrap_or_else(|| score.wait());
            score.done(base);
            return base;
        }
        if let Some(base) = score.ready() {
            // Nothing to wait for: the pass of `encode` itself, from there.
            let base = self.encode_words(normalized, 0, base, scratch, out);
            score.done(base);
            return base;
        }
        assert!(self.words_independent, "the model's pieces span words");
        if u32::try_from(normalized.len()).is_err() {
            // Positions of the plan are 32-bit: a part this long is done once the score is in.
            let base = self.encode_words(normalized, 0, score.wait(), scratch, out);
            score.done(base);
            return base;
        }
        scratch.cache.claim(self.cache_owner, self.id_bits);
        let mut plan = std::mem::take(&mut scratch.plan);
        plan.clear();
        let (planned_end, ready) = self.plan_words(normalized, score, scratch, &mut plan, out);
        let mut redone = std::mem::take(&mut scratch.redone);
        redone.clear();
        let base = ready.unwrap_or_else(|| score.wait());
        let text = &normalized[..planned_end];
        let mut base = self.chain_plan(text, &plan, base, scratch, &mut redone, out);
        // When the whole part is planned, the next part may go on now.
        if planned_end == normalized.len() {
            score.done(base);
        }
        redone.put_in(out);
        scratch.redone = redone;
        scratch.plan = plan;
        if planned_end < normalized.len() {
            #[cfg(test)]
            {
                scratch.switched += 1;
            }
            base = self.encode_words(normalized, planned_end, base, scratch, out);
            score.done(base);
        }
        base
    }

    /// Plans the words of `normalized` (see [`Unigram::encode_part`]) until the running score
    /// comes, their segments into `out`; returns where the plan ends, and the score if it came.
    /// A function of its own, as the plain pass's loop is: inlined into the part's, it ran
    /// about 2 % slower.
    #[inline(never)]
    fn plan_words(
        &self,
        normalized: &[u8],
        score: &mut impl RunningScore,
        scratch: &mut UnigramScratch,
        plan: &mut PartPlan,
        out: &mut Vec<Segment>,
    ) -> (usize, Option<f32>) {
        // Words are planned until the score comes (asked every `READY_CHECK_BYTES`): with two
        // workers, the part before mostly ends while this one is half planned, and the rest of
        // this part then takes the plain pass, which costs less than planning and keeps the
        // plan small.
        let mut ready = None;
        let mut next_check = READY_CHECK_BYTES;
        let mut pieces_start = 0;
        let planned_end = for_each_word(normalized, 0, scratch, |scratch, span, key| {
            if span.start >= next_check {
                next_check = span.start + READY_CHECK_BYTES;
                ready = score.ready();
                if ready.is_some() {
                    return false;
                }
            }
            let start = span.start as u32;
            let mut laid_out = Plan {
                segments: &mut *out,
                steps: &mut plan.steps,
            };
            self.plan_word(normalized, span, key, scratch, &mut laid_out);
            let pieces_end = plan.steps.len() as u32;
            if pieces_end == pieces_start {
                plan.pathless.push(plan.words.len() as u32);
            }
            pieces_start = pieces_end;
            plan.words.push(PlannedWord { start, pieces_end });
            true
        });
        (planned_end, ready)
    }

    /// The running score through the planned words of `text` from `base`, with the same chain
    /// of additions as a reused path (see [`LaidPath`]); returns the score at the plan's end.
    /// A word whose bound fails at its score gets the reference's pass, and where that differs
    /// from its planned segments (in `out`), it goes into `redone` to replace them.
    ///
    /// The chain runs through [`CHAIN_RUN_WORDS`] words at a time with one addition per
    /// segment and no branch: whether each step's limit held is gathered on the side (where no
    /// addition waits for it). Where every limit held, each word's start saw a score that the
    /// reference neither shifts nor lets change the word's path, so the additions are the
    /// reference's. Otherwise (or where a word has no path) those words are run again one by
    /// one from the run's start.
    fn chain_plan(
        &self,
        text: &[u8],
        plan: &PartPlan,
        mut base: f32,
        scratch: &mut UnigramScratch,
        redone: &mut Redone,
        out: &[Segment],
    ) -> f32 {
        let words = &plan.words;
        let steps = &plan.steps;
        let mut pathless = plan.pathless.iter().peekable();
        let mut first = 0;
        while first < words.len() {
            let end = (first + CHAIN_RUN_WORDS).min(words.len());
            let from = first
                .checked_sub(1)
                .map_or(0, |w| words[w].pieces_end as usize);
            let to = words[end - 1].pieces_end as usize;
            let mut has_pathless = false;
            while pathless.next_if(|&&w| (w as usize) < end).is_some() {
                has_pathless = true;
            }
            if !has_pathless {
                let (mut chained, mut held) = (base, true);
                for step in &steps[from..to] {
                    held &= chained.abs() < step.limit;
                    chained += step.score;
                }
                if held {
                    #[cfg(test)]
                    {
                        scratch.reused += end - first;
                        scratch.chained += 1;
                    }
                    base = chained;
                    first = end;
                    continue;
                }
            }
            #[cfg(test)]
            {
                scratch.rerun += 1;
                scratch.pathless += usize::from(has_pathless);
            }
            for i in first..end {
                let w = &words[i];
                let start = w.start as usize;
                let pieces = i.checked_sub(1).map_or(0, |p| words[p].pieces_end as usize)
                    ..w.pieces_end as usize;
                base = shifted_at_word_start(base);
                // Below the reset, under the capped bound is under the bound; a word without a
                // path always takes the reference's pass.
                if !pieces.is_empty() && base.abs() < steps[pieces.start].limit {
                    #[cfg(test)]
                    {
                        scratch.reused += 1;
                    }
                    for step in &steps[pieces] {
                        base += step.score;
                    }
                    continue;
                }
                let word_end = words.get(i + 1).map_or(text.len(), |n| n.start as usize);
                let at = redone.segments.len();
                base = self.guarded(
                    &text[start..word_end],
                    start,
                    base,
                    scratch,
                    &mut redone.segments,
                );
                if redone.segments[at..] == out[pieces.clone()] {
                    redone.segments.truncate(at);
                } else {
                    #[cfg(test)]
                    {
                        scratch.replaced += 1;
                    }
                    let new = at..redone.segments.len();
                    redone.replaced.push((pieces, new));
                }
            }
            first = end;
        }
        base
    }

    /// Lays out in `plan` the path of the word `text[span]` from the cache (analysed and cached
    /// first when it is not there), with the bound on the running score under which it is the
    /// reference's; nothing for a word the cache does not take.
    fn plan_word(
        &self,
        text: &[u8],
        span: Range<usize>,
        key: Option<WordKey>,
        scratch: &mut UnigramScratch,
        plan: &mut Plan<'_>,
    ) {
        let (start, len) = (span.start, span.len());
        if len > MAX_KEY {
            if len <= MAX_LONG_WORD {
                self.plan_long_word(text, span, scratch, plan);
            }
            return;
        }
        let Some(key) = key.filter(|_| !scratch.cache.skips()) else {
            return;
        };
        let Some(hit) = scratch.cache.get_keyed(&key) else {
            let word = &text[span];
            let max_base = self.analyze(word, &mut scratch.exact, &mut scratch.path);
            scratch
                .cache
                .put_path(text, start, len, max_base, &scratch.path, |id| {
                    self.piece_score(id)
                });
            plan.lay(start, max_base, scratch.path.iter().copied());
            return;
        };
        let mut laid = plan.word(start, hit.max_base);
        scratch
            .cache
            .for_each_piece(&hit, |id| self.piece_score(id), |p| laid.push(p));
    }

    /// [`Unigram::plan_word`] for a word of more than [`MAX_KEY`] bytes (at most
    /// [`MAX_LONG_WORD`]): its path from the long tier, or analysed and stored there at its
    /// second sight; nothing at its first.
    fn plan_long_word(
        &self,
        text: &[u8],
        span: Range<usize>,
        scratch: &mut UnigramScratch,
        plan: &mut Plan<'_>,
    ) {
        let word = &text[span.clone()];
        let seen = match scratch.cache.get_long(word) {
            Err(seen) => seen,
            Ok((max_base, tokens)) => {
                plan.lay(span.start, max_base, self.long_path(tokens));
                #[cfg(test)]
                {
                    scratch.planned_long += 1;
                }
                return;
            }
        };
        if seen {
            let max_base = self.analyze_long(word, scratch);
            plan.lay(span.start, max_base, scratch.path.iter().copied());
        }
    }
}
