//! Where a long BPE piece can be cut without changing its tokens.
//!
//! Every part BPE ever holds is a vocabulary token that is a substring of the piece (it starts
//! from single bytes, and each merge makes a token). So if no token occurs in the piece across
//! byte position `p` — starting before `p` and ending after it — no part ever spans `p`, no
//! merge joins the two sides, and the merges on each side are exactly those BPE makes on that
//! side alone (the lowest rank among a side's pairs is chosen in the same order, ties going to
//! the leftmost within the side). The piece's tokens are then the tokens of the two sides,
//! concatenated; with every safe cut made, the tokens of its segments.
//!
//! That is what makes CJK text cheap: a clause of Japanese is one pre-tokenizer piece of dozens
//! of bytes, but tokens spanning two characters are few, so it falls into segments of one or two
//! characters — mostly tokens, the rest short and repeated, answered by the word cache.
//!
//! Only cuts between two non-ASCII characters are looked for (a byte of 0x80 or more, then a
//! UTF-8 lead byte), so only tokens holding such a byte pair can span one: those go into a
//! double-array trie (1262 tokens for cl100k, 51 068 for o200k, built on first use), walked from
//! every byte of the piece to find the furthest end of a token starting before each position.
//! The trie cannot hold keys with a zero byte; a piece holding one is not cut.

use simdtok_kernels::{DoubleArray, Kernels};

use crate::models::byte_bpe::PieceToken;
use crate::models::self_merges::SelfMerges;

/// The trie of the tokens that could span a cut.
#[derive(Debug)]
pub struct SafeCuts {
    trie: Option<DoubleArray>,
}

/// Whether `bytes[i - 1]` and `bytes[i]` are a non-ASCII byte then a UTF-8 lead byte: a
/// boundary between two non-ASCII characters of valid UTF-8.
#[inline]
fn is_cut_candidate(bytes: &[u8], i: usize) -> bool {
    bytes[i - 1] >= 0x80 && bytes[i] >= 0xC0
}

/// Whether a cut candidate lies inside `token`.
fn spans_a_candidate(token: &[u8]) -> bool {
    (1..token.len()).any(|i| is_cut_candidate(token, i))
}

impl SafeCuts {
    /// Whether `piece` has a place where a cut could be (two non-ASCII characters in a row):
    /// a piece without one is merged whole, and the trie need not be built for it.
    pub fn has_candidate(piece: &[u8]) -> bool {
        (1..piece.len()).any(|i| is_cut_candidate(piece, i))
    }

    /// The cut finder of a vocabulary (every token's bytes).
    pub fn new<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> SafeCuts {
        let keys: Vec<(&[u8], u32)> = tokens
            .filter(|t| spans_a_candidate(t) && !t.contains(&0))
            .map(|t| (t, 0))
            .collect();
        // A duplicate key is harmless here (the caller's vocabulary has none); any build error
        // only means no piece is cut.
        let trie = if keys.is_empty() {
            None
        } else {
            DoubleArray::build(&keys).ok()
        };
        SafeCuts { trie }
    }

    /// The segments of `piece` between its safe cuts, as `[start, end)` byte ranges in order,
    /// into `out` (cleared first); one segment when there is no cut.
    pub fn segments(&self, kernels: &Kernels, piece: &[u8], out: &mut Vec<(u32, u32)>) {
        out.clear();
        let n = piece.len();
        let Some(trie) = &self.trie else {
            out.push((0, n as u32));
            return;
        };
        if piece.contains(&0) {
            out.push((0, n as u32));
            return;
        }
        // The furthest end of a token (of the trie) starting before `i`.
        let mut reach = 0usize;
        let mut start = 0usize;
        for i in 0..n {
            if i > start && reach <= i && is_cut_candidate(piece, i) {
                out.push((start as u32, i as u32));
                start = i;
            }
            kernels.trie_prefix_walk(trie, &piece[i..], |len, _| {
                reach = reach.max(i + len as usize);
            });
        }
        out.push((start as u32, n as u32));
    }

