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
//! and CJK join nearly every pair and are left to the other paths, which `PairCuts::sparse`
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

    /// Whether at most three in four of `piece`'s byte pairs are joined (of its first
    /// `PROBE` pairs, for a longer piece: a megabyte of `a` is told dense at once): then
    /// cutting it at the others leaves clusters of a few bytes, cheaper than any search (a
    /// piece of prose or CJK joins nearly all; Qwen's vocabulary joins half the pairs of random
    /// characters, and half was too strict for it: 64 -> 72 MB/s). Only the choice of
    /// algorithm rests on it: any cuts between unjoined pairs give the piece's tokens. If
    /// sparse, `ends` holds where each cluster ends (see [`PairCuts::cluster_ends`]); if not,
    /// something unspecified.
    #[inline]
    pub fn sparse_ends(&self, piece: &[u8], ends: &mut Vec<u32>) -> bool {
        self.ends::<true>(piece, ends)
    }

    /// The end of each maximal byte range of `piece` whose neighbouring bytes are all joined,
    /// in order, into `ends`: the piece's tokens are those of its clusters, each merged alone.
    pub fn cluster_ends(&self, piece: &[u8], ends: &mut Vec<u32>) {
        self.ends::<false>(piece, ends);
    }

    /// Calls `cluster(start, end)` for each cluster of `piece` (see [`PairCuts::cluster_ends`];
    /// `ends` is a buffer), in order; with `only_sparse`, only when the piece is sparse
    /// ([`PairCuts::sparse_ends`]). Whether it did.
    #[inline]
    pub fn clusters(
        &self,
        piece: &[u8],
        ends: &mut Vec<u32>,
        only_sparse: bool,
        mut cluster: impl FnMut(usize, usize),
    ) -> bool {
        if only_sparse {
            if !self.sparse_ends(piece, ends) {
                return false;
            }
        } else {
            self.cluster_ends(piece, ends);
        }
        let mut s = 0;
        for &e in ends.iter() {
            cluster(s, e as usize);
            s = e as usize;
        }
        true
    }

    /// The cluster ends, in one pass without a branch on each pair (random text joins about
    /// half of them, which the branch predictor cannot guess), 64 pairs at a time through a
    /// buffer on the stack; with `SPARSE`, giving up (`false`) on a dense piece.
    #[inline(always)]
    fn ends<const SPARSE: bool>(&self, piece: &[u8], ends: &mut Vec<u32>) -> bool {
        let n = piece.len();
        ends.clear();
        let mut chunk = [0u32; PROBE];
        let (mut k, mut joined) = (0, 0);
        for i in 1..n {
            let j = self.joined(piece[i - 1], piece[i]);
            // Written every time, kept (k moves on) only at a cut; k < PROBE here.
            chunk[k % PROBE] = i as u32;
            k += !j as usize;
            joined += j as usize;
            if i % PROBE == 0 {
                if SPARSE && i == PROBE && joined > PROBE * 3 / 4 {
                    return false;
                }
                ends.extend_from_slice(&chunk[..k]);
                k = 0;
            }
        }
        if SPARSE && n <= PROBE && joined > n.saturating_sub(1) * 3 / 4 {
            return false;
        }
        ends.extend_from_slice(&chunk[..k]);
        if n > 0 {
            ends.push(n as u32);
        }
        true
    }
}

/// The pairs [`PairCuts::sparse_ends`] judges a long piece by, and its buffer's length.
const PROBE: usize = 64;

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
    fn long_pieces_are_judged_by_their_first_pairs_and_cut_everywhere() {
        let cuts = PairCuts::new([&b"abca"[..], b"xy"].into_iter());
        let (mut ends, mut all) = (Vec::new(), Vec::new());
        // Every pair joined: dense, whatever the length.
        for n in [2, 63, 64, 65, 66, 1000] {
            let piece: Vec<u8> = b"abc".iter().copied().cycle().take(n).collect();
            assert!(!cuts.sparse_ends(&piece, &mut ends), "{n}");
        }
        // Sparse first pairs (`xyq` repeated: one pair in three joined), then dense: sparse,
        // with every cut; and the other way round, dense.
        for (first, then) in [(&b"xyq"[..], &b"abc"[..]), (b"abc", b"xyq")] {
            for n in [64, 65, 70, 64 * 3, 64 * 3 + 1, 500] {
                let mut piece: Vec<u8> = first.iter().copied().cycle().take(n).collect();
                piece.extend(then.iter().copied().cycle().take(n));
                cuts.cluster_ends(&piece, &mut all);
                let sparse = cuts.sparse_ends(&piece, &mut ends);
                assert_eq!(sparse, first == b"xyq", "{n}");
                if sparse {
                    assert_eq!(ends, all, "{n}");
                }
            }
        }
        // Every length around the buffer's, ends against a plain scan.
        for n in 0..200 {
            let piece: Vec<u8> = (0..n).map(|i| b"axybcq"[(i * 7 + i / 5) % 6]).collect();
            cuts.cluster_ends(&piece, &mut all);
            let want: Vec<u32> = (1..n)
                .filter(|&i| !cuts.joined(piece[i - 1], piece[i]))
                .chain((n > 0).then_some(n))
                .map(|i| i as u32)
                .collect();
            assert_eq!(all, want, "{n}");
        }
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
