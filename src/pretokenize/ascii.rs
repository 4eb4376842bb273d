//! The split loop, with a fast path for ASCII stretches: the kernels classify a window of ASCII
//! bytes into per-class bit masks once ([`Kernels::classify`]), and each token's run is then found
//! with one `trailing_zeros` per 64 bytes instead of a byte-by-byte walk. The token decisions are
//! those of [`super::scan`] restricted to ASCII; any decision that would need a character past the
//! window (a non-ASCII character, or the window's end) is left to the scanner, which is exact
//! everywhere, so the fast path only ever changes the speed.

use std::cell::RefCell;

use simdtok_kernels::{BlockMasks, ByteClassSpec, ByteClassTable, ClassSet, Kernels};

use super::scan::{Kind, Scanner};

/// Byte classes of the ASCII window (class index = bit).
const LOWER: usize = 0;
const UPPER: usize = 1;
const DIGIT: usize = 2;
/// ASCII `\s`: `\t \n \x0B \x0C \r` and space.
const SPACE: usize = 3;
const NEWLINE: usize = 4;
/// Neither letter, digit nor space (punctuation, symbols, other controls).
const OTHER: usize = 5;

const LETTER_SET: u8 = (1 << LOWER) | (1 << UPPER);

/// The most bytes classified at once (the masks of one window: `WINDOW` bytes per thread).
const WINDOW: usize = 8192;
/// ASCII stretches shorter than this go through the scanner (classification would not pay).
const MIN_FAST: usize = 24;

thread_local! {
    static MASKS: RefCell<Vec<BlockMasks>> = const { RefCell::new(Vec::new()) };
}

/// The ASCII fast path of one scanner.
pub(crate) struct Fast {
    classes: ByteClassTable,
    /// The class of each ASCII byte, as a `Cls`.
    cls: [Cls; 128],
}

/// What a byte starts, for the token decisions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cls {
    Lower,
    Upper,
    Digit,
    /// Space, `\t`, `\x0B`, `\x0C`: whitespace that may prefix a letter token.
    Space,
    /// `\r`, `\n`.
    Newline,
    /// `'`.
    Quote,
    Other,
}

/// Where the fast path stopped.
enum Stop {
    /// The window is done; the next token starts here.
    Done(usize),
    /// The token at this position needs the scanner.
    Scanner(usize),
}

/// The masks of one window and its place in the text.
struct Window<'a> {
    /// The whole text.
    b: &'a [u8],
    masks: &'a [BlockMasks],
    /// The window's bytes are `b[base..end]`.
    base: usize,
    end: usize,
    /// `end` is the end of the text (else the byte at `end` is unknown to the fast path).
    at_text_end: bool,
}

impl Window<'_> {
    /// The first position at or after `from` (absolute, `from <= end`) whose byte is in none of
    /// the classes of `SET`; `end` when the run reaches the window's end.
    #[inline(always)]
    fn run_end<const SET: u8>(&self, from: usize) -> usize {
        let rel = from - self.base;
        let mut block = rel >> 6;
        if block >= self.masks.len() {
            return self.end;
        }
        let mut m = !union::<SET>(&self.masks[block]) & (!0u64 << (rel & 63));
        loop {
            if m != 0 {
                // Bits past the end are clear in every class, so this never passes `end`.
                return self.base + block * 64 + m.trailing_zeros() as usize;
            }
            block += 1;
            if block == self.masks.len() {
                return self.end;
            }
            m = !union::<SET>(&self.masks[block]);
        }
    }

    /// The end of the last newline in `b[from..to]` (`from` when there is none).
    #[inline]
    fn last_newline_end(&self, from: usize, to: usize) -> usize {
        let (lo, hi) = (from - self.base, to - self.base);
        let mut block = (hi - 1) >> 6;
        loop {
            let mut m = self.masks[block].0[NEWLINE];
            let start = block * 64;
            if hi - start < 64 {
                m &= (1u64 << (hi - start)) - 1;
            }
            if lo > start {
                m &= !0u64 << (lo - start);
            }
            if m != 0 {
                return self.base + start + 64 - m.leading_zeros() as usize;
            }
            if start <= lo {
                return from;
            }
            block -= 1;
        }
    }
}

