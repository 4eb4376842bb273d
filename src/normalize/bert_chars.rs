//! The character classes of the BERT normalizer and pre-tokenizer, exactly as Hugging Face
//! `tokenizers` computes them.
//!
//! Exactness depends on the tables, not only on the rules: `tokenizers` asks the
//! `unicode_categories` crate (Unicode 9 tables, where private use counts only the first and last
//! code point of each range, and unassigned code points are not "other") and Rust's `char`
//! methods. So we ask the same crate rather than a newer table: a character assigned after
//! Unicode 9 (many emoji) is neither control nor punctuation here, exactly as there.
//!
//! The flags of the Basic Multilingual Plane are computed once into a 64 KiB table; the rare
//! supplementary characters ask the crates directly.

use std::sync::OnceLock;

use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::char::decompose_canonical;

/// Flags of one character (a bit set of the constants below).
pub type CharFlags = u8;

/// Removed by `clean_text`: NUL, U+FFFD and "other" characters (Cc, Cf, Co in the reference's
/// tables) except `\t \n \r`.
pub const DROP: CharFlags = 1 << 0;
/// Whitespace (`char::is_whitespace`): a word boundary, and mapped to a space by `clean_text`.
pub const WHITESPACE: CharFlags = 1 << 1;
/// Punctuation as BERT counts it (ASCII punctuation and symbols, and Unicode P*): a word of its
/// own.
pub const PUNCT: CharFlags = 1 << 2;
/// A CJK ideograph the normalizer surrounds with spaces (`handle_chinese_chars`).
pub const CHINESE: CharFlags = 1 << 3;
/// A nonspacing mark (Mn), dropped after NFD when accents are stripped.
pub const NONSPACING_MARK: CharFlags = 1 << 4;
/// `to_lowercase` changes the character.
pub const CHANGES_LOWER: CharFlags = 1 << 5;
/// Its canonical decomposition (NFD) is not itself.
pub const DECOMPOSES: CharFlags = 1 << 6;

/// The flags of `c`.
#[inline]
pub fn flags(c: char) -> CharFlags {
    let cp = c as u32;
    if cp < 0x1_0000 {
        bmp_table()[cp as usize]
    } else {
        compute(c)
    }
}

fn bmp_table() -> &'static [CharFlags; 0x1_0000] {
    static TABLE: OnceLock<Box<[CharFlags; 0x1_0000]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([0; 0x1_0000]);
        for (cp, slot) in table.iter_mut().enumerate() {
            // Surrogates are not chars; they never occur in a `str`.
            if let Some(c) = char::from_u32(cp as u32) {
                *slot = compute(c);
            }
        }
        table
    })
}

/// The flags of `c`, from the same sources as the reference.
pub fn compute(c: char) -> CharFlags {
    let mut f = 0;
    let is_other = !matches!(c, '\t' | '\n' | '\r') && c.is_other();
    if c == '\0' || c == '\u{FFFD}' || is_other {
        f |= DROP;
    }
    if c.is_whitespace() {
        f |= WHITESPACE;
    }
    if c.is_ascii_punctuation() || c.is_punctuation() {
        f |= PUNCT;
    }
    if is_chinese_char(c) {
        f |= CHINESE;
    }
    if c.is_mark_nonspacing() {
        f |= NONSPACING_MARK;
    }
    if !c.to_lowercase().eq(std::iter::once(c)) {
        f |= CHANGES_LOWER;
    }
    let mut decomposes = false;
    decompose_canonical(c, |d| decomposes |= d != c);
    if decomposes {
        f |= DECOMPOSES;
    }
    f
}

/// The CJK blocks BERT isolates (its `_is_chinese_char`): not Hangul, Hiragana or Katakana.
fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_agrees_with_direct_computation() {
        for cp in (0..0x1_0000).step_by(7) {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(flags(c), compute(c), "U+{cp:04X}");
            }
        }
    }

    #[test]
    fn reference_quirks() {
        // Whitespace controls are whitespace, not dropped; other controls are dropped.
        assert_eq!(flags('\t'), WHITESPACE);
        assert_eq!(flags('\u{0B}') & DROP, DROP);
        // Private use is dropped; unassigned code points (even Unicode 9 ones) are not, and
        // zero-width space (Cf) is.
        assert_eq!(flags('\u{E001}') & DROP, DROP);
        assert_eq!(flags('\u{E0080}') & DROP, 0);
        assert_eq!(flags('\u{200B}') & DROP, DROP);
        // ASCII symbols are punctuation for BERT, Unicode symbols are not.
        assert_eq!(flags('$') & PUNCT, PUNCT);
        assert_eq!(flags('€') & PUNCT, 0);
        assert_eq!(flags('中'), CHINESE);
        assert_eq!(flags('é') & (DECOMPOSES | CHANGES_LOWER), DECOMPOSES);
        assert_eq!(flags('\u{0301}'), NONSPACING_MARK);
    }
}
