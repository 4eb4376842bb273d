//! Bytes of a `u64` examined at once in a general-purpose register (SWAR): for short scans
//! where a call into a vector kernel costs more than the scan.

/// The high bit of every byte of `word` that equals `byte` — the zero-byte test on `word ^
/// byte…`. Every equal byte is flagged; a byte above an equal one may be flagged falsely (the
/// subtraction's borrow), so callers check each flagged byte, lowest first.
#[inline(always)]
pub(crate) fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = word ^ (LOW * byte as u64);
    x.wrapping_sub(LOW) & !x & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every equal byte is flagged, and the lowest flag is always an equal byte.
    #[test]
    fn equal_bytes_are_flagged_and_the_lowest_flag_is_one() {
        let values = [0x00u8, 0x01, 0x20, 0x7F, 0x80, 0x81, 0xE1, 0xE2, 0xE3, 0xFF];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..50_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bytes: [u8; 8] =
                std::array::from_fn(|i| values[(state >> (6 * i)) as usize % values.len()]);
            let byte = values[(state >> 60) as usize % values.len()];
            let flags = bytes_equal(u64::from_le_bytes(bytes), byte);
            for (i, &b) in bytes.iter().enumerate() {
                if b == byte {
                    assert_ne!(flags & (0x80 << (8 * i)), 0, "{bytes:x?} {byte:x}");
                }
            }
            if flags != 0 {
                assert_eq!(
                    bytes[flags.trailing_zeros() as usize / 8],
                    byte,
                    "{bytes:x?} {byte:x}"
                );
            }
        }
    }
}
