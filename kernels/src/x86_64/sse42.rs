//! The SSE4.2 tier: `Block64` as four `__m128i`, `pshufb` lookups, `crc32` hashing.

use core::arch::x86_64::*;

use crate::generic::{self, Block64};
use crate::spec::byte_class::{BlockMasks, ByteClassTable};
use crate::spec::byte_set::ByteSet;
use crate::spec::prune::PruneTable;

/// 64 bytes as four SSE registers.
#[derive(Clone, Copy)]
pub(crate) struct SseBlock([__m128i; 4]);

/// Applies a two-operand intrinsic register by register.
macro_rules! each2 {
    ($f:ident, $a:expr, $b:expr) => {{
        let (a, b) = ($a.0, $b.0);
        SseBlock([
            $f(a[0], b[0]),
            $f(a[1], b[1]),
            $f(a[2], b[2]),
            $f(a[3], b[3]),
        ])
    }};
}

impl SseBlock {
    /// The four 16-bit `pmovmskb` results as one 64-bit mask.
    #[inline(always)]
    unsafe fn movemask(self) -> u64 {
        unsafe {
            let r = self.0;
            let m0 = _mm_movemask_epi8(r[0]) as u32 as u64;
            let m1 = _mm_movemask_epi8(r[1]) as u32 as u64;
            let m2 = _mm_movemask_epi8(r[2]) as u32 as u64;
            let m3 = _mm_movemask_epi8(r[3]) as u32 as u64;
            m0 | (m1 << 16) | (m2 << 32) | (m3 << 48)
        }
    }
}

// SAFETY (every method): the caller runs on a CPU with SSSE3/SSE4.1/SSE4.2 (the `Block64`
// contract); loads and stores touch exactly the 64 bytes their contract names.
impl Block64 for SseBlock {
    type Table16 = __m128i;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        unsafe {
            let p = ptr as *const __m128i;
            SseBlock([
                _mm_loadu_si128(p),
                _mm_loadu_si128(p.add(1)),
                _mm_loadu_si128(p.add(2)),
                _mm_loadu_si128(p.add(3)),
            ])
        }
    }

    #[inline(always)]
    unsafe fn store(self, ptr: *mut u8) {
        unsafe {
            let p = ptr as *mut __m128i;
            for (i, r) in self.0.into_iter().enumerate() {
                _mm_storeu_si128(p.add(i), r);
            }
        }
    }

    #[inline(always)]
    unsafe fn load_chunks(p: [*const u8; 4]) -> Self {
        unsafe { SseBlock(p.map(|q| _mm_loadu_si128(q as *const __m128i))) }
    }

    #[inline(always)]
    unsafe fn store_chunks(self, p: [*mut u8; 4]) {
        unsafe {
            for (q, r) in p.into_iter().zip(self.0) {
                _mm_storeu_si128(q as *mut __m128i, r);
            }
        }
    }

    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        unsafe { SseBlock([_mm_set1_epi8(b as i8); 4]) }
    }

    #[inline(always)]
    unsafe fn table16(t: &[u8; 16]) -> __m128i {
        unsafe { _mm_loadu_si128(t.as_ptr() as *const __m128i) }
    }

    #[inline(always)]
    unsafe fn lookup16(t: __m128i, idx: Self) -> Self {
        unsafe {
            let i = idx.0;
            SseBlock([
                _mm_shuffle_epi8(t, i[0]),
                _mm_shuffle_epi8(t, i[1]),
                _mm_shuffle_epi8(t, i[2]),
                _mm_shuffle_epi8(t, i[3]),
            ])
        }
    }

    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        unsafe { each2!(_mm_and_si128, self, o) }
    }

    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        unsafe { each2!(_mm_or_si128, self, o) }
    }

    #[inline(always)]
    unsafe fn eq(self, o: Self) -> Self {
        unsafe { each2!(_mm_cmpeq_epi8, self, o) }
    }

    #[inline(always)]
    unsafe fn gt_signed(self, o: Self) -> Self {
        unsafe { each2!(_mm_cmpgt_epi8, self, o) }
    }

    #[inline(always)]
    unsafe fn low_nibbles(self) -> Self {
        unsafe { self.and(Self::splat(0x0F)) }
    }

    #[inline(always)]
    unsafe fn high_nibbles(self) -> Self {
        // There is no 8-bit shift: shift 16-bit lanes, then clear the bits that came across.
        unsafe {
            let r = self.0;
            SseBlock([
                _mm_srli_epi16(r[0], 4),
                _mm_srli_epi16(r[1], 4),
                _mm_srli_epi16(r[2], 4),
                _mm_srli_epi16(r[3], 4),
            ])
            .low_nibbles()
        }
    }

    #[inline(always)]
    unsafe fn nonzero_mask(self) -> u64 {
        unsafe { !self.eq(Self::splat(0)).movemask() }
    }

    #[inline(always)]
    unsafe fn sign_mask(self) -> u64 {
        unsafe { self.movemask() }
    }

    #[inline(always)]
    unsafe fn bit_mask(self, k: u32) -> u64 {
        // Shifting 16-bit lanes left by 7 - k moves bit k of both bytes to their bit 7, which is
        // what `pmovmskb` collects: two instructions per register instead of and/compare/move.
        unsafe {
            let count = _mm_cvtsi32_si128(7 - k as i32);
            let r = self.0;
            SseBlock([
                _mm_sll_epi16(r[0], count),
                _mm_sll_epi16(r[1], count),
                _mm_sll_epi16(r[2], count),
                _mm_sll_epi16(r[3], count),
            ])
            .movemask()
        }
    }

    #[inline(always)]
    unsafe fn any_nonzero(self) -> bool {
        unsafe {
            let r = self.0;
            let all = _mm_or_si128(_mm_or_si128(r[0], r[1]), _mm_or_si128(r[2], r[3]));
            _mm_testz_si128(all, all) == 0
        }
    }

    #[inline(always)]
    unsafe fn any_sign(self) -> bool {
        unsafe {
            let r = self.0;
            let all = _mm_or_si128(_mm_or_si128(r[0], r[1]), _mm_or_si128(r[2], r[3]));
            _mm_movemask_epi8(all) != 0
        }
    }
}

