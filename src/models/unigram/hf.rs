//! The unigram model of a Hugging Face `tokenizer.json`, as `tokenizers` 0.23 encodes with it
//! (`Unigram::encode_optimized` and `tokenize` in its `models/unigram/model.rs`), which is not
//! SentencePiece's ([`super::Unigram`]) in these ways:
//! - scores are `f64` (as the file has them) and summed in `f64`, from 0 at each pre-token's
//!   start, with no shift of the running score at ±100 000;
//! - every entry of the vocabulary is in the lattice with its own score — control pieces
//!   (`<s>`, `</s>`), the unknown piece, byte pieces `<0xXX>`, user-defined and unused ones alike
//!   — so a text that spells one (after normalization) may be segmented into it;
//! - the unknown piece scores the lowest score of the *whole* vocabulary minus 10;
//! - an entry listed twice is found by its string: its last id (and that id's score);
//! - consecutive unknown segments are fused into one; its text is then looked up as an entry
//!   (its id if it is one), else with byte fallback it becomes one `<0xXX>` token per byte when
//!   every byte has one (each spanning the whole run), else the unknown id.
//!
//! The lattice order and the tie-break are SentencePiece's: positions left to right one
//! character at a time, pieces from each shortest first (a common-prefix search), the unknown
//! piece last when no piece is exactly the character, and a candidate replaces the best path
//! ending at a position only when its score is strictly greater.
//!
//! SentencePiece's word cache ([`super::guard`]) is not used: its proof bounds `f32` sums with
//! the reference's shift, which is not this arithmetic, and a text is not one lattice here. The
//! pipeline ([`crate::pipeline::hf_unigram`]) segments each pre-token on its own, from a score
//! of 0, as the reference does: a pre-token's tokens depend on its bytes alone, so it caches
//! short pre-tokens (the words of a `Metaspace` that splits) by their bytes, exactly; a long
//! one (a whole text, without `split`) takes the plain pass.

use std::collections::HashMap;

use simdtok_kernels::{DoubleArray, Kernels, PruneTable};

/// A segment of a pre-token: its byte range and id; `fused` for a run of unknown characters
/// (its id resolved by [`HfUnigram::fused_ids`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HfSegment {
    pub start: u32,
    pub end: u32,
    pub id: u32,
    pub fused: bool,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    score: f64,
    /// Start of the best path's last piece; `u32::MAX` while no path ends here.
    start: u32,
    id: u32,
}

const NONE: u32 = u32::MAX;

/// The reference's `K_UNK_PENALTY`.
const UNK_PENALTY: f64 = 10.0;

/// Reusable buffers of one encoding thread.
#[derive(Default, Debug)]
pub struct HfUnigramScratch {
    best: Vec<Node>,
    back: Vec<HfSegment>,
}

/// A `tokenizer.json` unigram model.
#[derive(Debug)]
pub struct HfUnigram {
    trie: DoubleArray,
    /// Per id, the entry's score.
    scores: Vec<f64>,
    unk_id: u32,
    unk_score: f64,
    /// Per first byte, the longest entry starting with it (255: 255 or more; 0: none).
    prune: PruneTable,
    /// `<0xXX>`'s id per byte, with byte fallback (`None` where the vocabulary has none).
    byte_ids: Option<Box<[Option<u32>; 256]>>,
    kernels: &'static Kernels,
}

impl HfUnigram {
    /// The model of `vocab` (`[piece, score]` in id order), `unk_id` and `byte_fallback`.
    pub fn new(
        vocab: &[(String, f64)],
        unk_id: u32,
        byte_fallback: bool,
        kernels: &'static Kernels,
    ) -> Result<HfUnigram, String> {
        if vocab.is_empty() {
            return Err("model.vocab is empty".into());
        }
        if unk_id as usize >= vocab.len() {
            return Err(format!(
                "model.unk_id {unk_id} is not in the vocabulary of {} entries",
                vocab.len()
            ));
        }
        // The reference's map from string to id keeps the last id of a string listed twice.
        let mut last: HashMap<&str, u32> = HashMap::with_capacity(vocab.len());
        let mut min_score = f64::INFINITY;
        for (id, (piece, score)) in vocab.iter().enumerate() {
            if piece.as_bytes().contains(&0) {
                return Err(format!(
                    "model.vocab[{id}] {piece:?} contains NUL, which is not supported"
                ));
            }
            if !score.is_finite() {
                return Err(format!("model.vocab[{id}] has the score {score}"));
            }
            last.insert(piece.as_str(), id as u32);
            if *score < min_score {
                min_score = *score;
            }
        }
        // An empty piece is never found by the reference's search (it yields non-empty prefixes).
        let entries: Vec<(&[u8], u32)> = last
            .iter()
            .filter(|(p, _)| !p.is_empty())
            .map(|(p, &id)| (p.as_bytes(), id))
            .collect();
        if entries.is_empty() {
            return Err("model.vocab has no non-empty piece".into());
        }
        let trie = DoubleArray::build(&entries)
            .map_err(|e| format!("cannot index the vocabulary: {e}"))?;
        let mut longest = [0u8; 256];
        for (key, _) in &entries {
            let l = &mut longest[key[0] as usize];
            *l = (*l).max(key.len().min(255) as u8);
        }
        let byte_ids = byte_fallback.then(|| {
            let mut table = Box::new([None; 256]);
            for (b, slot) in table.iter_mut().enumerate() {
                *slot = last.get(format!("<0x{b:02X}>").as_str()).copied();
            }
            table
        });
        Ok(HfUnigram {
            trie,
            scores: vocab.iter().map(|(_, s)| *s).collect(),
            unk_id,
            unk_score: min_score - UNK_PENALTY,
            prune: PruneTable::new(longest),
            byte_ids,
            kernels,
        })
    }

