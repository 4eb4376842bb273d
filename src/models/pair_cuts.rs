//! Cuts at byte pairs that no token holds: the cheap form of [`crate::models::safe_cuts`].
//!
//! If no vocabulary token has bytes `x y` next to each other, no token can span a place in a
//! piece where `x` is followed by `y`: by the safe-cut argument (every part BPE holds is a token
//! that is a substring of the piece), no merge ever joins the two sides, so each side merges on
//! its own. One bit per byte pair (8 KiB) decides it, for any pair — not only between
//! characters — without walking a trie.
//!
//! That is what a piece of random characters needs: many of its byte pairs are in no token (on
//! cl100k seven in eight, on o200k nearly two in three, on Qwen 3 one in two), so it falls
//! apart into clusters of a few bytes, each a byte's token or a pair's, or a short merge. Prose
//! and CJK join nearly every pair and are left to the other paths, which [`PairCuts::sparse`]
//! tells.

/// Bit `x << 8 | y`: some token holds the bytes `x y` next to each other.
#[derive(Debug)]
pub struct PairCuts {
    joined: Box<[u64; 1024]>,
}

impl PairCuts {
    /// The pairs of the vocabulary `tokens` (their bytes).
    pub fn new<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> PairCuts {
        let mut joined = Box::new([0u64; 1024]);
        for t in tokens {
            for w in t.windows(2) {
                let bit = (w[0] as usize) << 8 | w[1] as usize;
                joined[bit / 64] |= 1 << (bit % 64);
            }
        }
        PairCuts { joined }
    }

    /// Whether some token holds `a b`: a piece cannot be cut between them.
    #[inline]
    pub fn joined(&self, a: u8, b: u8) -> bool {
        let bit = (a as usize) << 8 | b as usize;
        self.joined[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Whether `piece` could be a token: its first and last byte pairs are both held by some
    /// token (a piece of one byte always could). Tells most pieces of random characters from
    /// tokens without a lookup in a table of megabytes.
    #[inline]
    pub fn could_be_token(&self, piece: &[u8]) -> bool {
        match piece {
            [a, b, .., y, z] => self.joined(*a, *b) && self.joined(*y, *z),
            [a, b] => self.joined(*a, *b),
            _ => true,
        }
    }

    /// Whether at most three in four of `piece`'s byte pairs are joined: then cutting it at the
    /// others leaves clusters of a few bytes, cheaper than any search (a piece of prose or CJK
    /// joins nearly all; Qwen's vocabulary joins half the pairs of random characters, and half
    /// was too strict for it: 64 -> 72 MB/s). If so, `ends` holds where each cluster ends (see
    /// [`PairCuts::cluster_ends`]); if not, something unspecified.
    #[inline]
    pub fn sparse_ends(&self, piece: &[u8], ends: &mut Vec<u32>) -> bool {
        self.ends::<true>(piece, ends)
    }

    /// The end of each maximal byte range of `piece` whose neighbouring bytes are all joined,
    /// in order, into `ends`: the piece's tokens are those of its clusters, each merged alone.
    pub fn cluster_ends(&self, piece: &[u8], ends: &mut Vec<u32>) {
        self.ends::<false>(piece, ends);
    }

    /// The cluster ends, in one pass without a branch on each pair (random text joins about
    /// half of them, which the branch predictor cannot guess); with `SPARSE`, giving up
    /// (`false`) once more than three pairs in four are joined.
    #[inline(always)]
    fn ends<const SPARSE: bool>(&self, piece: &[u8], ends: &mut Vec<u32>) -> bool {
        let n = piece.len();
        ends.clear();
        ends.resize(n, 0);
        let allowed = n.saturating_sub(1) * 3 / 4;
        let (mut k, mut joined) = (0, 0);
        for i in 1..n {
            let j = self.joined(piece[i - 1], piece[i]);
            // Written every time, kept (k moves on) only at a cut.
            ends[k] = i as u32;
            k += !j as usize;
            joined += j as usize;
            if SPARSE && joined > allowed {
                return false;
            }
        }
        if n > 0 {
            ends[k] = n as u32;
            k += 1;
        }
        ends.truncate(k);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_are_the_runs_of_joined_pairs() {
        let cuts = PairCuts::new([&b"abc"[..], b"xy", b"y"].into_iter());
        assert!(cuts.joined(b'a', b'b') && cuts.joined(b'b', b'c') && cuts.joined(b'x', b'y'));
        assert!(!cuts.joined(b'c', b'x') && !cuts.joined(b'b', b'a'));
        let mut ends = Vec::new();
        cuts.cluster_ends(b"abcxyyab", &mut ends);
        assert_eq!(ends, vec![3, 5, 6, 8]);
        cuts.cluster_ends(b"q", &mut ends);
        assert_eq!(ends, vec![1]);
        cuts.cluster_ends(b"", &mut ends);
        assert!(ends.is_empty());
        // The same ends when sparse: 3 of 7 pairs joined.
        assert!(cuts.sparse_ends(b"abcxyyab", &mut ends));
        assert_eq!(ends, vec![3, 5, 6, 8]);
    }

    #[test]
    fn sparse_means_at_most_three_pairs_in_four_joined() {
        let cuts = PairCuts::new([&b"abcd"[..]].into_iter());
        let mut ends = Vec::new();
        // 4 pairs: ab, bc, cd, da — three joined.
        assert!(cuts.sparse_ends(b"abcda", &mut ends));
        assert_eq!(ends, vec![4, 5]);
        // 3 pairs: ab, bc, cd — all joined.
        assert!(!cuts.sparse_ends(b"abcd", &mut ends));
        assert!(cuts.sparse_ends(b"a", &mut ends) && cuts.sparse_ends(b"", &mut ends));
    }

    #[test]
    fn a_token_could_be_one() {
        let vocab = [&b"abcd"[..], b"xy", b"q"];
        let cuts = PairCuts::new(vocab.into_iter());
        for t in vocab {
            assert!(cuts.could_be_token(t));
        }
        assert!(!cuts.could_be_token(b"ba") && !cuts.could_be_token(b"xbcd"));
        assert!(!cuts.could_be_token(b"abcx"));
        // Only the ends are asked: a necessary condition, not a lookup.
        assert!(cuts.could_be_token(b"abxcd"));
        assert!(cuts.could_be_token(b"z") && cuts.could_be_token(b""));
    }
}
