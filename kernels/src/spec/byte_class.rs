//! Byte classes: one ISA-independent specification (up to eight classes over the 256 byte values),
//! compiled into the nibble tables the vector kernels look bytes up in.
//!
//! # How a class table is evaluated with 16-entry shuffles
//! `pshufb` (x86) and `tbl` (AArch64) look up 16-entry tables, so a byte is split into its low and
//! high nibble. For one class bit, the 256 byte values form a 16 × 16 bit matrix (row = high
//! nibble, column = low nibble). Rows with the same column set form a rectangle
//! `rows × columns`, and a rectangle is exactly `lo[b & 15] & hi[b >> 4]` for a pair of tables
//! holding that bit. A *term* is one such pair of tables carrying one rectangle for every class
//! bit at once; a class table is the OR of its terms:
//!
//! ```text
//! class(b) = OR over terms t of ( t.lo[b & 0x0F] & t.hi[b >> 4] )
//! ```
//!
//! The number of terms is the largest number of distinct non-empty rows over the kept classes:
//! 1 for "continuation byte" or "digit", 2 for "ASCII letter" or "whitespace", 5 for "ASCII
//! punctuation" (its rows differ a lot), never more than 16. Kernels that need only some classes
//! build a table restricted to them and pay only for those. Finding bytes of one set is cheaper
//! still: see [`super::byte_set`], which packs a whole set into at most two terms.
//!
//! Both ISAs receive the nibbles already masked to 0..=15, where `pshufb` and `tbl` agree (they
//! differ for index bytes 0x10..=0xFF: `pshufb` uses the low four bits unless bit 7 is set, `tbl`
//! returns 0 for any index ≥ 16), so the same terms serve both. The ISA-specific table shapes live
//! in [`crate::spec::prune`], where a full 256-entry lookup is derived differently per ISA.

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

/// A set of byte classes (bit `k` = class `k`, `k < 8`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ClassSet(u8);

impl ClassSet {
    /// No class.
    pub const EMPTY: ClassSet = ClassSet(0);
    /// All eight classes.
    pub const ALL: ClassSet = ClassSet(0xFF);

    /// ASCII whitespace as Rust and C define it: `\t \n \x0B \x0C \r` and space.
    pub const WHITESPACE: ClassSet = ClassSet(1 << 0);
    /// ASCII punctuation and symbols: printable, not a letter, digit or space.
    pub const PUNCT: ClassSet = ClassSet(1 << 1);
    /// ASCII letters `A-Z a-z`.
    pub const LETTER: ClassSet = ClassSet(1 << 2);
    /// ASCII digits `0-9`.
    pub const DIGIT: ClassSet = ClassSet(1 << 3);
    /// Lead bytes of multi-byte UTF-8 sequences (`C2..=F4`).
    pub const UTF8_LEAD: ClassSet = ClassSet(1 << 4);
    /// UTF-8 continuation bytes (`80..=BF`).
    pub const UTF8_CONTINUATION: ClassSet = ClassSet(1 << 5);
    /// ASCII control characters (`00..=1F` and `7F`), whitespace controls included.
    pub const CONTROL: ClassSet = ClassSet(1 << 6);
    /// Bytes that never occur in valid UTF-8 (`C0`, `C1`, `F5..=FF`).
    pub const UTF8_INVALID: ClassSet = ClassSet(1 << 7);
    /// ASCII letters and digits.
    pub const ALNUM: ClassSet = ClassSet(Self::LETTER.0 | Self::DIGIT.0);

    /// The set with exactly the given bits.
    pub const fn from_bits(bits: u8) -> ClassSet {
        ClassSet(bits)
    }

    /// The set holding only class `k`.
    ///
    /// # Panics
    /// When `k >= 8`.
    pub const fn single(k: usize) -> ClassSet {
        assert!(k < 8, "there are only 8 byte classes");
        ClassSet(1 << k)
    }

