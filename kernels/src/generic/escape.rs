//! Space escaping sixteen bytes a step (see [`crate::spec::space_escape`]), over the four
//! operations it needs from a 16-byte vector ([`EscapeVector`]): `pshufb` on x86, `tbl` on NEON.

use std::mem::MaybeUninit;

use crate::scalar;
use crate::spec::space_escape::{EXPAND, escape_capacity, expanded_len};

/// 16 bytes in a vector register.
///
/// # Safety
/// Every method may execute instructions of the implementing ISA: callers must run on a CPU with
/// the features of the tier that owns the implementation.
pub(crate) trait EscapeVector: Copy {
    /// Loads 16 bytes from `ptr` (no alignment needed).
    /// # Safety
    /// `ptr..ptr + 16` must be readable.
    unsafe fn load16(ptr: *const u8) -> Self;
    /// Bit `i` set where byte `i` is a space (0x20).
    unsafe fn space_mask(self) -> u32;
    /// The two halves as shuffle sources: bytes 0..8, then bytes 8..16, each followed by `▁`'s
    /// three bytes (positions 8, 9, 10).
    unsafe fn halves_with_symbol(self) -> [Self; 2];
    /// Stores at `out` the 16 bytes of `source` that the 16 control bytes at `control` pick (a
    /// control byte of 0x80 gives 0).
    /// # Safety
    /// `control..control + 16` must be readable, `out..out + 16` writable.
    unsafe fn shuffle_store(source: Self, control: *const u8, out: *mut u8);
}

/// See [`crate::scalar::space_escape::escape_spaces`].
///
/// # Safety
/// The CPU supports `V`'s ISA.
#[inline(always)]
pub(crate) unsafe fn escape_spaces<V: EscapeVector>(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    collapse: bool,
    prev_space: bool,
) -> (usize, bool) {
    assert!(dst.len() >= escape_capacity(src.len()));
    let (src_ptr, dst_ptr) = (src.as_ptr(), dst.as_mut_ptr() as *mut u8);
    let mut prev = prev_space as u32;
    let (mut i, mut at) = (0, 0);
    // SAFETY: loads read `src[i..i + 16]` with `i + 16 <= src.len()`. Stores: before a block at
    // `i`, at most `3 i` bytes were written (`at <= 3 i`); the block's first half stores 32
    // bytes at `at` and advances `at` by at most 24, its second stores 32 bytes at most 24 bytes
    // further, so every store ends by `3 i + 24 + 32 <= 3 (i + 16) + 32 <= 3 len + 32`, inside
    // `dst` (asserted above). Control reads stay in `EXPAND`: a half's mask is below 256, and
    // each entry is 32 bytes.
    unsafe {
        while i + 16 <= src.len() {
            let v = V::load16(src_ptr.add(i));
            let mask = v.space_mask();
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
            let halves = [mask & 0xFF, mask >> 8];
            for (source, half) in v.halves_with_symbol().into_iter().zip(halves) {
                let control = EXPAND.as_ptr().add(half as usize) as *const u8;
                let out = dst_ptr.add(at);
                V::shuffle_store(source, control, out);
                V::shuffle_store(source, control.add(16), out.add(16));
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