/// See [`crate::scalar::classes::classify`].
///
/// # Safety
/// The CPU supports this tier; `out.len() == data.len().div_ceil(64)`.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn classify(table: &ByteClassTable, data: &[u8], out: &mut [BlockMasks]) {
    unsafe { generic::classes::classify::<SseBlock>(table, data, out) }
}

/// See [`crate::scalar::classes::find`] (`NEGATE = false`).
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn find_in(set: &ByteSet, data: &[u8]) -> Option<usize> {
    unsafe { generic::classes::find::<SseBlock, false>(set, data) }
}

/// See [`crate::scalar::classes::find`] (`NEGATE = true`).
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn find_not_in(set: &ByteSet, data: &[u8]) -> Option<usize> {
    unsafe { generic::classes::find::<SseBlock, true>(set, data) }
}

/// See [`crate::scalar::classes::count_utf8_chars`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn count_utf8_chars(data: &[u8]) -> usize {
    unsafe { generic::classes::count_utf8_chars::<SseBlock>(data) }
}

/// See [`crate::scalar::classes::ascii_prefix_len`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn ascii_prefix_len(data: &[u8]) -> usize {
    unsafe { generic::classes::ascii_prefix_len::<SseBlock>(data) }
}

/// Up to this many distinct non-zero rows, the row lookup beats scalar (4 instructions per row
/// and 16 bytes against one load per byte; `cargo bench --bench kernels -- prune_map`).
pub const PRUNE_MAX_ROWS: usize = 4;

/// See [`crate::scalar::prune::map`]; tables with more than [`PRUNE_MAX_ROWS`] distinct rows use
/// the scalar loop.
///
/// # Safety
/// The CPU supports this tier; `out.len() == data.len()`.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn prune_map(table: &PruneTable, data: &[u8], out: &mut [u8]) {
    unsafe { generic::prune::map::<SseBlock>(table, data, out, PRUNE_MAX_ROWS) }
}

/// The CRC-32C register update: the `crc32` instruction computes CRC-32C, eight bytes per
/// instruction, then four, two and one for the tail.
#[inline]
#[target_feature(enable = "sse4.2")]
fn crc32c_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = crc as u64;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        c = _mm_crc32_u64(c, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut c = c as u32;
    let mut rest = words.remainder();
    if rest.len() >= 4 {
        c = _mm_crc32_u32(
            c,
            u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")),
        );
        rest = &rest[4..];
    }
    if rest.len() >= 2 {
        c = _mm_crc32_u16(
            c,
            u16::from_le_bytes(rest[..2].try_into().expect("2 bytes")),
        );
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        c = _mm_crc32_u8(c, b);
    }
    c
}

/// See [`crate::scalar::crc32c::append`]. (The AVX2 tier uses this function too: AVX2 adds
/// nothing to CRC-32C.)
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "sse4.2")]
pub unsafe fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    !crc32c_update(!crc, data)
}

/// See [`crate::scalar::crc32c::many`]: one call for many short pieces, so the per-call cost of
/// dispatch is paid once (it is as large as hashing a 16-byte piece).
///
/// # Safety
/// The CPU supports this tier; `out.len() == pieces.len()`.
#[inline]
#[target_feature(enable = "sse4.2")]
pub unsafe fn crc32c_many(pieces: &[&[u8]], out: &mut [u32]) {
    for (o, p) in out.iter_mut().zip(pieces) {
        *o = !crc32c_update(!0, p);
    }
}

/// See [`crate::scalar::space_escape::escape_spaces`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn escape_spaces(
    src: &[u8],
    dst: &mut [std::mem::MaybeUninit<u8>],
    collapse: bool,
    prev_space: bool,
) -> (usize, bool) {
    unsafe {
        generic::escape::escape_spaces::<super::escape::SseBytes>(src, dst, collapse, prev_space)
    }
}
