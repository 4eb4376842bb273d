//! The NEON tier: [`Block64`] as four `uint8x16_t`, `tbl` lookups, `crc32c*` hashing, and a
//! 256-entry lookup as four 64-entry `tbl` lookups.

use core::arch::aarch64::*;

use crate::generic::{self, Block64, SHORT, Tail};
use crate::spec::byte_class::{BlockMasks, ByteClassTable};
use crate::spec::byte_set::ByteSet;
use crate::spec::prune::PruneTable;

/// 64 bytes as four NEON registers.
#[derive(Clone, Copy)]
pub(crate) struct NeonBlock([uint8x16_t; 4]);

/// Applies a two-operand intrinsic register by register.
macro_rules! each2 {
    ($f:ident, $a:expr, $b:expr) => {{
        let (a, b) = ($a.0, $b.0);
        NeonBlock([
            $f(a[0], b[0]),
            $f(a[1], b[1]),
            $f(a[2], b[2]),
            $f(a[3], b[3]),
        ])
    }};
}

impl NeonBlock {
    /// NEON has no `pmovmskb`: keep one weight bit per byte (1, 2, … 128 in each group of eight),
    /// then three rounds of pairwise additions fold 64 bytes into the 8 bytes of a `u64` mask.
    /// Every byte must be 0x00 or 0xFF.
    #[inline(always)]
    unsafe fn movemask(self) -> u64 {
        unsafe {
            const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
            let w = vld1q_u8(WEIGHTS.as_ptr());
            let r = self.0;
            let s0 = vpaddq_u8(vandq_u8(r[0], w), vandq_u8(r[1], w));
            let s1 = vpaddq_u8(vandq_u8(r[2], w), vandq_u8(r[3], w));
            let s = vpaddq_u8(s0, s1);
            let s = vpaddq_u8(s, s);
            vgetq_lane_u64::<0>(vreinterpretq_u64_u8(s))
        }
    }

    #[inline(always)]
    unsafe fn or_all(self) -> uint8x16_t {
        unsafe {
            let r = self.0;
            vorrq_u8(vorrq_u8(r[0], r[1]), vorrq_u8(r[2], r[3]))
        }
    }
}

// SAFETY (every method): the caller runs on a CPU with NEON (the `Block64` contract); loads and
// stores touch exactly the 64 bytes their contract names.
impl Block64 for NeonBlock {
    type Table16 = uint8x16_t;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        unsafe {
            let x = vld1q_u8_x4(ptr);
            NeonBlock([x.0, x.1, x.2, x.3])
        }
    }

    #[inline(always)]
    unsafe fn store(self, ptr: *mut u8) {
        unsafe {
            let r = self.0;
            vst1q_u8_x4(ptr, uint8x16x4_t(r[0], r[1], r[2], r[3]));
        }
    }

    #[inline(always)]
    unsafe fn load_chunks(p: [*const u8; 4]) -> Self {
        unsafe {
            NeonBlock([
                vld1q_u8(p[0]),
                vld1q_u8(p[1]),
                vld1q_u8(p[2]),
                vld1q_u8(p[3]),
            ])
        }
    }

    #[inline(always)]
    unsafe fn store_chunks(self, p: [*mut u8; 4]) {
        unsafe {
            for (q, r) in p.into_iter().zip(self.0) {
                vst1q_u8(q, r);
            }
        }
    }

    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        unsafe { NeonBlock([vdupq_n_u8(b); 4]) }
    }

    #[inline(always)]
    unsafe fn table16(t: &[u8; 16]) -> uint8x16_t {
        unsafe { vld1q_u8(t.as_ptr()) }
    }

    #[inline(always)]
    unsafe fn lookup16(t: uint8x16_t, idx: Self) -> Self {
        unsafe {
            let i = idx.0;
            NeonBlock([
                vqtbl1q_u8(t, i[0]),
                vqtbl1q_u8(t, i[1]),
                vqtbl1q_u8(t, i[2]),
                vqtbl1q_u8(t, i[3]),
            ])
        }
    }

    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        unsafe { each2!(vandq_u8, self, o) }
    }

    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        unsafe { each2!(vorrq_u8, self, o) }
    }

    #[inline(always)]
    unsafe fn eq(self, o: Self) -> Self {
        unsafe { each2!(vceqq_u8, self, o) }
    }

    #[inline(always)]
    unsafe fn gt_signed(self, o: Self) -> Self {
        unsafe {
            let (a, b) = (self.0, o.0);
            let s = vreinterpretq_s8_u8;
            NeonBlock([
                vcgtq_s8(s(a[0]), s(b[0])),
                vcgtq_s8(s(a[1]), s(b[1])),
                vcgtq_s8(s(a[2]), s(b[2])),
                vcgtq_s8(s(a[3]), s(b[3])),
            ])
        }
    }

    #[inline(always)]
    unsafe fn low_nibbles(self) -> Self {
        unsafe { self.and(Self::splat(0x0F)) }
    }

    #[inline(always)]
    unsafe fn high_nibbles(self) -> Self {
        unsafe {
            let r = self.0;
            NeonBlock([
                vshrq_n_u8::<4>(r[0]),
                vshrq_n_u8::<4>(r[1]),
                vshrq_n_u8::<4>(r[2]),
                vshrq_n_u8::<4>(r[3]),
            ])
        }
    }

    #[inline(always)]
    unsafe fn nonzero_mask(self) -> u64 {
        // `cmtst x, x` is 0xFF exactly where x is non-zero.
        unsafe { each2!(vtstq_u8, self, self).movemask() }
    }

    #[inline(always)]
    unsafe fn sign_mask(self) -> u64 {
        unsafe {
            let r = self.0;
            let s = vreinterpretq_s8_u8;
            NeonBlock([
                vcltzq_s8(s(r[0])),
                vcltzq_s8(s(r[1])),
                vcltzq_s8(s(r[2])),
                vcltzq_s8(s(r[3])),
            ])
            .movemask()
        }
    }

    #[inline(always)]
    unsafe fn bit_mask(self, k: u32) -> u64 {
        // `cmtst` with the bit itself: 0xFF exactly where bit k is set.
        unsafe { each2!(vtstq_u8, self, Self::splat(1 << k)).movemask() }
    }

    #[inline(always)]
    unsafe fn any_nonzero(self) -> bool {
        unsafe { vmaxvq_u8(self.or_all()) != 0 }
    }

    #[inline(always)]
    unsafe fn any_sign(self) -> bool {
        unsafe { vmaxvq_u8(self.or_all()) >= 0x80 }
    }
}

