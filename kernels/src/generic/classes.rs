//! Byte-class kernels over [`Block64`]: classify, find, count UTF-8 characters, ASCII prefix.

use super::{Block64, SHORT, Tail};
use crate::scalar::classes as scalar;
use crate::spec::byte_class::{BlockMasks, ByteClassTable};
use crate::spec::byte_set::ByteSet;

/// The class bits of every byte of `v`: the OR over the table's terms of
/// `lo[low nibble] & hi[high nibble]`. The term tables are read from the table in the loop
/// (plain loads, which the CPU does alongside the shuffles) rather than copied to registers up
/// front, which would cost more than a short input.
#[inline(always)]
unsafe fn classes<B: Block64>(table: &ByteClassTable, v: B) -> B {
    // SAFETY (all blocks in this file): the caller runs on a CPU with `B`'s ISA.
    unsafe {
        let lo = v.low_nibbles();
        let hi = v.high_nibbles();
        let mut acc = B::splat(0);
        for t in &table.terms[..table.n_terms] {
            acc =
                acc.or(B::lookup16(B::table16(&t.lo), lo).and(B::lookup16(B::table16(&t.hi), hi)));
        }
        acc
    }
}

/// Membership in a set of `N` nibble terms (1 or 2), tables already in registers: non-zero bytes
/// are members.
#[inline(always)]
unsafe fn members<B: Block64, const N: usize>(t: &[(B::Table16, B::Table16); 2], v: B) -> B {
    unsafe {
        let lo = v.low_nibbles();
        let hi = v.high_nibbles();
        let mut acc = B::lookup16(t[0].0, lo).and(B::lookup16(t[0].1, hi));
        if N == 2 {
            acc = acc.or(B::lookup16(t[1].0, lo).and(B::lookup16(t[1].1, hi)));
        }
        acc
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
            let c = classes(table, B::load(data.as_ptr().add(64 * i)));
            let mut m = [0u64; 8];
            for &k in &kept[..n_kept] {
                m[k as usize] = c.bit_mask(k);
            }
            *masks = BlockMasks(m);
        }
        if let Some(last) = tail.first_mut() {
            let t = Tail::<B>::read(data, full);
            let c = classes(table, t.block);
            let mut m = [0u64; 8];
            for &k in &kept[..n_kept] {
                m[k as usize] = t.bits(c.bit_mask(k));
            }
            *last = BlockMasks(m);
        }
    }
}

/// See [`crate::scalar::classes::find`]: the set's terms (or its complement's, for
/// `NEGATE`) decide membership, one or two terms.
///
/// # Safety
/// The CPU supports `B`'s ISA.
#[inline(always)]
pub(crate) unsafe fn find<B: Block64, const NEGATE: bool>(
    set: &ByteSet,
    data: &[u8],
) -> Option<usize> {
    if data.len() < SHORT {
        return scalar::find::<NEGATE>(set, data);
    }
    let terms = if NEGATE { &set.outside } else { &set.inside };
    unsafe {
        let mut t = [(B::table16(&[0; 16]), B::table16(&[0; 16])); 2];
        for (dst, src) in t.iter_mut().zip(&terms.terms[..terms.n]) {
            *dst = (B::table16(&src.lo), B::table16(&src.hi));
        }
        match terms.n {
            0 => None, // nothing to find
            1 => find_members::<B, 1>(&t, data),
            _ => find_members::<B, 2>(&t, data),
        }
    }
}

/// The first member byte of `data` (at least [`SHORT`] bytes) under `N` terms.
#[inline(always)]
unsafe fn find_members<B: Block64, const N: usize>(
    t: &[(B::Table16, B::Table16); 2],
    data: &[u8],
) -> Option<usize> {
    unsafe {
        let full = data.len() / 64;
        for i in 0..full {
            // SAFETY: block `i < full` lies inside `data`.
            let m = members::<B, N>(t, B::load(data.as_ptr().add(64 * i)));
            // A cheap "any member?" first; the exact mask only for the block that has one.
            if m.any_nonzero() {
                return Some(64 * i + m.nonzero_mask().trailing_zeros() as usize);
            }
        }
        if data.len() == 64 * full {
            return None;
        }
        let tail = Tail::<B>::read(data, full);
        let hits = tail.bits(members::<B, N>(t, tail.block).nonzero_mask());
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
