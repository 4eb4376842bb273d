//! The split loop, with a fast path for ASCII stretches. The kernels classify a window of ASCII
//! bytes into per-class bit masks once ([`Kernels::classify`]); then
//! - the block phase ([`Fast::blocks`]) computes every token start of a 64-byte block at once with
//!   bit operations over the masks (the alternation's decisions, written as in
//!   `fast_ascii` of the WordPiece pipeline), and emits the tokens between consecutive starts;
//! - the token loop ([`Fast::window`]) takes one token at a time where the block phase stops (a
//!   digit run longer than a group, a contraction or an indentation run crossing a block, the last
//!   block of a window), finding each run's end with one `trailing_zeros` per 64 bytes.
//!
//! Both make only the decisions of [`super::scan`] restricted to ASCII; any decision that would
//! need a character past the window (a non-ASCII character, or the window's end) is left to the
//! scanner, which is exact everywhere, so the fast path only ever changes the speed.

use std::cell::Cell;

use simdtok_kernels::{BlockMasks, ByteClassSpec, ByteClassTable, ClassSet, Kernels};

use super::scan::{Kind, Scanner};

/// Byte classes of the ASCII window (class index = bit).
const LOWER: usize = 0;
const UPPER: usize = 1;
const DIGIT: usize = 2;
/// ASCII `\s`: `\t \n \x0B \x0C \r` and space.
const SPACE: usize = 3;
const NEWLINE: usize = 4;
/// The space character alone.
const SP: usize = 5;
/// The apostrophe.
const QUOTE: usize = 6;
// "Other" (neither letter, digit nor space: punctuation, symbols, other controls) is what is in
// none of LOWER, UPPER, DIGIT and SPACE: its own class would need eight nibble terms (its rows
// differ), the others need two, and classification costs one pass per term.
const NOT_OTHER: u8 = (1 << LOWER) | (1 << UPPER) | (1 << DIGIT) | (1 << SPACE);

const LETTER_SET: u8 = (1 << LOWER) | (1 << UPPER);

/// The most bytes classified at once (the masks of one window: `WINDOW` bytes per thread).
pub(super) const WINDOW: usize = 8192;
/// ASCII stretches shorter than this go through the scanner (classification would not pay).
pub(super) const MIN_FAST: usize = 24;

thread_local! {
    static MASKS: Cell<Vec<BlockMasks>> = const { Cell::new(Vec::new()) };
}

/// Calls `f` with this thread's buffer of window masks, taken out of the thread-local for the
/// call (a `piece` that splits again on this thread finds it empty and grows one of its own).
#[inline]
pub(super) fn with_masks<R>(f: impl FnOnce(&mut Vec<BlockMasks>) -> R) -> R {
    let mut masks = MASKS.with(Cell::take);
    let r = f(&mut masks);
    MASKS.with(|cell| cell.set(masks));
    r
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
pub(super) struct Window<'a> {
    /// The whole text.
    pub(super) b: &'a [u8],
    pub(super) masks: &'a [BlockMasks],
    /// The window's bytes are `b[base..end]`.
    pub(super) base: usize,
    pub(super) end: usize,
    /// `end` is the end of the text (else the byte at `end` is unknown to the fast path).
    pub(super) at_text_end: bool,
}

