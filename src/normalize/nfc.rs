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
    let (bytes, prefixes) = (text.as_bytes(), plain_prefixes());
    let mut last_cc = 0u8;
    let mut maybe = false;
    // Only the characters of two or more bytes are visited: an ASCII character is a plain
    // starter, which only resets `last_cc`, and one came just before a lead byte exactly when
    // the byte before it is ASCII. (Visiting every character was a fifth of Qwen 3's
    // instructions on English prose with a curly quote or two in each chunk.)
    for at in CharStarts::leads(bytes) {
        if at > 0 && bytes[at - 1] < 0x80 {
            last_cc = 0;
        }
        if plain_starting(prefixes, bytes, at) {
            last_cc = 0;
            continue;
        }
        // The quick check's step for any other character.
        let ch = text[at..].chars().next().expect("a character starts here");
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

/// Calls `range(part, may_change)` for consecutive parts of `text`, in order, such that NFC of
/// `text` is the NFC of each part, concatenated — and a part with `may_change` false is NFC
/// already. A part that may change runs from a segment's start — a character of combining
/// class 0 whose quick check is Yes: NFC neither reorders across it nor composes it with what
/// comes before (only a Maybe character can be the second of a composition) — to the next
/// segment's start, when anything else is in between. So a text with one character that
/// decomposes normalizes that segment, not the whole text (random characters: a few in a
/// megabyte, where the whole text went through the composer).
pub fn parts(text: &str, mut range: impl FnMut(&str, bool)) {
    // Parts already given end at `done`; the current segment starts at `segment`; `changes`
    // says it holds more than its starter.
    let (mut done, mut segment, mut changes) = (0, 0, false);
    let bytes = text.as_bytes();
    let prefixes = plain_prefixes();
    for i in CharStarts::new(bytes) {
        if plain_starting(prefixes, bytes, i) {
            if changes {
                if done < segment {
                    range(&text[done..segment], false);
                }
                range(&text[segment..i], true);
                done = i;
                changes = false;
            }
            segment = i;
        } else {
            changes = true;
        }
    }
    if changes {
        if done < segment {
            range(&text[done..segment], false);
        }
        range(&text[segment..], true);
    } else if done < text.len() {
        range(&text[done..], false);
    }
}

/// The character starts of valid UTF-8, in order, from a mask of the bytes of each 64 that are
/// not continuation bytes: the next start does not wait for this character's length to be read
/// (a chain of dependent loads, one character at a time: random text's NFC check spent some 12 %
/// of Qwen 3's encoding in it). Or only the starts of characters of two or more bytes
/// ([`CharStarts::leads`]).
struct CharStarts<'a> {
    bytes: &'a [u8],
    /// The first byte of the block whose starts `mask` holds.
    block: usize,
    /// The block's starts not yet returned, a bit per byte.
    mask: u64,
    /// Lead bytes only.
    leads: bool,
}

impl<'a> CharStarts<'a> {
    fn new(bytes: &'a [u8]) -> CharStarts<'a> {
        CharStarts {
            bytes,
            block: 0,
            mask: starts_mask(bytes, false),
            leads: false,
        }
    }

    /// The starts of the characters that are not ASCII: their lead bytes (`0b11xx_xxxx`).
    fn leads(bytes: &'a [u8]) -> CharStarts<'a> {
        CharStarts {
            bytes,
            block: 0,
            mask: starts_mask(bytes, true),
            leads: true,
        }
    }
}

impl Iterator for CharStarts<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.block += 64;
            if self.block >= self.bytes.len() {
                return None;
            }
            self.mask = starts_mask(&self.bytes[self.block..], self.leads);
        }
        let at = self.block + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// Bit `k` set when `bytes[k]` (of the first 64) starts a character: it is not a continuation
/// byte (`0b10xx_xxxx`); with `leads`, when it starts a character of two or more bytes (a lead
/// byte, `0b11xx_xxxx`). Eight bytes at a time in a word (no branch, no target feature).
#[inline(always)]
fn starts_mask(bytes: &[u8], leads: bool) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let Some(block) = bytes.first_chunk::<64>() else {
        return bytes.iter().enumerate().fold(0, |m, (k, &b)| {
            let start = if leads { b >= 0xC0 } else { b as i8 >= -64 };
            m | (start as u64) << k
        });
    };
    let mut mask = 0;
    for (j, word) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        // Bit 7 of each byte: set for a start (bit 7 clear, or bit 6 set: `w << 1` brings
        // each byte's bit 6 to its bit 7), or for a lead (bits 7 and 6 set).
        let starts = if leads { w & w << 1 } else { !w | w << 1 } & HIGH;
        // The eight bits 7, 15, …, 63 gathered into the top byte, byte k's into bit 56 + k.
        let packed = (starts >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= packed << (8 * j);
    }
    mask
}