#[inline(always)]
fn union<const SET: u8>(m: &BlockMasks) -> u64 {
    let mut u = 0;
    for k in 0..8 {
        if SET & (1 << k) != 0 {
            u |= m.0[k];
        }
    }
    u
}

impl Fast {
    pub(crate) fn new(_scanner: Scanner) -> Fast {
        let spec = ByteClassSpec::empty()
            .with_class(LOWER, |b| b.is_ascii_lowercase())
            .with_class(UPPER, |b| b.is_ascii_uppercase())
            .with_class(DIGIT, |b| b.is_ascii_digit())
            .with_class(SPACE, |b| matches!(b, b'\t'..=b'\r' | b' '))
            .with_class(NEWLINE, |b| matches!(b, b'\r' | b'\n'))
            .with_class(OTHER, |b| {
                b < 0x80 && !b.is_ascii_alphanumeric() && !matches!(b, b'\t'..=b'\r' | b' ')
            });
        let keep = (0..6).fold(ClassSet::EMPTY, |s, k| s | ClassSet::single(k));
        let cls = std::array::from_fn(|b| match b as u8 {
            b'a'..=b'z' => Cls::Lower,
            b'A'..=b'Z' => Cls::Upper,
            b'0'..=b'9' => Cls::Digit,
            b'\r' | b'\n' => Cls::Newline,
            b'\t' | b'\x0B' | b'\x0C' | b' ' => Cls::Space,
            b'\'' => Cls::Quote,
            _ => Cls::Other,
        });
        Fast {
            classes: ByteClassTable::new(&spec, keep),
            cls,
        }
    }

    /// Calls `piece` for every token of `text`, in order.
    pub(crate) fn split(
        &self,
        kernels: &'static Kernels,
        scanner: &Scanner,
        text: &str,
        piece: &mut impl FnMut(usize, usize),
    ) {
        // The masks buffer is taken out of the thread-local for the call (a `piece` that splits
        // again on this thread gets a fresh one instead of a borrow panic).
        let mut masks = MASKS.with(|m| m.try_borrow_mut().map(|mut m| std::mem::take(&mut *m)));
        let mut local = Vec::new();
        let buf = match &mut masks {
            Ok(m) => m,
            Err(_) => &mut local,
        };
        match scanner.kind {
            Kind::Gpt2 => self.split_with::<GPT2>(kernels, scanner, text, buf, piece),
            Kind::Cl100k => self.split_with::<CL100K>(kernels, scanner, text, buf, piece),
            Kind::O200k => self.split_with::<O200K>(kernels, scanner, text, buf, piece),
        }
        if let Ok(m) = masks {
            MASKS.with(|cell| {
                if let Ok(mut cell) = cell.try_borrow_mut() {
                    *cell = m;
                }
            });
        }
    }

    fn split_with<const K: u8>(
        &self,
        kernels: &'static Kernels,
        scanner: &Scanner,
        text: &str,
        masks: &mut Vec<BlockMasks>,
        piece: &mut impl FnMut(usize, usize),
    ) {
        let b = text.as_bytes();
        let mut s = 0;
        while s < b.len() {
            if b[s] < 0x80 {
                let limit = b.len().min(s + WINDOW);
                let ascii = kernels.ascii_prefix_len(&b[s..limit]);
                if ascii >= MIN_FAST || s + ascii == b.len() {
                    let end = s + ascii;
                    kernels.classify(&self.classes, &b[s..end], masks);
                    let window = Window {
                        b,
                        masks,
                        base: s,
                        end,
                        at_text_end: end == b.len(),
                    };
                    match self.window::<K>(scanner, &window, piece) {
                        Stop::Done(t) => {
                            s = t;
                            continue;
                        }
                        Stop::Scanner(t) => s = t,
                    }
                    if s >= b.len() {
                        break;
                    }
                }
            }
            let e = scanner.next(b, s);
            piece(s, e);
            s = e;
        }
    }

