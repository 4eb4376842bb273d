//! Space escaping with `pshufb` (see [`crate::spec::space_escape`]): one body for both x86
//! tiers, each entry point compiling it with its own features (VEX encodings under AVX2; a
//! 32-byte form would gain nothing, as `vpshufb` shuffles within 16-byte lanes and each half's
//! output lands at its own offset).

use core::arch::x86_64::*;
use std::mem::MaybeUninit;

use crate::scalar;
use crate::spec::space_escape::{EXPAND, SPACE_SYMBOL, escape_capacity, expanded_len};

/// See [`crate::scalar::space_escape::escape_spaces`].
///
/// # Safety
/// The CPU supports SSSE3 and POPCNT (callers: entry points with at least those features).
#[inline(always)]
pub(crate) unsafe fn escape_spaces(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    collapse: bool,
    prev_space: bool,
) -> (usize, bool) {
    assert!(dst.len() >= escape_capacity(src.len()));
    let [a, b, c] = SPACE_SYMBOL;
    let (src_ptr, dst_ptr) = (src.as_ptr(), dst.as_mut_ptr() as *mut u8);
    let mut prev = prev_space as u32;
    let (mut i, mut at) = (0, 0);
    // SAFETY: loads read `src[i..i + 16]` with `i + 16 <= src.len()`. Stores: before a block at
    // `i`, at most `3 i` bytes were written (`at <= 3 i`); the block's first half stores 32
    // bytes at `at` and advances `at` by at most 24, its second stores 32 bytes at most 24 bytes
    // further, so every store ends by `3 i + 24 + 32 <= 3 (i + 16) + 32 <= 3 len + 32`, inside
    // `dst` (asserted above). The table reads are in bounds: a half's mask is below 256.
    unsafe {
        let spaces = _mm_set1_epi8(b' ' as i8);
        // `▁` in the high bytes' first three positions of both halves, for the unpacks below.
        let symbol = _mm_setr_epi8(
            a as i8, b as i8, c as i8, 0, 0, 0, 0, 0, a as i8, b as i8, c as i8, 0, 0, 0, 0, 0,
        );
        while i + 16 <= src.len() {
            let v = _mm_loadu_si128(src_ptr.add(i) as *const __m128i);
            let mask = _mm_movemask_epi8(_mm_cmpeq_epi8(v, spaces)) as u32;
            if collapse && mask & (mask << 1 | prev) != 0 {
                // A space after a space: dropped, which the controls cannot express.
                let (n, last) = scalar::space_escape::escape_spaces(
                    &src[i..i + 16],
                    &mut dst[at..],
                    collapse,
                    prev == 1,
                );
                at += n;
                prev = last as u32;
                i += 16;
                continue;
            }
            let (low, high) = (mask & 0xFF, mask >> 8);
            // Each half's eight bytes, then `▁` (positions 8, 9, 10 of the source).
            let sources = [_mm_unpacklo_epi64(v, symbol), _mm_unpackhi_epi64(v, symbol)];
            for (source, half) in sources.into_iter().zip([low, high]) {
                let control = EXPAND.as_ptr().add(half as usize) as *const __m128i;
                let out = dst_ptr.add(at) as *mut __m128i;
                _mm_storeu_si128(out, _mm_shuffle_epi8(source, _mm_loadu_si128(control)));
                _mm_storeu_si128(
                    out.add(1),
                    _mm_shuffle_epi8(source, _mm_loadu_si128(control.add(1))),
                );
                at += expanded_len(half);
            }
            prev = mask >> 15;
            i += 16;
        }
    }
    let (n, last) =
        scalar::space_escape::escape_spaces(&src[i..], &mut dst[at..], collapse, prev == 1);
    (at + n, last)
}
