//! The middle-snake search of [`super::diff`] with pruning: the same split point as `seqdiff`'s
//! `find_mid`, found by following only the diagonals that can still lie on a shortest path.
//!
//! `seqdiff`'s search costs `O(D²)` diagonal steps for a range of edit distance `D` (it keeps
//! every diagonal reached), which makes two tokenizations that differ every few characters (a
//! WordPiece `##` here, a `Ġ` there) quadratic in their length. Here each search knows an upper
//! bound `U ≥ D` (the exact distance for the halves of an earlier split; for the whole input, a
//! guess that is raised until it holds) and a lower bound `LB(P)` on the distance from any
//! point `P` to the end of the range (and to its start) that never drops by more than one per
//! edit and never changes along a match ([`super::bound`]). A forward point reached with `d`
//! edits where `d + LB(P → end) > U` cannot be on a shortest path, nor can anything built from
//! it; only a band of diagonals whose edge points can still be on one is followed, and it is
//! narrow when the bound is tight.
//!
//! Why the split point is `seqdiff`'s (`R`: its array values; `M`: ours; forward values are
//! furthest `x`, backward values nearest):
//! 1. Every value of `M` is a point really reached with that many edits, or a "none" marker,
//!    and `M ≤ R` forward (`M ≥ R` backward) on every diagonal: the same rule
//!    `max(lo + 1, hi)` then a snake is monotone in its inputs, a pruned neighbour reads as
//!    "none", and where `seqdiff` keeps an old value (a candidate outside the range), ours
//!    becomes "none". `seqdiff`'s candidates leave the range only through its far edges (from a
//!    point at `x = xr` or `y = yr`) or from two "none"s; the far edges are out of reach here
//!    ([`far_edges_out_of_reach`]: no point on them is within the search's edits of the start by
//!    the lower bound), so its values also never decrease from step to step.
//! 2. A useful entry — a point reached with `d` edits from which the end is `D − d` away — has
//!    `M = R`: its chosen neighbour is useful too (that neighbour, one edit and a snake reach
//!    it), equal by induction, and the other neighbour is no larger. Useful points are never
//!    pruned, since `d + LB ≤ d + (D − d) ≤ U`, so they stay in the band. A kept old value is
//!    never useful: it was reached with two edits fewer, so a path through it would beat `D`.
//! 3. `seqdiff` returns at the first overlap of the forward and backward values in its order
//!    (steps, then diagonals from high to low). An overlap of ours is an overlap of its values
//!    (by 1), so ours is never earlier; its first overlap has cost `D` and both its points are
//!    useful (the distance to the end never grows along a diagonal, nor from the start
//!    shrinks), so ours finds it too (by 2), at the same diagonal, with the same split point:
//!    the snake's start comes from the useful neighbour.
//!
//! When the guess `U` is below `D`, no point is useful and the band empties (or the steps pass
//! `U / 2`): the search reports it and is run again with a larger `U`. A found overlap has cost
//! at most `U`, which proves `U ≥ D` after the fact.

use super::bound::Bound;
use super::diff::{BACKWARD_NONE, FORWARD_NONE, Mid, Search, Unit, step_diagonals};

