//! A lower bound on the edit distance (insertions and deletions) between two stretches of the
//! units, for the pruned middle-snake search ([`super::pruned`]).
//!
//! Every insertion or deletion changes the count of exactly one unit by one, so for any
//! partition of the units into classes, `Σ |count in X − count in Y|` over the classes is at
//! most the distance; a match changes no difference. Here the 63 most frequent units each have
//! a class and all others share one, so the bound sees what one tokenization inserts and the
//! other leaves out (`#` of WordPiece's `##`, the `g` and U+0307 that `Ġ` becomes, …) and also
//! most substitutions (an `e` here for an `a` there), which a bound over a few classes misses.
//!
//! A stretch's counts come from prefix counts kept every [`BLOCK`] units (9 bytes a unit of each
//! side with the class of each unit), and the differences at a point of the edit graph,
//! `prefix counts of X at x − those of Y at y` ([`Bound::anchor`]), give the bound between any
//! two points as the sum of the absolute differences of their anchors.

use super::diff::Unit;

/// Classes: the most frequent units, one each, and the rest together in the last.
pub(crate) const CLASSES: usize = 64;
/// Prefix counts are kept at every multiple of this many units.
const BLOCK: usize = 32;

/// One side's units as classes, with prefix counts.
#[derive(Debug, Default)]
struct Counts {
    class: Vec<u8>,
    /// `blocks[b * CLASSES + c]`: units of class `c` in the first `b * BLOCK` units.
    blocks: Vec<i32>,
}

impl Counts {
    fn new<U: Unit>(units: &[U], class_of: &impl Fn(U) -> u8) -> Counts {
        let class: Vec<u8> = units.iter().map(|&u| class_of(u)).collect();
        let mut blocks = vec![0i32; (units.len() / BLOCK + 1) * CLASSES];
        let mut running = [0i32; CLASSES];
        for (b, chunk) in class.chunks(BLOCK).enumerate() {
            for &c in chunk {
                running[usize::from(c)] += 1;
            }
            if chunk.len() == BLOCK {
                blocks[(b + 1) * CLASSES..(b + 2) * CLASSES].copy_from_slice(&running);
            }
        }
        Counts { class, blocks }
    }

    /// Adds `sign ×` the class counts of the first `i` units to `out`.
    fn add_prefix(&self, i: usize, sign: i32, out: &mut [i32; CLASSES]) {
        let b = i / BLOCK;
        for (o, &n) in out
            .iter_mut()
            .zip(&self.blocks[b * CLASSES..(b + 1) * CLASSES])
        {
            *o += sign * n;
        }
        for &c in &self.class[b * BLOCK..i] {
            out[usize::from(c)] += sign;
        }
    }
}

/// The differences of class counts at a point `(x, y)`: `X[..x]`'s minus `Y[..y]`'s.
pub(crate) type Anchor = [i32; CLASSES];

#[derive(Debug, Default)]
pub(crate) struct Bound {
    x: Counts,
    y: Counts,
}

impl Bound {
    pub fn new<U: Unit>(xv: &[U], yv: &[U]) -> Bound {
        let class_of = U::classifier(xv, yv, CLASSES);
        Bound {
            x: Counts::new(xv, &class_of),
            y: Counts::new(yv, &class_of),
        }
    }

    /// The anchor of the point `(x, y)`.
    pub fn anchor(&self, x: usize, y: usize) -> Anchor {
        let mut out = [0; CLASSES];
        self.x.add_prefix(x, 1, &mut out);
        self.y.add_prefix(y, -1, &mut out);
        out
    }

    /// The bound between two points given by their anchors.
    #[inline]
    pub fn between(p: &Anchor, q: &Anchor) -> isize {
        p.iter().zip(q).map(|(a, b)| (a - b).abs()).sum::<i32>() as isize
    }

    /// A lower bound on the distance between `xv[x0..x1]` and `yv[y0..y1]`.
    pub fn lower(&self, x0: usize, x1: usize, y0: usize, y1: usize) -> isize {
        Bound::between(&self.anchor(x1, y1), &self.anchor(x0, y0))
    }

