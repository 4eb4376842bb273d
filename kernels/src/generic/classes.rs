//! Byte-class kernels over [`Block64`]: classify, find, count UTF-8 characters, ASCII prefix.

use super::{Block64, SHORT, Tail};
use crate::scalar::classes as scalar;
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
    if data.len() < SHORT {
        return scalar::classify(table, data, out);
    }
    unsafe {
        let terms = Terms::<B>::new(table);
        // Only kept classes get a mask; the others stay 0 at no cost.
        let mut kept = [0u32; 8];
        let mut n_kept = 0;
        for k in table.kept.indices() {
            kept[n_kept] = k as u32;
            n_kept += 1;
        }
        let full = data.len() / 64;
        let (body, tail) = out.split_at_mut(full);
        for (i, masks) in body.iter_mut().enumerate() {
            // SAFETY: block `i < full` lies inside `data`.
            let c = terms.classes(B::load(data.as_ptr().add(64 * i)));
            let mut m = [0u64; 8];
            for &k in &kept[..n_kept] {
                m[k as usize] = c.bit_mask(k);
            }
            *masks = BlockMasks(m);
        }
        if let Some(last) = tail.first_mut() {
            let t = Tail::<B>::read(data, full);
            let c = terms.classes(t.block);
            let mut m = [0u64; 8];
            for &k in &kept[..n_kept] {
                m[k as usize] = t.bits(c.bit_mask(k));
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
    if data.len() < SHORT {
        return scalar::find::<NEGATE>(table, set, data);
    }
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
        if data.len() == 64 * full {
            return None;
        }
        let t = Tail::<B>::read(data, full);
        let out = terms.outside(t.block, set, zero).sign_mask();
        let hits = t.bits(if NEGATE { out } else { !out });
        (hits != 0).then(|| 64 * full + hits.trailing_zeros() as usize)
    }
}

/// See [`crate::scalar::classes::count_utf8_chars`].
///
/// # Safety
/// The CPU supports `B`'s ISA.
#[inline(always)]
pub(crate) unsafe fn count_utf8_chars<B: Block64>(data: &[u8]) -> usize {
    if data.len() < SHORT {
        return scalar::count_utf8_chars(data);
    }
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
        if data.len() > 64 * full {
            let t = Tail::<B>::read(data, full);
            let m = t.block.gt_signed(last_continuation).sign_mask();
            count += t.bits(m).count_ones() as usize;
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
    if data.len() < SHORT {
        return scalar::ascii_prefix_len(data);
    }
    unsafe {
        let full = data.len() / 64;
        for i in 0..full {
            // SAFETY: block `i < full` lies inside `data`.
            let v = B::load(data.as_ptr().add(64 * i));
            if v.any_sign() {
                return 64 * i + v.sign_mask().trailing_zeros() as usize;
            }
        }
        if data.len() == 64 * full {
            return data.len();
        }
        let t = Tail::<B>::read(data, full);
        let m = t.bits(t.block.sign_mask());
        if m != 0 {
            64 * full + m.trailing_zeros() as usize
        } else {
            data.len()
        }
    }
}
