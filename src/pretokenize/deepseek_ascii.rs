//! DeepSeek V3's word pattern ([`super::deepseek`]) over stretches of ASCII, a match at a time
//! from per-class bit masks of a window of ASCII bytes ([`Kernels::classify`]): each run's end
//! is one `trailing_zeros` per 64 bytes, each decision a table lookup of a byte, not a decode
//! and two-stage lookup per character as in the exact path (which took 38 % of DeepSeek V3's
//! instructions on unseen English).
//!
//! Restricted to ASCII the pattern's alternatives are, leftmost-first:
//! 1. `[!"#…~][A-Za-z]+`: one ASCII punctuation character, then ASCII letters;
//! 2. `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`: a space, tab, control or digit, then letters;
//!    or letters alone;
//! 3. ` ?[\p{P}\p{S}]+[\r\n]*`: a space, then punctuation and symbols, then newlines;
//! 4. `\s*[\r\n]+|\s+(?!\S)|\s+`: whitespace up to its last newline; else a run but its last
//!    character (before a non-space), the whole run (at the stretch's end, or one character).
//!
//! Any decision that needs a character past the window — a run reaching its end (a letter, a
//! mark, punctuation or a space could go on in a non-ASCII character), the character after
//! the first at its end — is left to the exact path ([`Step::Exact`]), so this only ever
//! changes the speed. The classes come from the exact path's own tables, byte by byte.

use std::sync::OnceLock;

use simdtok_kernels::{ByteClassSpec, ByteClassTable, ClassSet, Kernels};

use super::ascii::{MIN_FAST, WINDOW, Window, with_masks};
use super::unicode::{L, M, NL, PS, S, Tables, utf8_len};

/// Byte classes of the window (class index = bit).
const LETTER: usize = 0;
const PUNCT: usize = 1;
const SPACE: usize = 2;
const NEWLINE: usize = 3;

/// The classes of ASCII bytes for the word pattern, and their masks' table.
pub(crate) struct AsciiWords {
    classes: ByteClassTable,
    /// The exact path's flags of each ASCII byte.
    flags: [u8; 128],
}

/// What the window tells of the match at a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The match ends here.
    Match(usize),
    /// No alternative matches here (a control character or a digit not before a letter).
    Gap,
    /// The window cannot tell: the exact path must take this position.
    Exact,
}

/// A window of ASCII bytes and its masks ([`Window`]), and what follows it.
struct Stretch<'a> {
    w: Window<'a>,
    /// No ASCII byte follows the window (the end of the stretch, or a non-ASCII byte): an
    /// ASCII-only run that reaches its end ends there.
    ascii_ends: bool,
}

/// The class set of one class, for [`Window::run_end`].
const fn only(class: usize) -> u8 {
    1 << class
}