/// See [`crate::scalar::classes::classify`].
///
/// # Safety
/// The CPU supports this tier; `out.len() == data.len().div_ceil(64)`.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn classify(table: &ByteClassTable, data: &[u8], out: &mut [BlockMasks]) {
    unsafe { generic::classes::classify::<NeonBlock>(table, data, out) }
}

/// See [`crate::scalar::classes::find`] (`NEGATE = false`).
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn find_in(set: &ByteSet, data: &[u8]) -> Option<usize> {
    unsafe { generic::classes::find::<NeonBlock, false>(set, data) }
}

/// See [`crate::scalar::classes::find`] (`NEGATE = true`).
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn find_not_in(set: &ByteSet, data: &[u8]) -> Option<usize> {
    unsafe { generic::classes::find::<NeonBlock, true>(set, data) }
}

/// See [`crate::scalar::classes::count_utf8_chars`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn count_utf8_chars(data: &[u8]) -> usize {
    unsafe { generic::classes::count_utf8_chars::<NeonBlock>(data) }
}

/// See [`crate::scalar::classes::ascii_prefix_len`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn ascii_prefix_len(data: &[u8]) -> usize {
    unsafe { generic::classes::ascii_prefix_len::<NeonBlock>(data) }
}

/// A full 256-entry lookup: `tbl` with four registers covers 64 entries and yields 0 for any
/// index ≥ 64, so the four quarters of the table are looked up with the index lowered by 0, 64,
/// 128 and 192 (wrapping) and OR-ed: exactly one quarter answers for each byte.
#[inline(always)]
unsafe fn lookup256(q: &[uint8x16x4_t; 4], v: uint8x16_t) -> uint8x16_t {
    unsafe {
        let a = vqtbl4q_u8(q[0], v);
        let b = vqtbl4q_u8(q[1], vsubq_u8(v, vdupq_n_u8(64)));
        let c = vqtbl4q_u8(q[2], vsubq_u8(v, vdupq_n_u8(128)));
        let d = vqtbl4q_u8(q[3], vsubq_u8(v, vdupq_n_u8(192)));
        vorrq_u8(vorrq_u8(a, b), vorrq_u8(c, d))
    }
}

#[inline(always)]
unsafe fn lookup256_block(q: &[uint8x16x4_t; 4], v: NeonBlock) -> NeonBlock {
    unsafe {
        let r = v.0;
        NeonBlock([
            lookup256(q, r[0]),
            lookup256(q, r[1]),
            lookup256(q, r[2]),
            lookup256(q, r[3]),
        ])
    }
}

