//! The three `Split` regexes of DeepSeek V3's pre-tokenizer, by hand (also found alone in other
//! files: `\p{N}{1,k}`; the word pattern in Arcee's AFMoE files):
//! - `\p{N}{1,k}`: numbers, in groups of at most `k` characters;
//! - `[一-龥぀-ゟ゠-ヿ]+`: runs of CJK ideographs (U+4E00–U+9FA5), hiragana and katakana;
//! - the word pattern
//!   `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`.
//!
//! Unlike the patterns of [`super::scan`], these do not tile the text: a digit or a control
//! character matches no alternative of the word pattern, and most text matches neither of the
//! others. So each function reports the matches alone, leftmost-first as the regex finds them
//! (the next match starts at the first position where some alternative matches), and the
//! `Split` stage around it ([`super::chain`]) keeps the gaps. Through `fancy-regex`, the word
//! pattern's look-ahead made DeepSeek's layout run at about 26 MB/s.

use std::sync::OnceLock;

use simdtok_kernels::{ByteSet, Kernels};

use super::ascii::MIN_FAST;
use super::deepseek_ascii::AsciiWords;
use super::scan::Scanner;
use super::unicode::utf8_len;
use super::unicode::{L, M, N, NL, PS, S};

/// The bytes a number can start with: ASCII digits, and any lead byte (other numbers are not
/// ASCII). Skipping to the next of them is one kernel call over ASCII text.
fn number_starts() -> &'static ByteSet {
    static SET: OnceLock<ByteSet> = OnceLock::new();
    SET.get_or_init(|| ByteSet::from_fn(|b| b.is_ascii_digit() || b >= 0x80))
}

/// The lead bytes of the characters of `[一-龥぀-ゟ゠-ヿ]` (never a continuation byte).
fn cjk_leads() -> &'static ByteSet {
    static SET: OnceLock<ByteSet> = OnceLock::new();
    SET.get_or_init(|| ByteSet::from_fn(|b| (0xE3..=0xE9).contains(&b)))
}

/// Calls `piece` for each match of `\p{N}{1,k}` in `b`, `k` the scanner's group size: every run
/// of numbers, cut into groups of `k` characters from its start (the scanners' own digit rule).
pub(crate) fn numbers(
    kernels: &Kernels,
    sc: &Scanner,
    b: &[u8],
    piece: &mut impl FnMut(usize, usize),
) {
    let mut i = 0;
    while i < b.len() {
        // ASCII other than digits: skipped by the kernel (from a boundary, the first byte of
        // the set is a digit or a lead byte).
        if b[i] < 0x80 && !b[i].is_ascii_digit() {
            match kernels.find_in(number_starts(), b, i) {
                Some(next) => i = next,
                None => return,
            }
        }
        let (f, len) = sc.tables.char_at(b, i);
        if f & N == 0 {
            i += len;
            continue;
        }
        let e = sc.digits_end(b, i);
        piece(i, e);
        i = e;
    }
}

/// The first and last UTF-8 encodings, as 24-bit numbers, of the code points of
/// `[一-龥぀-ゟ゠-ヿ]`: U+3040–U+30FF (hiragana and katakana, contiguous) and U+4E00–U+9FA5,
/// all of three bytes with lead bytes `E3`..`E9`. For characters of three bytes, comparing their
/// bytes compares their code points.
const KANA_UTF8: (u32, u32) = (0xE3_81_80, 0xE3_83_BF);
const IDEOGRAPHS_UTF8: (u32, u32) = (0xE4_B8_80, 0xE9_BE_A5);

/// At `b[i]` (a boundary of valid UTF-8): `Some(true)` for a character of the ideographs' range,
/// `Some(false)` for one of the kana range, `None` for any other.
#[inline]
fn cjk_kind(b: &[u8], i: usize) -> Option<bool> {
    let lead = b[i];
    if !(0xE3..=0xE9).contains(&lead) {
        return None;
    }
    let v = (lead as u32) << 16 | (b[i + 1] as u32) << 8 | b[i + 2] as u32;
    if (IDEOGRAPHS_UTF8.0..=IDEOGRAPHS_UTF8.1).contains(&v) {
        Some(true)
    } else {
        (KANA_UTF8.0..=KANA_UTF8.1).contains(&v).then_some(false)
    }
}