impl<U: Unit> Search<'_, U> {
    /// The split point of `seqdiff`'s `find_mid` for the range, or `None` where pruning cannot
    /// be proven safe (the caller then searches step for step). `cost`: the range's edit
    /// distance, when known.
    pub(super) fn find_mid_pruned(
        &mut self,
        bound: &Bound,
        xl: usize,
        xr: usize,
        yl: usize,
        yr: usize,
        cost: Option<usize>,
    ) -> Option<Mid> {
        // `low ≤ D ≤ budget` once a search answers; a search that finds no overlap proves
        // `D > budget`.
        let floor = cost.unwrap_or_else(|| bound.lower(xl, xr, yl, yr).max(1) as usize);
        let (mut low, mut slack) = (floor, (floor / 256).max(1));
        let mut budget = cost.unwrap_or(floor + slack);
        loop {
            let steps = budget.div_ceil(2) + 1;
            if !far_edges_out_of_reach(bound, xl, xr, yl, yr, steps, low) {
                return None;
            }
            match self.pruned_search(bound, xl, xr, yl, yr, budget) {
                Some(mid) => return Some(mid),
                // A known distance that the search says is exceeded would be a bug: fall back.
                None if cost.is_some() => {
                    debug_assert!(false, "pruned search exceeded a known distance");
                    return None;
                }
                None => {
                    // The budget is the bound plus a slack that doubles: a search whose slack
                    // is short of the bound's gap fails after spending about that slack (its
                    // useful points are pruned once the gap left is smaller), so the failures
                    // cost about what the last search does, and a budget at most twice the gap
                    // above `D` keeps that one's band narrow. (Raising the budget itself by a
                    // quarter each time overshot `D` by thousands on a 50 KB document.)
                    low = budget + 1;
                    slack *= 2;
                    budget = floor + slack;
                }
            }
        }
    }

    /// One pruned search with the bound `budget ≥ D`, or `None` if it proves `D > budget`.
    fn pruned_search(
        &mut self,
        bound: &Bound,
        xl: usize,
        xr: usize,
        yl: usize,
        yr: usize,
        budget: usize,
    ) -> Option<Mid> {
        let (xlu, xru, ylu, yru) = (xl, xr, yl, yr);
        let (xl, xr, yl, yr) = (xl as isize, xr as isize, yl as isize, yr as isize);
        let budget = budget as isize;
        let kmin = xl - yr;
        let kmax = xr - yl;
        let kmidf = xl - yl;
        let kmidb = xr - yr;
        let delta = (xr - xl) - (yr - yl);
        let is_odd = (delta & 1) == 1;

        // seqdiff's diagonal ranges, and the bands followed within them.
        let (mut kminf, mut kmaxf, mut kminb, mut kmaxb) = (kmidf, kmidf, kmidb, kmidb);
        let (mut flo, mut fhi, mut blo, mut bhi) = (kmidf, kmidf, kmidb, kmidb);
        // The anchors of the range's ends, for the bound to them from any point.
        let (start, end) = (bound.anchor(xlu, ylu), bound.anchor(xru, yru));
        let s = self.slot(kmidf);
        self.vf[s] = xl;
        self.mark_forward(flo, fhi);
        let s = self.slot(kmidb);
        self.vb[s] = xr;
        self.mark_backward(blo, bhi);

        let mut d = 0isize;
        loop {
            d += 1;
            if 2 * d - 1 > budget {
                return None;
            }
            // Forward.
            step_diagonals(kmin, kmax, &mut kminf, &mut kmaxf);
            let (lo, hi) = ((flo - 1).max(kminf), (fhi + 1).min(kmaxf));
            let mut k = hi;
            while k >= lo {
                let ik = self.slot(k);
                let x = (self.vf[ik - 1] + 1).max(self.vf[ik + 1]);
                let y = x.saturating_sub(k);
                if xl <= x && x <= xr && yl <= y && y <= yr {
                    let (xu, yu) = (x as usize, y as usize);
                    let u = x + self.snake_forward(xu, yu, xru, yru) as isize;
                    self.vf[ik] = u;
                    if is_odd && blo <= k && k <= bhi && self.vb[ik] <= u {
                        return Some(Mid {
                            x: xu,
                            y: yu,
                            left: d as usize,
                            right: d as usize - 1,
                        });
                    }
                } else {
                    self.vf[ik] = FORWARD_NONE;
                }
                k -= 2;
            }
            let useless = |search: &Self, k: isize| {
                let x = search.vf[search.slot(k)];
                x == FORWARD_NONE
                    || d + Bound::between(&end, &bound.anchor(x as usize, (x - k) as usize))
                        > budget
            };
            let (mut lo, mut hi) = (lo, hi);
            while lo <= hi && useless(self, lo) {
                lo += 2;
            }
            while hi > lo && useless(self, hi) {
                hi -= 2;
            }
            if lo > hi {
                return None;
            }
            (flo, fhi) = (lo, hi);
            self.mark_forward(flo, fhi);

            // Backward.
            if 2 * d > budget && !is_odd {
                return None;
            }
            step_diagonals(kmin, kmax, &mut kminb, &mut kmaxb);
            let (lo, hi) = ((blo - 1).max(kminb), (bhi + 1).min(kmaxb));
            let mut k = hi;
            while k >= lo {
                let ik = self.slot(k);
                let x = self.vb[ik - 1].min(self.vb[ik + 1] - 1);
                let y = x.saturating_sub(k);
                if xl <= x && x <= xr && yl <= y && y <= yr {
                    let (xu, yu) = (x as usize, y as usize);
                    let u = x - self.snake_backward(xu, yu, xlu, ylu) as isize;
                    self.vb[ik] = u;
                    if !is_odd && flo <= k && k <= fhi && self.vf[ik] >= u {
                        return Some(Mid {
                            x: xu,
                            y: yu,
                            left: d as usize,
                            right: d as usize,
                        });
                    }
                } else {
                    self.vb[ik] = BACKWARD_NONE;
                }
                k -= 2;
            }
            let useless = |search: &Self, k: isize| {
                let x = search.vb[search.slot(k)];
                x == BACKWARD_NONE
                    || d + Bound::between(&bound.anchor(x as usize, (x - k) as usize), &start)
                        > budget
            };
            let (mut lo, mut hi) = (lo, hi);
            while lo <= hi && useless(self, lo) {
                lo += 2;
            }
            while hi > lo && useless(self, hi) {
                hi -= 2;
            }
            if lo > hi {
                return None;
            }
            (blo, bhi) = (lo, hi);
            self.mark_backward(blo, bhi);
        }
    }

    /// "None" just outside a forward band, where the next step reads its neighbours.
    fn mark_forward(&mut self, lo: isize, hi: isize) {
        let s = self.slot(lo - 2);
        self.vf[s] = FORWARD_NONE;
        let s = self.slot(hi + 2);
        self.vf[s] = FORWARD_NONE;
    }

    fn mark_backward(&mut self, lo: isize, hi: isize) {
        let s = self.slot(lo - 2);
        self.vb[s] = BACKWARD_NONE;
        let s = self.slot(hi + 2);
        self.vb[s] = BACKWARD_NONE;
    }
}