/// See [`crate::scalar::prune::map`]. Overrides the generic row decomposition, whose cost grows
/// with the number of distinct rows, by the fixed-cost four-quarter `tbl` lookup.
///
/// # Safety
/// The CPU supports this tier; `out.len() == data.len()`.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn prune_map(table: &PruneTable, data: &[u8], out: &mut [u8]) {
    debug_assert_eq!(data.len(), out.len());
    if data.len() < SHORT {
        return crate::scalar::prune::map(table, data, out);
    }
    // SAFETY: the table loads read 4 × 64 bytes of the 256-byte table; block loads/stores stay
    // inside `data`/`out` (same length) for `i < full`; the tail is read by `Tail` (inside `data`)
    // and written back by `Tail::store` over the same ranges of `out`.
    unsafe {
        let t = table.values.as_ptr();
        let q = [
            vld1q_u8_x4(t),
            vld1q_u8_x4(t.add(64)),
            vld1q_u8_x4(t.add(128)),
            vld1q_u8_x4(t.add(192)),
        ];
        let full = data.len() / 64;
        for i in 0..full {
            let v = NeonBlock::load(data.as_ptr().add(64 * i));
            lookup256_block(&q, v).store(out.as_mut_ptr().add(64 * i));
        }
        if data.len() > 64 * full {
            let tail = Tail::<NeonBlock>::read(data, full);
            tail.store(lookup256_block(&q, tail.block), out);
        }
    }
}

/// The CRC-32C register update: `crc32cx` folds eight bytes per instruction, then `crc32cw`,
/// `crc32ch`, `crc32cb` for the tail.
#[inline]
#[target_feature(enable = "crc")]
fn crc32c_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = crc;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        c = __crc32cd(c, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut rest = words.remainder();
    if rest.len() >= 4 {
        c = __crc32cw(
            c,
            u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")),
        );
        rest = &rest[4..];
    }
    if rest.len() >= 2 {
        c = __crc32ch(
            c,
            u16::from_le_bytes(rest[..2].try_into().expect("2 bytes")),
        );
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        c = __crc32cb(c, b);
    }
    c
}

/// See [`crate::scalar::crc32c::append`].
///
/// # Safety
/// The CPU supports this tier (which requires the CRC32 extension).
#[inline]
#[target_feature(enable = "crc")]
pub unsafe fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    !crc32c_update(!crc, data)
}

/// See [`crate::scalar::crc32c::many`].
///
/// # Safety
/// The CPU supports this tier; `out.len() == pieces.len()`.
#[inline]
#[target_feature(enable = "crc")]
pub unsafe fn crc32c_many(pieces: &[&[u8]], out: &mut [u32]) {
    for (o, p) in out.iter_mut().zip(pieces) {
        *o = !crc32c_update(!0, p);
    }
}

/// 16 bytes in a NEON register, for the space escape.
#[derive(Clone, Copy)]
pub(crate) struct NeonBytes(uint8x16_t);

// SAFETY (every method): the caller runs on a CPU with NEON (the `EscapeVector` contract); loads
// and stores touch exactly the 16 bytes their contract names.
impl generic::escape::EscapeVector for NeonBytes {
    #[inline(always)]
    unsafe fn load16(ptr: *const u8) -> Self {
        unsafe { NeonBytes(vld1q_u8(ptr)) }
    }

    /// NEON has no `pmovmskb`: each half's compare keeps a weight bit per byte (1, 2, … 128),
    /// summed across the half.
    #[inline(always)]
    unsafe fn space_mask(self) -> u32 {
        unsafe {
            let eq = vceqq_u8(self.0, vdupq_n_u8(b' '));
            let weights = vld1_u8([1u8, 2, 4, 8, 16, 32, 64, 128].as_ptr());
            let low = vaddv_u8(vand_u8(vget_low_u8(eq), weights)) as u32;
            let high = vaddv_u8(vand_u8(vget_high_u8(eq), weights)) as u32;
            low | high << 8
        }
    }

    #[inline(always)]
    unsafe fn halves_with_symbol(self) -> [Self; 2] {
        let [a, b, c] = crate::spec::space_escape::SPACE_SYMBOL;
        unsafe {
            let symbol = vld1_u8([a, b, c, 0, 0, 0, 0, 0].as_ptr());
            [
                NeonBytes(vcombine_u8(vget_low_u8(self.0), symbol)),
                NeonBytes(vcombine_u8(vget_high_u8(self.0), symbol)),
            ]
        }
    }

    /// `tbl` gives 0 for an index of 16 or more, as `pshufb` does for bit 7.
    #[inline(always)]
    unsafe fn shuffle_store(source: Self, control: *const u8, out: *mut u8) {
        unsafe { vst1q_u8(out, vqtbl1q_u8(source.0, vld1q_u8(control))) }
    }
}

/// See [`crate::scalar::space_escape::escape_spaces`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "neon")]
pub unsafe fn escape_spaces(
    src: &[u8],
    dst: &mut [std::mem::MaybeUninit<u8>],
    collapse: bool,
    prev_space: bool,
) -> (usize, bool) {
    unsafe { generic::escape::escape_spaces::<NeonBytes>(src, dst, collapse, prev_space) }
}
