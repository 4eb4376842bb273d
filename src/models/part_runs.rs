//! BPE over a sequence that is a few runs of one starting symbol (a line of `=`, a megabyte of
//! spaces, `▁` and a thousand `a`), in time that does not grow with the runs' lengths.
//!
//! Such a sequence is kept as runs of equal parts (`aa` × 500 000, then `a` × 1) and the
//! reference's merges — the lowest rank first, the leftmost of equal ranks — are applied to
//! whole runs at once where that is provably what the reference does one merge at a time:
//!
//! - the lowest-ranked pair lies inside a run of `c` parts `X`: the reference merges its first
//!   two `X`, then the next two, … left to right, *as long as no pair that this creates ranks
//!   below it* — `(XX, X)` at the moving frontier, `(XX, XX)` behind it and `(W, XX)` with the
//!   part `W` before the run. Pairs further left ranked above it already (the chosen pair was
//!   the leftmost lowest), and those further right are not reached before the run's own pairs.
//!   When all three rank above it, the run becomes `XX` × ⌊c/2⌋ and `X` × (c mod 2) in one step;
//!   otherwise one merge is made, exactly as the reference would.
//! - the lowest-ranked pair joins two runs: that one merge is made.
//!
//! Real vocabularies need a few dozen steps for any length. A made-up one can make the runs
//! fragment (every merge its own step); then this gives up after a budget that is linear in the
//! number of parts, and the caller merges the sequence the general way.

use crate::models::token::PieceToken;

const NONE: u32 = u32::MAX;
/// More runs than this: give up (each step scans all runs).
const MAX_RUNS: usize = 64;

/// `count` adjacent parts, each token `id` of `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub id: u32,
    pub len: u32,
    pub count: usize,
}

/// At most this many runs at the start: more, and the sequence is merged the general way.
pub const MAX_START_RUNS: usize = 8;

/// Fills `runs` (cleared first) with the run-length encoding of `parts` (`(id, len)` each);
/// `false` (and `runs` meaningless) when that takes more than [`MAX_START_RUNS`] runs.
pub fn start_runs(parts: impl Iterator<Item = (u32, u32)>, runs: &mut Vec<Run>) -> bool {
    runs.clear();
    for (id, len) in parts {
        if let Some(last) = runs.last_mut()
            && last.id == id
            && last.len == len
        {
            last.count += 1;
        } else if runs.len() == MAX_START_RUNS {
            return false;
        } else {
            runs.push(Run { id, len, count: 1 });
        }
    }
    true
}

/// Merges the parts held in `runs` (left to right, as [`start_runs`] leaves them), in place.
/// `merge(left, right)` is the `(rank, merged id)` of merging a part of `left` with a part of
/// `right` (`rank == u32::MAX` when they do not merge); a merged part's length is the sum.
/// Returns `false` when it gave up (see the module documentation): `runs` is then meaningless.
pub fn merge_runs(runs: &mut Vec<Run>, merge: impl Fn(&Run, &Run) -> (u32, u32)) -> bool {
    let parts: usize = runs.iter().map(|r| r.count).sum();
    merge_within(runs, 256 + parts / 8, merge)
}

/// Appends the parts of `runs` to `out`, one token per part.
pub fn push_runs(runs: &[Run], out: &mut Vec<PieceToken>) {
    for run in runs {
        let token = PieceToken {
            id: run.id,
            len: run.len,
        };
        out.extend(std::iter::repeat_n(token, run.count));
    }
}