    /// The unknown piece's id.
    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    /// The number of ids.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether it has no entry (never: [`HfUnigram::new`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The id of the entry that is exactly `bytes` (the last id of a string listed twice).
    pub fn exact_id(&self, bytes: &[u8]) -> Option<u32> {
        let mut found = None;
        self.kernels.trie_prefix_walk(&self.trie, bytes, |len, id| {
            if len as usize == bytes.len() {
                found = Some(id);
            }
        });
        found
    }

    /// Segments the pre-token `text` (valid UTF-8) into `out` (appended), unknown runs fused
    /// (marked `fused`, with the unknown id), positions offset by `offset`.
    pub fn segment(
        &self,
        text: &[u8],
        offset: u32,
        scratch: &mut HfUnigramScratch,
        out: &mut Vec<HfSegment>,
    ) {
        let n = text.len();
        if n == 0 {
            return;
        }
        let best = &mut scratch.best;
        best.clear();
        best.resize(
            n + 1,
            Node {
                score: 0.0,
                start: NONE,
                id: 0,
            },
        );
        let mut pos = 0usize;
        while pos < n {
            let base = best[pos].score;
            let char_len = crate::normalize::spm::one_char_len(text[pos]).min(n - pos);
            let mut has_single = false;
            let cap = self.prune.value(text[pos]) as usize;
            if cap > 0 {
                let end = if cap == 255 { n } else { n.min(pos + cap) };
                self.kernels
                    .trie_prefix_walk(&self.trie, &text[pos..end], |len, id| {
                        let len = len as usize;
                        let candidate = self.scores[id as usize] + base;
                        let node = &mut best[pos + len];
                        if node.start == NONE || candidate > node.score {
                            *node = Node {
                                score: candidate,
                                start: pos as u32,
                                id,
                            };
                        }
                        has_single |= len == char_len;
                    });
            }
            if !has_single {
                let candidate = self.unk_score + base;
                let node = &mut best[pos + char_len];
                if node.start == NONE || candidate > node.score {
                    *node = Node {
                        score: candidate,
                        start: pos as u32,
                        id: self.unk_id,
                    };
                }
            }
            pos += char_len;
        }
        // Backtrack, fusing unknowns in a row.
        let back = &mut scratch.back;
        back.clear();
        let mut end = n;
        while end > 0 {
            let node = best[end];
            let seg = HfSegment {
                start: node.start + offset,
                end: end as u32 + offset,
                id: node.id,
                fused: node.id == self.unk_id,
            };
            match back.last_mut() {
                Some(prev) if seg.fused && prev.fused => prev.start = seg.start,
                _ => back.push(seg),
            }
            end = node.start as usize;
        }
        out.extend(back.iter().rev());
    }

