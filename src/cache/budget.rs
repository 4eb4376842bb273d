//! How much memory a thread's caches may hold ([`CacheBudget`]), and how much they hold
//! ([`held_on_this_thread`]).
//!
//! Every cache is of fixed size: it never grows with the corpus, however long the run. By
//! default each takes its tuned sizes — under 11 MiB a thread for the BPE and WordPiece
//! pipelines, under 22 MiB for unigram ([`FULL_BYTES`] is the ceiling of any) — and a budget
//! makes a cache halve each of its tables and arenas until their full size fits. A smaller
//! cache only misses more often, and a miss runs the encoder: every hit compares the whole key
//! and holds exactly what the encoder returned for it, so the ids are the same under any
//! budget (`tests/cache_budget.rs` encodes with tiny ones).
//!
//! The budget travels with each call of a [`crate::Tokenizer`] (a thread-local setting for the
//! call's duration, [`scoped`]), not with the model: every cache a call reaches — the piece
//! cache at the pipeline's top, the segment cache deep in a merge — sees it without every
//! encoder passing it down. A cache built or claimed under another budget is rebuilt at its next
//! claim.

use std::cell::Cell;

/// The most bytes any pipeline's caches take on one thread at their default sizes: unigram's
/// (8 MiB of sets after growing, a 4 MiB ring, the long tier's 8 MiB arena and its 1 MiB
/// table) is the largest; byte-level BPE's is under 9.5 MiB.
pub const FULL_BYTES: usize = 22 << 20;

/// Below this, a budget is met as closely as the caches' smallest shapes allow (a set or a
/// bucket of each table, arenas that store nothing): some hundreds of bytes.
pub const FLOOR_BYTES: usize = 4 << 10;

/// The bytes the caches of one thread may hold, for one tokenizer. See the module docs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheBudget {
    /// `usize::MAX` for the default (the tuned sizes).
    bytes: usize,
}

impl Default for CacheBudget {
    fn default() -> Self {
        CacheBudget::DEFAULT
    }
}

impl CacheBudget {
    /// The tuned sizes: under 11 MiB a thread (BPE, WordPiece), 22 MiB (unigram).
    pub const DEFAULT: CacheBudget = CacheBudget { bytes: usize::MAX };

    /// At most `bytes` a thread (or [`FLOOR_BYTES`] when fewer).
    pub fn bytes(bytes: usize) -> CacheBudget {
        CacheBudget { bytes }
    }

    /// The bytes allowed; `None` for the default.
    pub fn limit(self) -> Option<usize> {
        (self.bytes != usize::MAX).then_some(self.bytes)
    }

    /// How many times a cache whose tables and arenas take `full` bytes at their default sizes
    /// halves them all to fit (0 under the default, at most 30).
    pub fn halvings(self, full: usize) -> u32 {
        let mut k = 0;
        while k < 30 && full >> k > self.bytes {
            k += 1;
        }
        k
    }

    /// For a cache now sized by `*halvings` halvings of `full` bytes: whether it must start over,
    /// empty, to fit this budget (then `*halvings` is the new count).
    pub fn refit(self, halvings: &mut u32, full: usize) -> bool {
        let k = self.halvings(full);
        let changed = k != *halvings;
        *halvings = k;
        changed
    }
}

impl std::fmt::Debug for CacheBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheBudget({self})")
    }
}

impl std::fmt::Display for CacheBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.limit() {
            None => f.write_str("default"),
            Some(b) => f.write_str(&exact_size(b)),
        }
    }
}

/// `bytes` in the largest binary unit that divides it (`12MiB`, `640KiB`, `100B`): a size that
/// parses back to itself.
fn exact_size(bytes: usize) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

impl std::str::FromStr for CacheBudget {
    type Err = String;

    /// `default`, or a size: a whole number of bytes with an optional unit (`B`, `K`/`KiB`,
    /// `M`/`MiB`, `G`/`GiB`, binary; `KB`, `MB`, `GB` decimal), e.g. `8MiB`, `512K`, `0`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("default") {
            return Ok(CacheBudget::DEFAULT);
        }
        let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (number, unit) = s.split_at(digits);
        let bad =
            || format!("cache budget '{s}': expected a size such as 8MiB, 512KiB, 0 or 'default'");
        let number: usize = number.parse().map_err(|_| bad())?;
        let scale: usize = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => 1 << 10,
            "m" | "mib" => 1 << 20,
            "g" | "gib" => 1 << 30,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            _ => return Err(bad()),
        };
        number
            .checked_mul(scale)
            .filter(|&b| b != usize::MAX)
            .map(CacheBudget::bytes)
            .ok_or_else(|| format!("cache budget '{s}' is too large"))
    }
}

