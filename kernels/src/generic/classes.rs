//! Byte-class kernels over [`Block64`]: classify, find, count UTF-8 characters, ASCII prefix.

use super::{Block64, load_tail, low_bits};
use crate::spec::byte_class::{BlockMasks, ByteClassTable, ClassSet, MAX_TERMS};

/// A class table's nibble terms, loaded into registers once per call.
struct Terms<B: Block64> {
    lo: [B::Table16; MAX_TERMS],
    hi: [B::Table16; MAX_TERMS],
    n: usize,
}

impl<B: Block64> Terms<B> {
    #[inline(always)]
    unsafe fn new(table: &ByteClassTable) -> Self {
        // SAFETY (all blocks in this file): the caller runs on a CPU with `B`'s ISA.
        unsafe {
            let zero = B::table16(&[0; 16]);
            let mut terms = Terms {
                lo: [zero; MAX_TERMS],
                hi: [zero; MAX_TERMS],
                n: table.n_terms,
            };
            for (t, term) in table.terms[..table.n_terms].iter().enumerate() {
                terms.lo[t] = B::table16(&term.lo);
                terms.hi[t] = B::table16(&term.hi);
            }
            terms
        }
    }

    /// The class bits of every byte: the OR over terms of `lo[low nibble] & hi[high nibble]`.
    #[inline(always)]
    unsafe fn classes(&self, v: B) -> B {
        unsafe {
            let lo = v.low_nibbles();
            let hi = v.high_nibbles();
            let mut acc = B::splat(0);
            for t in 0..self.n {
                acc = acc.or(B::lookup16(self.lo[t], lo).and(B::lookup16(self.hi[t], hi)));
            }
            acc
        }
    }

    /// 0xFF at every byte in none of the classes of `set`, else 0: both polarities of `find`
    /// then end in one sign mask.
    #[inline(always)]
    unsafe fn outside(&self, v: B, set: B, zero: B) -> B {
        unsafe { self.classes(v).and(set).eq(zero) }
    }
}

/// See [`crate::scalar::classes::classify`].
///
/// # Safety
/// The CPU supports `B`'s ISA; `out.len() == data.len().div_ceil(64)`.
#[inline(always)]
pub(crate) unsafe fn classify<B: Block64>(
    table: &ByteClassTable,
    data: &[u8],
    out: &mut [BlockMasks],
) {
    unsafe {
        let terms = Terms::<B>::new(table);
        // One splatted bit per kept class, so absent classes cost nothing.
        let mut bits = [B::splat(0); 8];
        let mut class_of = [0usize; 8];
        let mut n_bits = 0;
        for k in table.kept.indices() {
            bits[n_bits] = B::splat(1 << k);
            class_of[n_bits] = k;
            n_bits += 1;
        }
        let full = data.len() / 64;
        let (body, tail) = out.split_at_mut(full);
        for (i, masks) in body.iter_mut().enumerate() {
            // SAFETY: block `i < full` lies inside `data`.
            let v = B::load(data.as_ptr().add(64 * i));
            let c = terms.classes(v);
            let mut m = [0u64; 8];
            for j in 0..n_bits {
                m[class_of[j]] = c.and(bits[j]).nonzero_mask();
            }
            *masks = BlockMasks(m);
        }
        if let Some(last) = tail.first_mut() {
            let rest = data.len() - 64 * full;
            let c = terms.classes(load_tail::<B>(data, 64 * full));
            let mut m = [0u64; 8];
            for j in 0..n_bits {
                m[class_of[j]] = c.and(bits[j]).nonzero_mask() & low_bits(rest);
            }
            *last = BlockMasks(m);
        }
    }
}

/// See [`crate::scalar::classes::find`].
///
/// # Safety
/// The CPU supports `B`'s ISA.
#[inline(always)]
pub(crate) unsafe fn find<B: Block64, const NEGATE: bool>(
    table: &ByteClassTable,
    set: ClassSet,
    data: &[u8],
) -> Option<usize> {
    unsafe {
        let terms = Terms::<B>::new(table);
        let set = B::splat(set.bits());
        let zero = B::splat(0);
        let full = data.len() / 64;
        for i in 0..full {
            // SAFETY: block `i < full` lies inside `data`.
            let out = terms.outside(B::load(data.as_ptr().add(64 * i)), set, zero);
            let hits = if NEGATE {
                out.sign_mask()
            } else {
                !out.sign_mask()
            };
            if hits != 0 {
                return Some(64 * i + hits.trailing_zeros() as usize);
            }
        }
        let rest = data.len() - 64 * full;
        if rest == 0 {
            return None;
        }
        let out = terms.outside(load_tail::<B>(data, 64 * full), set, zero);
        let hits = if NEGATE {
            out.sign_mask()
        } else {
            !out.sign_mask()
        } & low_bits(rest);
        (hits != 0).then(|| 64 * full + hits.trailing_zeros() as usize)
    }
}

/// See [`crate::scalar::classes::count_utf8_chars`].
///
/// # Safety
/// The CPU supports `B`'s ISA.
#[inline(always)]
pub(crate) unsafe fn count_utf8_chars<B: Block64>(data: &[u8]) -> usize {
    unsafe {
        // Continuation bytes are 0x80..=0xBF, i.e. -128..=-65 as signed bytes.
        let last_continuation = B::splat(0xBF);
        let full = data.len() / 64;
        let mut count = 0usize;
        for i in 0..full {
            // SAFETY: block `i < full` lies inside `data`.
            let v = B::load(data.as_ptr().add(64 * i));
            count += v.gt_signed(last_continuation).sign_mask().count_ones() as usize;
        }
        let rest = data.len() - 64 * full;
        if rest > 0 {
            let v = load_tail::<B>(data, 64 * full);
            let m = v.gt_signed(last_continuation).sign_mask() & low_bits(rest);
            count += m.count_ones() as usize;
        }
        count
    }
}

/// See [`crate::scalar::classes::ascii_prefix_len`].
///
/// # Safety
/// The CPU supports `B`'s ISA.
#[inline(always)]
pub(crate) unsafe fn ascii_prefix_len<B: Block64>(data: &[u8]) -> usize {
    unsafe {
        let full = data.len() / 64;
        for i in 0..full {
            // SAFETY: block `i < full` lies inside `data`.
            let v = B::load(data.as_ptr().add(64 * i));
            if v.any_sign() {
                return 64 * i + v.sign_mask().trailing_zeros() as usize;
            }
        }
        // The zero padding of the tail is ASCII, so a miss there means the whole input is.
        let v = load_tail::<B>(data, 64 * full);
        let m = v.sign_mask();
        if m != 0 {
            64 * full + m.trailing_zeros() as usize
        } else {
            data.len()
        }
    }
}
