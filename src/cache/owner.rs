//! Which model (or tokenizer) a per-thread cache holds results of, and the stamp its current
//! entries carry. A cache that another model or tokenizer claims takes a new stamp, so its old
//! entries read as empty without being touched; they are cleared only when the stamps wrap
//! around, before an old stamp could come back.

/// The stamp of a cache entry. The default one is never current: an empty entry has it.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Stamp(u16);

impl Stamp {
    /// The stamp as a number, for caches that pack it with other fields.
    pub fn bits(self) -> u16 {
        self.0
    }
}

/// What [`CacheOwner::claim`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The same owner as before.
    Same,
    /// Another owner: the entries now read as empty. State that is not stamped (hit counts,
    /// filters of what was seen) is the caller's to reset.
    Changed,
    /// Another owner, and the stamps wrapped around: the caller must also give every entry the
    /// default stamp.
    Wrapped,
}

/// See the module documentation.
#[derive(Debug)]
pub struct CacheOwner {
    owner: usize,
    stamp: Stamp,
}

impl Default for CacheOwner {
    fn default() -> Self {
        CacheOwner {
            owner: usize::MAX,
            stamp: Stamp(1),
        }
    }
}

impl CacheOwner {
    /// The stamp that the cache's current entries carry.
    #[inline]
    pub fn stamp(&self) -> Stamp {
        self.stamp
    }

    /// Makes `owner` the cache's owner (a new stamp when it changes).
    #[inline]
    pub fn claim(&mut self, owner: usize) -> Claim {
        if self.owner == owner {
            return Claim::Same;
        }
        self.owner = owner;
        self.stamp.0 = self.stamp.0.wrapping_add(1);
        if self.stamp.0 == 0 {
            self.stamp.0 = 1;
            return Claim::Wrapped;
        }
        Claim::Changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_owner_gets_a_new_stamp_and_the_wrap_is_reported() {
        let mut o = CacheOwner::default();
        assert_eq!(o.claim(1), Claim::Changed);
        let first = o.stamp();
        assert_eq!(o.claim(1), Claim::Same);
        assert_eq!(o.stamp(), first, "the same owner keeps its stamp");
        let mut wraps = 0;
        for i in 0..70_000 {
            match o.claim(2 + i % 2) {
                Claim::Wrapped => wraps += 1,
                Claim::Changed => {}
                Claim::Same => panic!("the owner changed"),
            }
            assert_ne!(
                o.stamp(),
                Stamp::default(),
                "the empty stamp is never current"
            );
        }
        assert_eq!(wraps, 1);
    }
}