thread_local! {
    /// The budget of the call running on this thread.
    static IN_FORCE: Cell<CacheBudget> = const { Cell::new(CacheBudget::DEFAULT) };
    /// The bytes this thread's caches hold ([`Held`]).
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// The budget of the call running on this thread (the default outside any).
#[inline]
pub fn in_force() -> CacheBudget {
    IN_FORCE.with(Cell::get)
}

/// Runs `f` with `budget` in force on this thread, restoring the previous one after (also when
/// `f` unwinds).
#[inline]
pub fn scoped<R>(budget: CacheBudget, f: impl FnOnce() -> R) -> R {
    struct Restore(CacheBudget);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_FORCE.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(IN_FORCE.with(|b| b.replace(budget)));
    f()
}

/// The bytes all caches of this thread hold now (their tables' and arenas' allocations, whether
/// or not their pages were touched yet): what `simdtok bench` reports per thread.
pub fn held_on_this_thread() -> usize {
    HELD.with(Cell::get)
}

/// A cache's share of [`held_on_this_thread`]: set to its allocations' bytes whenever they
/// change, taken back when the cache is dropped.
#[derive(Debug, Default)]
pub struct Held {
    bytes: usize,
}

impl Held {
    /// The cache now holds `bytes`.
    pub fn set(&mut self, bytes: usize) {
        let before = self.bytes;
        self.bytes = bytes;
        // `try_with`: a thread's caches may be dropped after its counter, at thread exit.
        let _ = HELD.try_with(|h| h.set(h.get() - before + bytes));
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.set(0);
    }
}

/// `n` halved `k` times, but at least `floor`.
#[inline]
pub fn halved(n: usize, k: u32, floor: usize) -> usize {
    (n >> k).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        let b = |s: &str| s.parse::<CacheBudget>().map(|b| b.limit());
        assert_eq!(b("default"), Ok(None));
        assert_eq!(b("0"), Ok(Some(0)));
        assert_eq!(b("4096"), Ok(Some(4096)));
        assert_eq!(b("8MiB"), Ok(Some(8 << 20)));
        assert_eq!(b("8m"), Ok(Some(8 << 20)));
        assert_eq!(b("512 KiB"), Ok(Some(512 << 10)));
        assert_eq!(b("2GB"), Ok(Some(2_000_000_000)));
        for bad in [
            "",
            "MiB",
            "-1",
            "1.5MiB",
            "8 parsecs",
            "99999999999999999999G",
        ] {
            assert!(b(bad).is_err(), "{bad}");
        }
        assert_eq!(CacheBudget::bytes(12 << 20).to_string(), "12MiB");
        assert_eq!(CacheBudget::bytes(1000).to_string(), "1000B");
        assert_eq!(CacheBudget::DEFAULT.to_string(), "default");
    }

    #[test]
    fn halvings_fit_the_full_size_in_the_budget() {
        assert_eq!(CacheBudget::DEFAULT.halvings(FULL_BYTES), 0);
        assert_eq!(CacheBudget::bytes(FULL_BYTES).halvings(FULL_BYTES), 0);
        assert_eq!(CacheBudget::bytes(FULL_BYTES - 1).halvings(FULL_BYTES), 1);
        assert_eq!(FULL_BYTES >> CacheBudget::bytes(0).halvings(FULL_BYTES), 0);
        for budget in [0, 1, 4096, 1 << 20, 5 << 20, 100 << 20] {
            let k = CacheBudget::bytes(budget).halvings(FULL_BYTES);
            assert!(FULL_BYTES >> k <= budget || k == 30, "{budget}");
        }
    }

    #[test]
    fn a_scoped_budget_holds_for_the_call_only() {
        assert_eq!(in_force(), CacheBudget::DEFAULT);
        let inner = scoped(CacheBudget::bytes(77), || {
            scoped(CacheBudget::bytes(5), in_force);
            in_force()
        });
        assert_eq!(inner, CacheBudget::bytes(77));
        assert_eq!(in_force(), CacheBudget::DEFAULT);
    }

    #[test]
    fn held_bytes_follow_the_caches() {
        let before = held_on_this_thread();
        let mut a = Held::default();
        a.set(1000);
        {
            let mut b = Held::default();
            b.set(24);
            assert_eq!(held_on_this_thread(), before + 1024);
        }
        assert_eq!(held_on_this_thread(), before + 1000);
        a.set(10);
        assert_eq!(held_on_this_thread(), before + 10);
        drop(a);
        assert_eq!(held_on_this_thread(), before);
    }
}