    /// The bound from `(x0, y0)` to each point of the segment that starts at `(x1, y1)` and moves
    /// `steps` units along one side (`along_x`) in direction `dir` (+1 or −1), in order: a
    /// running sum that one unit changes by at most one, so a whole edge costs O(its length).
    pub fn along(
        &self,
        (x0, y0): (usize, usize),
        (x1, y1): (usize, usize),
        along_x: bool,
        dir: isize,
        steps: usize,
        mut each: impl FnMut(usize, isize) -> bool,
    ) -> bool {
        let start = self.anchor(x0, y0);
        let mut diff = self.anchor(x1, y1);
        diff.iter_mut().zip(&start).for_each(|(d, s)| *d -= s);
        let mut sum = diff.iter().map(|d| d.abs()).sum::<i32>() as isize;
        let (mut x, mut y) = (x1 as isize, y1 as isize);
        for i in 0..=steps {
            if !each(i, sum) {
                return false;
            }
            if i == steps {
                break;
            }
            // The unit passed over, and how the difference of its class moves.
            let (class, change) = match (along_x, dir > 0) {
                (true, true) => (self.x.class[x as usize], 1),
                (true, false) => (self.x.class[x as usize - 1], -1),
                (false, true) => (self.y.class[y as usize], -1),
                (false, false) => (self.y.class[y as usize - 1], 1),
            };
            let d = &mut diff[usize::from(class)];
            sum -= d.abs() as isize;
            *d += change;
            sum += d.abs() as isize;
            if along_x {
                x += dir;
            } else {
                y += dir;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance by dynamic programming (insertions and deletions only).
    fn distance(x: &[u8], y: &[u8]) -> isize {
        let mut row: Vec<isize> = (0..=y.len() as isize).collect();
        for (i, a) in x.iter().enumerate() {
            let mut next = vec![i as isize + 1; y.len() + 1];
            for (j, b) in y.iter().enumerate() {
                next[j + 1] = if a == b {
                    row[j]
                } else {
                    1 + row[j + 1].min(next[j])
                };
            }
            row = next;
        }
        row[y.len()]
    }

    #[test]
    fn never_exceeds_the_distance() {
        let x = b"the##quick##brown#fox and some more text over the block size of 32 units";
        let y = b"theggquickgbrownggfoxes and sone more text over the block size of 32 units!";
        let bound = Bound::new(&x[..], &y[..]);
        for x0 in 0..=x.len() {
            for x1 in (x0..=x.len()).step_by(3) {
                for (y0, y1) in [(0, y.len()), (3, 9), (0, 0), (5, y.len()), (40, 70)] {
                    let lb = bound.lower(x0, x1, y0, y1);
                    assert!(
                        lb <= distance(&x[x0..x1], &y[y0..y1]),
                        "{x0} {x1} {y0} {y1}"
                    );
                }
            }
        }
        // Tight where the sides differ only by insertions, deletions and substitutions.
        assert_eq!(bound.lower(0, x.len(), 0, y.len()), distance(x, y));
    }

    #[test]
    fn along_an_edge_equals_the_bound_at_each_point() {
        let x = b"abcabcabdddd##xyz and more than thirty-two units of text here";
        let y = b"abgcabcgabddd xyz and nore than thirty two units of text there";
        let bound = Bound::new(&x[..], &y[..]);
        let (n, m) = (x.len(), y.len());
        let cases = [
            ((0, 0), (n, 0), false, 1, m),
            ((n, m), (0, m), false, -1, m),
            ((0, 0), (0, m), true, 1, n),
            ((n, m), (n, 0), true, -1, n),
        ];
        for ((x0, y0), (x1, y1), along_x, dir, steps) in cases {
            bound.along((x0, y0), (x1, y1), along_x, dir, steps, |i, sum| {
                let (px, py) = if along_x {
                    ((x1 as isize + dir * i as isize) as usize, y1)
                } else {
                    (x1, (y1 as isize + dir * i as isize) as usize)
                };
                let want = Bound::between(&bound.anchor(px, py), &bound.anchor(x0, y0));
                assert_eq!(sum, want, "{along_x} {dir} {i}");
                true
            });
        }
    }
}