impl Window<'_> {
    /// Whether the block phase may decide the window's last block too.
    /// - When the window ends the text, and not with whitespace: past the end no class holds,
    ///   which is what the end of the text means to every rule but `\s+(?!\S)` on a trailing
    ///   run of whitespace.
    /// - When the window ends inside the text (at a non-ASCII character, or after [`WINDOW`]
    ///   bytes), for the token starts before its last byte ([`Window::certain_starts`]): text
    ///   with a curly quote or an accented letter every line or so would otherwise go token by
    ///   token.
    #[inline]
    fn last_block_decidable(&self) -> bool {
        !self.at_text_end
            || (self.end > self.base && !matches!(self.b[self.end - 1], b'\t'..=b'\r' | b' '))
    }

    /// The token starts of `block` that do not depend on what follows the window: all of them
    /// but in the last block of a window that ends inside the text, where the byte at `end` is
    /// unknown. The bit rules look one byte ahead (`\s+(?!\S)`, a prefix before a letter);
    /// what looks further (contractions, indentation after a newline, long digit runs) stops
    /// the block phase before the window's end. So a start before `end - 1` is certain.
    #[inline(always)]
    fn certain_starts(&self, block: usize) -> u64 {
        let block_start = self.base + block * 64;
        if self.at_text_end || self.end > block_start + 64 {
            !0
        } else {
            // `end - 1` is in this block: keep the bits below it.
            (1u64 << (self.end - 1 - block_start)) - 1
        }
    }

    /// The first position at or after `from` (absolute, `from <= end`) whose byte is in none of
    /// the classes of `SET`; `end` when the run reaches the window's end.
    #[inline(always)]
    pub(super) fn run_end<const SET: u8>(&self, from: usize) -> usize {
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

    /// The end of the run of "other" bytes (neither letter, digit nor space) from `from`.
    #[inline(always)]
    fn other_run_end(&self, from: usize) -> usize {
        let rel = from - self.base;
        let mut block = rel >> 6;
        if block >= self.masks.len() {
            return self.end;
        }
        let mut m = union::<NOT_OTHER>(&self.masks[block]) & (!0u64 << (rel & 63));
        loop {
            if m != 0 {
                // Bits past the end are clear in every class: they read as "other".
                return (self.base + block * 64 + m.trailing_zeros() as usize).min(self.end);
            }
            block += 1;
            if block == self.masks.len() {
                return self.end;
            }
            m = union::<NOT_OTHER>(&self.masks[block]);
        }
    }

    /// The end of the last newline in `b[from..to]` (`from` when there is none).
    #[inline]
    fn last_newline_end(&self, from: usize, to: usize) -> usize {
        self.last_end_in::<NEWLINE>(from, to)
    }

    /// The end of the last byte of class `CLASS` in `b[from..to]` (`from < to`, both in the
    /// window; `from` when there is none).
    #[inline]
    pub(super) fn last_end_in<const CLASS: usize>(&self, from: usize, to: usize) -> usize {
        let (lo, hi) = (from - self.base, to - self.base);
        let mut block = (hi - 1) >> 6;
        loop {
            let mut m = self.masks[block].0[CLASS];
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
    // Written out, not a loop: each term folds to a load or to nothing wherever it is inlined
    // (a loop was left as one in DeepSeek's windows).
    let class = |k: usize| if SET & (1 << k) != 0 { m.0[k] } else { 0 };
    class(0) | class(1) | class(2) | class(3) | class(4) | class(5) | class(6) | class(7)
}

impl Fast {
    pub(crate) fn new(_scanner: Scanner) -> Fast {
        let spec = ByteClassSpec::empty()
            .with_class(LOWER, |b| b.is_ascii_lowercase())
            .with_class(UPPER, |b| b.is_ascii_uppercase())
            .with_class(DIGIT, |b| b.is_ascii_digit())
            .with_class(SPACE, |b| matches!(b, b'\t'..=b'\r' | b' '))
            .with_class(NEWLINE, |b| matches!(b, b'\r' | b'\n'))
            .with_class(SP, |b| b == b' ')
            .with_class(QUOTE, |b| b == b'\'');
        let keep = (0..7).fold(ClassSet::EMPTY, |s, k| s | ClassSet::single(k));
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
        // A text too short for the fast path is the scanner's alone: no thread-local, no kernel
        // calls (a one-word text took twice as long through them).
        if text.len() < MIN_FAST {
            let b = text.as_bytes();
            let mut s = 0;
            while s < b.len() {
                let e = scanner.next(b, s);
                piece(s, e);
                s = e;
            }
            return;
        }
        with_masks(|masks| match scanner.kind {
            Kind::Gpt2 => self.split_with::<GPT2>(kernels, scanner, text, masks, piece),
            Kind::Cl100k => self.split_with::<CL100K>(kernels, scanner, text, masks, piece),
            Kind::O200k => self.split_with::<O200K>(kernels, scanner, text, masks, piece),
        });
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
            // A short rest of the text is the scanner's too.
            if b[s] < 0x80 && b.len() - s >= MIN_FAST {
                let limit = b.len().min(s + WINDOW);
                let ascii = kernels.ascii_prefix_len(&b[s..limit]);
                if ascii >= MIN_FAST {
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
        // Where the block phase may run again (after a block it could not decide). It runs
        // wherever a block has a next one in the window: a line of prose (80 bytes or so) gets
        // its first block that way, which is faster than token by token.
        let mut blocks_from = t;
        while t < end {
            if t >= blocks_from
                && (t + 64 < end || (t + MIN_FAST <= end && w.last_block_decidable()))
            {
                let (pending, resume) = self.blocks::<K>(sc, w, t, piece);
                t = pending;
                blocks_from = resume;
                continue;
            }
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
                        Cls::Quote | Cls::Other => w.other_run_end(from + 1),
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
                                let o = w.other_run_end(t + 1);
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
                        Cls::Lower | Cls::Upper => self.o200k_letters(sc, w, t),
                        Cls::Digit => digits_end(b, t, end, sc.digits),
                        Cls::Newline => match self.whitespace::<true>(sc, w, t) {
                            Some(e) => e,
                            None => return Stop::Scanner(t),
                        },
                        Cls::Space | Cls::Quote | Cls::Other => match next {
                            Some(Cls::Lower | Cls::Upper) => self.o200k_letters(sc, w, t + 1),
                            // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
                            Some(Cls::Quote | Cls::Other) if c != Cls::Space || b[t] == b' ' => {
                                let o = w.other_run_end(t + 1);
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
    /// one letter) and a case-insensitive contraction (not tekken's); `usize::MAX` when the
    /// scanner must decide.
    #[inline(always)]
    fn o200k_letters(&self, sc: &Scanner, w: &Window, x: usize) -> usize {
        let u = w.run_end::<{ 1 << UPPER }>(x);
        let e = w.run_end::<{ 1 << LOWER }>(u);
        if e == w.end {
            return if w.at_text_end { e } else { usize::MAX };
        }
        if !sc.contractions || w.b[e] != b'\'' {
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

/// The carried state of the block phase: the class bits of the byte before the block (bit 0).
#[derive(Clone, Copy, Default)]
struct Carry {
    letter: u64,
    lower: u64,
    other: u64,
    space: u64,
    sp: u64,
    digit: u64,
    newline: u64,
    prefix: u64,
    /// An absorbed newline run (after punctuation) goes on into this block.
    absorbed: bool,
    /// The length of the digit run that ends the previous block.
    digit_run: usize,
}

impl Fast {
    /// The token starts for whole 64-byte blocks at once, from the token start `t`: the
    /// alternation's decisions written as bit operations over the class masks (see the comments),
    /// for every block that has a following block in the window (the look-ahead). A block with
    /// something the bit rules do not cover (a digit run longer than the group, a contraction or
    /// an indentation run that crosses into the next block) stops the phase. Returns the start of
    /// the token not yet emitted and where the phase may resume (the end of the block it stopped
    /// at).
    #[inline(never)]
    fn blocks<const K: u8>(
        &self,
        sc: &Scanner,
        w: &Window,
        t: usize,
        piece: &mut impl FnMut(usize, usize),
    ) -> (usize, usize) {
        let rel = t - w.base;
        let first = rel >> 6;
        let below = (1u64 << (rel & 63)) - 1;
        let mut prev = t;
        // A fresh start at `t`: the bytes before it read as letters (nothing is absorbed, no
        // prefix is pending, and `t` itself starts a token whatever it is).
        let mut c = Carry {
            letter: 1,
            ..Carry::default()
        };
        let mut block = first;
        let blocks = w.masks.len();
        let last_too = w.last_block_decidable();
        while block + 1 < blocks || (last_too && block + 1 == blocks) {
            let m = &w.masks[block].0;
            // Past the text's end (the last block, or its look-ahead) no class holds.
            let nx = w.masks.get(block + 1).map_or(&[0u64; 8], |n| &n.0);
            let inside = match w.end - (w.base + block * 64) {
                n if n >= 64 => !0,
                n => (1u64 << n) - 1,
            };
            let from_t = if block == first { !below } else { !0 };
            let keep = from_t & inside;
            let letter = ((m[LOWER] | m[UPPER]) & keep) | !from_t;
            let digit = m[DIGIT] & keep;
            let space = m[SPACE] & keep;
            let newline = m[NEWLINE] & keep;
            let other = !(m[LOWER] | m[UPPER] | m[DIGIT] | m[SPACE]) & keep;
            let sp = m[SP] & keep;
            let quote = m[QUOTE] & keep;
            let snl = space & !newline;
            // The same at i-1 and i+1.
            let letter_p = (letter << 1) | c.letter;
            let other_p = (other << 1) | c.other;
            let sp_p = (sp << 1) | c.sp;
            let digit_p = (digit << 1) | c.digit;
            let newline_p = (newline << 1) | c.newline;
            let space_p = (space << 1) | c.space;
            let letter_n = (letter >> 1) | ((nx[LOWER] | nx[UPPER]) << 63);
            let space_n = (space >> 1) | (nx[SPACE] << 63);

            let mut prefix = 0;
            let mut absorbed = false;
            let mut starts;
            if K == GPT2 {
                // ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+`: a run of one class starts a token,
                // at the space before it if there is one; `\s+(?!\S)|\s+`: a run of spaces
                // starts one, and its last character another.
                let run_starts = (letter & !letter_p) | (digit & !digit_p) | (other & !other_p);
                starts = (run_starts & !sp_p) | (space & !space_p) | (space & !space_n);
                // `'s|'t|'re|'ve|'m|'ll|'d` (case-sensitive) at an apostrophe that starts a run:
                // the letters after the contraction go on as a token of their own.
                let mut quotes = quote & !other_p & !sp_p & letter_n;
                while quotes != 0 {
                    let ki = quotes.trailing_zeros() as usize;
                    quotes &= quotes - 1;
                    let i = w.base + block * 64 + ki;
                    if i + 4 > w.end {
                        return (prev, w.base + (block + 1) * 64);
                    }
                    if let Contraction::Yes(e) = ascii_contraction(w.b, i, w.end, false, false) {
                        let k = e - w.base - block * 64;
                        if k >= 64 {
                            return (prev, w.base + (block + 1) * 64);
                        }
                        starts &= !(1u64 << (ki + 1));
                        if w.b[e].is_ascii_alphabetic() {
                            starts |= 1u64 << k;
                        }
                    }
                }
            } else {
                // Punctuation that starts a token: not inside a run of it, and not taken by a space
                // before it (` ?[^\s\p{L}\p{N}]+`).
                let other_start = other & !other_p & !sp_p;
                // `[^\r\n\p{L}\p{N}]` at a token start: a space that is the last of its run (never
                // absorbed: only newlines are), or punctuation that starts a token.
                prefix = snl | other_start;
                let prefix_p = (prefix << 1) | c.prefix;
                // `[^\r\n\p{L}\p{N}]?\p{L}+`: a letter run starts a token unless the character
                // before it is a prefix; the token ends with the run.
                let letter_start = letter & !letter_p;
                starts = (letter_start & !prefix_p) | (prefix & letter_n) | (!letter & letter_p);
                // `\p{N}{1,k}`: one token per digit (k = 1), else per run of at most k digits.
                if sc.digits == 1 {
                    starts |= digit;
                } else {
                    starts |= digit & !digit_p;
                    if digit != 0 {
                        // A run longer than a group (groups would need counting): not here.
                        let lead = digit.trailing_ones() as usize;
                        let mut long = digit;
                        for k in 1..=sc.digits.min(63) {
                            long &= digit << k;
                        }
                        if long != 0 || (lead > 0 && c.digit_run + lead > sc.digits) {
                            return (prev, w.base + (block + 1) * 64);
                        }
                    }
                }
                starts |= other_start;
                // Whitespace. A run of newlines right after punctuation is absorbed by its token
                // (`[\r\n]*`); the first space after such a run starts a token.
                let seeds = newline & other_p;
                let (sum, o1) = newline.overflowing_add(seeds);
                let (sum, o2) = sum.overflowing_add(c.absorbed as u64);
                let after_absorbed = sum & !newline;
                absorbed = o1 || o2;
                let run_start = space & !space_p;
                starts |= (run_start & !(newline & other_p)) | (after_absorbed & space);
                // `\s+(?!\S)` gives back the last character of a run before a non-space.
                starts |= snl & !space_n;
                // `\s*[\r\n]+` ends at the last newline of the run: the spaces after a newline
                // start a token when no newline follows them in the run (else they belong to the
                // newline's token).
                let mut tails = snl & newline_p;
                while tails != 0 {
                    let x = w.base + block * 64 + tails.trailing_zeros() as usize;
                    tails &= tails - 1;
                    let y = self.snl_run_end(w, x);
                    if y == w.end {
                        return (prev, w.base + (block + 1) * 64);
                    }
                    if w.b[y] != b'\r' && w.b[y] != b'\n' {
                        starts |= 1u64 << (x - w.base - block * 64);
                    }
                }
                if K == O200K {
                    // `[\p{Lu}…]*[\p{Ll}…]+|[\p{Lu}…]+[\p{Ll}…]*` on ASCII: a token is a run of
                    // capitals then a run of small letters, so a capital after a small letter
                    // starts one.
                    starts |= m[UPPER] & keep & ((m[LOWER] & keep) << 1 | c.lower);
                    // `[\r\n/]*`: a slash after absorbed newlines is absorbed too (not here).
                    let mut after = after_absorbed & other;
                    while after != 0 {
                        let k = after.trailing_zeros() as usize;
                        after &= after - 1;
                        if w.b[w.base + block * 64 + k] == b'/' {
                            return (prev, w.base + (block + 1) * 64);
                        }
                    }
                    // `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after the letters: the contraction joins
                    // their token, and letters after it start the next one.
                    // (Not at `t`: its token starts there, whatever the carry says.)
                    let fresh = if block == first {
                        1u64 << (rel & 63)
                    } else {
                        0
                    };
                    let mut quotes = if sc.contractions {
                        quote & letter_p & !fresh
                    } else {
                        0
                    };
                    // The end of the last contraction: the letter before an apostrophe there
                    // ends a contraction, not letters.
                    let mut after_contraction = usize::MAX;
                    while quotes != 0 {
                        let ki = quotes.trailing_zeros() as usize;
                        quotes &= quotes - 1;
                        if ki == after_contraction {
                            continue;
                        }
                        let i = w.base + block * 64 + ki;
                        if i + 4 > w.end {
                            return (prev, w.base + (block + 1) * 64);
                        }
                        if let Contraction::Yes(e) = ascii_contraction(w.b, i, w.end, false, true) {
                            let k = e - w.base - block * 64;
                            if k >= 64 {
                                return (prev, w.base + (block + 1) * 64);
                            }
                            starts &= !(((1u64 << k) - 1) & !((1u64 << ki) - 1));
                            after_contraction = k;
                            if w.b[e].is_ascii_alphabetic() {
                                starts |= 1u64 << k;
                            }
                        }
                    }
                } else {
                    // Contractions at an apostrophe that starts a token: `'s|'t|'re|'ve|'m|'ll|'d`
                    // (case-insensitive), then the letters go on as a token of their own.
                    let mut quotes = quote & other_start & letter_n;
                    while quotes != 0 {
                        let i = w.base + block * 64 + quotes.trailing_zeros() as usize;
                        quotes &= quotes - 1;
                        if i + 4 > w.end {
                            return (prev, w.base + (block + 1) * 64);
                        }
                        if let Contraction::Yes(e) = ascii_contraction(w.b, i, w.end, false, true) {
                            let k = e - w.base - block * 64;
                            if w.b[e].is_ascii_alphabetic() {
                                if k >= 64 {
                                    return (prev, w.base + (block + 1) * 64);
                                }
                                starts |= 1u64 << k;
                            }
                        }
                    }
                }
            }
            starts &= keep & w.certain_starts(block);
            // Emit the tokens that end at this block's starts (those after `prev`). The loop
            // body runs at least once when entered, which lets the compiler keep a caller's
            // per-piece state in registers across it.
            let base = w.base + block * 64;
            let mut bits = starts;
            if prev >= base {
                bits &= (!0u64).checked_shl((prev - base + 1) as u32).unwrap_or(0);
            }
            if bits != 0 {
                loop {
                    let p = base + bits.trailing_zeros() as usize;
                    piece(prev, p);
                    prev = p;
                    bits &= bits - 1;
                    if bits == 0 {
                        break;
                    }
                }
            }
            c = Carry {
                letter: letter >> 63,
                lower: (m[LOWER] & keep) >> 63,
                other: other >> 63,
                space: space >> 63,
                sp: sp >> 63,
                digit: digit >> 63,
                newline: newline >> 63,
                prefix: prefix >> 63,
                absorbed,
                digit_run: if digit == !0 {
                    c.digit_run + 64
                } else {
                    digit.leading_ones() as usize
                },
            };
            block += 1;
        }
        (prev, w.base + block * 64)
    }

    /// The end of the run of spaces other than newlines that starts at `x`.
    #[inline]
    fn snl_run_end(&self, w: &Window, x: usize) -> usize {
        let rel = x - w.base;
        let mut block = rel >> 6;
        let snl = |m: &BlockMasks| m.0[SPACE] & !m.0[NEWLINE];
        let mut m = !snl(&w.masks[block]) & (!0u64 << (rel & 63));
        loop {
            if m != 0 {
                return (w.base + block * 64 + m.trailing_zeros() as usize).min(w.end);
            }
            block += 1;
            if block == w.masks.len() {
                return w.end;
            }
            m = !snl(&w.masks[block]);
        }
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
