//! Byte-class kernels, one table lookup per byte.

use crate::spec::byte_class::{BlockMasks, ByteClassTable};
use crate::spec::byte_set::ByteSet;

/// Per-class masks of every 64-byte block of `data` (`out.len()` must be `data.len().div_ceil(64)`).
pub fn classify(table: &ByteClassTable, data: &[u8], out: &mut [BlockMasks]) {
    assert_eq!(
        out.len(),
        data.len().div_ceil(64),
        "one BlockMasks per 64-byte block"
    );
    for (block, masks) in data.chunks(64).zip(out.iter_mut()) {
        let mut m = [0u64; 8];
        for (i, &b) in block.iter().enumerate() {
            let classes = table.classes[b as usize];
            for (k, mask) in m.iter_mut().enumerate() {
                *mask |= (((classes >> k) & 1) as u64) << i;
            }
        }
        *masks = BlockMasks(m);
    }
}

/// The first index of `data` whose byte is in `set` (`NEGATE = false`) or not in it
/// (`NEGATE = true`).
pub fn find<const NEGATE: bool>(set: &ByteSet, data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| set.member[b as usize] != NEGATE)
}

/// The number of UTF-8 characters, counted as bytes that are not continuation bytes
/// (`80..=BF`); for valid UTF-8 that is the number of code points.
pub fn count_utf8_chars(data: &[u8]) -> usize {
    data.iter().filter(|&&b| (b as i8) >= -64).count()
}

/// The length of the longest prefix of bytes below 0x80.
pub fn ascii_prefix_len(data: &[u8]) -> usize {
    data.iter().position(|&b| b >= 0x80).unwrap_or(data.len())
}