    /// Appends the tokens of `piece` to `out`, merging each segment on its own with `merge` (a
    /// model's merging from single bytes). A segment that is a token (`token_of`) is that token
    /// only if its own merges make it (`self_merges`): the whole-piece rules (tiktoken's, and
    /// `ignore_merges`) are about pieces, not segments. `segments` is a buffer.
    #[allow(clippy::too_many_arguments)]
    pub fn merge_segments<S>(
        &self,
        kernels: &Kernels,
        piece: &[u8],
        segments: &mut Vec<(u32, u32)>,
        scratch: &mut S,
        out: &mut Vec<PieceToken>,
        token_of: impl Fn(&[u8]) -> Option<u32>,
        self_merges: &SelfMerges,
        merge: impl Fn(&[u8], &mut S, &mut Vec<PieceToken>),
    ) {
        self.segments(kernels, piece, segments);
        if segments.len() == 1 {
            return merge(piece, scratch, out);
        }
        for &(s, e) in segments.iter() {
            let segment = &piece[s as usize..e as usize];
            match token_of(segment) {
                Some(id) if self_merges.check(id, segment, scratch, &merge) => {
                    out.push(PieceToken { id, len: e - s })
                }
                _ => merge(segment, scratch, out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments<'a>(cuts: &SafeCuts, piece: &'a str) -> Vec<&'a str> {
        let mut out = Vec::new();
        cuts.segments(Kernels::scalar(), piece.as_bytes(), &mut out);
        out.iter()
            .map(|&(s, e)| &piece[s as usize..e as usize])
            .collect()
    }

    #[test]
    fn cuts_where_no_token_spans() {
        let vocab = ["日本", "本語", "語の", "ab", "の", "日", "a"];
        let cuts = SafeCuts::new(vocab.iter().map(|t| t.as_bytes()));
        // 日本語 chains (日本, 本語): no cut inside; の after 語 is joined by 語の.
        assert_eq!(segments(&cuts, "日本語の"), vec!["日本語の"]);
        assert_eq!(segments(&cuts, "日本日本"), vec!["日本", "日本"]);
        assert_eq!(segments(&cuts, "のの日"), vec!["の", "の", "日"]);
        // Never between ASCII bytes, nor between ASCII and non-ASCII.
        assert_eq!(segments(&cuts, "abの日ab"), vec!["abの", "日ab"]);
        assert_eq!(segments(&cuts, ""), vec![""]);
    }

    #[test]
    fn a_token_starting_mid_character_blocks_the_cut_it_spans() {
        // The last byte of 日 (0xA5) followed by the first of 本 (0xE6 …) is a token.
        let vocab: Vec<Vec<u8>> = vec![vec![0xA5, 0xE6], "日".into(), "本".into()];
        let cuts = SafeCuts::new(vocab.iter().map(|t| &t[..]));
        assert_eq!(segments(&cuts, "日本日"), vec!["日本", "日"]);
        // Cuts fall between characters only, whether or not a character is a token.
        let cuts = SafeCuts::new(["本日"].iter().map(|t| t.as_bytes()));
        assert_eq!(segments(&cuts, "日本語"), vec!["日", "本", "語"]);
    }

    #[test]
    fn candidates_are_two_non_ascii_characters_in_a_row() {
        assert!(SafeCuts::has_candidate("日本".as_bytes()));
        assert!(SafeCuts::has_candidate("aé😀".as_bytes()));
        assert!(!SafeCuts::has_candidate("│Reorganization".as_bytes()));
        assert!(!SafeCuts::has_candidate("日a本".as_bytes()));
        assert!(!SafeCuts::has_candidate(b""));
    }

    #[test]
    fn pieces_with_a_zero_byte_are_not_cut() {
        let cuts = SafeCuts::new(["日本"].iter().map(|t| t.as_bytes()));
        assert_eq!(segments(&cuts, "日日\0日"), vec!["日日\0日"]);
        assert_eq!(segments(&cuts, "日日"), vec!["日", "日"]);
    }
}
