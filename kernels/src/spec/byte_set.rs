//! Byte sets: membership of one set of byte values, compiled for the find kernels.
//!
//! A [`ByteClassTable`](super::byte_class::ByteClassTable) keeps one bit per class, so each class
//! pays for its own rectangles. A find asks one question — is this byte in the set? — so all eight
//! bits of a nibble term can carry rectangles of the *same* set ("buckets", as in Hyperscan's
//! shufti): the set's membership matrix (row = high nibble, column = low nibble) has at most 16
//! distinct non-empty rows, each one rectangle, eight per term. Any set therefore needs at most
//! two terms — two `pshufb`/`tbl` lookups and an AND per term — whatever its shape, and most sets
//! seen in tokenizers (whitespace, punctuation, anything non-ASCII) need one.
//!
//! `find_not_in` looks for the complement, compiled alongside, so both directions take the same
//! fast path.

use std::fmt;

use super::byte_class::{ByteClassSpec, ClassSet, NibbleTerm};

/// Nibble terms of one set: `b` is a member iff `OR_t (lo_t[b & 15] & hi_t[b >> 4]) != 0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SetTerms {
    pub terms: [NibbleTerm; 2],
    pub n: usize,
}

impl SetTerms {
    fn new(member: &[bool; 256]) -> SetTerms {
        let mut rows = [0u16; 16];
        for (b, _) in member.iter().enumerate().filter(|(_, m)| **m) {
            rows[b >> 4] |= 1 << (b & 15);
        }
        let mut distinct: Vec<u16> = Vec::with_capacity(16);
        for &cols in rows.iter().filter(|&&c| c != 0) {
            if !distinct.contains(&cols) {
                distinct.push(cols);
            }
        }
        let mut out = SetTerms {
            terms: [NibbleTerm::default(); 2],
            n: distinct.len().div_ceil(8),
        };
        for (j, &cols) in distinct.iter().enumerate() {
            let (term, bit) = (&mut out.terms[j / 8], 1u8 << (j % 8));
            for l in (0..16).filter(|l| cols & (1 << l) != 0) {
                term.lo[l] |= bit;
            }
            for h in (0..16).filter(|&h| rows[h] == cols) {
                term.hi[h] |= bit;
            }
        }
        out
    }

    /// Membership computed the way the vector kernels do it.
    fn contains(&self, b: u8) -> bool {
        self.terms[..self.n]
            .iter()
            .any(|t| t.lo[(b & 15) as usize] & t.hi[(b >> 4) as usize] != 0)
    }
}

/// A set of byte values compiled for [`crate::Kernels::find_in`] and
/// [`crate::Kernels::find_not_in`].
#[derive(Clone, PartialEq, Eq)]
pub struct ByteSet {
    /// Membership per byte value: the scalar tier's table.
    pub(crate) member: [bool; 256],
    pub(crate) inside: SetTerms,
    pub(crate) outside: SetTerms,
}

impl ByteSet {
    /// The bytes for which `member` holds.
    pub fn from_fn(member: impl Fn(u8) -> bool) -> ByteSet {
        let mut inside = [false; 256];
        for (b, m) in inside.iter_mut().enumerate() {
            *m = member(b as u8);
        }
        let outside = inside.map(|m| !m);
        let set = ByteSet {
            member: inside,
            inside: SetTerms::new(&inside),
            outside: SetTerms::new(&outside),
        };
        debug_assert!((0..=255u8).all(|b| set.inside.contains(b) == set.contains(b)));
        debug_assert!((0..=255u8).all(|b| set.outside.contains(b) != set.contains(b)));
        set
    }

    /// The bytes in any class of `classes` according to `spec`.
    pub fn of_classes(spec: &ByteClassSpec, classes: ClassSet) -> ByteSet {
        ByteSet::from_fn(|b| spec.classes_of(b).intersects(classes))
    }

    /// Exactly the given byte values.
    pub fn of_bytes(bytes: &[u8]) -> ByteSet {
        ByteSet::from_fn(|b| bytes.contains(&b))
    }

    /// Whether `byte` is in the set.
    #[inline]
    pub fn contains(&self, byte: u8) -> bool {
        self.member[byte as usize]
    }

    /// The complement.
    pub fn complement(&self) -> ByteSet {
        ByteSet {
            member: self.member.map(|m| !m),
            inside: self.outside,
            outside: self.inside,
        }
    }

    /// How many nibble terms a find evaluates per byte (0, 1 or 2), for the set and its
    /// complement.
    pub fn term_counts(&self) -> (usize, usize) {
        (self.inside.n, self.outside.n)
    }
}

impl fmt::Debug for ByteSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.member.iter().filter(|&&m| m).count();
        f.debug_struct("ByteSet")
            .field("members", &count)
            .field("terms", &self.term_counts())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_fits_two_terms() {
        let spec = ByteClassSpec::standard();
        assert_eq!(
            ByteSet::of_classes(&spec, ClassSet::WHITESPACE | ClassSet::PUNCT)
                .term_counts()
                .0,
            1
        );
        assert_eq!(ByteSet::of_bytes(&[]).term_counts(), (0, 1));
        assert_eq!(ByteSet::from_fn(|_| true).term_counts(), (1, 0));
        // Sixteen distinct rows: the worst case.
        let worst = ByteSet::from_fn(|b| (b & 15) <= (b >> 4));
        assert_eq!(worst.term_counts().0, 2);
        for seed in 1..50u32 {
            let s = ByteSet::from_fn(|b| {
                (b as u32).wrapping_mul(seed.wrapping_mul(2654435761)) >> 31 == 1
            });
            for b in 0..=255u8 {
                assert_eq!(s.inside.contains(b), s.contains(b));
                assert_eq!(s.outside.contains(b), !s.contains(b));
            }
            assert_eq!(s.complement().complement(), s);
        }
    }
}
