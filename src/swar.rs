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

/// The high bit of every byte of `word` that equals `byte`, and of no other byte (no borrow
/// crosses bytes: each byte's low seven bits are added apart from its high bit).
#[inline(always)]
pub(crate) fn bytes_exactly_equal(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let x = word ^ (0x0101_0101_0101_0101 * byte as u64);
    // A byte's high bit ends up set exactly when the byte of `x` is not zero.
    let nonzero = ((x & LOW7) + LOW7) | x;
    !nonzero & !LOW7
}

/// `bytes` (at most 16) as a little-endian `u128`, zero above them: two overlapping loads of
/// the widest size that fits (or three single bytes), so no call to `memcpy` for a length known
/// only at run time, which cost a one-word text a sixth of its time.
#[inline]
pub(crate) fn load_short(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    assert!(n <= 16, "at most 16 bytes");
    // Each pair ORs the first `k` bytes with the last `k` shifted to their place: bytes that
    // both loads read land on themselves.
    if n >= 8 {
        let lo = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(bytes[n - 8..].try_into().expect("8 bytes"));
        lo as u128 | (hi as u128) << (8 * (n - 8))
    } else if n >= 4 {
        let lo = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        let hi = u32::from_le_bytes(bytes[n - 4..].try_into().expect("4 bytes"));
        (lo as u64 | (hi as u64) << (8 * (n - 4))) as u128
    } else if n > 0 {
        (bytes[0] as u32
            | (bytes[n / 2] as u32) << (8 * (n / 2))
            | (bytes[n - 1] as u32) << (8 * (n - 1))) as u128
    } else {
        0
    }
}

/// The first position `p >= from` where `text[p..]` starts with `pattern` (not empty) and
/// `accept(p)` holds. Words are short: the first 16 bytes are looked at eight at a time in a
/// register, cheaper than a call into `memchr` or a vector kernel per word (7 % of English
/// text's encoding time with a unigram model, 8 % with SentencePiece BPE); past them, `memchr`.
#[inline]
pub(crate) fn find_from(
    text: &[u8],
    from: usize,
    pattern: &[u8],
    mut accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    let lead = pattern[0];
    let mut at = from;
    for _ in 0..2 {
        let Some(chunk) = text.get(at..at + 8) else {
            break;
        };
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let mut leads = bytes_equal(word, lead);
        while leads != 0 {
            let p = at + (leads.trailing_zeros() / 8) as usize;
            if text[p..].starts_with(pattern) && accept(p) {
                return Some(p);
            }
            leads &= leads - 1;
        }
        at += 8;
    }
    while let Some(i) = memchr::memchr(lead, text.get(at..)?) {
        let p = at + i;
        if text[p..].starts_with(pattern) && accept(p) {
            return Some(p);
        }
        at = p + 1;
    }
    None
}

/// [`find_from`] for a pattern of three bytes (U+2581, which starts words), any place
/// accepted: the 16 positions from `from` are tested at once, each byte of the pattern against
/// eight positions in a register, with no branch per byte — most words end there. A unigram
/// model spent 7 % of its time on English finding words a lead byte at a time; with this,
/// repeated passes over 20 MB ran 7–9 % faster with botchan's model and 3–6 % with XLM-R's
/// (SentencePiece BPE, whose words also end at a `▁` that follows no other, gained nothing).
#[inline(always)]
pub(crate) fn find3_from(text: &[u8], from: usize, pattern: &[u8; 3]) -> Option<usize> {
    let Some(near) = text.get(from..from + 18) else {
        return find3_near_end(text, from, pattern);
    };
    for at in [0, 8] {
        let found = starts3(near, at, pattern);
        if found != 0 {
            return Some(from + at + (found.trailing_zeros() / 8) as usize);
        }
    }
    find_from(text, from + 16, pattern, |_| true)
}

