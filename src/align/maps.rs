//! Token maps from the matched runs: token `i` of one side maps to every token of the other
//! side that holds a unit matched with one of token `i`'s units, in increasing order — the
//! reference's `get_alignment`, which drops a token only when it repeats the last one pushed;
//! matches are monotone on both sides, so that is every repeat.

use super::diff::Run;

/// Token maps in one flat array: the targets of token `i` are
/// `targets[rows[i]..rows[i + 1]]`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FlatAlignment {
    /// Row starts, one more than there are tokens.
    pub rows: Vec<usize>,
    /// The tokens mapped to, row after row.
    pub targets: Vec<usize>,
}

impl FlatAlignment {
    /// The number of tokens (rows).
    pub fn len(&self) -> usize {
        self.rows.len().saturating_sub(1)
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tokens that token `i` maps to.
    pub fn row(&self, i: usize) -> &[usize] {
        &self.targets[self.rows[i]..self.rows[i + 1]]
    }

    /// One `Vec` per token, the reference's shape.
    pub fn to_nested(&self) -> Vec<Vec<usize>> {
        (0..self.len()).map(|i| self.row(i).to_vec()).collect()
    }
}

/// Which side of the runs is the source of the map.
#[derive(Clone, Copy)]
pub(crate) enum From {
    X,
    Y,
}

/// The map from the tokens of one side (`src_starts`) to those of the other (`dst_starts`),
/// written into `out`.
pub(crate) fn token_map(
    runs: &[Run],
    from: From,
    src_starts: &[usize],
    dst_starts: &[usize],
    out: &mut FlatAlignment,
) {
    out.rows.clear();
    out.targets.clear();
    out.rows.push(0);
    let tokens = src_starts.len() - 1;
    // The source token being filled, and the destination token of the last matched unit.
    let mut src = 0;
    let mut dst = 0;
    for run in runs {
        let (mut s, mut d) = match from {
            From::X => (run.x, run.y),
            From::Y => (run.y, run.x),
        };
        let end = s + run.len;
        while s < end {
            // The source token holding unit s (tokens with no units are passed over).
            while src_starts[src + 1] <= s {
                src += 1;
                out.rows.push(out.targets.len());
            }
            let src_end = src_starts[src + 1].min(end);
            // Units s..src_end of this source token match d..d + (src_end - s).
            let d_end = d + (src_end - s);
            while d < d_end {
                while dst_starts[dst + 1] <= d {
                    dst += 1;
                }
                let row = &out.targets[out.rows[src]..];
                if row.last() != Some(&dst) {
                    out.targets.push(dst);
                }
                // Jump to the next destination token.
                d = dst_starts[dst + 1].min(d_end);
            }
            s = src_end;
        }
    }
    while out.rows.len() <= tokens {
        out.rows.push(out.targets.len());
    }
}
