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

use simdtok_kernels::{DoubleArray, Kernels, PruneTable};

use crate::load::spm_proto::PieceKind;
use crate::models::vocab::Vocab;
use crate::normalize::spm::one_char_len;

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

/// Reusable buffers of one encoding thread.
#[derive(Default, Debug)]
pub struct UnigramScratch {
    best: Vec<BestNode>,
}

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
}

/// The reference's unknown penalty (`kUnkPenalty`).
const UNK_PENALTY: f32 = 10.0;

/// Path scores beyond ± this are shifted back to 0 (`kScoreResetThreshold`).
const SCORE_RESET: f32 = 100_000.0;

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
        let scores = vocab
            .pieces()
            .iter()
            .map(|p| match p.kind {
                PieceKind::Unused => f32::NAN,
                PieceKind::UserDefined => user_defined_score(p.text.len()),
                _ => p.score,
            })
            .collect();
        Ok(Unigram {
            prune: PruneTable::new(longest),
            trie,
            scores,
            unk_score: min_score - UNK_PENALTY,
            unk_id: vocab.unknown_segment_id(),
            kernels,
        })
    }

    /// Bytes of memory the piece trie takes.
    pub fn trie_bytes(&self) -> usize {
        self.trie.memory_bytes()
    }

    /// Segments `normalized` (valid UTF-8) into `out` (cleared first), left to right.
    pub fn encode(&self, normalized: &[u8], scratch: &mut UnigramScratch, out: &mut Vec<Segment>) {
        out.clear();
        let n = normalized.len();
        if n == 0 {
            return;
        }
        let best = &mut scratch.best;
        best.clear();
        best.resize(
            n + 1,
            BestNode {
                score: 0.0,
                start: NONE,
                id: 0,
            },
        );
        // The furthest position any candidate has reached (for the score shift below).
        let mut frontier = 0usize;
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
            let mblen = one_char_len(normalized[pos]).min(n - pos);
            let mut has_single = false;
            let cap = self.prune.value(normalized[pos]) as usize;
            if cap > 0 {
                let end = if cap == 255 { n } else { n.min(pos + cap) };
                self.kernels
                    .trie_prefix_walk(&self.trie, &normalized[pos..end], |len, id| {
                        let score = self.scores[id as usize];
                        if score.is_nan() {
                            return; // UNUSED
                        }
                        let len = len as usize;
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
                        has_single |= len == mblen;
                    });
            }
            if !has_single {
                frontier = frontier.max(pos + mblen);
                let candidate = self.unk_score + base;
                let node = &mut best[pos + mblen];
                if node.start == NONE || candidate > node.score {
                    *node = BestNode {
                        score: candidate,
                        start: pos as u32,
                        id: self.unk_id,
                    };
                }
            }
            pos += mblen;
        }
        let mut end = n;
        while end > 0 {
            let node = best[end];
            out.push(Segment {
                start: node.start,
                end: end as u32,
                id: node.id,
            });
            end = node.start as usize;
        }
        out.reverse();
    }
}
