//! Alignment between two tokenizations of one text, identical to the `tokenizations` crate
//! (0.4.2; Python `pytokenizations`, spaCy's `spacy-alignments`).
//!
//! Each token is lowercased and then NFKD-normalized, each side's tokens are concatenated, the
//! shortest edit script between the two character sequences (Myers' algorithm, exactly as
//! `seqdiff` recurses it, step for step) matches characters, and a token maps to the
//! tokens of the other side that hold characters matched with its own:
//!
//! ```
//! let (a2b, b2a) = simdtok::align::get_alignments(&["New York"], &["New", "York"]);
//! assert_eq!(a2b, vec![vec![0, 1]]);
//! assert_eq!(b2a, vec![vec![0], vec![0]]);
//!
//! // Noisy tokens: case, accents, width.
//! let (a2b, _) = simdtok::align::get_alignments(&["À", "la", "ＧＯＲＧＥ"], &["a", "la", "gorge"]);
//! assert_eq!(a2b, vec![vec![0], vec![1], vec![2]]);
//! ```
//!
//! What makes it fast, with the reference's results: ASCII inputs are lowercased by table and
//! compared as bytes, eight at a time; equal stretches are skipped a machine word at a time;
//! nothing is allocated per token or per character ([`Aligner`] keeps its buffers between
//! pairs); and the edit script is kept as runs of matches. The diff makes the reference's
//! choices, but on large inputs follows only the diagonals that can still lie on a shortest
//! path (a lower bound from counts of units), which makes two tokenizations that differ every
//! few characters near-linear where the reference is quadratic in their edit distance `D`
//! (143× faster on a 1 MB document). Memory is linear in the input; time is `O((n + m) · D)`
//! at worst, for `n` and `m` characters — two sides that share almost nothing stay quadratic.
//!
//! [`spans`] aligns tokens by byte offsets instead, where both tokenizations carry them (the
//! labelling use: a model's tokens and the words of the same text).

mod bound;
mod diff;
mod maps;
mod pruned;
pub mod spans;
mod units;

pub use maps::FlatAlignment;

use diff::{Run, Scratch, Unit};
use maps::From;
use units::{CharToken, Side, TokenText};

/// `a2b[i]`: the indices of the tokens of `b` that token `i` of `a` corresponds to, ascending.
pub type Alignment = Vec<Vec<usize>>;
/// `c_a2b[i]`: the characters of `b` that character `i` of `a` corresponds to.
pub type CharMap = Vec<Vec<usize>>;

/// The alignments `a2b` (from `a` to `b`) and `b2a` (from `b` to `a`) of two tokenizations, as
/// `tokenizations::get_alignments` gives them.
pub fn get_alignments<S: AsRef<str>>(a: &[S], b: &[S]) -> (Alignment, Alignment) {
    let mut aligner = Aligner::new();
    let (a2b, b2a) = aligner.align(a, b);
    (a2b.to_nested(), b2a.to_nested())
}

/// The character maps between two texts, as `tokenizations::get_charmap` gives them: each
/// character is a token of its own.
pub fn get_charmap(a: &str, b: &str) -> (CharMap, CharMap) {
    let mut aligner = Aligner::new();
    let (a2b, b2a) = aligner.align_tokens(a.chars().map(CharToken), b.chars().map(CharToken));
    (a2b.to_nested(), b2a.to_nested())
}

/// Each token's span in `original_text`, in characters (`[start, end)`), or `None` where none
/// of its characters can be found there, as `tokenizations::get_original_spans` gives them
/// (deprecated there in favour of `textspan`, and kept here for its users).
pub fn get_original_spans<S: AsRef<str>>(
    tokens: &[S],
    original_text: &str,
) -> Vec<Option<(usize, usize)>> {
    Aligner::new().original_spans(tokens, original_text)
}

/// Aligns many pairs with one set of buffers: after the first pairs, aligning allocates only
/// when a pair is larger than every earlier one.
#[derive(Debug, Default)]
pub struct Aligner {
    narrow: (Side<u8>, Side<u8>),
    wide: (Side<u32>, Side<u32>),
    scratch: Scratch,
    runs: Vec<Run>,
    a2b: FlatAlignment,
    b2a: FlatAlignment,
}

