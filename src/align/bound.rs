//! A lower bound on the edit distance (insertions and deletions) between two stretches of the
//! units, for the pruned middle-snake search ([`super::pruned`]).
//!
//! Every insertion or deletion changes the count of exactly one unit by one, so for any
//! partition of the units into classes, `Σ |count in X − count in Y|` over the classes is at
//! most the distance. The classes here are the few units whose counts differ most between the
//! two whole sides (what one tokenization inserts and the other leaves out: `#` of WordPiece's
//! `##`, the `g` and U+0307 that `Ġ` becomes, …) and one class for all others, so the bound is
//! close to the distance where the sides differ by such insertions. Prefix counts answer it for
//! any stretch in O(classes).

use super::diff::Unit;

/// At most this many units get a class of their own (and one class holds the rest): each costs
/// 4 bytes a unit of each side.
const CLASSES: usize = 3;

#[derive(Debug, Default)]
pub(crate) struct Bound<U> {
    classes: Vec<U>,
    /// `px[i * classes.len() + c]`: how many units of class `c` are in `xv[..i]`.
    px: Vec<u32>,
    py: Vec<u32>,
}

impl<U: Unit> Bound<U> {
    pub fn new(xv: &[U], yv: &[U]) -> Bound<U> {
        let classes = U::most_unequal(xv, yv, CLASSES);
        let px = prefix_counts(xv, &classes);
        let py = prefix_counts(yv, &classes);
        Bound { classes, px, py }
    }

    /// A lower bound on the distance between `xv[x0..x1]` and `yv[y0..y1]`.
    #[inline]
    pub fn lower(&self, x0: usize, x1: usize, y0: usize, y1: usize) -> isize {
        let c = self.classes.len();
        let (mut sum, mut rest_x, mut rest_y) = (0i64, (x1 - x0) as i64, (y1 - y0) as i64);
        for k in 0..c {
            let nx = i64::from(self.px[x1 * c + k]) - i64::from(self.px[x0 * c + k]);
            let ny = i64::from(self.py[y1 * c + k]) - i64::from(self.py[y0 * c + k]);
            sum += (nx - ny).abs();
            rest_x -= nx;
            rest_y -= ny;
        }
        (sum + (rest_x - rest_y).abs()) as isize
    }
}

fn prefix_counts<U: Unit>(units: &[U], classes: &[U]) -> Vec<u32> {
    let c = classes.len();
    let mut counts = vec![0u32; (units.len() + 1) * c];
    if c == 0 {
        return counts;
    }
    let mut running = [0u32; CLASSES];
    for (i, unit) in units.iter().enumerate() {
        if let Some(k) = classes.iter().position(|class| class == unit) {
            running[k] += 1;
        }
        counts[(i + 1) * c..(i + 2) * c].copy_from_slice(&running[..c]);
    }
    counts
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
        let x = b"the##quick##brown#fox";
        let y = b"theggquickgbrownggfoxes";
        let bound = Bound::new(&x[..], &y[..]);
        for x0 in 0..=x.len() {
            for x1 in x0..=x.len() {
                for (y0, y1) in [(0, y.len()), (3, 9), (0, 0), (5, y.len())] {
                    let lb = bound.lower(x0, x1, y0, y1);
                    assert!(
                        lb <= distance(&x[x0..x1], &y[y0..y1]),
                        "{x0} {x1} {y0} {y1}"
                    );
                }
            }
        }
        // Tight where the sides differ only by the unequal units.
        assert_eq!(bound.lower(0, x.len(), 0, y.len()), distance(x, y));
    }
}
