//! The shortest edit script between two unit sequences, exactly as `seqdiff` 0.3 finds it:
//! Myers' linear-space divide and conquer (strip the common prefix and suffix of a range, find
//! the middle snake by searching forward and backward at once, recurse on both halves).
//!
//! A shortest edit script is rarely unique, and which one `seqdiff` returns depends on every
//! detail of its search: the order diagonals are visited in, which of two equal furthest points
//! is kept, the point it splits at, the old values it keeps where a candidate leaves the range.
//! So this is the same search step for step, with the same arrays indexed the same way, and the
//! speed comes from elsewhere: matches found a machine word at a time (a snake starts with one
//! load of 8 bytes or 2 scalar values a side from padded copies of the sides and no branch on
//! the data, which took 18 % off 100 000 short pairs, where most diagonals start on a mismatch
//! or a short snake), a search specialized for odd and even `delta`, no `Option`s in the
//! diagonal loop, matches recorded as runs rather than one `Option<usize>` per unit, and a loop
//! instead of recursion. Large ranges are searched with pruning, with the same result (see
//! [`super::pruned`]).
//!
//! Cost: memory linear in the input (two arrays of `n + m + 5` integers, padded copies of the
//! two sides, the runs, and for large inputs the pruning's classes and prefix counts, 9 bytes a unit); time
//! `O((n + m) · D)` for an edit distance `D` — fast when the two sides are mostly equal, and
//! quadratic for two sides that share almost nothing (the reference's cost too).

/// A unit of a normalized text: a byte (all-ASCII inputs) or a Unicode scalar value.
pub(crate) trait Unit: Copy + Eq {
    /// The units a snake's first look compares at once (one load from each side).
    const LANES: usize;
    /// What the padding around a side's units holds (see [`Padded`]): any value does, since a
    /// snake is cut at its range's end whatever the units loaded past it.
    const FILL: Self;
    /// How many of `a[i..i + LANES]` equal `b[j..j + LANES]` before the first difference
    /// (`LANES` if all do).
    fn equal_ahead(a: &[Self], b: &[Self], i: usize, j: usize) -> usize;
    /// How many of `a[i - LANES..i]` equal `b[j - LANES..j]` after the last difference,
    /// counted from the end (`LANES` if all do).
    fn equal_behind(a: &[Self], b: &[Self], i: usize, j: usize) -> usize;
    /// The padded copies for this type of unit.
    fn padded(pads: &mut Pads) -> &mut Padded<Self>;
    /// The length of the longest common prefix of `a` and `b`.
    fn common_prefix(a: &[Self], b: &[Self]) -> usize;
    /// The length of the longest common suffix of `a` and `b`.
    fn common_suffix(a: &[Self], b: &[Self]) -> usize;
    /// A map from units to the classes of [`super::bound`]: the `classes − 1` units most
    /// frequent in `a` and `b` together get `0..classes − 1` (ties to the smaller unit), all
    /// others `classes − 1`.
    fn classifier(a: &[Self], b: &[Self], classes: usize) -> impl Fn(Self) -> u8;
}

/// The `most` most frequent units of `counts` (unit, count), ties to the smaller unit.
fn most_frequent<U: Copy + Ord>(mut counts: Vec<(U, u64)>, most: usize) -> Vec<U> {
    counts.retain(|&(_, n)| n != 0);
    counts.sort_by(|p, q| q.1.cmp(&p.1).then(p.0.cmp(&q.0)));
    counts.into_iter().take(most).map(|(u, _)| u).collect()
}

impl Unit for u8 {
    const LANES: usize = 8;
    const FILL: u8 = 0;

    fn padded(pads: &mut Pads) -> &mut Padded<u8> {
        &mut pads.0
    }