impl Aligner {
    /// An aligner with empty buffers.
    pub fn new() -> Aligner {
        Aligner::default()
    }

    /// An aligner that searches every range of at least `units` units (both sides together)
    /// with pruning — for tests, which prune the smallest ranges to exercise it everywhere.
    #[doc(hidden)]
    pub fn with_prune_from(units: usize) -> Aligner {
        let mut aligner = Aligner::default();
        aligner.scratch.prune_from = units;
        aligner
    }

    /// `a2b` and `b2a` for two tokenizations, as [`get_alignments`] gives them, in the
    /// aligner's buffers.
    pub fn align<S: AsRef<str>>(&mut self, a: &[S], b: &[S]) -> (&FlatAlignment, &FlatAlignment) {
        self.align_tokens(a.iter(), b.iter())
    }

    fn align_tokens<T: TokenText + Clone>(
        &mut self,
        a: impl Iterator<Item = T> + Clone,
        b: impl Iterator<Item = T> + Clone,
    ) -> (&FlatAlignment, &FlatAlignment) {
        let (scratch, runs) = (&mut self.scratch, &mut self.runs);
        let (a2b, b2a) = (&mut self.a2b, &mut self.b2a);
        // Bytes when every token of both sides is ASCII (found while copying them), else
        // scalar values.
        let (na, nb) = &mut self.narrow;
        if units::normalize(a.clone(), na) && units::normalize(b.clone(), nb) {
            Self::align_units(na, nb, scratch, runs, a2b, b2a);
        } else {
            let (wa, wb) = &mut self.wide;
            units::normalize(a, wa);
            units::normalize(b, wb);
            Self::align_units(wa, wb, scratch, runs, a2b, b2a);
        }
        (&self.a2b, &self.b2a)
    }

    /// Diffs two normalized sides and makes both maps.
    fn align_units<U: Unit>(
        sa: &Side<U>,
        sb: &Side<U>,
        scratch: &mut Scratch,
        runs: &mut Vec<Run>,
        a2b: &mut FlatAlignment,
        b2a: &mut FlatAlignment,
    ) {
        diff::diff(&sa.units, &sb.units, scratch, runs);
        maps::token_map(runs, From::X, &sa.starts, &sb.starts, a2b);
        maps::token_map(runs, From::Y, &sb.starts, &sa.starts, b2a);
    }

    /// The character maps of two texts, as [`get_charmap`] gives them, in the aligner's buffers.
    pub fn charmap(&mut self, a: &str, b: &str) -> (&FlatAlignment, &FlatAlignment) {
        self.align_tokens(a.chars().map(CharToken), b.chars().map(CharToken))
    }

    /// Each token's character span in `original_text`, as [`get_original_spans`] gives them.
    pub fn original_spans<S: AsRef<str>>(
        &mut self,
        tokens: &[S],
        original_text: &str,
    ) -> Vec<Option<(usize, usize)>> {
        let joined = tokens.iter().flat_map(|t| t.as_ref().chars());
        let (a2b, b2a) =
            self.align_tokens(joined.map(CharToken), original_text.chars().map(CharToken));
        // The reference keeps the first character each character maps to.
        let first = |i: usize| a2b.row(i).first().copied();
        let text_chars = a2b.len();
        let original_chars = b2a.len();
        let mut spans = Vec::with_capacity(tokens.len());
        let mut l = 0;
        for token in tokens {
            let r = l + token.as_ref().chars().count();
            let span = if l == r {
                // An empty token: where the next character maps, or the original's end.
                let at = if l >= text_chars {
                    Some(original_chars)
                } else {
                    first(l)
                };
                at.map(|at| (at, at))
            } else {
                let start = (l..r).find_map(first);
                let end = (l..r).rev().find_map(first).map(|j| j + 1);
                start.zip(end)
            };
            spans.push(span);
            l = r;
        }
        spans
    }
}