impl AsciiWords {
    /// The fast path over the exact path's tables; `None` if their ASCII classes are not the
    /// ones this path assumes (letters exactly `A-Za-z`, no marks, newlines exactly `\r\n`,
    /// punctuation and symbols exactly ASCII punctuation, no letter that is also a space).
    pub(crate) fn get() -> Option<&'static AsciiWords> {
        static WORDS: OnceLock<Option<AsciiWords>> = OnceLock::new();
        WORDS
            .get_or_init(|| AsciiWords::new(Tables::get()))
            .as_ref()
    }

    fn new(tables: &Tables) -> Option<AsciiWords> {
        let flags: [u8; 128] = std::array::from_fn(|b| tables.char_at(&[b as u8], 0).0);
        let fits = (0..128u8).all(|b| {
            let f = flags[b as usize];
            (f & L != 0) == b.is_ascii_alphabetic()
                && f & M == 0
                && (f & NL != 0) == matches!(b, b'\r' | b'\n')
                && (f & PS != 0) == b.is_ascii_punctuation()
                && !(f & S != 0 && f & (L | PS) != 0)
        });
        if !fits {
            return None;
        }
        let class = |k: usize| move |b: u8| b < 0x80 && flags[b as usize] & k as u8 != 0;
        let spec = ByteClassSpec::empty()
            .with_class(LETTER, class(L as usize))
            .with_class(PUNCT, class(PS as usize))
            .with_class(SPACE, class(S as usize))
            .with_class(NEWLINE, class(NL as usize));
        let keep = (0..4).fold(ClassSet::EMPTY, |s, k| s | ClassSet::single(k));
        Some(AsciiWords {
            classes: ByteClassTable::new(&spec, keep),
            flags,
        })
    }

    /// Calls `piece` for each match of the word pattern in `b`, in order, as `exact(s)` (the
    /// match at `s`, `None` for none) would find them one after another from the start.
    #[inline]
    pub(crate) fn words(
        &self,
        kernels: &Kernels,
        b: &[u8],
        exact: impl Fn(usize) -> Option<usize>,
        piece: &mut impl FnMut(usize, usize),
    ) {
        with_masks(|masks| {
            let mut s = 0;
            while s < b.len() {
                if b.len() - s >= MIN_FAST && ascii_ahead(b, s) {
                    // At least `MIN_FAST` ASCII bytes, which `ascii_ahead` saw.
                    let limit = b.len().min(s + WINDOW);
                    let end = s + kernels.ascii_prefix_len(&b[s..limit]);
                    kernels.classify(&self.classes, &b[s..end], masks);
                    let stretch = Stretch {
                        w: Window {
                            b,
                            masks,
                            base: s,
                            end,
                            at_text_end: end == b.len(),
                        },
                        ascii_ends: end == b.len() || b[end] >= 0x80,
                    };
                    s = self.window(&stretch, s, piece);
                    if s >= b.len() {
                        break;
                    }
                    if s == end && b[s] < 0x80 {
                        // The window's size ended it, not the text: the next one goes on.
                        continue;
                    }
                }
                match exact(s) {
                    Some(e) => {
                        piece(s, e);
                        s = e;
                    }
                    None => s += utf8_len(b[s]),
                }
            }
        });
    }

    /// The matches of `st` from `s`, while its window can tell them; where the next one starts.
    #[inline]
    fn window(&self, st: &Stretch, mut s: usize, piece: &mut impl FnMut(usize, usize)) -> usize {
        while s < st.w.end {
            match self.step(st, s) {
                Step::Match(e) => {
                    piece(s, e);
                    s = e;
                }
                Step::Gap => s += 1,
                Step::Exact => break,
            }
        }
        s
    }

    /// The match at `s` (in the window), as far as the window tells.
    #[inline(always)]
    fn step(&self, st: &Stretch, s: usize) -> Step {
        let w = &st.w;
        let b = w.b;
        let c = b[s];
        let f = self.flags[c as usize];
        // The flags at `i > s`: `Some(0)` past the stretch's end, `None` past the window inside
        // the stretch (a character this path does not know).
        let at = |i: usize| {
            if i < w.end {
                Some(self.flags[b[i] as usize])
            } else if w.at_text_end {
                Some(0)
            } else {
                None
            }
        };
        // `[\p{L}\p{M}]+` from `i`: a non-ASCII letter or mark may follow the window.
        let letters = |i: usize| {
            let e = w.run_end::<{ only(LETTER) }>(i);
            if e == w.end && !w.at_text_end {
                Step::Exact
            } else {
                Step::Match(e)
            }
        };
        // 1. `[!"#…~][A-Za-z]+`: ASCII letters only, so a run at the window's end ends there
        // when no ASCII byte follows.
        if f & PS != 0 {
            let Some(next) = at(s + 1) else {
                return Step::Exact;
            };
            if next & L != 0 {
                let e = w.run_end::<{ only(LETTER) }>(s + 1);
                return if e == w.end && !st.ascii_ends {
                    Step::Exact
                } else {
                    Step::Match(e)
                };
            }
        }
        // 2. `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`.
        if f & (NL | L | PS) == 0 {
            let Some(next) = at(s + 1) else {
                return Step::Exact;
            };
            if next & L != 0 {
                return letters(s + 1);
            }
        }
        if f & L != 0 {
            return letters(s);
        }
        // 3. ` ?[\p{P}\p{S}]+[\r\n]*`.
        let from = match (c, at(s + 1)) {
            (b' ', None) => return Step::Exact,
            (b' ', Some(next)) if next & PS != 0 => s + 1,
            _ => s,
        };
        if self.flags[b[from] as usize] & PS != 0 {
            let e = w.run_end::<{ only(PUNCT) }>(from);
            if e == w.end && !w.at_text_end {
                return Step::Exact;
            }
            let e = w.run_end::<{ only(NEWLINE) }>(e);
            return if e == w.end && !st.ascii_ends {
                Step::Exact
            } else {
                Step::Match(e)
            };
        }
        // 4. `\s*[\r\n]+|\s+(?!\S)|\s+`.
        if f & S != 0 {
            let e = w.run_end::<{ only(SPACE) }>(s);
            if e == w.end && !w.at_text_end {
                return Step::Exact;
            }
            let newlines_end = w.last_end_in::<NEWLINE>(s, e);
            if newlines_end > s {
                return Step::Match(newlines_end);
            }
            return Step::Match(if e == w.end || e - s == 1 { e } else { e - 1 });
        }
        Step::Gap
    }
}

/// Whether the `MIN_FAST` bytes from `s` (all in `b`) are ASCII: three words tested at once,
/// so that text of another script, whose ASCII runs are a space or a comma, makes no kernel
/// call at each of them.
#[inline(always)]
fn ascii_ahead(b: &[u8], s: usize) -> bool {
    const _: () = assert!(MIN_FAST == 24);
    // Most often told by the first two (a space before a word of another script).
    if (b[s] | b[s + 1]) >= 0x80 {
        return false;
    }
    let word = |k: usize| u64::from_le_bytes(b[s + k..s + k + 8].try_into().expect("8 bytes"));
    (word(0) | word(8) | word(16)) & 0x8080_8080_8080_8080 == 0
}
