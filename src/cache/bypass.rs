//! When to leave a cache out: the piece cache ([`crate::cache::word`]) or the segment
//! cache ([`crate::cache::segment`]).
//!
//! On text whose pieces do not repeat — random characters, hashes, base64 — the piece cache
//! only costs: every lookup misses in a table of megabytes (a cache miss of the CPU's own), and
//! every store evicts something. On one megabyte of random characters that was a third of the
//! time. So the cache watches its hit rate over windows of [`WINDOW`] lookups; a window with
//! fewer than one hit in sixteen turns the cache off for the next pieces — [`FIRST_SKIP`] of
//! them, doubling while windows keep failing, up to [`MAX_SKIP`] — after which it is asked
//! again. Results stay exact either way: a bypassed piece is encoded, which is what a miss does.
//!
//! What it can lose is bounded: while bypassed, a piece that would have hit is encoded instead,
//! and the last window said that is fewer than one piece in sixteen. Stores stop too, so a text
//! that turns repetitive is noticed at the next window, at most [`MAX_SKIP`] pieces later.

/// Lookups per window.
pub const WINDOW: u32 = 512;
/// A window with fewer hits than this turns the cache off.
const MIN_HITS: u32 = WINDOW / 16;
/// Pieces bypassed after the first failing window.
pub const FIRST_SKIP: u32 = 4096;
/// The most pieces bypassed in a row.
pub const MAX_SKIP: u32 = 1 << 16;

/// The hit counts of the current window and the pieces left to bypass.
#[derive(Clone, Copy, Debug)]
pub struct CacheBypass {
    lookups: u32,
    hits: u32,
    /// Pieces left to encode without the cache.
    skip: u32,
    /// What the next failing window sets `skip` to.
    next_skip: u32,
}

impl Default for CacheBypass {
    fn default() -> Self {
        CacheBypass {
            lookups: 0,
            hits: 0,
            skip: 0,
            next_skip: FIRST_SKIP,
        }
    }
}

impl CacheBypass {
    /// Whether this piece goes around the cache (counting it when it does).
    #[inline]
    pub fn skips(&mut self) -> bool {
        if self.skip == 0 {
            return false;
        }
        self.skip -= 1;
        true
    }

    /// Whether pieces go around the cache now (without counting one down).
    #[inline]
    pub fn is_bypassing(&self) -> bool {
        self.skip > 0
    }

    /// Counts one lookup of the cache and whether it hit.
    #[inline]
    pub fn record(&mut self, hit: bool) {
        self.lookups += 1;
        self.hits += hit as u32;
        if self.lookups == WINDOW {
            self.end_window();
        }
    }

    #[cold]
    fn end_window(&mut self) {
        if self.hits < MIN_HITS {
            self.skip = self.next_skip;
            self.next_skip = (self.next_skip * 2).min(MAX_SKIP);
        } else {
            self.next_skip = FIRST_SKIP;
        }
        self.lookups = 0;
        self.hits = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `pieces` pieces whose lookups hit when `hit(i)`; returns how many were bypassed.
    fn run(b: &mut CacheBypass, pieces: u32, hit: impl Fn(u32) -> bool) -> u32 {
        let mut bypassed = 0;
        for i in 0..pieces {
            if b.skips() {
                bypassed += 1;
            } else {
                b.record(hit(i));
            }
        }
        bypassed
    }

    #[test]
    fn a_cache_that_hits_is_never_bypassed() {
        let mut b = CacheBypass::default();
        // One hit in sixteen is enough.
        assert_eq!(run(&mut b, 1 << 20, |i| i % 16 == 0), 0);
    }

    #[test]
    fn a_cache_that_never_hits_is_asked_ever_more_rarely() {
        let mut b = CacheBypass::default();
        let total = 1 << 22;
        let bypassed = run(&mut b, total, |_| false);
        // Skips of 4096, 8192, … 65536, then 65536 per window of 512.
        assert!(bypassed as f64 > 0.98 * total as f64, "{bypassed}");
        assert_eq!(b.next_skip, MAX_SKIP);
    }

    #[test]
    fn a_text_that_turns_repetitive_is_noticed_within_the_longest_skip() {
        let mut b = CacheBypass::default();
        run(&mut b, 1 << 20, |_| false);
        let mut turned = CacheBypass { ..b };
        let bypassed = run(&mut turned, 1 << 20, |_| true);
        assert!(bypassed <= MAX_SKIP, "{bypassed}");
        // After one good window, a failing one skips the shortest again.
        assert_eq!(turned.next_skip, FIRST_SKIP);
        assert_eq!(turned.skip, 0);
    }
}