/// Whether the character at `bytes[i]` (valid UTF-8, `i` a boundary) is a plain starter: most
/// characters are told by their first two bytes alone, without decoding (one table, few
/// branches: random characters missed the branch predictor on every one).
#[inline(always)]
fn plain_starting(prefixes: &[u64; 64], bytes: &[u8], i: usize) -> bool {
    let b = bytes[i];
    if b < 0x80 {
        return true;
    }
    let bit = ((b & 0x3F) as usize) << 6 | (bytes[i + 1] & 0x3F) as usize;
    if prefixes[bit / 64] & (1 << (bit % 64)) != 0 {
        return true;
    }
    let (c, _) = crate::pretokenize::unicode::decode(bytes, i);
    is_plain_code_point(c as usize)
}

/// Bit `(lead & 0x3F) << 6 | (next & 0x3F)` for the first two bytes of a multi-byte UTF-8
/// character: every character that starts with them is a plain starter (a 2-byte character
/// is one character, a 3-byte prefix holds 64, a 4-byte one 4096).
fn plain_prefixes() -> &'static [u64; 64] {
    static PREFIXES: OnceLock<Box<[u64; 64]>> = OnceLock::new();
    PREFIXES.get_or_init(|| {
        let mut bits = Box::new([0u64; 64]);
        for lead in 0xC2u32..=0xF4 {
            for next in 0x80u32..=0xBF {
                let (first, count) = match lead {
                    0xC2..=0xDF => (((lead & 0x1F) << 6) | (next & 0x3F), 1),
                    0xE0..=0xEF => (((lead & 0x0F) << 12) | ((next & 0x3F) << 6), 64),
                    _ => (((lead & 0x07) << 18) | ((next & 0x3F) << 12), 4096),
                };
                // Overlong and surrogate prefixes never start valid UTF-8: left clear.
                let valid = match lead {
                    0xE0 => next >= 0xA0,
                    0xED => next < 0xA0,
                    0xF0 => next >= 0x90,
                    0xF4 => next < 0x90,
                    _ => true,
                };
                if valid && (first..first + count).all(|u| is_plain_code_point(u as usize)) {
                    let bit = ((lead & 0x3F) << 6 | (next & 0x3F)) as usize;
                    bits[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        bits
    })
}

/// Whether code point `u` is a starter (combining class 0) whose NFC quick check is Yes: the
/// quick check steps over it with nothing to remember, and NFC neither reorders nor composes
/// across it. Read from a bitmap per plane, each built the first time a character of its plane
/// asks. Planes 4 to 13 (unassigned) and 15 and 16 (private use) hold only such characters (a
/// test checks it against the crate's tables), so they need no bitmap.
#[inline]
fn is_plain_code_point(u: usize) -> bool {
    if u < 0x80 {
        return true;
    }
    let plane = match u >> 16 {
        p @ 0..=3 => p,
        14 => 4,
        _ => return true,
    };
    let bits = PLAIN_PLANES[plane].get_or_init(|| plain_starters((u >> 16) as u32));
    let i = u & 0xFFFF;
    bits[i / 64] & (1 << (i % 64)) != 0
}

/// The bitmaps of planes 0, 1, 2, 3 and 14.
static PLAIN_PLANES: [OnceLock<Box<[u64; 1024]>>; 5] = [const { OnceLock::new() }; 5];

/// Bit `c & 0xFFFF` for each character `c` of `plane` that is a plain starter.
fn plain_starters(plane: u32) -> Box<[u64; 1024]> {
    let mut bits = Box::new([0u64; 1024]);
    let base = plane << 16;
    for ch in (base..base + 0x10000).filter_map(char::from_u32) {
        if plain_by_tables(ch) {
            let i = (ch as usize) & 0xFFFF;
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
}

/// [`is_plain_code_point`] from the crate's tables.
fn plain_by_tables(ch: char) -> bool {
    canonical_combining_class(ch) == 0 && is_nfc_quick(std::iter::once(ch)) == IsNormalized::Yes
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_normalization_alignments::UnicodeNormalization;

    /// NFC of `text` part by part, with the reference crate's changes.
    fn by_parts(text: &str) -> Vec<(char, isize)> {
        let mut out = Vec::new();
        parts(text, |part, may_change| {
            if may_change {
                out.extend(part.nfc());
            } else {
                assert_eq!(
                    part.nfc().collect::<Vec<_>>(),
                    part.chars().map(|c| (c, 0)).collect::<Vec<_>>(),
                    "{part:?}"
                );
                out.extend(part.chars().map(|c| (c, 0)));
            }
        });
        out
    }

    #[test]
    fn nfc_by_parts_is_nfc_of_the_whole() {
        // Starters, combining marks of several classes (and out of order), Maybe starters
        // (Hangul vowels and trailing consonants, U+0B3E, U+0CC2, U+09BE), No characters
        // (singletons, CJK compatibility ideographs, U+0F73, U+0344), precomposed letters and
        // syllables, astral decomposing characters (U+1D15E, U+2F800, U+1109A) and plain ones.
        const ALPHABET: &[char] = &[
            'a',
            'e',
            ' ',
            'é',
            'Å',
            'o',
            '\u{300}',
            '\u{301}',
            '\u{316}',
            '\u{327}',
            '\u{345}',
            '\u{3099}',
            '\u{1100}',
            '\u{1161}',
            '\u{11A8}',
            '\u{AC00}',
            '\u{AC01}',
            '\u{0B47}',
            '\u{0B3E}',
            '\u{0CC6}',
            '\u{0CC2}',
            '\u{09C7}',
            '\u{09BE}',
            '\u{2126}',
            '\u{F900}',
            '\u{0F73}',
            '\u{0344}',
            '\u{0340}',
            'か',
            '日',
            '\u{1D15E}',
            '\u{1D165}',
            '\u{2F800}',
            '\u{11099}',
            '\u{110BA}',
            '\u{1109A}',
            '\u{1F600}',
            '\u{20000}',
            '\u{E0100}',
            '\u{10FFFD}',
        ];
        let mut g = crate::models::test_text::TestText::new(0x3C6E_F372);
        let mut split = 0;
        for _ in 0..20_000 {
            let len = 1 + g.below(12) as usize;
            let text: String = (0..len)
                .map(|_| ALPHABET[g.below(ALPHABET.len() as u32) as usize])
                .collect();
            let whole: Vec<(char, isize)> = text.nfc().collect();
            assert_eq!(by_parts(&text), whole, "{text:?}");
            let mut n = 0;
            parts(&text, |_, _| n += 1);
            split += (n > 1) as usize;
        }
        assert!(split > 5_000, "{split}");
        assert!(by_parts("").is_empty());
        // Texts of several 64-byte blocks (the character starts are found a block at a time),
        // mostly plain with a few of anything, and the quick check on them.
        for _ in 0..2_000 {
            let len = 1 + g.below(200) as usize;
            let text: String = (0..len)
                .map(|_| match g.below(8) {
                    0 => ALPHABET[g.below(ALPHABET.len() as u32) as usize],
                    1 => 'x',
                    2 => '日',
                    _ => ALPHABET[35 + g.below(5) as usize],
                })
                .collect();
            let whole: Vec<(char, isize)> = text.nfc().collect();
            assert_eq!(by_parts(&text), whole, "{text:?}");
            let quick = text.is_ascii() || is_nfc_quick(text.chars()) == IsNormalized::Yes;
            assert_eq!(is_nfc_already(&text), quick, "{text:?}");
        }
    }

    #[test]
    fn char_starts_are_the_char_indices() {
        let mut g = crate::models::test_text::TestText::new(0x5747_2753);
        for len in (0..300).chain([1000, 4096]) {
            let text: String = (0..len)
                .map(|_| {
                    // Half ASCII, so that the lead bytes come in runs and alone.
                    let c = match g.below(2) {
                        0 => g.below(0x80),
                        _ => g.below(0x11_0000),
                    };
                    char::from_u32(c).unwrap_or('é')
                })
                .collect();
            let starts: Vec<usize> = CharStarts::new(text.as_bytes()).collect();
            let want: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            assert_eq!(starts, want, "{len}");
            let leads: Vec<usize> = CharStarts::leads(text.as_bytes()).collect();
            let want: Vec<usize> = text
                .char_indices()
                .filter(|(_, c)| !c.is_ascii())
                .map(|(i, _)| i)
                .collect();
            assert_eq!(leads, want, "{len}");
        }
    }

    #[test]
    fn the_two_byte_prefixes_tell_what_decoding_tells() {
        let prefixes = plain_prefixes();
        let mut buf = [0u8; 4];
        let mut told = 0;
        for ch in (0x80..0x11_0000u32).filter_map(char::from_u32) {
            let bytes = ch.encode_utf8(&mut buf).as_bytes();
            let plain = plain_starting(prefixes, bytes, 0);
            assert_eq!(plain, plain_by_tables(ch), "{:X}", ch as u32);
            let bit = ((bytes[0] & 0x3F) as usize) << 6 | (bytes[1] & 0x3F) as usize;
            told += (prefixes[bit / 64] & (1 << (bit % 64)) != 0) as usize;
        }
        // Most characters are told by their prefix.
        assert!(told > 900_000, "{told}");
    }

    #[test]
    fn planes_without_a_bitmap_hold_only_plain_starters() {
        let unmapped = (0x4_0000..0xE_0000u32).chain(0xF_0000..0x11_0000);
        for ch in unmapped.filter_map(char::from_u32) {
            assert!(plain_by_tables(ch), "{:X}", ch as u32);
        }
        for ch in [
            'a',
            '日',
            '\u{300}',
            '\u{1161}',
            '\u{1D15E}',
            '\u{2F800}',
            '\u{E0100}',
        ] {
            assert_eq!(
                is_plain_code_point(ch as usize),
                plain_by_tables(ch),
                "{ch:?}"
            );
        }
    }

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
            // Marks whose quick check is Yes, out of order (230 then 220) unless a starter
            // stands between them, ASCII or not, a block apart or not.
            "\u{483}\u{316}",
            "\u{483}x\u{316}",
            "\u{483}日\u{316}",
            &format!("\u{483}{}\u{316}", "x".repeat(70)),
            &format!("\u{483}{}\u{483}\u{316}", "x".repeat(70)),
        ] {
            assert_eq!(is_nfc_already(t), reference(t), "{t:?}");
        }
    }
}
