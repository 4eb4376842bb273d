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
    /// was too strict for it: 64 -> 72 MB/s).
    #[inline]
    pub fn sparse(&self, piece: &[u8]) -> bool {
        let allowed = piece.len().saturating_sub(1) * 3 / 4;
        let mut joined = 0;
        for w in piece.windows(2) {
            joined += self.joined(w[0], w[1]) as usize;
            if joined > allowed {
                return false;
            }
        }
        true
    }

    /// Calls `cluster(start, end)` for each maximal byte range of `piece` whose neighbouring
    /// bytes are all joined, in order: the piece's tokens are those of its clusters, each
    /// merged alone.
    #[inline]
    pub fn clusters(&self, piece: &[u8], mut cluster: impl FnMut(usize, usize)) {
        let mut start = 0;
        for i in 1..piece.len() {
            if !self.joined(piece[i - 1], piece[i]) {
                cluster(start, i);
                start = i;
            }
        }
        if start < piece.len() {
            cluster(start, piece.len());
        }
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
        let mut got = Vec::new();
        cuts.clusters(b"abcxyyab", |s, e| got.push((s, e)));
        assert_eq!(got, vec![(0, 3), (3, 5), (5, 6), (6, 8)]);
        got.clear();
        cuts.clusters(b"q", |s, e| got.push((s, e)));
        assert_eq!(got, vec![(0, 1)]);
        got.clear();
        cuts.clusters(b"", |s, e| got.push((s, e)));
        assert!(got.is_empty());
    }

    #[test]
    fn sparse_means_at_most_three_pairs_in_four_joined() {
        let cuts = PairCuts::new([&b"abcd"[..]].into_iter());
        // 4 pairs: ab, bc, cd, da — three joined.
        assert!(cuts.sparse(b"abcda"));
        // 3 pairs: ab, bc, cd — all joined.
        assert!(!cuts.sparse(b"abcd"));
        assert!(cuts.sparse(b"a") && cuts.sparse(b""));
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