/// Whether the character at `b[i]` (a boundary) is in `[一-龥぀-ゟ゠-ヿ]` (then of 3 bytes).
#[inline]
fn cjk_at(b: &[u8], i: usize) -> bool {
    cjk_kind(b, i).is_some()
}

/// Calls `piece` for each match of `[一-龥぀-ゟ゠-ヿ]+` in `b`.
pub(crate) fn cjk_runs(kernels: &Kernels, b: &[u8], piece: &mut impl FnMut(usize, usize)) {
    let mut i = 0;
    while i < b.len() {
        if b[i] < 0x80 {
            match kernels.find_in(cjk_leads(), b, i) {
                Some(next) => i = next,
                None => return,
            }
        }
        if !cjk_at(b, i) {
            i += utf8_len(b[i]);
            continue;
        }
        let start = i;
        while i < b.len() && cjk_at(b, i) {
            i += 3;
        }
        piece(start, i);
    }
}

/// Calls `piece` for each match of DeepSeek's word pattern in `b`: its ASCII stretches through
/// the masks of [`AsciiWords`], the rest (and what they cannot tell) by [`word_at`].
pub(crate) fn words(
    kernels: &Kernels,
    sc: &Scanner,
    b: &[u8],
    piece: &mut impl FnMut(usize, usize),
) {
    match AsciiWords::get() {
        Some(fast) if b.len() >= MIN_FAST => fast.words(kernels, b, |s| word_at(sc, b, s), piece),
        _ => exact_words(sc, b, piece),
    }
}

/// [`words`] by [`word_at`] alone.
fn exact_words(sc: &Scanner, b: &[u8], piece: &mut impl FnMut(usize, usize)) {
    let mut s = 0;
    while s < b.len() {
        match word_at(sc, b, s) {
            Some(e) => {
                piece(s, e);
                s = e;
            }
            None => s += utf8_len(b[s]),
        }
    }
}

/// The end of the run of `[\p{L}\p{M}]` from `i`: ASCII letters a byte at a time (most of a
/// prose word), then any other character through the tables.
#[inline]
fn letters_end(sc: &Scanner, b: &[u8], i: usize) -> usize {
    let ascii = ascii_letters_end(b, i);
    if ascii < b.len() && b[ascii] >= 0x80 {
        sc.run_end(b, ascii, L | M)
    } else {
        ascii
    }
}

