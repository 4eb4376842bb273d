//! When a word's cached segmentation is the reference's: the analysis behind the unigram word
//! cache ([`crate::cache::unigram`]), and its proof.
//!
//! # Words are independent in exact arithmetic
//! Let the normalized text's *word starts* be position 0 and every position of a `▁` (U+2581).
//! [`super::Unigram::new`] checks that no piece the Viterbi pass can choose (NORMAL and
//! USER_DEFINED; UNUSED pieces are never chosen) holds a `▁` after its first character. Then no
//! piece starts before a word start and ends after it, and the unknown candidate spans one
//! character, so every path of the lattice passes through every word start `p`. Two
//! consequences for the reference's pass (see [`super`]):
//! - when position `p` is visited, every candidate so far ended at or before `p` (the
//!   `frontier` of the score shift is at most `p`), and candidates of later positions never
//!   reach back: the pass over the text is the pass over each word in turn, the word
//!   `[p, q)` starting from the stored score `B = best[p]` — in the reference's own `f32`
//!   arithmetic, not only in exact arithmetic;
//! - the shift at `p` (when `|B| > 100 000`) shifts only `best[p]`, to exactly 0.
//!
//! So [`super::Unigram::encode`] runs word by word, carrying `B`. What remains is a word's pass
//! from a given `B`: its *path* (the pieces the backtrack from `q` meets) and `best[q]`, the
//! next word's `B`.
//!
//! # The path depends on `B` only through rounding
//! Let `V[x]` be the exact (real-number) best score of the word's prefix `[p, x)` starting from
//! 0, and for a candidate `c` (a piece from `s_c` to `x` with score `σ_c`) let
//! `v_c = V[s_c] + σ_c`, so `V[x] = max_c v_c`. Let `M ≥ |v_c|` for every candidate of the
//! word, and `k(x)` the number of characters in `[p, x)`. With round-to-nearest, an `f32` sum
//! `fl(a + b)` is within `u·|a + b|` of `a + b`, `u = 2⁻²⁴`, and every computed value is below
//! `A = |B| + M + 1` in magnitude (the errors below are far below 1), so each addition errs by at
//! most `h = u·A`.
//!
//! **Claim:** the computed `best[x]` is within `e(x) = k(x)·h` of `B + V[x]`. At `p` it is `B`
//! exactly. A candidate's computed value is `fl(best[s_c] + σ_c)`, within `e(s_c) + h ≤ e(x)` of
//! `B + v_c`, since `k(s_c) ≤ k(x) − 1`. The computed best is the largest computed candidate
//! (whichever wins): at least the exact winner's computed value, `≥ B + V[x] − e(x)`, and at most
//! some `B + v_c + e(x) ≤ B + V[x] + e(x)`. ∎
//!
//! **Decisions:** at a node `x`, if the exact winner beats every other candidate by a margin
//! `m(x) > 2·e(x)`, its computed value exceeds every other computed value, so it wins in `f32`
//! whatever the order of the candidates and the strict `>` (ties cannot occur). The backtrack
//! reads only the nodes on the path, so if `m(x) > 2·k(x)·u·A` at each of them, the `f32` path is
//! the exact one. With `r = min over the path of m(x) / k(x)`, that is
//! `|B| < r / (2u) − M − 1`.
//!
//! **No shift inside the word:** every computed `best[x]`, `p < x < q`, is within `e(x) < 1` of
//! `B + V[x]`, so `|B| ≤ 100 000 − M − 2` keeps it inside ±100 000.
//!
//! **The next `B`:** on the `f32` path each node's computed best is the value of its path
//! candidate, `fl(best[s] + σ)`: `best[q]` is the chain of `f32` additions of the path's scores
//! from `B`, which [`super::Unigram::encode`] repeats.
//!
//! # What the analysis computes, and its own rounding
//! `Unigram::analyze` runs the word's lattice in `f64` from 0, visiting candidates in
//! the reference's order with its strict `>`, and keeps per node the best and the best of the
//! others (an old best that is replaced becomes one of the others; an equal candidate makes the
//! margin 0: an exact tie is never reused). `f64` sums of `f32` scores are exact to `2⁻⁵³` per
//! addition, so the computed `V`, margins and `M` err by at most `2·k·2⁻⁵³·M` — below
//! `2⁻⁴⁸·M·k`, which the bound subtracts from every margin. The bound is then rounded down to
//! an `f32`, so the caller's test `|B| < bound` in `f32` is the inequality above.
//!
//! Nothing here depends on the word's length: words of up to 16 bytes go to the cache's table,
//! longer ones up to 255 bytes (the analysis keeps a piece's end in a byte) to its long tier,
//! both under this bound; a longer word always takes the reference's pass.

