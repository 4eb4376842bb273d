//! The Unicode classes of the pre-tokenizer patterns, taken from `regex-syntax` (the parser of the
//! `regex` and `fancy-regex` crates, hence exactly the classes the reference regexes use) and
//! compiled once into a two-level table of per-character flags.
//!
//! `regex-syntax` 0.8.11 carries Unicode 16.0.0 tables (`ucd-generate … ucd-16.0.0`). Whatever
//! version of `regex-syntax` this crate is built with, the scanners and the `fancy-regex` fallback
//! (and the tests' reference regexes) read the same tables, so they cannot disagree.

use std::sync::OnceLock;

use regex_syntax::ParserBuilder;
use regex_syntax::hir::{Class, HirKind};

/// `\p{L}`: a letter (Lu, Ll, Lt, Lm, Lo).
pub(crate) const L: u8 = 1 << 0;
/// `\p{N}`: a number (Nd, Nl, No).
pub(crate) const N: u8 = 1 << 1;
/// `\s`: Unicode `White_Space`.
pub(crate) const S: u8 = 1 << 2;
/// o200k's "upper" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub(crate) const UP: u8 = 1 << 3;
/// o200k's "lower" class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub(crate) const LO: u8 = 1 << 4;
/// `\r` or `\n`.
pub(crate) const NL: u8 = 1 << 5;
/// `\p{M}`: a mark (DeepSeek's word pattern).
pub(crate) const M: u8 = 1 << 6;
/// `[\p{P}\p{S}]`: punctuation or a symbol (DeepSeek's word pattern).
pub(crate) const PS: u8 = 1 << 7;

/// Code points per second-level block.
const BLOCK_BITS: u32 = 7;
const BLOCK: usize = 1 << BLOCK_BITS;
/// One past the last code point.
const CODE_POINTS: usize = 0x11_0000;

/// Per-character flags and the case-insensitive contraction letters.
pub(crate) struct Tables {
    /// Block index of each `BLOCK` code points.
    stage1: Box<[u16]>,
    /// The distinct blocks, `BLOCK` flag bytes each.
    stage2: Box<[u8]>,
    /// Flags of the ASCII characters (the first block, kept apart for the hot path).
    pub(crate) ascii: [u8; 128],
    /// For each contraction letter (`s t r e v m l d`), every character `(?i:x)` matches.
    folds: [Vec<char>; 8],
}

/// The contraction letters, in the order of [`Tables::folds`].
const CONTRACTION_LETTERS: [char; 8] = ['s', 't', 'r', 'e', 'v', 'm', 'l', 'd'];
const F_S: usize = 0;
const F_T: usize = 1;
const F_R: usize = 2;
const F_E: usize = 3;
const F_V: usize = 4;
const F_M: usize = 5;
const F_L: usize = 6;
const F_D: usize = 7;

/// The ranges of a class expression as `regex-syntax` (Unicode mode, the default) parses it.
fn class_ranges(expr: &str) -> Vec<(u32, u32)> {
    let hir = ParserBuilder::new()
        .build()
        .parse(expr)
        .unwrap_or_else(|e| panic!("regex-syntax rejects {expr}: {e}"));
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        // A one-character class (e.g. `(?i:t)` would be a class, but be safe).
        HirKind::Literal(lit) => std::str::from_utf8(&lit.0)
            .ok()
            .and_then(|s| s.chars().next())
            .map(|c| vec![(c as u32, c as u32)])
            .unwrap_or_default(),
        other => panic!("{expr} is not a class: {other:?}"),
    }
}