    /// Tokens from `w.base` while every decision stays inside the window.
    #[inline(always)]
    fn window<const K: u8>(
        &self,
        sc: &Scanner,
        w: &Window,
        piece: &mut impl FnMut(usize, usize),
    ) -> Stop {
        let (b, end) = (w.b, w.end);
        // The byte at `i` if it is in the window; `None` past it (the text's end, or unknown).
        let class_at = |i: usize| -> Option<Cls> {
            if i < end {
                Some(self.cls[(b[i] & 0x7F) as usize])
            } else {
                None
            }
        };
        // A run that reaches the window's end is only over if the text is.
        let open = |e: usize| e == end && !w.at_text_end;
        let mut t = w.base;
        while t < end {
            let c = self.cls[(b[t] & 0x7F) as usize];
            let next = class_at(t + 1);
            if t + 1 == end && !w.at_text_end {
                return Stop::Scanner(t);
            }
            let e = match K {
                GPT2 => {
                    if c == Cls::Quote {
                        match ascii_contraction(b, t, end, w.at_text_end, false) {
                            Contraction::Yes(e) => {
                                piece(t, e);
                                t = e;
                                continue;
                            }
                            Contraction::Unknown => return Stop::Scanner(t),
                            Contraction::No => {}
                        }
                    }
                    // ` ?X+`
                    let (c, from) = match (b[t], next) {
                        (b' ', Some(n)) if !matches!(n, Cls::Space | Cls::Newline) => (n, t + 1),
                        _ => (c, t),
                    };
                    let e = match c {
                        Cls::Lower | Cls::Upper => w.run_end::<LETTER_SET>(from + 1),
                        Cls::Digit => w.run_end::<{ 1 << DIGIT }>(from + 1),
                        Cls::Quote | Cls::Other => w.run_end::<{ 1 << OTHER }>(from + 1),
                        Cls::Space | Cls::Newline => match self.whitespace::<false>(sc, w, t) {
                            Some(e) => e,
                            None => return Stop::Scanner(t),
                        },
                    };
                    if open(e) {
                        return Stop::Scanner(t);
                    }
                    e
                }
                CL100K => {
                    if c == Cls::Quote {
                        match ascii_contraction(b, t, end, w.at_text_end, true) {
                            Contraction::Yes(e) => {
                                piece(t, e);
                                t = e;
                                continue;
                            }
                            Contraction::Unknown => return Stop::Scanner(t),
                            Contraction::No => {}
                        }
                    }
                    let e = match c {
                        Cls::Lower | Cls::Upper => w.run_end::<LETTER_SET>(t + 1),
                        Cls::Digit => digits_end(b, t, end, sc.digits),
                        Cls::Newline => match self.whitespace::<true>(sc, w, t) {
                            Some(e) => e,
                            None => return Stop::Scanner(t),
                        },
                        Cls::Space | Cls::Quote | Cls::Other => match next {
                            // `[^\r\n\p{L}\p{N}]?\p{L}+`
                            Some(Cls::Lower | Cls::Upper) => w.run_end::<LETTER_SET>(t + 2),
                            // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
                            Some(Cls::Quote | Cls::Other) if c != Cls::Space || b[t] == b' ' => {
                                let o = w.run_end::<{ 1 << OTHER }>(t + 1);
                                if open(o) {
                                    return Stop::Scanner(t);
                                }
                                w.run_end::<{ 1 << NEWLINE }>(o)
                            }
                            _ if c != Cls::Space => w.run_end::<{ 1 << NEWLINE }>(t + 1),
                            _ => match self.whitespace::<true>(sc, w, t) {
                                Some(e) => e,
                                None => return Stop::Scanner(t),
                            },
                        },
                    };
                    if open(e) {
                        return Stop::Scanner(t);
                    }
                    e
                }
                _ => {
                    // o200k
                    let e = match c {
                        Cls::Lower | Cls::Upper => self.o200k_letters(w, t),
                        Cls::Digit => digits_end(b, t, end, 3),
                        Cls::Newline => match self.whitespace::<true>(sc, w, t) {
                            Some(e) => e,
                            None => return Stop::Scanner(t),
                        },
                        Cls::Space | Cls::Quote | Cls::Other => match next {
                            Some(Cls::Lower | Cls::Upper) => self.o200k_letters(w, t + 1),
                            // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
                            Some(Cls::Quote | Cls::Other) if c != Cls::Space || b[t] == b' ' => {
                                let o = w.run_end::<{ 1 << OTHER }>(t + 1);
                                if open(o) {
                                    return Stop::Scanner(t);
                                }
                                newlines_or_slashes(b, o, end)
                            }
                            _ if c != Cls::Space => newlines_or_slashes(b, t + 1, end),
                            _ => match self.whitespace::<true>(sc, w, t) {
                                Some(e) => e,
                                None => return Stop::Scanner(t),
                            },
                        },
                    };
                    if e == usize::MAX || open(e) {
                        return Stop::Scanner(t);
                    }
                    e
                }
            };
            piece(t, e);
            t = e;
        }
        Stop::Done(t)
    }