    /// The bits of the set.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the two sets share a class.
    pub const fn intersects(self, other: ClassSet) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether every class of `other` is in `self`.
    pub const fn contains(self, other: ClassSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// The class indices in the set, ascending.
    pub fn indices(self) -> impl Iterator<Item = usize> {
        (0..8).filter(move |k| self.0 & (1 << k) != 0)
    }
}

impl fmt::Debug for ClassSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClassSet({:#010b})", self.0)
    }
}

impl BitOr for ClassSet {
    type Output = ClassSet;
    fn bitor(self, rhs: ClassSet) -> ClassSet {
        ClassSet(self.0 | rhs.0)
    }
}

impl BitOrAssign for ClassSet {
    fn bitor_assign(&mut self, rhs: ClassSet) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for ClassSet {
    type Output = ClassSet;
    fn bitand(self, rhs: ClassSet) -> ClassSet {
        ClassSet(self.0 & rhs.0)
    }
}

impl BitAndAssign for ClassSet {
    fn bitand_assign(&mut self, rhs: ClassSet) {
        self.0 &= rhs.0;
    }
}

impl Not for ClassSet {
    type Output = ClassSet;
    fn not(self) -> ClassSet {
        ClassSet(!self.0)
    }
}

/// The classes of every byte value: the one specification all tiers' tables derive from.
#[derive(Clone, PartialEq, Eq)]
pub struct ByteClassSpec {
    classes: [u8; 256],
}

impl ByteClassSpec {
    /// A specification where no byte belongs to any class.
    pub const fn empty() -> ByteClassSpec {
        ByteClassSpec { classes: [0; 256] }
    }

    /// The eight standard classes ([`ClassSet::WHITESPACE`] … [`ClassSet::UTF8_INVALID`]).
    pub fn standard() -> ByteClassSpec {
        let mut spec = ByteClassSpec::empty();
        for b in 0..=255u8 {
            let mut set = ClassSet::EMPTY;
            if b.is_ascii_whitespace() || b == 0x0B {
                set |= ClassSet::WHITESPACE;
            }
            if b.is_ascii_punctuation() {
                set |= ClassSet::PUNCT;
            }
            if b.is_ascii_alphabetic() {
                set |= ClassSet::LETTER;
            }
            if b.is_ascii_digit() {
                set |= ClassSet::DIGIT;
            }
            if (0xC2..=0xF4).contains(&b) {
                set |= ClassSet::UTF8_LEAD;
            }
            if (0x80..=0xBF).contains(&b) {
                set |= ClassSet::UTF8_CONTINUATION;
            }
            if b.is_ascii_control() {
                set |= ClassSet::CONTROL;
            }
            if matches!(b, 0xC0 | 0xC1 | 0xF5..=0xFF) {
                set |= ClassSet::UTF8_INVALID;
            }
            spec.classes[b as usize] = set.bits();
        }
        spec
    }

    /// Adds class `k` to every byte value for which `member` says so.
    ///
    /// # Panics
    /// When `k >= 8`.
    pub fn with_class(mut self, k: usize, member: impl Fn(u8) -> bool) -> ByteClassSpec {
        let bit = ClassSet::single(k).bits();
        for b in 0..=255u8 {
            if member(b) {
                self.classes[b as usize] |= bit;
            }
        }
        self
    }

    /// Sets the classes of one byte value.
    pub fn set(&mut self, byte: u8, classes: ClassSet) {
        self.classes[byte as usize] = classes.bits();
    }

    /// The classes of one byte value.
    pub fn classes_of(&self, byte: u8) -> ClassSet {
        ClassSet(self.classes[byte as usize])
    }
}

impl Default for ByteClassSpec {
    fn default() -> ByteClassSpec {
        ByteClassSpec::empty()
    }
}

impl fmt::Debug for ByteClassSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByteClassSpec").finish_non_exhaustive()
    }
}

/// One rectangle per class bit: `class(b) ⊇ lo[b & 15] & hi[b >> 4]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NibbleTerm {
    pub lo: [u8; 16],
    pub hi: [u8; 16],
}

/// The most terms a class table can need: one per distinct row, and there are 16 rows.
pub(crate) const MAX_TERMS: usize = 16;

/// A [`ByteClassSpec`] restricted to some classes and compiled for the kernels.
#[derive(Clone, PartialEq, Eq)]
pub struct ByteClassTable {
    /// The class bits of each byte value (only the kept classes): the scalar tier's table.
    pub(crate) classes: [u8; 256],
    pub(crate) kept: ClassSet,
    pub(crate) terms: [NibbleTerm; MAX_TERMS],
    pub(crate) n_terms: usize,
}