use super::{NONE, Unigram};
use crate::cache::unigram::PathPiece;

/// The reference's `kScoreResetThreshold`, as the bound of the shift test.
const RESET: f64 = 100_000.0;

/// One node of the analysis' lattice.
#[derive(Clone, Copy, Debug)]
pub(super) struct ExactNode {
    best: f64,
    /// The best of the other candidates (−∞ while there is none).
    second: f64,
    start: u32,
    id: u32,
    /// Characters from the word's start to here.
    chars: u32,
}

impl Unigram {
    /// Analyses `word` (a whole word, at most 255 bytes), with `nodes` as scratch: its path in
    /// exact arithmetic into `path`, and the bound on `|B|` under which it is the reference's
    /// (returned; at most 0: never).
    pub(super) fn analyze(
        &self,
        word: &[u8],
        nodes: &mut Vec<ExactNode>,
        path: &mut Vec<PathPiece>,
    ) -> f32 {
        let n = word.len();
        debug_assert!(n > 0 && n <= u8::MAX as usize);
        nodes.clear();
        nodes.resize(
            n + 1,
            ExactNode {
                best: 0.0,
                second: f64::NEG_INFINITY,
                start: NONE,
                id: 0,
                chars: 0,
            },
        );
        let mut most = 0f64; // M: the largest |candidate value|
        let offer = |nodes: &mut [ExactNode], end: usize, start: usize, id: u32, value: f64| {
            let node = &mut nodes[end];
            if node.start == NONE {
                node.best = value;
                node.start = start as u32;
                node.id = id;
            } else if value > node.best {
                // The best so far is never below the second: it becomes the second.
                node.second = node.best;
                node.best = value;
                node.start = start as u32;
                node.id = id;
            } else {
                node.second = larger(node.second, value);
            }
        };
        let mut pos = 0usize;
        let mut chars = 0u32;
        while pos < n {
            nodes[pos].chars = chars;
            let base = nodes[pos].best;
            let mblen = self
                .for_each_candidate(word, pos, |len, id, score| {
                    let value = base + score as f64;
                    most = larger(most, value.abs());
                    offer(nodes, pos + len, pos, id, value);
                })
                .mblen;
            pos += mblen;
            chars += 1;
        }
        nodes[n].chars = chars;

        // The path, back to front, and the smallest margin per character along it.
        path.clear();
        let mut ratio = f64::INFINITY;
        let mut end = n;
        while end > 0 {
            let node = nodes[end];
            path.push(PathPiece {
                id: node.id,
                score: self.piece_score(node.id),
                end: end as u8,
            });
            let margin = node.best - node.second;
            ratio = ratio.min(margin / node.chars as f64);
            end = node.start as usize;
        }
        path.reverse();

        let rounding = (2f64).powi(-48) * most;
        let by_margin = (ratio - rounding) * (2f64).powi(23) - most - 1.0;
        let by_reset = RESET - most - 2.0;
        let bound = by_margin.min(by_reset);
        if bound.is_nan() || bound <= 0.0 {
            0.0
        } else {
            round_down(bound)
        }
    }
}

/// The largest `f32` at most `x` (`x` positive and finite, or +∞).
/// The larger of two values that are not NaN (scores are finite, checked at load, and UNUSED
/// pieces, whose score is NaN, are never offered): a comparison, where `f64::max` also sorts
/// out NaNs.
#[inline(always)]
fn larger(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

fn round_down(x: f64) -> f32 {
    let f = x as f32;
    if f as f64 > x { f.next_down() } else { f }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_down_never_rounds_up() {
        for x in [
            1.0f64,
            0.1,
            12_345.678_9,
            99_999.999_9,
            3.0e-7,
            f64::INFINITY,
        ] {
            let f = round_down(x);
            assert!(f as f64 <= x, "{x}");
            assert!(f.next_up() as f64 > x || f.is_infinite(), "{x}");
        }
    }
}