/// Whether no point on the range's far edges can be reached from its start with fewer than
/// `steps` edits (forward: `x = xr` or `y = yr`), nor its near edges from its end (backward:
/// `x = xl` or `y = yl`) — so that no search step of `seqdiff` up to `steps` produces a
/// candidate beyond the range. A point's distance from the start is at least the lower bound,
/// and at least `low − (its distance to the end)` for a range of distance `D ≥ low`; on a far
/// edge only insertions (or only deletions) are left, so that distance is known.
fn far_edges_out_of_reach(
    bound: &Bound,
    xl: usize,
    xr: usize,
    yl: usize,
    yr: usize,
    steps: usize,
    low: usize,
) -> bool {
    let (steps, low) = (steps as isize, low as isize);
    let far = |lb: isize, left: usize| lb.max(low - left as isize) >= steps;
    let (width, height) = (xr - xl, yr - yl);
    // Forward: the right edge (xr, y) and the bottom edge (x, yr), from the start.
    bound.along((xl, yl), (xr, yl), false, 1, height, |i, lb| far(lb, height - i))
        && bound.along((xl, yl), (xl, yr), true, 1, width, |i, lb| far(lb, width - i))
        // Backward: the left edge (xl, y) and the top edge (x, yl), from the end.
        && bound.along((xr, yr), (xl, yr), false, -1, height, |i, lb| far(lb, height - i))
        && bound.along((xr, yr), (xr, yl), true, -1, width, |i, lb| far(lb, width - i))
}

#[cfg(test)]
mod tests {
    use super::super::diff::{PAD, Padded, Search};
    use super::*;

    use crate::test_rng::Rng;

    /// A text over `letters`, and a copy with `#`s inserted and letters dropped or doubled, as
    /// two tokenizations of one text differ.
    fn pair(rng: &mut Rng, len: usize, letters: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let x: Vec<u8> = (0..len)
            .map(|_| letters[rng.below(letters.len() as u64) as usize])
            .collect();
        let mut y = Vec::new();
        for &c in &x {
            match rng.below(10) {
                0 => y.extend_from_slice(b"##"),
                1 => continue,
                2 => y.push(c),
                _ => {}
            }
            y.push(c);
        }
        (x, y)
    }

    fn search<'a>(
        x: &'a [u8],
        y: &'a [u8],
        padded: &'a mut Padded<u8>,
        vf: &'a mut Vec<isize>,
        vb: &'a mut Vec<isize>,
    ) -> Search<'a, u8> {
        let slots = x.len() + y.len() + 1 + 2 * PAD;
        *vf = vec![FORWARD_NONE; slots];
        *vb = vec![BACKWARD_NONE; slots];
        let (xp, yp) = padded.fill(x, y);
        Search {
            xv: x,
            yv: y,
            xp,
            yp,
            vf,
            vb,
            offset: (y.len() + PAD) as isize,
        }
    }

    /// The pruned search gives the step-for-step search's split point and distances whenever it
    /// answers, and answers for most of these ranges.
    #[test]
    fn pruned_split_equals_seqdiffs() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut answered, mut cases) = (0, 0);
        for round in 0..400 {
            let letters: &[u8] = if round % 2 == 0 { b"ab" } else { b"abcdefgh" };
            let (x, y) = pair(&mut rng, 20 + round % 180, letters);
            // The whole range, less its common ends (find_mid's precondition).
            let head = x.iter().zip(&y).take_while(|(a, b)| a == b).count();
            let tail = x[head..]
                .iter()
                .rev()
                .zip(y[head..].iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            let (xl, xr, yl, yr) = (head, x.len() - tail, head, y.len() - tail);
            if xl == xr || yl == yr {
                continue;
            }
            cases += 1;
            let bound = Bound::new(&x[..], &y[..]);
            let (mut vf, mut vb) = (Vec::new(), Vec::new());
            let want =
                search(&x, &y, &mut Padded::default(), &mut vf, &mut vb).find_mid(xl, xr, yl, yr);
            let (mut vf, mut vb) = (Vec::new(), Vec::new());
            let got = search(&x, &y, &mut Padded::default(), &mut vf, &mut vb)
                .find_mid_pruned(&bound, xl, xr, yl, yr, None);
            if let Some(got) = got {
                answered += 1;
                assert_eq!(
                    got,
                    want,
                    "{:?} {:?}",
                    String::from_utf8_lossy(&x),
                    String::from_utf8_lossy(&y)
                );
            }
            // Told the distance, it answers the same.
            let (mut vf, mut vb) = (Vec::new(), Vec::new());
            let cost = Some(want.left + want.right);
            let told = search(&x, &y, &mut Padded::default(), &mut vf, &mut vb)
                .find_mid_pruned(&bound, xl, xr, yl, yr, cost);
            if let Some(told) = told {
                assert_eq!(told, want);
            }
        }
        assert!(
            answered * 2 > cases,
            "pruning answered only {answered} of {cases} searches"
        );
    }
}