    /// o200k's letter alternatives on ASCII (no Lm, Lo or M there): `[A-Z]*[a-z]*` (at least
    /// one letter) and a case-insensitive contraction; `usize::MAX` when the scanner must decide.
    #[inline(always)]
    fn o200k_letters(&self, w: &Window, x: usize) -> usize {
        let u = w.run_end::<{ 1 << UPPER }>(x);
        let e = w.run_end::<{ 1 << LOWER }>(u);
        if e == w.end {
            return if w.at_text_end { e } else { usize::MAX };
        }
        if w.b[e] != b'\'' {
            return e;
        }
        match ascii_contraction(w.b, e, w.end, w.at_text_end, true) {
            Contraction::Yes(c) => c,
            Contraction::No => e,
            Contraction::Unknown => usize::MAX,
        }
    }

    /// The whitespace alternatives at `t` (`\s*[\r\n]+` when `NEWLINES`, then `\s+(?!\S)`,
    /// `\s+`); `None` when the run reaches the window's end inside the text.
    #[inline(always)]
    fn whitespace<const NEWLINES: bool>(
        &self,
        sc: &Scanner,
        w: &Window,
        t: usize,
    ) -> Option<usize> {
        let q = w.run_end::<{ 1 << SPACE }>(t + 1);
        if q == w.end && !w.at_text_end {
            return None;
        }
        if sc.whole_trailing_space && q == w.end {
            return Some(q);
        }
        if NEWLINES {
            let nl = w.last_newline_end(t, q);
            if nl > t {
                return Some(nl);
            }
        }
        Some(if q == w.end || q - t == 1 { q } else { q - 1 })
    }
}

/// The end of `\p{N}{1,digits}` at the digit `b[t]` (ASCII bytes up to `end`; reaching `end`
/// leaves the decision open).
#[inline(always)]
fn digits_end(b: &[u8], t: usize, end: usize, digits: usize) -> usize {
    let mut e = t + 1;
    while e < end && e - t < digits && b[e].is_ascii_digit() {
        e += 1;
    }
    e
}

/// The end of `[\r\n/]*` at `i` (ASCII bytes up to `end`).
#[inline(always)]
fn newlines_or_slashes(b: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && matches!(b[i], b'\r' | b'\n' | b'/') {
        i += 1;
    }
    i
}

const GPT2: u8 = 0;
const CL100K: u8 = 1;
const O200K: u8 = 2;

enum Contraction {
    Yes(usize),
    No,
    /// A character past the window decides.
    Unknown,
}

/// The contraction at the apostrophe `b[t]`, on ASCII bytes `b[..end]`.
#[inline(always)]
fn ascii_contraction(
    b: &[u8],
    t: usize,
    end: usize,
    at_text_end: bool,
    ignore_case: bool,
) -> Contraction {
    let fold = |c: u8| {
        if ignore_case {
            c.to_ascii_lowercase()
        } else {
            c
        }
    };
    if t + 1 >= end {
        return if at_text_end {
            Contraction::No
        } else {
            Contraction::Unknown
        };
    }
    let second = match fold(b[t + 1]) {
        b's' | b't' | b'm' | b'd' => return Contraction::Yes(t + 2),
        b'r' | b'v' => b'e',
        b'l' => b'l',
        _ => return Contraction::No,
    };
    if t + 2 >= end {
        // No non-ASCII character folds to `e` or `l`, but the window's end is not the text's.
        return if at_text_end {
            Contraction::No
        } else {
            Contraction::Unknown
        };
    }
    if fold(b[t + 2]) == second {
        Contraction::Yes(t + 3)
    } else {
        Contraction::No
    }
}