    #[inline(always)]
    fn equal_ahead(a: &[u8], b: &[u8], i: usize, j: usize) -> usize {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap());
        let y = u64::from_le_bytes(b[j..j + 8].try_into().unwrap());
        ((x ^ y).trailing_zeros() / 8) as usize
    }

    #[inline(always)]
    fn equal_behind(a: &[u8], b: &[u8], i: usize, j: usize) -> usize {
        let x = u64::from_le_bytes(a[i - 8..i].try_into().unwrap());
        let y = u64::from_le_bytes(b[j - 8..j].try_into().unwrap());
        ((x ^ y).leading_zeros() / 8) as usize
    }

    fn classifier(a: &[u8], b: &[u8], classes: usize) -> impl Fn(u8) -> u8 {
        let mut counts = [0u64; 256];
        a.iter().chain(b).for_each(|&u| counts[usize::from(u)] += 1);
        let counts = (0..=255u8).map(|u| (u, counts[usize::from(u)])).collect();
        let mut table = [(classes - 1) as u8; 256];
        for (c, u) in most_frequent(counts, classes - 1).into_iter().enumerate() {
            table[usize::from(u)] = c as u8;
        }
        move |u| table[usize::from(u)]
    }

    fn common_prefix(a: &[u8], b: &[u8]) -> usize {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut i = 0;
        while i + 8 <= n {
            let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap());
            let y = u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
            if x != y {
                return i + ((x ^ y).trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        i + a[i..]
            .iter()
            .zip(&b[i..])
            .take_while(|(x, y)| x == y)
            .count()
    }

    fn common_suffix(a: &[u8], b: &[u8]) -> usize {
        let n = a.len().min(b.len());
        let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
        let mut i = 0;
        while i + 8 <= n {
            let x = u64::from_le_bytes(a[n - i - 8..n - i].try_into().unwrap());
            let y = u64::from_le_bytes(b[n - i - 8..n - i].try_into().unwrap());
            if x != y {
                return i + ((x ^ y).leading_zeros() / 8) as usize;
            }
            i += 8;
        }
        i + a[..n - i]
            .iter()
            .rev()
            .zip(b[..n - i].iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
    }
}

impl Unit for u32 {
    const LANES: usize = 2;
    const FILL: u32 = 0;

    fn padded(pads: &mut Pads) -> &mut Padded<u32> {
        &mut pads.1
    }

    #[inline(always)]
    fn equal_ahead(a: &[u32], b: &[u32], i: usize, j: usize) -> usize {
        let (a, b) = (&a[i..i + 2], &b[j..j + 2]);
        let x = u64::from(a[0]) | u64::from(a[1]) << 32;
        let y = u64::from(b[0]) | u64::from(b[1]) << 32;
        ((x ^ y).trailing_zeros() / 32) as usize
    }

    #[inline(always)]
    fn equal_behind(a: &[u32], b: &[u32], i: usize, j: usize) -> usize {
        let (a, b) = (&a[i - 2..i], &b[j - 2..j]);
        // The unit before i in the high half, where the leading zeros are counted.
        let x = u64::from(a[0]) | u64::from(a[1]) << 32;
        let y = u64::from(b[0]) | u64::from(b[1]) << 32;
        ((x ^ y).leading_zeros() / 32) as usize
    }

    fn classifier(a: &[u32], b: &[u32], classes: usize) -> impl Fn(u32) -> u8 {
        let mut counts = std::collections::HashMap::<u32, u64>::new();
        a.iter()
            .chain(b)
            .for_each(|&u| *counts.entry(u).or_default() += 1);
        let frequent = most_frequent(counts.into_iter().collect(), classes - 1);
        let class: std::collections::HashMap<u32, u8> = frequent
            .into_iter()
            .enumerate()
            .map(|(c, u)| (u, c as u8))
            .collect();
        move |u| class.get(&u).copied().unwrap_or((classes - 1) as u8)
    }

    fn common_prefix(a: &[u32], b: &[u32]) -> usize {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut i = 0;
        while i + 4 <= n {
            if a[i..i + 4] != b[i..i + 4] {
                break;
            }
            i += 4;
        }
        i + a[i..]
            .iter()
            .zip(&b[i..])
            .take_while(|(x, y)| x == y)
            .count()
    }

    fn common_suffix(a: &[u32], b: &[u32]) -> usize {
        let n = a.len().min(b.len());
        let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
        let mut i = 0;
        while i + 4 <= n {
            if a[n - i - 4..n - i] != b[n - i - 4..n - i] {
                break;
            }
            i += 4;
        }
        i + a[..n - i]
            .iter()
            .rev()
            .zip(b[..n - i].iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
    }
}

use super::bound::Bound;

/// `len` matched units: `x + t` of the first side with `y + t` of the second, for `t < len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub x: usize,
    pub y: usize,
    pub len: usize,
}

/// `seqdiff`'s "no value" markers for its forward and backward arrays (`isize::MIN` and
/// `isize::MAX`, and what its `Vec::get` returns past either end behaves the same: see
/// [`Scratch::prepare`]).
pub(super) const FORWARD_NONE: isize = isize::MIN;
pub(super) const BACKWARD_NONE: isize = isize::MAX;

/// Ranges with at least this many units (both sides together) are searched with pruning
/// ([`super::pruned`]) when the whole input is at least as large; smaller ones step for step.
pub(crate) const PRUNE_FROM: usize = 2048;

/// The working arrays, kept between diffs so that a batch allocates them once.
#[derive(Debug)]
pub(crate) struct Scratch {
    vf: Vec<isize>,
    vb: Vec<isize>,
    stack: Vec<Task>,
    pads: Pads,
    /// See [`PRUNE_FROM`]; tests lower it to prune every range.
    pub prune_from: usize,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            vf: Vec::new(),
            vb: Vec::new(),
            stack: Vec::new(),
            pads: Pads::default(),
            prune_from: PRUNE_FROM,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Task {
    /// A range to diff, with its edit distance when the search that made it knows it.
    Range {
        xl: usize,
        xr: usize,
        yl: usize,
        yr: usize,
        cost: Option<usize>,
    },
    Emit(Run),
}

/// Where a middle-snake search splits its range, and the edit distances of the two halves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mid {
    pub x: usize,
    pub y: usize,
    pub left: usize,
    pub right: usize,
}

/// Slots below diagonal `-m` (and above `n`) in the arrays: `seqdiff` reads one past each end
/// (see [`Scratch::prepare`]) and the pruned search writes its markers up to two past.
pub(super) const PAD: usize = 2;

impl Scratch {
    /// Arrays for sequences of `n` and `m` units. `seqdiff` allocates `n + m + 1` slots, the
    /// diagonal `k` at slot `k + m`, filled with the "none" markers, and reads past either end
    /// through `Vec::get` (`None`). Here [`PAD`] slots more at each end hold the marker instead:
    /// the only reads there are `max(lo + 1, hi)` (forward) and `min(lo, hi - 1)` (backward)
    /// with one side past the end, where a marker and `None` give the same result whenever the
    /// result is inside the range searched — and a result outside it is skipped unused.
    fn prepare(&mut self, n: usize, m: usize) {
        let slots = n + m + 1 + 2 * PAD;
        self.vf.clear();
        self.vf.resize(slots, FORWARD_NONE);
        self.vb.clear();
        self.vb.resize(slots, BACKWARD_NONE);
    }
}

/// The matched runs of the shortest edit script between `xv` and `yv`, in order, as `seqdiff`
/// chooses it.
pub(crate) fn diff<U: Unit>(xv: &[U], yv: &[U], scratch: &mut Scratch, runs: &mut Vec<Run>) {
    runs.clear();
    if xv.is_empty() || yv.is_empty() {
        return;
    }
    scratch.prepare(xv.len(), yv.len());
    let prune_from = scratch.prune_from;
    let bound = (xv.len() + yv.len() >= prune_from).then(|| Bound::new(xv, yv));
    let (xp, yp) = U::padded(&mut scratch.pads).fill(xv, yv);
    let mut search = Search {
        xv,
        yv,
        xp,
        yp,
        vf: &mut scratch.vf,
        vb: &mut scratch.vb,
        offset: (yv.len() + PAD) as isize,
    };
    let stack = &mut scratch.stack;
    stack.clear();
    stack.push(Task::Range {
        xl: 0,
        xr: xv.len(),
        yl: 0,
        yr: yv.len(),
        cost: None,
    });
    while let Some(task) = stack.pop() {
        let (mut xl, mut xr, mut yl, mut yr, cost) = match task {
            Task::Emit(run) => {
                push_run(runs, run);
                continue;
            }
            Task::Range {
                xl,
                xr,
                yl,
                yr,
                cost,
            } => (xl, xr, yl, yr, cost),
        };
        // Shrink by equality at both ends (seqdiff's diff_part).
        let head = U::common_prefix(&xv[xl..xr], &yv[yl..yr]);
        if head > 0 {
            push_run(
                runs,
                Run {
                    x: xl,
                    y: yl,
                    len: head,
                },
            );
            xl += head;
            yl += head;
        }
        let tail = U::common_suffix(&xv[xl..xr], &yv[yl..yr]);
        xr -= tail;
        yr -= tail;
        let tail_run = Run {
            x: xr,
            y: yr,
            len: tail,
        };
        if xl == xr || yl == yr {
            // Only insertions or only deletions are left: nothing more matches.
            push_run(runs, tail_run);
            continue;
        }
        let pruned = match &bound {
            Some(bound) if (xr - xl) + (yr - yl) >= prune_from => {
                search.find_mid_pruned(bound, xl, xr, yl, yr, cost)
            }
            _ => None,
        };
        let mid = pruned.unwrap_or_else(|| search.find_mid(xl, xr, yl, yr));
        if tail > 0 {
            stack.push(Task::Emit(tail_run));
        }
        stack.push(Task::Range {
            xl: mid.x,
            xr,
            yl: mid.y,
            yr,
            cost: Some(mid.right),
        });
        stack.push(Task::Range {
            xl,
            xr: mid.x,
            yl,
            yr: mid.y,
            cost: Some(mid.left),
        });
    }
}

/// seqdiff's diagonals for the next step of one direction: one more on each side within
/// `kmin..=kmax`, or at that edge one fewer (keeping the parity each step must change). Says
/// which sides widened (their new outer neighbours must then read "none").
pub(super) fn step_diagonals(
    kmin: isize,
    kmax: isize,
    lo: &mut isize,
    hi: &mut isize,
) -> (bool, bool) {
    let widened_lo = *lo > kmin;
    *lo += if widened_lo { -1 } else { 1 };
    let widened_hi = *hi < kmax;
    *hi += if widened_hi { 1 } else { -1 };
    (widened_lo, widened_hi)
}

/// Appends `run`, joining it to the previous one when it continues it on the same diagonal.
fn push_run(runs: &mut Vec<Run>, run: Run) {
    if run.len == 0 {
        return;
    }
    if let Some(last) = runs.last_mut()
        && last.x + last.len == run.x
        && last.y + last.len == run.y
    {
        last.len += run.len;
        return;
    }
    runs.push(run);
}

pub(super) struct Search<'a, U> {
    pub xv: &'a [U],
    pub yv: &'a [U],
    /// `xv` and `yv` with [`SNAKE_PAD`] units before and after ([`Padded`]), so that a snake's
    /// first look can load [`Unit::LANES`] units ahead of (or behind) any point, ends included.
    pub xp: &'a [U],
    pub yp: &'a [U],
    pub vf: &'a mut [isize],
    pub vb: &'a mut [isize],
    pub offset: isize,
}

/// The padded copies of both types of unit.
#[derive(Debug, Default)]
pub(crate) struct Pads(Padded<u8>, Padded<u32>);

/// Units of padding on each side of a [`Padded`] sequence (at least [`Unit::LANES`]).
pub(super) const SNAKE_PAD: usize = 8;

/// Copies of the two sides with [`SNAKE_PAD`] units of [`Unit::FILL`] around each, kept
/// between diffs.
#[derive(Debug, Default)]
pub(crate) struct Padded<U> {
    x: Vec<U>,
    y: Vec<U>,
}

impl<U: Unit> Padded<U> {
    pub(super) fn fill(&mut self, xv: &[U], yv: &[U]) -> (&[U], &[U]) {
        for (out, v) in [(&mut self.x, xv), (&mut self.y, yv)] {
            out.clear();
            out.resize(SNAKE_PAD, U::FILL);
            out.extend_from_slice(v);
            out.resize(v.len() + 2 * SNAKE_PAD, U::FILL);
        }
        (&self.x, &self.y)
    }
}

/// The length of the snake (run of matches) from `(x, y)` forward, before `(xr, yr)`, for
/// `x ≤ xr` and `y ≤ yr`; `xp` and `yp` are `xv` and `yv` padded.
#[inline(always)]
fn snake_forward<U: Unit>(
    (xv, yv): (&[U], &[U]),
    (xp, yp): (&[U], &[U]),
    (x, y): (usize, usize),
    (xr, yr): (usize, usize),
) -> usize {
    // Most diagonals start on a mismatch, and most snakes are short: one load of LANES units a
    // side and no branch on the data, then a longer compare only when all of them match.
    let cap = (xr - x).min(yr - y);
    let n = U::equal_ahead(xp, yp, x + SNAKE_PAD, y + SNAKE_PAD);
    if n < U::LANES || cap <= U::LANES {
        n.min(cap)
    } else {
        U::LANES + U::common_prefix(&xv[x + U::LANES..xr], &yv[y + U::LANES..yr])
    }
}

/// The length of the snake backward from `(x, y)`, after `(xl, yl)`, for `xl ≤ x`, `yl ≤ y`.
#[inline(always)]
fn snake_backward<U: Unit>(
    (xv, yv): (&[U], &[U]),
    (xp, yp): (&[U], &[U]),
    (x, y): (usize, usize),
    (xl, yl): (usize, usize),
) -> usize {
    let cap = (x - xl).min(y - yl);
    let n = U::equal_behind(xp, yp, x + SNAKE_PAD, y + SNAKE_PAD);
    if n < U::LANES || cap <= U::LANES {
        n.min(cap)
    } else {
        U::LANES + U::common_suffix(&xv[xl..x - U::LANES], &yv[yl..y - U::LANES])
    }
}

impl<U: Unit> Search<'_, U> {
    #[inline(always)]
    pub fn slot(&self, k: isize) -> usize {
        (k + self.offset) as usize
    }

    /// The length of the snake (run of matches) from `(x, y)` forward, before `(xr, yr)`, for
    /// `x ≤ xr` and `y ≤ yr`.
    #[inline(always)]
    pub fn snake_forward(&self, x: usize, y: usize, xr: usize, yr: usize) -> usize {
        snake_forward((self.xv, self.yv), (self.xp, self.yp), (x, y), (xr, yr))
    }

    /// The length of the snake backward from `(x, y)`, after `(xl, yl)`, for `xl ≤ x` and
    /// `yl ≤ y`.
    #[inline(always)]
    pub fn snake_backward(&self, x: usize, y: usize, xl: usize, yl: usize) -> usize {
        snake_backward((self.xv, self.yv), (self.xp, self.yp), (x, y), (xl, yl))
    }

    /// seqdiff's `find_mid`: the point where the middle snake starts, for a range whose ends
    /// differ (the caller stripped equal ones) and where neither side is empty.
    pub(super) fn find_mid(&mut self, xl: usize, xr: usize, yl: usize, yr: usize) -> Mid {
        if ((xr - xl) + (yr - yl)) % 2 == 1 {
            self.find_mid_by::<true>(xl, xr, yl, yr)
        } else {
            self.find_mid_by::<false>(xl, xr, yl, yr)
        }
    }

    /// [`Search::find_mid`] for ranges whose `delta` is odd (`ODD`) or even: only forward
    /// steps can meet the backward ones in the first case, only backward steps in the second.
    fn find_mid_by<const ODD: bool>(&mut self, xl: usize, xr: usize, yl: usize, yr: usize) -> Mid {
        let (xlu, xru, ylu, yru) = (xl, xr, yl, yr);
        let (xl, xr, yl, yr) = (xl as isize, xr as isize, yl as isize, yr as isize);
        let kmin = xl - yr;
        let kmax = xr - yl;
        let kmidf = xl - yl;
        let kmidb = xr - yr;
        let offset = self.offset;
        let sides = (self.xv, self.yv);
        let padded = (self.xp, self.yp);
        let (vf, vb) = (&mut *self.vf, &mut *self.vb);
        let slot = |k: isize| (k + offset) as usize;

        vf[slot(kmidf)] = xl;
        vb[slot(kmidb)] = xr;
        let (mut kminf, mut kmaxf, mut kminb, mut kmaxb) = (kmidf, kmidf, kmidb, kmidb);

        for d in 1usize.. {
            // Forward: widen (or, at the range's edge, narrow) the diagonals by one each side.
            let (widened_lo, widened_hi) = step_diagonals(kmin, kmax, &mut kminf, &mut kmaxf);
            if widened_lo {
                vf[slot(kminf - 1)] = FORWARD_NONE;
            }
            if widened_hi {
                vf[slot(kmaxf + 1)] = FORWARD_NONE;
            }
            let mut k = kmaxf;
            while k >= kminf {
                let ik = slot(k);
                // seqdiff: max(lo + 1, hi), a missing side (past an end) losing. A missing
                // side's marker is far outside the range, so testing x before computing y
                // keeps y from overflowing.
                let x = (vf[ik - 1] + 1).max(vf[ik + 1]);
                if xl <= x && x <= xr {
                    let y = x - k;
                    if yl <= y && y <= yr {
                        let (xu, yu) = (x as usize, y as usize);
                        let u = x + snake_forward(sides, padded, (xu, yu), (xru, yru)) as isize;
                        vf[ik] = u;
                        if ODD && kminb <= k && k <= kmaxb && vb[ik] <= u {
                            return Mid {
                                x: xu,
                                y: yu,
                                left: d,
                                right: d - 1,
                            };
                        }
                    }
                }
                k -= 2;
            }

            // Backward, the same from the range's end.
            let (widened_lo, widened_hi) = step_diagonals(kmin, kmax, &mut kminb, &mut kmaxb);
            if widened_lo {
                vb[slot(kminb - 1)] = BACKWARD_NONE;
            }
            if widened_hi {
                vb[slot(kmaxb + 1)] = BACKWARD_NONE;
            }
            let mut k = kmaxb;
            while k >= kminb {
                let ik = slot(k);
                // seqdiff: min(lo, hi - 1), a missing side (past an end) losing.
                let x = vb[ik - 1].min(vb[ik + 1] - 1);
                if xl <= x && x <= xr {
                    let y = x - k;
                    if yl <= y && y <= yr {
                        let (xu, yu) = (x as usize, y as usize);
                        let u = x - snake_backward(sides, padded, (xu, yu), (xlu, ylu)) as isize;
                        vb[ik] = u;
                        if !ODD && kminf <= k && k <= kmaxf && vf[ik] >= u {
                            return Mid {
                                x: xu,
                                y: yu,
                                left: d,
                                right: d,
                            };
                        }
                    }
                }
                k -= 2;
            }
        }
        unreachable!("a middle snake exists within n + m steps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::Rng;

    /// The snakes' first look (a load of `LANES` units a side from the padded copies) gives
    /// the unit-by-unit lengths, at every point and against every edge of a range, for both
    /// types of unit, on texts with long equal stretches and noise.
    fn snakes_equal_plain<U: Unit + std::fmt::Debug>(unit: impl Fn(u64) -> U) {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut padded = Padded {
            x: Vec::new(),
            y: Vec::new(),
        };
        for round in 0..300 {
            let len = rng.below(40) as usize;
            let letters = if round % 3 == 0 { 2 } else { 5 };
            let x: Vec<U> = (0..len).map(|_| unit(rng.below(letters))).collect();
            // y: x with a few units changed, inserted or dropped.
            let mut y = Vec::new();
            for &u in &x {
                match rng.below(12) {
                    0 => continue,
                    1 => y.push(unit(rng.below(letters))),
                    2 => {
                        y.push(u);
                        y.push(u);
                        continue;
                    }
                    _ => {}
                }
                y.push(u);
            }
            let (xp, yp) = padded.fill(&x, &y);
            let (xp, yp) = (xp.to_vec(), yp.to_vec());
            for _ in 0..40 {
                let (xl, xr) = sorted(&mut rng, x.len());
                let (yl, yr) = sorted(&mut rng, y.len());
                let px = xl + rng.below((xr - xl + 1) as u64) as usize;
                let py = yl + rng.below((yr - yl + 1) as u64) as usize;
                let ahead = (px..xr)
                    .zip(py..yr)
                    .take_while(|&(i, j)| x[i] == y[j])
                    .count();
                let behind = (xl..px)
                    .rev()
                    .zip((yl..py).rev())
                    .take_while(|&(i, j)| x[i] == y[j])
                    .count();
                let sides = (&x[..], &y[..]);
                let pads = (&xp[..], &yp[..]);
                assert_eq!(snake_forward(sides, pads, (px, py), (xr, yr)), ahead);
                assert_eq!(snake_backward(sides, pads, (px, py), (xl, yl)), behind);
            }
        }
    }

    fn sorted(rng: &mut Rng, len: usize) -> (usize, usize) {
        let a = rng.below(len as u64 + 1) as usize;
        let b = rng.below(len as u64 + 1) as usize;
        (a.min(b), a.max(b))
    }

    #[test]
    fn snakes_equal_plain_u8() {
        // 0 is also the padding's unit.
        snakes_equal_plain(|v| v as u8);
    }

    #[test]
    fn snakes_equal_plain_u32() {
        snakes_equal_plain(|v| if v == 0 { 0 } else { 0x1f600 + v as u32 });
    }
}
