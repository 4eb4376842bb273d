//! The NFC quick check, fast on CJK: whether a text is NFC already, so that the normalizers of
//! [`super::hf`] (which compose with `unicode-normalization-alignments`, the crate the reference
//! uses, so the Unicode version is the reference's) can leave it alone.

use std::sync::OnceLock;

use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::{IsNormalized, is_nfc_quick};

/// Whether `text` is certainly NFC already (ASCII always is): the reference's quick check
/// (`is_nfc_quick(..) == Yes`), with the characters that can never change its answer — starters
/// whose NFC quick-check property is Yes, nearly all of CJK and kana — read from a bitmap
/// rather than looked up twice each.
pub fn is_nfc_already(text: &str) -> bool {
    if text.is_ascii() {
        return true;
    }
    let plain = plain_starters();
    let mut last_cc = 0u8;
    let mut maybe = false;
    for ch in text.chars() {
        let c = ch as usize;
        if c < 0x80 || (c < 0x10000 && plain[c / 64] & (1 << (c % 64)) != 0) {
            last_cc = 0;
            continue;
        }
        // The quick check's step for any other character.
        let cc = canonical_combining_class(ch);
        if last_cc > cc && cc != 0 {
            return false;
        }
        match is_nfc_quick(std::iter::once(ch)) {
            IsNormalized::Yes => {}
            IsNormalized::No => return false,
            IsNormalized::Maybe => maybe = true,
        }
        last_cc = cc;
    }
    !maybe
}

/// Bit `c` for each BMP character that is a starter (combining class 0) with NFC quick check
/// Yes: the quick check steps over it with nothing to remember.
fn plain_starters() -> &'static [u64; 1024] {
    static PLAIN: OnceLock<Box<[u64; 1024]>> = OnceLock::new();
    PLAIN.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for ch in (0x80..0x10000u32).filter_map(char::from_u32) {
            if canonical_combining_class(ch) == 0
                && is_nfc_quick(std::iter::once(ch)) == IsNormalized::Yes
            {
                bits[ch as usize / 64] |= 1 << (ch as usize % 64);
            }
        }
        bits
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bitmap_check_is_the_quick_check() {
        // Every pair of characters from a sample of each kind (starters, combining marks of
        // several classes, Maybe and No characters, astral ones), and some longer texts.
        let sample: Vec<char> = (0..0x3100u32)
            .step_by(7)
            .chain([
                0x300, 0x301, 0x316, 0x327, 0x345, 0x3099, 0x309A, 0x0F73, 0x1100, 0x1161,
            ])
            .chain([0xAC00, 0xFB1D, 0x2126, 0x1D15E, 0x1F600, 0x20000, 0xE0100])
            .filter_map(char::from_u32)
            .collect();
        let reference = |t: &str| t.is_ascii() || is_nfc_quick(t.chars()) == IsNormalized::Yes;
        for &a in &sample {
            for &b in sample.iter().step_by(5) {
                let t: String = [a, b].iter().collect();
                assert_eq!(is_nfc_already(&t), reference(&t), "{t:?}");
            }
        }
        for t in [
            "日本語のテキスト",
            "か\u{3099}",
            "e\u{301}\u{316}",
            "e\u{316}\u{301}",
            "Å",
        ] {
            assert_eq!(is_nfc_already(t), reference(t), "{t:?}");
        }
    }
}