/// The end of the run of ASCII letters from `i`: eight bytes per step (one mispredicted branch
/// per word, not a compare per byte), then the last few bytes one at a time.
#[inline]
fn ascii_letters_end(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // Each byte lowercased and cut to seven bits, so the sums below never carry into the
        // next byte; a byte is a letter when it is ASCII and that value is in `a..=z`.
        let y = (x | (ONES * 0x20)) & !HIGH;
        let at_least_a = y + ONES * (0x80 - b'a' as u64);
        let above_z = y + ONES * (0x80 - b'z' as u64 - 1);
        let letters = at_least_a & !above_z & !x & HIGH;
        let others = !letters & HIGH;
        if others != 0 {
            return i + (others.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i].is_ascii_alphabetic() {
        i += 1;
    }
    i
}

/// The end of the word pattern's match at `s`, `None` when no alternative matches there.
#[inline]
fn word_at(sc: &Scanner, b: &[u8], s: usize) -> Option<usize> {
    let c = b[s];
    // `[!"#…~][A-Za-z]+`: the class is exactly ASCII punctuation.
    if c.is_ascii_punctuation() && b.get(s + 1).is_some_and(u8::is_ascii_alphabetic) {
        let e = b[s + 1..]
            .iter()
            .position(|x| !x.is_ascii_alphabetic())
            .map_or(b.len(), |k| s + 1 + k);
        return Some(e);
    }
    let (f, len) = sc.tables.char_at(b, s);
    // `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`, with the optional character first (a mark is both
    // that character and a letter-or-mark: either way the run from `s` is the match).
    if f & (NL | L | PS) == 0 && sc.flags_at(b, s + len).0 & (L | M) != 0 {
        return Some(letters_end(sc, b, s + len));
    }
    if f & (L | M) != 0 {
        return Some(letters_end(sc, b, s));
    }
    // ` ?[\p{P}\p{S}]+[\r\n]*`
    let from = if c == b' ' && sc.flags_at(b, s + 1).0 & PS != 0 {
        s + 1
    } else {
        s
    };
    if sc.flags_at(b, from).0 & PS != 0 {
        let e = sc.run_end(b, from, PS);
        return Some(sc.newlines_end(b, e, false));
    }
    // `\s*[\r\n]+|\s+(?!\S)|\s+`
    if f & S != 0 {
        return Some(sc.whitespace(b, s, true));
    }
    None
}

/// DeepSeek V3's whole pre-tokenizer: its three `Split`s (`\p{N}{1,k}`, the CJK runs, the word
/// pattern), each `Isolated` and none inverted, in one pass over the text instead of one pass
/// per stage over the pieces of the stage before ([`super::chain`]: three passes and two piece
/// lists, 39 % of the instructions of unseen Chinese).
///
/// The same pieces, because the stages' matches do not interact:
/// - No character is both a number and in the CJK ranges (the ranges hold letters, marks,
///   kana punctuation and unassigned code points; checked against the tables in the tests), so
///   the second stage cuts nothing out of a number and sees every CJK run whole: the number
///   groups and the maximal CJK runs are found by one scan, in text order.
/// - The word pattern leaves a number group whole (no alternative matches inside a run of
///   numbers: the letter alternative wants a letter or mark after its optional first
///   character), and a CJK run of letters and marks whole (`[\p{L}\p{M}]+` from its first
///   character); any other CJK run (one with `・`, `゠`, `゛`, an unassigned code point) goes
///   through the word pattern, as the third stage would take it.
/// - Between them, the word pattern runs on each stretch alone, its end the stretch's end (as
///   the third stage sees a piece of the second), its gaps kept as pieces.
pub(crate) struct Layout {
    kernels: &'static Kernels,
    /// The numbers' scanner (its `digits` is the `k` of `\p{N}{1,k}`); the word pattern reads
    /// only its tables and runs.
    scanner: Scanner,
    /// Whether every ideograph of U+4E00–U+9FA5 is a letter or mark in the tables (true of
    /// every Unicode version since 1.1): a run of them then needs no lookups.
    ideographs_are_letters: bool,
}

impl std::fmt::Debug for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layout")
            .field("digits", &self.scanner.digits)
            .field("tier", &self.kernels.tier())
            .finish()
    }
}

impl Layout {
    /// The layout whose numbers `scanner` groups (its `digits`).
    pub(crate) fn new(kernels: &'static Kernels, scanner: Scanner) -> Layout {
        let letters = |cp: u32| scanner.tables.flags(cp) & (L | M) != 0;
        Layout {
            kernels,
            scanner,
            ideographs_are_letters: (0x4E00..=0x9FA5).all(letters),
        }
    }