/// [`merge_runs`], giving up after `budget` steps.
fn merge_within(
    runs: &mut Vec<Run>,
    mut budget: usize,
    merge: impl Fn(&Run, &Run) -> (u32, u32),
) -> bool {
    loop {
        // The leftmost lowest-ranked pair: inside run j comes before between j and j + 1.
        let (mut rank, mut new, mut at, mut inside) = (NONE, NONE, 0, false);
        for j in 0..runs.len() {
            let run = &runs[j];
            if run.count >= 2 {
                let (r, m) = merge(run, run);
                if r < rank {
                    (rank, new, at, inside) = (r, m, j, true);
                }
            }
            if let Some(next) = runs.get(j + 1) {
                let (r, m) = merge(run, next);
                if r < rank {
                    (rank, new, at, inside) = (r, m, j, false);
                }
            }
        }
        if rank == NONE {
            return true;
        }
        if budget == 0 || runs.len() > MAX_RUNS {
            return false;
        }
        budget -= 1;
        if inside {
            let run = runs[at];
            let merged = Run {
                id: new,
                len: 2 * run.len,
                count: 1,
            };
            let whole_run = run.count >= 4
                && merge(&merged, &run).0 > rank
                && merge(&merged, &merged).0 > rank
                && (at == 0 || merge(&runs[at - 1], &merged).0 > rank);
            let pairs = if whole_run { run.count / 2 } else { 1 };
            runs[at] = Run {
                count: pairs,
                ..merged
            };
            runs.insert(
                at + 1,
                Run {
                    count: run.count - 2 * pairs,
                    ..run
                },
            );
        } else {
            let (left, right) = (runs[at], runs[at + 1]);
            runs[at].count -= 1;
            runs[at + 1].count -= 1;
            runs.insert(
                at + 1,
                Run {
                    id: new,
                    len: left.len + right.len,
                    count: 1,
                },
            );
        }
        runs.retain(|r| r.count > 0);
        runs.dedup_by(|later, earlier| {
            let same = later.id == earlier.id && later.len == earlier.len;
            if same {
                earlier.count += later.count;
            }
            same
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_text::TestText;

    /// The reference's loop over a list of part lengths, with ranks by total length
    /// (tiktoken's rule for one repeated byte).
    fn naive(n: usize, rank: &[u32]) -> Vec<u32> {
        naive_from(vec![1u32; n], rank)
    }

    fn naive_from(mut parts: Vec<u32>, rank: &[u32]) -> Vec<u32> {
        let r = |len: u32| rank.get(len as usize).copied().unwrap_or(NONE);
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .map(|i| (r(parts[i] + parts[i + 1]), i))
                .min();
            match best {
                Some((rank, i)) if rank != NONE => {
                    parts[i] += parts.remove(i + 1);
                }
                _ => return parts,
            }
        }
    }

    fn by_runs(n: usize, rank: &[u32]) -> Option<Vec<u32>> {
        let r = |len: u32| rank.get(len as usize).copied().unwrap_or(NONE);
        let mut runs = vec![Run {
            id: r(1),
            len: 1,
            count: n,
        }];
        let merge = |a: &Run, b: &Run| {
            let k = r(a.len + b.len);
            (k, k)
        };
        if !merge_runs(&mut runs, merge) {
            return None;
        }
        for run in &runs {
            assert_eq!(run.id, r(run.len), "a part's id is its length's rank");
        }
        Some(
            runs.iter()
                .flat_map(|run| std::iter::repeat_n(run.len, run.count))
                .collect(),
        )
    }

    /// Ranks for lengths 1..=longest (some missing), in a random order.
    fn random_ranks(g: &mut TestText, longest: u32) -> Vec<u32> {
        let mut rank = vec![NONE; longest as usize + 1];
        rank[1] = 0;
        for (k, slot) in rank.iter_mut().enumerate().skip(2) {
            if g.below(4) != 0 {
                *slot = 1 + g.below(1000) * 64 + k as u32;
            }
        }
        rank
    }

    #[test]
    fn matches_the_reference_loop_on_random_rank_orders() {
        let mut g = TestText::new(0x005E_ED0F);
        let mut gave_up = 0;
        for _ in 0..300 {
            let longest = 2 + g.below(40);
            let rank = random_ranks(&mut g, longest);
            for n in (1..200).step_by(7) {
                match by_runs(n, &rank) {
                    Some(parts) => assert_eq!(parts, naive(n, &rank), "n {n}, ranks {rank:?}"),
                    None => gave_up += 1,
                }
            }
        }
        // Random orders are the adversarial case; most still take the fast way.
        assert!(gave_up < 300 * 29 / 4, "gave up {gave_up} times");
    }

    #[test]
    fn ranks_growing_with_length_never_give_up() {
        // Trained vocabularies learn a longer run after its parts; with gaps and any lengths.
        let mut g = TestText::new(77);
        for _ in 0..50 {
            let longest = 2 + g.below(80);
            let mut rank = vec![NONE; longest as usize + 1];
            let mut next = 0;
            for (k, slot) in rank.iter_mut().enumerate().skip(1) {
                if k == 1 || g.below(3) != 0 {
                    *slot = next;
                    next += 1 + g.below(50);
                }
            }
            for n in [1, 2, 3, 63, 64, 65, 1000, 4097, 100_003] {
                let parts = by_runs(n, &rank).expect("gave up");
                if n <= 1000 {
                    assert_eq!(parts, naive(n, &rank), "n {n}, ranks {rank:?}");
                }
                assert_eq!(parts.iter().map(|&l| l as usize).sum::<usize>(), n);
            }
        }
    }

    #[test]
    fn matches_the_reference_loop_from_any_runs() {
        // Starting sequences no single run leads to, so that every condition of a whole-run
        // step (the part before the run included) is exercised.
        let mut g = TestText::new(0x0BAD_5EED);
        for _ in 0..3000 {
            let longest = 2 + g.below(16);
            let rank = random_ranks(&mut g, longest);
            let r = |len: u32| rank.get(len as usize).copied().unwrap_or(NONE);
            let mut runs = Vec::new();
            for _ in 0..1 + g.below(4) {
                let len = 1 + g.below(longest.min(4));
                if r(len) != NONE {
                    let count = 1 + g.below(12) as usize;
                    runs.push(Run {
                        id: r(len),
                        len,
                        count,
                    });
                }
            }
            let parts: Vec<u32> = runs
                .iter()
                .flat_map(|run| std::iter::repeat_n(run.len, run.count))
                .collect();
            runs.dedup_by(|later, earlier| {
                let same = later.len == earlier.len;
                if same {
                    earlier.count += later.count;
                }
                same
            });
            let merge = |a: &Run, b: &Run| {
                let k = r(a.len + b.len);
                (k, k)
            };
            if merge_within(&mut runs, 1000, merge) {
                let got: Vec<u32> = runs
                    .iter()
                    .flat_map(|run| std::iter::repeat_n(run.len, run.count))
                    .collect();
                assert_eq!(
                    got,
                    naive_from(parts.clone(), &rank),
                    "{parts:?}, ranks {rank:?}"
                );
            }
        }
    }
}