/// [`find3_from`] where fewer than 18 bytes follow `from`, as they do for the last words of
/// every text: the text's last 18 bytes are tested as `find3_from` tests the 18 from `from`,
/// with the positions before `from` masked off, where the search of the rest of the text
/// called `memchr` for a few bytes (half the cost of finding the words of a one-word text). A
/// text shorter than 18 bytes is looked at byte by byte.
fn find3_near_end(text: &[u8], from: usize, pattern: &[u8; 3]) -> Option<usize> {
    let n = text.len();
    let Some(tail) = n.checked_sub(18) else {
        return (from..n.saturating_sub(2)).find(|&p| text[p..p + 3] == *pattern);
    };
    let skip = from - tail; // `from + 18 > n`, so `from > tail`
    for at in [0, 8] {
        // Bit 8j + 7 stands for position `tail + at + j`: those below `from` are masked off.
        let before = skip.saturating_sub(at) as u32;
        let kept = u64::MAX.checked_shl(8 * before).unwrap_or(0);
        let found = starts3(&text[tail..], at, pattern) & kept;
        if found != 0 {
            return Some(tail + at + (found.trailing_zeros() / 8) as usize);
        }
    }
    None
}

/// Bit 8j + 7 set where `pattern` starts at `near[at + j]`, j < 8 (`near` holds at least
/// `at + 10` bytes): each byte of the pattern against eight positions at once.
#[inline(always)]
fn starts3(near: &[u8], at: usize, pattern: &[u8; 3]) -> u64 {
    let lane = |k: usize| u64::from_le_bytes(near[at + k..at + k + 8].try_into().expect("8 bytes"));
    bytes_exactly_equal(lane(0), pattern[0])
        & bytes_exactly_equal(lane(1), pattern[1])
        & bytes_exactly_equal(lane(2), pattern[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `load_short` gives every length's bytes in place and zeros above them.
    #[test]
    fn short_loads_are_the_bytes_zero_padded() {
        let bytes: Vec<u8> = (0..16u8).map(|i| 0xF1 ^ i.wrapping_mul(37)).collect();
        for from in 0..16 {
            for n in 0..=16 - from {
                let slice = &bytes[from..from + n];
                let mut padded = [0u8; 16];
                padded[..n].copy_from_slice(slice);
                assert_eq!(load_short(slice), u128::from_le_bytes(padded), "{from} {n}");
            }
        }
    }

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

    /// Every byte value at every place of the word: flagged exactly when it is the byte.
    #[test]
    fn exactly_equal_bytes_are_flagged_and_no_other() {
        for byte in 0..=255u8 {
            for value in 0..=255u8 {
                for place in 0..8 {
                    // The other bytes are the byte itself, so a borrow would show.
                    let mut bytes = [byte; 8];
                    bytes[place] = value;
                    let flags = bytes_exactly_equal(u64::from_le_bytes(bytes), byte);
                    for (i, &b) in bytes.iter().enumerate() {
                        let flagged = flags >> (8 * i + 7) & 1 == 1;
                        assert_eq!(flagged, b == byte, "{bytes:x?} {byte:#x}");
                    }
                    assert_eq!(flags & !0x8080_8080_8080_8080, 0);
                }
            }
        }
    }

    /// `find_from` and `find3_from` find what a scan of every position finds, at every start
    /// and length around their register-wide chunks (`find_from` with and without a rule on
    /// the place).
    #[test]
    fn find_from_is_a_scan_of_every_position() {
        const SPACE: &[u8] = "\u{2581}".as_bytes();
        // Whole `▁`s (runs of them too), its bytes alone and a letter.
        let values: [&[u8]; 5] = [SPACE, b"\xE2", b"\x96", b"\x81", b"a"];
        let mut rng = crate::test_rng::Rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..3_000 {
            let units = rng.below(40) as usize;
            let text = rng.join(&values, units);
            let len = text.len();
            for from in 0..=len {
                let naive = |accept: &dyn Fn(usize) -> bool| {
                    (from..len).find(|&p| text[p..].starts_with(SPACE) && accept(p))
                };
                assert_eq!(find_from(&text, from, SPACE, |_| true), naive(&|_| true));
                let not_after_space = |p: usize| !text[..p].ends_with(SPACE);
                assert_eq!(
                    find_from(&text, from, SPACE, not_after_space),
                    naive(&not_after_space),
                    "{text:x?} from {from}"
                );
                let space: &[u8; 3] = SPACE.try_into().unwrap();
                assert_eq!(
                    find3_from(&text, from, space),
                    naive(&|_| true),
                    "{text:x?} from {from}"
                );
            }
        }
    }
}