impl Tables {
    /// The tables, built on first use (a few milliseconds).
    pub(crate) fn get() -> &'static Tables {
        static TABLES: OnceLock<Tables> = OnceLock::new();
        TABLES.get_or_init(Tables::build)
    }

    fn build() -> Tables {
        let mut flat = vec![0u8; CODE_POINTS];
        let classes: [(&str, u8); 8] = [
            (r"\p{L}", L),
            (r"\p{N}", N),
            (r"\s", S),
            (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UP),
            (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LO),
            (r"[\r\n]", NL),
            (r"\p{M}", M),
            (r"[\p{P}\p{S}]", PS),
        ];
        for (expr, flag) in classes {
            for (lo, hi) in class_ranges(expr) {
                for f in &mut flat[lo as usize..=hi as usize] {
                    *f |= flag;
                }
            }
        }
        let mut stage1 = Vec::with_capacity(CODE_POINTS / BLOCK);
        let mut stage2: Vec<u8> = Vec::new();
        let mut seen: std::collections::HashMap<&[u8], u16> = std::collections::HashMap::new();
        for block in flat.chunks(BLOCK) {
            let next = seen.len() as u16;
            let id = *seen.entry(block).or_insert_with(|| {
                stage2.extend_from_slice(block);
                next
            });
            stage1.push(id);
        }
        let ascii = std::array::from_fn(|i| flat[i]);
        let folds = CONTRACTION_LETTERS.map(|c| {
            class_ranges(&format!("(?i:{c})"))
                .into_iter()
                .flat_map(|(lo, hi)| (lo..=hi).filter_map(char::from_u32))
                .collect()
        });
        Tables {
            stage1: stage1.into_boxed_slice(),
            stage2: stage2.into_boxed_slice(),
            ascii,
            folds,
        }
    }

    /// The flags of a code point.
    #[inline]
    pub(crate) fn flags(&self, cp: u32) -> u8 {
        let block = self.stage1[(cp >> BLOCK_BITS) as usize] as usize;
        self.stage2[(block << BLOCK_BITS) | (cp as usize & (BLOCK - 1))]
    }

    /// The flags and byte length of the character starting at `b[i]` (`b` is valid UTF-8 and `i`
    /// a character boundary).
    #[inline(always)]
    pub(crate) fn char_at(&self, b: &[u8], i: usize) -> (u8, usize) {
        let b0 = b[i];
        if b0 < 0x80 {
            return (self.ascii[b0 as usize], 1);
        }
        let (cp, len) = decode(b, i);
        (self.flags(cp), len)
    }

    /// Whether `c` is one of the characters `(?i:x)` matches for contraction letter `x`
    /// (`fold` indexes [`CONTRACTION_LETTERS`]).
    #[inline]
    fn folds_to(&self, c: char, fold: usize) -> bool {
        self.folds[fold].contains(&c)
    }

    /// The end of the contraction `'s|'t|'re|'ve|'m|'ll|'d` starting with the apostrophe at
    /// `b[at]`, case-insensitively (with Unicode simple case folding, as `(?i:…)` matches) or not.
    #[inline]
    pub(crate) fn contraction(&self, b: &[u8], at: usize, ignore_case: bool) -> Option<usize> {
        debug_assert_eq!(b[at], b'\'');
        let (c1, l1) = char_after(b, at + 1)?;
        let is = |c: char, fold: usize| {
            if ignore_case {
                self.folds_to(c, fold)
            } else {
                c == CONTRACTION_LETTERS[fold]
            }
        };
        if is(c1, F_S) || is(c1, F_T) || is(c1, F_M) || is(c1, F_D) {
            return Some(at + 1 + l1);
        }
        let second = if is(c1, F_R) || is(c1, F_V) {
            F_E
        } else if is(c1, F_L) {
            F_L
        } else {
            return None;
        };
        let (c2, l2) = char_after(b, at + 1 + l1)?;
        is(c2, second).then_some(at + 1 + l1 + l2)
    }
}

/// The length of the UTF-8 character whose lead byte is `lead`.
#[inline]
pub(crate) fn utf8_len(lead: u8) -> usize {
    match lead {
        0..=0x7F => 1,
        0x80..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The code point and byte length of the character at `b[i]` (valid UTF-8, `i` a boundary).
#[inline(always)]
pub(crate) fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let b0 = b[i] as u32;
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (
            ((b0 & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F),
            3,
        )
    } else {
        (
            ((b0 & 0x07) << 18)
                | ((b[i + 1] as u32 & 0x3F) << 12)
                | ((b[i + 2] as u32 & 0x3F) << 6)
                | (b[i + 3] as u32 & 0x3F),
            4,
        )
    }
}

/// The character at `b[i]` and its length, `None` at the end.
#[inline]
fn char_after(b: &[u8], i: usize) -> Option<(char, usize)> {
    if i >= b.len() {
        return None;
    }
    let (cp, len) = decode(b, i);
    Some((char::from_u32(cp)?, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_ranges() {
        let t = Tables::get();
        for (expr, flag) in [
            (r"\p{L}", L),
            (r"\p{N}", N),
            (r"\s", S),
            (r"\p{M}", M),
            (r"[\p{P}\p{S}]", PS),
        ] {
            let ranges = class_ranges(expr);
            for cp in (0..CODE_POINTS as u32).step_by(7) {
                let inside = ranges.iter().any(|&(lo, hi)| lo <= cp && cp <= hi);
                assert_eq!(t.flags(cp) & flag != 0, inside, "{expr} U+{cp:04X}");
            }
        }
        assert!(t.folds[F_S].contains(&'\u{17F}'), "(?i:s) matches long s");
    }
}
