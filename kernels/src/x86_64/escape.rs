//! [`EscapeVector`] with SSE registers and `pshufb`, for both x86 tiers: each entry point
//! compiles the generic body with its own features (VEX encodings under AVX2; a 32-byte form
//! would gain nothing, as `vpshufb` shuffles within 16-byte lanes and each half's output lands
//! at its own offset).

use core::arch::x86_64::*;

use crate::generic::escape::EscapeVector;
use crate::spec::space_escape::SPACE_SYMBOL;

/// 16 bytes in an SSE register.
#[derive(Clone, Copy)]
pub(crate) struct SseBytes(__m128i);

// SAFETY (every method): the caller runs on a CPU with SSSE3 (the `EscapeVector` contract); loads
// and stores touch exactly the 16 bytes their contract names.
impl EscapeVector for SseBytes {
    #[inline(always)]
    unsafe fn load16(ptr: *const u8) -> Self {
        unsafe { SseBytes(_mm_loadu_si128(ptr as *const __m128i)) }
    }

    #[inline(always)]
    unsafe fn space_mask(self) -> u32 {
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(self.0, _mm_set1_epi8(b' ' as i8))) as u32 }
    }

    #[inline(always)]
    unsafe fn halves_with_symbol(self) -> [Self; 2] {
        let [a, b, c] = SPACE_SYMBOL.map(|x| x as i8);
        unsafe {
            // `▁` in the first three bytes of both 64-bit halves, for either unpack.
            let symbol = _mm_setr_epi8(a, b, c, 0, 0, 0, 0, 0, a, b, c, 0, 0, 0, 0, 0);
            [
                SseBytes(_mm_unpacklo_epi64(self.0, symbol)),
                SseBytes(_mm_unpackhi_epi64(self.0, symbol)),
            ]
        }
    }

    #[inline(always)]
    unsafe fn shuffle_store(source: Self, control: *const u8, out: *mut u8) {
        unsafe {
            let picked = _mm_shuffle_epi8(source.0, _mm_loadu_si128(control as *const __m128i));
            _mm_storeu_si128(out as *mut __m128i, picked);
        }
    }
}
