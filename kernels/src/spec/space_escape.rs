//! Space escaping: SentencePiece's whitespace escape over bytes that are otherwise copied as they
//! are (ASCII that normalizes to itself).
//!
//! Each space (0x20) becomes U+2581 `▁` (`E2 96 81`); with `collapse` (the model's
//! `remove_extra_whitespaces`), a space that follows a space — the byte before it, or for the
//! first byte the caller's `prev_space` — becomes nothing. Every other byte is copied. This is
//! the normalizer's inner loop over English text: a third of its bytes per word are
//! rewritten, so a byte-at-a-time loop costs as much as the rest of the normalizer together.
//!
//! The SIMD tiers take 16 bytes at a time, as two halves of eight: the half's space mask picks
//! one of 256 shuffle controls ([`EXPAND`]), which spread the half's bytes over up to 24 output
//! bytes and place `E2 96 81` where each space was (the source register holds the half's eight
//! bytes followed by the three bytes of `▁`). A block where `collapse` drops a space takes the
//! scalar path (doubled spaces are rare in text).

/// U+2581 LOWER ONE EIGHTH BLOCK `▁`, SentencePiece's escaped space, in UTF-8.
pub const SPACE_SYMBOL: [u8; 3] = [0xE2, 0x96, 0x81];

/// The output room an escape of `len` bytes needs: every byte may become three, and the SIMD
/// tiers store whole vectors (up to 32 bytes past the last one they keep; what lies past the
/// returned length is unspecified).
pub const fn escape_capacity(len: usize) -> usize {
    3 * len + 32
}

/// Shuffle control bytes meaning "no source byte" (`pshufb` writes 0 for bit 7 set, `tbl` for an
/// index of 16 or more); only positions past the half's output use it.
const NONE: u8 = 0x80;

/// For each 8-bit space mask of a half (bit `i`: byte `i` is a space), the 32 control bytes
/// that produce its output from a source register of the half's eight bytes followed by
/// [`SPACE_SYMBOL`] at positions 8, 9 and 10: byte `i` where it is not a space, `8, 9, 10`
/// where it is. The output is `8 + 2 * popcount(mask)` bytes long (at most 24); the rest is
/// `0x80`.
pub static EXPAND: [[u8; 32]; 256] = expand_table();

const fn expand_table() -> [[u8; 32]; 256] {
    let mut table = [[NONE; 32]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut at = 0;
        let mut i = 0;
        while i < 8 {
            if mask >> i & 1 == 1 {
                table[mask][at] = 8;
                table[mask][at + 1] = 9;
                table[mask][at + 2] = 10;
                at += 3;
            } else {
                table[mask][at] = i as u8;
                at += 1;
            }
            i += 1;
        }
        mask += 1;
    }
    table
}

/// The bytes a half of eight with space mask `mask` produces.
#[inline(always)]
pub const fn expanded_len(mask: u32) -> usize {
    8 + 2 * mask.count_ones() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_spreads_its_half_and_places_the_symbol_at_each_space() {
        for (mask, control) in EXPAND.iter().enumerate() {
            let source: Vec<u8> = (b'a'..b'a' + 8).chain(SPACE_SYMBOL).collect();
            let mut want = Vec::new();
            for (i, &b) in source[..8].iter().enumerate() {
                if mask >> i & 1 == 1 {
                    want.extend(SPACE_SYMBOL);
                } else {
                    want.push(b);
                }
            }
            let len = expanded_len(mask as u32);
            assert_eq!(len, want.len());
            let got: Vec<u8> = control[..len].iter().map(|&c| source[c as usize]).collect();
            assert_eq!(got, want, "mask {mask:#010b}");
            assert!(
                control[len..].iter().all(|&c| c == NONE),
                "mask {mask:#010b}"
            );
        }
    }
}
