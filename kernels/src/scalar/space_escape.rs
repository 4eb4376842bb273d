//! Space escaping, one byte at a time (see [`crate::spec::space_escape`]).

use std::mem::MaybeUninit;

use crate::spec::space_escape::{SPACE_SYMBOL, escape_capacity};

/// Writes `src` escaped to the start of `dst` and returns the bytes written and whether the last
/// byte of `src` is a space (`prev_space` when `src` is empty). Each space becomes `▁`, or
/// nothing when `collapse` and the byte before it (for the first, `prev_space`) is a space;
/// every other byte is copied. `dst` must hold [`escape_capacity`]`(src.len())` bytes (checked);
/// bytes past the returned length are unspecified.
///
/// No branch per byte: each byte writes four bytes at the write position — itself, or `▁` and
/// a padding byte — and the position moves by its escaped length (1, 3 or 0); the bytes a
/// shorter write leaves past the position are overwritten by the next byte's, or lie past the
/// end. (A branch on each space mispredicted on English text.)
#[inline(always)]
pub fn escape_spaces(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    collapse: bool,
    prev_space: bool,
) -> (usize, bool) {
    assert!(dst.len() >= escape_capacity(src.len()));
    let symbol = u32::from_le_bytes([SPACE_SYMBOL[0], SPACE_SYMBOL[1], SPACE_SYMBOL[2], 0]);
    let collapse = collapse as usize;
    let mut prev = prev_space as usize;
    let mut at = 0;
    for &b in src {
        let space = (b == b' ') as usize;
        let word = if space == 1 { symbol } else { b as u32 };
        for (d, s) in dst[at..at + 4].iter_mut().zip(word.to_le_bytes()) {
            d.write(s);
        }
        at += if space == 1 {
            3 * (1 - (prev & collapse))
        } else {
            1
        };
        prev = space;
    }
    (at, prev == 1)
}
