//! The shortest edit script between two unit sequences, exactly as `seqdiff` 0.3 finds it:
//! Myers' linear-space divide and conquer (strip the common prefix and suffix of a range, find
//! the middle snake by searching forward and backward at once, recurse on both halves).
//!
//! A shortest edit script is rarely unique, and which one `seqdiff` returns depends on every
//! detail of its search: the order diagonals are visited in, which of two equal furthest points
//! is kept, the point it splits at, the old values it keeps where a candidate leaves the range.
//! So this is the same search step for step, with the same arrays indexed the same way, and the
//! speed comes from elsewhere: matches found a machine word at a time, no `Option`s or bounds
//! checks in the diagonal loop, matches recorded as runs rather than one `Option<usize>` per
//! unit, and a loop instead of recursion. Large ranges are searched with pruning, with the same
//! result (see [`super::pruned`]).
//!
//! Cost: memory linear in the input (two arrays of `n + m + 5` integers, the runs, and for
//! large inputs the pruning's classes and prefix counts, 9 bytes a unit); time
//! `O((n + m) · D)` for an edit distance `D` — fast when the two sides are mostly equal, and
//! quadratic for two sides that share almost nothing (the reference's cost too).

/// A unit of a normalized text: a byte (all-ASCII inputs) or a Unicode scalar value.
pub(crate) trait Unit: Copy + Eq {
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
    /// See [`PRUNE_FROM`]; tests lower it to prune every range.
    pub prune_from: usize,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            vf: Vec::new(),
            vb: Vec::new(),
            stack: Vec::new(),
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
    let mut search = Search {
        xv,
        yv,
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
    pub vf: &'a mut [isize],
    pub vb: &'a mut [isize],
    pub offset: isize,
}

impl<U: Unit> Search<'_, U> {
    #[inline(always)]
    pub fn slot(&self, k: isize) -> usize {
        (k + self.offset) as usize
    }

    /// The length of the snake (run of matches) from `(x, y)` forward, before `(xr, yr)`.
    #[inline(always)]
    pub fn snake_forward(&self, x: usize, y: usize, xr: usize, yr: usize) -> usize {
        // Most diagonals start on a mismatch: test one unit before a whole snake.
        if x < xr && y < yr && self.xv[x] == self.yv[y] {
            1 + U::common_prefix(&self.xv[x + 1..xr], &self.yv[y + 1..yr])
        } else {
            0
        }
    }

    /// The length of the snake backward from `(x, y)`, after `(xl, yl)`.
    #[inline(always)]
    pub fn snake_backward(&self, x: usize, y: usize, xl: usize, yl: usize) -> usize {
        if x > xl && y > yl && self.xv[x - 1] == self.yv[y - 1] {
            1 + U::common_suffix(&self.xv[xl..x - 1], &self.yv[yl..y - 1])
        } else {
            0
        }
    }

    /// seqdiff's `find_mid`: the point where the middle snake starts, for a range whose ends
    /// differ (the caller stripped equal ones) and where neither side is empty.
    pub(super) fn find_mid(&mut self, xl: usize, xr: usize, yl: usize, yr: usize) -> Mid {
        let (xl, xr, yl, yr) = (xl as isize, xr as isize, yl as isize, yr as isize);
        let kmin = xl - yr;
        let kmax = xr - yl;
        let kmidf = xl - yl;
        let kmidb = xr - yr;
        let delta = (xr - xl) - (yr - yl);
        let is_odd = (delta & 1) == 1;

        let s = self.slot(kmidf);
        self.vf[s] = xl;
        let s = self.slot(kmidb);
        self.vb[s] = xr;
        let (mut kminf, mut kmaxf, mut kminb, mut kmaxb) = (kmidf, kmidf, kmidb, kmidb);

        for d in 1usize.. {
            // Forward: widen (or, at the range's edge, narrow) the diagonals by one each side.
            let (widened_lo, widened_hi) = step_diagonals(kmin, kmax, &mut kminf, &mut kmaxf);
            if widened_lo {
                let s = self.slot(kminf - 1);
                self.vf[s] = FORWARD_NONE;
            }
            if widened_hi {
                let s = self.slot(kmaxf + 1);
                self.vf[s] = FORWARD_NONE;
            }
            let mut k = kmaxf;
            while k >= kminf {
                let ik = self.slot(k);
                // seqdiff: max(lo + 1, hi), a missing side (past an end) losing.
                let x = (self.vf[ik - 1] + 1).max(self.vf[ik + 1]);
                let y = x.saturating_sub(k);
                if xl <= x && x <= xr && yl <= y && y <= yr {
                    let (xu, yu) = (x as usize, y as usize);
                    let u = x + self.snake_forward(xu, yu, xr as usize, yr as usize) as isize;
                    self.vf[ik] = u;
                    if is_odd && kminb <= k && k <= kmaxb && self.vb[ik] <= u {
                        return Mid {
                            x: xu,
                            y: yu,
                            left: d,
                            right: d - 1,
                        };
                    }
                }
                k -= 2;
            }

            // Backward, the same from the range's end.
            let (widened_lo, widened_hi) = step_diagonals(kmin, kmax, &mut kminb, &mut kmaxb);
            if widened_lo {
                let s = self.slot(kminb - 1);
                self.vb[s] = BACKWARD_NONE;
            }
            if widened_hi {
                let s = self.slot(kmaxb + 1);
                self.vb[s] = BACKWARD_NONE;
            }
            let mut k = kmaxb;
            while k >= kminb {
                let ik = self.slot(k);
                // seqdiff: min(lo, hi - 1), a missing side (past an end) losing.
                let x = self.vb[ik - 1].min(self.vb[ik + 1] - 1);
                let y = x.saturating_sub(k);
                if xl <= x && x <= xr && yl <= y && y <= yr {
                    let (xu, yu) = (x as usize, y as usize);
                    let u = x - self.snake_backward(xu, yu, xl as usize, yl as usize) as isize;
                    self.vb[ik] = u;
                    if !is_odd && kminf <= k && k <= kmaxf && self.vf[ik] >= u {
                        return Mid {
                            x: xu,
                            y: yu,
                            left: d,
                            right: d,
                        };
                    }
                }
                k -= 2;
            }
        }
        unreachable!("a middle snake exists within n + m steps")
    }
}