    /// The ids of a fused unknown run `bytes` (`Model::tokenize`): the entry it spells, or its
    /// bytes' `<0xXX>` ids when byte fallback has them all, or the unknown id. Each id is
    /// given to `push`.
    #[inline]
    pub fn fused_ids(&self, bytes: &[u8], mut push: impl FnMut(u32)) {
        if let Some(id) = self.exact_id(bytes) {
            return push(id);
        }
        if let Some(table) = &self.byte_ids
            && bytes.iter().all(|&b| table[b as usize].is_some())
        {
            for &b in bytes {
                push(table[b as usize].expect("checked"));
            }
            return;
        }
        push(self.unk_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(vocab: &[(&str, f64)], unk: u32, bytes: bool) -> HfUnigram {
        let vocab: Vec<(String, f64)> = vocab.iter().map(|&(p, s)| (p.into(), s)).collect();
        HfUnigram::new(&vocab, unk, bytes, Kernels::scalar()).unwrap()
    }

    fn ids(m: &HfUnigram, text: &str) -> Vec<(u32, u32, u32)> {
        let mut segs = Vec::new();
        m.segment(
            text.as_bytes(),
            0,
            &mut HfUnigramScratch::default(),
            &mut segs,
        );
        let mut out = Vec::new();
        for s in segs {
            if s.fused {
                m.fused_ids(&text.as_bytes()[s.start as usize..s.end as usize], |id| {
                    out.push((id, s.start, s.end))
                });
            } else {
                out.push((s.id, s.start, s.end));
            }
        }
        out
    }

    #[test]
    fn the_references_doc_example() {
        // tokenizers' own example: "abcdacdxx" → abcd, a, cd, xx (the unknowns fused).
        let m = model(
            &[
                ("<unk>", 0.0),
                ("a", 0.0),
                ("b", 0.0),
                ("c", 0.0),
                ("d", 0.0),
                ("cd", 1.0),
                ("ab", 2.0),
                ("abc", 5.0),
                ("abcd", 10.0),
            ],
            0,
            false,
        );
        assert_eq!(
            ids(&m, "abcdacdxx"),
            vec![(8, 0, 4), (1, 4, 5), (5, 5, 7), (0, 7, 9)]
        );
    }

    #[test]
    fn ties_keep_the_earlier_start_and_duplicates_their_last_id() {
        // "ab" as one piece (-2) ties "a" + "b" (-1 + -1): the first candidate found for the
        // end stays (the path through "a" reaches position 2 later, from position 1, and is not
        // strictly better). "b" is listed twice: id 4, score -1.
        let m = model(
            &[
                ("<unk>", 0.0),
                ("a", -1.0),
                ("b", -5.0),
                ("ab", -2.0),
                ("b", -1.0),
            ],
            0,
            false,
        );
        assert_eq!(ids(&m, "ab"), vec![(3, 0, 2)]);
        assert_eq!(ids(&m, "b"), vec![(4, 0, 1)]);
    }

    #[test]
    fn scores_add_in_f64() {
        // In f32 all three are -0.1f32, -0.2f32, -0.3f32, and -0.1f32 + -0.2f32 == -0.3f32: a
        // tie, which keeps "abc" (found first). In f64, -0.1 + -0.2 = -0.30000000000000004 is
        // above -0.3000000000000001: "a" + "bc".
        let m = model(
            &[
                ("<unk>", 0.0),
                ("a", -0.1),
                ("bc", -0.2),
                ("abc", -0.3000000000000001),
            ],
            0,
            false,
        );
        assert_eq!(-0.1f32 + -0.2f32, -0.3000000000000001f64 as f32);
        assert_eq!(ids(&m, "abc"), vec![(1, 0, 1), (2, 1, 3)]);
    }

    #[test]
    fn unknown_runs_fuse_then_fall_back_to_bytes() {
        let mut vocab = vec![("<unk>".to_string(), 0.0), ("a".to_string(), -1.0)];
        for b in 0..=255u8 {
            if b != 0x98 {
                vocab.push((format!("<0x{b:02X}>"), -3.0));
            }
        }
        let m = HfUnigram::new(&vocab, 0, true, Kernels::scalar()).unwrap();
        let id = |b: u8| 2 + b as u32 - (b > 0x98) as u32;
        // "☃☃" (E2 98 83 twice) has a byte without a piece: one unknown.
        assert_eq!(ids(&m, "a☃☃a"), vec![(1, 0, 1), (0, 1, 7), (1, 7, 8)]);
        // "é" (C3 A9): its two bytes, each spanning the character.
        assert_eq!(
            ids(&m, "éa"),
            vec![(id(0xC3), 0, 2), (id(0xA9), 0, 2), (1, 2, 3)]
        );
        // The unknown scores min − 10 = −13: a piece in the text is found (`<0x41>` spelled).
        assert_eq!(ids(&m, "<0x41>"), vec![(id(0x41), 0, 6)]);
    }

    #[test]
    fn bad_vocabularies_are_errors() {
        let v = |p: &[(&str, f64)]| {
            p.iter()
                .map(|&(a, s)| (a.to_string(), s))
                .collect::<Vec<_>>()
        };
        assert!(HfUnigram::new(&[], 0, false, Kernels::scalar()).is_err());
        let e = HfUnigram::new(&v(&[("a", 0.0)]), 1, false, Kernels::scalar()).unwrap_err();
        assert!(e.contains("unk_id"), "{e}");
        let e = HfUnigram::new(&v(&[("a\0", 0.0)]), 0, false, Kernels::scalar()).unwrap_err();
        assert!(e.contains("NUL"), "{e}");
        let e = HfUnigram::new(&v(&[("a", f64::NAN)]), 0, false, Kernels::scalar()).unwrap_err();
        assert!(e.contains("score"), "{e}");
    }
}