    /// Calls `piece` for each piece of `b`, in order (they tile it).
    pub(crate) fn pieces(&self, b: &[u8], piece: &mut impl FnMut(usize, usize)) {
        let sc = &self.scanner;
        // Where the stretch the word pattern has not yet seen starts.
        let mut gap = 0;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c < 0x80 && !c.is_ascii_digit() {
                // From a boundary, the next digit or lead byte.
                match self.kernels.find_in(number_starts(), b, i) {
                    Some(next) => i = next,
                    None => break,
                }
                continue;
            }
            if let Some(plain) = self.cjk_at(b, i) {
                let start = i;
                let mut plain = plain;
                i += 3;
                while i < b.len() {
                    match self.cjk_at(b, i) {
                        Some(p) => plain &= p,
                        None => break,
                    }
                    i += 3;
                }
                self.words(b, gap, start, piece);
                if plain {
                    piece(start, i);
                } else {
                    self.words(b, start, i, piece);
                }
                gap = i;
                continue;
            }
            let (f, len) = sc.tables.char_at(b, i);
            if f & N == 0 {
                i += len;
                continue;
            }
            let e = sc.digits_end(b, i);
            self.words(b, gap, i, piece);
            piece(i, e);
            gap = e;
            i = e;
        }
        self.words(b, gap, b.len(), piece);
    }

    /// At a character of `[一-龥぀-ゟ゠-ヿ]` (a boundary of valid UTF-8): whether it is a letter or mark
    /// (`Some(true)`) or another character of the ranges (`Some(false)`); `None` for any
    /// other character.
    #[inline]
    fn cjk_at(&self, b: &[u8], i: usize) -> Option<bool> {
        let ideograph = cjk_kind(b, i)?;
        if ideograph && self.ideographs_are_letters {
            return Some(true);
        }
        let (f, _) = self.scanner.tables.char_at(b, i);
        Some(f & (L | M) != 0)
    }

    /// The word pattern's matches in `b[from..to]` (its end the stretch's end, [`words`]), and
    /// the gaps between them, as pieces.
    #[inline]
    fn words(&self, b: &[u8], from: usize, to: usize, piece: &mut impl FnMut(usize, usize)) {
        if from == to {
            return;
        }
        let mut done = from;
        words(self.kernels, &self.scanner, &b[from..to], &mut |s, e| {
            if done < from + s {
                piece(done, from + s);
            }
            piece(from + s, from + e);
            done = from + e;
        });
        if done < to {
            piece(done, to);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_text::TestText;
    use crate::pretokenize::Pattern;
    use simdtok_kernels::Tier;

    /// The matches that `find` reports, in order.
    fn matches(find: impl FnOnce(&mut dyn FnMut(usize, usize))) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        find(&mut |s, e| out.push((s, e)));
        out
    }

    /// Texts of the characters the word pattern's decisions turn on, mostly ASCII: letters,
    /// punctuation and symbols, every kind of ASCII space, `\r\n`, controls, digits, and the
    /// non-ASCII characters that continue a run (a letter, a mark, punctuation, NBSP, U+3000)
    /// or end one (an ideograph, an emoji).
    fn hostile(g: &mut TestText, chars: usize) -> String {
        const PARTS: &[&str] = &[
            "a", "Z", "word", " the", "'s", ".", "...", "-", "|", "+", "$", "\"", " ", "  ", "\t",
            "\x0B", "\x0C", "\r", "\n", "\r\n", " \n", "\x01", "\x7F", "7", "é", "\u{301}", "—",
            "\u{a0}", "\u{3000}", "中", "🙂", "x", "(", ")", ":", "\x1C",
        ];
        (0..chars)
            .map(|_| PARTS[g.below(PARTS.len() as u32) as usize])
            .collect()
    }

    #[test]
    fn ascii_windows_match_the_exact_path() {
        let sc = Pattern::DeepSeekWords.scanner();
        let mut g = TestText::new(0xD5EE_0001);
        let tiers = [Tier::Scalar, Tier::Sse42, Tier::Avx2, Tier::Neon];
        let mut texts: Vec<String> = (0..3000)
            .map(|round| hostile(&mut g, 1 + round % 90))
            .collect();
        // Windows cut by their size (8 KiB of ASCII), and by a run across the cut.
        texts.push("ab ".repeat(5000));
        texts.push(format!("{}{}", " ".repeat(8191), "word".repeat(10)));
        texts.push(format!("{}{}", "x".repeat(8190), "----".repeat(10)));
        texts.push(format!("{}\u{a0}\u{a0}z", " ".repeat(40)));
        for text in &texts {
            let b = text.as_bytes();
            let want = matches(|p| exact_words(&sc, b, &mut |s, e| p(s, e)));
            for tier in tiers {
                let Some(kernels) = Kernels::for_tier(tier) else {
                    continue;
                };
                let got = matches(|p| words(kernels, &sc, b, &mut |s, e| p(s, e)));
                assert_eq!(got, want, "{tier:?} {text:?}");
            }
        }
    }

    #[test]
    fn the_fast_path_serves_the_shipped_tables() {
        assert!(AsciiWords::get().is_some());
    }

    #[test]
    fn ascii_letter_runs_end_where_a_byte_loop_says() {
        // Every byte value after runs of every length around the word size, at every offset.
        for other in 0..=255u8 {
            for run in 0..20 {
                for at in 0..3 {
                    let mut b = vec![b'Q'; at];
                    b.extend((0..run).map(|k| b"aZmzAqby"[k % 8]));
                    b.push(other);
                    b.extend_from_slice(b"xyzXYZ");
                    let want = b[at..]
                        .iter()
                        .position(|x| !x.is_ascii_alphabetic())
                        .map_or(b.len(), |k| at + k);
                    assert_eq!(ascii_letters_end(&b, at), want, "{other} {run} {at}");
                    // … and at the end of the slice.
                    let cut = &b[..at + run];
                    assert_eq!(ascii_letters_end(cut, at), at + run, "{run} {at}");
                }
            }
        }
    }
}