impl ByteClassTable {
    /// Compiles the classes of `spec` that are in `keep`; the others read as absent.
    /// Fewer kept classes usually mean fewer terms, hence faster vector kernels.
    pub fn new(spec: &ByteClassSpec, keep: ClassSet) -> ByteClassTable {
        let mut classes = [0u8; 256];
        for (dst, &src) in classes.iter_mut().zip(spec.classes.iter()) {
            *dst = src & keep.bits();
        }
        let mut terms = [NibbleTerm::default(); MAX_TERMS];
        let mut n_terms = 0;
        for k in keep.indices() {
            let bit = 1u8 << k;
            // Column set (bit l = low nibble l is a member) of each row (high nibble).
            let mut rows = [0u16; 16];
            for (b, &c) in classes.iter().enumerate() {
                if c & bit != 0 {
                    rows[b >> 4] |= 1 << (b & 15);
                }
            }
            // Each distinct non-empty column set becomes one rectangle, in the next free term.
            let mut distinct: Vec<u16> = Vec::with_capacity(16);
            for &cols in rows.iter().filter(|&&c| c != 0) {
                if !distinct.contains(&cols) {
                    distinct.push(cols);
                }
            }
            for (t, &cols) in distinct.iter().enumerate() {
                let term = &mut terms[t];
                for l in 0..16 {
                    if cols & (1 << l) != 0 {
                        term.lo[l] |= bit;
                    }
                }
                for (h, &row) in rows.iter().enumerate() {
                    if row == cols {
                        term.hi[h] |= bit;
                    }
                }
            }
            n_terms = n_terms.max(distinct.len());
        }
        let table = ByteClassTable {
            classes,
            kept: keep,
            terms,
            n_terms,
        };
        debug_assert!((0..=255u8).all(|b| table.classes_by_terms(b) == table.classes[b as usize]));
        table
    }

    /// Compiles every class of `spec`.
    pub fn full(spec: &ByteClassSpec) -> ByteClassTable {
        ByteClassTable::new(spec, ClassSet::ALL)
    }

    /// The classes this table keeps.
    pub fn kept(&self) -> ClassSet {
        self.kept
    }

    /// The kept classes of one byte value.
    #[inline]
    pub fn classes_of(&self, byte: u8) -> ClassSet {
        ClassSet(self.classes[byte as usize])
    }

    /// How many nibble terms the vector kernels evaluate per byte (0..=16).
    pub fn term_count(&self) -> usize {
        self.n_terms
    }

    /// The classes of `byte` computed the way the vector kernels do it (used to check the
    /// decomposition, and by tests).
    fn classes_by_terms(&self, byte: u8) -> u8 {
        self.terms[..self.n_terms].iter().fold(0, |acc, t| {
            acc | (t.lo[(byte & 15) as usize] & t.hi[(byte >> 4) as usize])
        })
    }
}

impl fmt::Debug for ByteClassTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByteClassTable")
            .field("kept", &self.kept)
            .field("terms", &self.n_terms)
            .finish_non_exhaustive()
    }
}

/// Per-class bit masks of one 64-byte block: bit `i` of `masks[k]` is set when byte `i` of the
/// block is in class `k`. Bits past the end of the input are clear.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockMasks(pub [u64; 8]);

impl BlockMasks {
    /// The positions of the block whose byte is in any class of `set`.
    #[inline]
    pub fn any_of(&self, set: ClassSet) -> u64 {
        set.indices().fold(0, |acc, k| acc | self.0[k])
    }
}

impl fmt::Debug for BlockMasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for m in &self.0 {
            list.entry(&format_args!("{m:#018x}"));
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_classes_need_few_terms() {
        let spec = ByteClassSpec::standard();
        let count = |set| ByteClassTable::new(&spec, set).term_count();
        assert_eq!(count(ClassSet::UTF8_CONTINUATION), 1);
        assert_eq!(count(ClassSet::DIGIT), 1);
        assert_eq!(count(ClassSet::LETTER), 2);
        assert_eq!(count(ClassSet::WHITESPACE), 2);
        assert!(count(ClassSet::ALL) <= 5);
        assert_eq!(count(ClassSet::EMPTY), 0);
    }

    #[test]
    fn arbitrary_spec_decomposes_exactly() {
        // A pseudo-random spec: every byte a different mix of classes.
        let mut spec = ByteClassSpec::empty();
        let mut x = 0x9E37_79B9u32;
        for b in 0..=255u8 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            spec.set(b, ClassSet::from_bits(x as u8));
        }
        let table = ByteClassTable::full(&spec);
        for b in 0..=255u8 {
            assert_eq!(
                table.classes_by_terms(b),
                spec.classes_of(b).bits(),
                "byte {b:#04x}"
            );
        }
        assert!(table.term_count() <= MAX_TERMS);
    }
}
