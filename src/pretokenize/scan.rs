//! The scanners: one token at a time from any token start, character by character, with the
//! leftmost-first backtracking semantics of the regexes written out by hand (see each function).
//! These are exact on any text; [`super::ascii`] speeds up the ASCII stretches.

use super::unicode::{L, LO, N, NL, S, Tables, UP};

/// Which alternation a scanner implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
    Gpt2,
    /// `(?i:'s|…|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,k}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
    /// with `\s++$|` before `\s*[\r\n]` when `whole_trailing_space` (tiktoken's `cl100k_base`).
    Cl100k,
    /// The o200k alternation (also tekken's: no contractions, single digits).
    O200k,
}

/// A scanner: the alternation and its parameters.
#[derive(Clone, Copy)]
pub(crate) struct Scanner {
    pub(crate) kind: Kind,
    /// The most `\p{N}` characters in one digit token (`usize::MAX` for `\p{N}+`).
    pub(crate) digits: usize,
    /// A whitespace run reaching the end of the text is one token (`\s++$`, tiktoken's cl100k).
    pub(crate) whole_trailing_space: bool,
    /// The o200k alternation's letter tokens take a contraction after them
    /// (`(?i:'s|…|'d)?`); tekken's do not. GPT-2's and cl100k's contractions are their own
    /// alternative and always there.
    pub(crate) contractions: bool,
    pub(crate) tables: &'static Tables,
}

/// Neither whitespace, letter nor number: `[^\s\p{L}\p{N}]`.
#[inline]
fn is_other(f: u8) -> bool {
    f & (S | L | N) == 0
}

/// The optional prefix `[^\r\n\p{L}\p{N}]`.
#[inline]
fn is_prefix(f: u8) -> bool {
    f & (NL | L | N) == 0
}

impl Scanner {
    /// The end of the token that starts at `s` (`s < b.len()`, a token start).
    #[inline]
    pub(crate) fn next(&self, b: &[u8], s: usize) -> usize {
        match self.kind {
            Kind::Gpt2 => self.next_gpt2(b, s),
            Kind::Cl100k => self.next_cl100k(b, s),
            Kind::O200k => self.next_o200k(b, s),
        }
    }

    /// The end of the run of characters with any flag of `mask` that starts at `i`.
    #[inline]
    pub(super) fn run_end(&self, b: &[u8], mut i: usize, mask: u8) -> usize {
        while i < b.len() {
            let (f, len) = self.tables.char_at(b, i);
            if f & mask == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// The end of the run of characters that are neither whitespace, letters nor numbers.
    #[inline]
    fn other_run_end(&self, b: &[u8], mut i: usize) -> usize {
        while i < b.len() {
            let (f, len) = self.tables.char_at(b, i);
            if !is_other(f) {
                break;
            }
            i += len;
        }
        i
    }

    /// The end of `\p{N}{1,digits}` at `i` (a number).
    #[inline]
    pub(super) fn digits_end(&self, b: &[u8], mut i: usize) -> usize {
        let mut n = 0;
        while i < b.len() && n < self.digits {
            let (f, len) = self.tables.char_at(b, i);
            if f & N == 0 {
                break;
            }
            i += len;
            n += 1;
        }
        i
    }

    /// The flags of the character at `i`, `0` past the end (no class matches there).
    #[inline]
    pub(super) fn flags_at(&self, b: &[u8], i: usize) -> (u8, usize) {
        if i < b.len() {
            self.tables.char_at(b, i)
        } else {
            (0, 0)
        }
    }

    /// The whitespace alternatives at `s` (a whitespace character). `newlines`: the pattern has
    /// `\s*[\r\n]+` (cl100k, o200k). Returns the end of the token.
    #[inline]
    pub(super) fn whitespace(&self, b: &[u8], s: usize, newlines: bool) -> usize {
        // The run, where its last character starts, and the end of its last newline.
        let mut i = s;
        let mut last = s;
        let mut nl_end = s;
        while i < b.len() {
            let (f, len) = self.tables.char_at(b, i);
            if f & S == 0 {
                break;
            }
            if f & NL != 0 {
                nl_end = i + len;
            }
            last = i;
            i += len;
        }
        let q = i;
        // `\s++$`: the whole run when it reaches the end.
        if self.whole_trailing_space && q == b.len() {
            return q;
        }
        // `\s*[\r\n]+`: the greedy `\s*` gives back down to the last newline of the run.
        if newlines && nl_end > s {
            return nl_end;
        }
        // `\s+(?!\S)`: the whole run at the end of the text, else all but its last character
        // (when that leaves one); `\s+` otherwise (a single character before a non-space).
        if q == b.len() || last == s { q } else { last }
    }

    /// GPT-2 (r50k, p50k): `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
    fn next_gpt2(&self, b: &[u8], s: usize) -> usize {
        let c = b[s];
        if c == b'\''
            && let Some(e) = self.tables.contraction(b, s, false)
        {
            return e;
        }
        let (f, _) = self.tables.char_at(b, s);
        // ` ?X+`: a space takes the run of the class of the next character, if it is not a space.
        let (f, from) = if c == b' ' && s + 1 < b.len() {
            let (f2, _) = self.tables.char_at(b, s + 1);
            if f2 & S == 0 { (f2, s + 1) } else { (f, s) }
        } else {
            (f, s)
        };
        if f & L != 0 {
            return self.run_end(b, from, L);
        }
        if f & N != 0 {
            return self.run_end(b, from, N);
        }
        if is_other(f) {
            return self.other_run_end(b, from);
        }
        self.whitespace(b, s, false)
    }

    /// cl100k (Llama 3, Qwen with one digit, tiktoken's variant with `\s++$`).
    fn next_cl100k(&self, b: &[u8], s: usize) -> usize {
        let c = b[s];
        if c == b'\''
            && let Some(e) = self.tables.contraction(b, s, true)
        {
            return e;
        }
        let (f, len) = self.tables.char_at(b, s);
        // `[^\r\n\p{L}\p{N}]?\p{L}+`
        if f & L != 0 {
            return self.run_end(b, s + len, L);
        }
        if is_prefix(f) {
            let (f2, len2) = self.flags_at(b, s + len);
            if f2 & L != 0 {
                return self.run_end(b, s + len + len2, L);
            }
        }
        // `\p{N}{1,k}`
        if f & N != 0 {
            return self.digits_end(b, s);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
        let from = if c == b' ' && s + 1 < b.len() && is_other(self.flags_at(b, s + 1).0) {
            s + 1
        } else {
            s
        };
        if is_other(self.flags_at(b, from).0) {
            let e = self.other_run_end(b, from);
            return self.newlines_end(b, e, false);
        }
        self.whitespace(b, s, true)
    }

    /// The end of `[\r\n]*` (or `[\r\n/]*` when `slash`) at `i`.
    #[inline]
    pub(super) fn newlines_end(&self, b: &[u8], mut i: usize, slash: bool) -> usize {
        while i < b.len() && (b[i] == b'\r' || b[i] == b'\n' || (slash && b[i] == b'/')) {
            i += 1;
        }
        i
    }

    /// o200k:
    /// `[^\r\n\p{L}\p{N}]?[UP]*[LO]+(?i:'s|…|'d)?|[^\r\n\p{L}\p{N}]?[UP]+[LO]*(?i:'s|…|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    /// with `UP = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, `LO = [\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
    fn next_o200k(&self, b: &[u8], s: usize) -> usize {
        let (f, len) = self.tables.char_at(b, s);
        let prefix = is_prefix(f);
        // First alternative, with the optional prefix, then without it (a mark is both a
        // prefix and UP/LO, so both can apply).
        if prefix && let Some(e) = self.upper_lower(b, s + len) {
            return e;
        }
        if f & (UP | LO) != 0
            && let Some(e) = self.upper_lower(b, s)
        {
            return e;
        }
        // Second alternative.
        if prefix && let Some(e) = self.upper_then_lower(b, s + len) {
            return e;
        }
        if f & UP != 0
            && let Some(e) = self.upper_then_lower(b, s)
        {
            return e;
        }
        if f & N != 0 {
            return self.digits_end(b, s);
        }
        let from = if b[s] == b' ' && s + 1 < b.len() && is_other(self.flags_at(b, s + 1).0) {
            s + 1
        } else {
            s
        };
        if is_other(self.flags_at(b, from).0) {
            let e = self.other_run_end(b, from);
            return self.newlines_end(b, e, true);
        }
        self.whitespace(b, s, true)
    }

    /// `[UP]*[LO]+(?i:'s|…)?` at `x`: the greedy star gives back characters until `[LO]+` can
    /// start (the classes share Lm, Lo and M). `None` when it cannot match.
    #[inline]
    fn upper_lower(&self, b: &[u8], x: usize) -> Option<usize> {
        let mut i = x;
        let mut last_both = None;
        let mut f;
        loop {
            if i >= b.len() {
                f = 0;
                break;
            }
            let (g, len) = self.tables.char_at(b, i);
            f = g;
            if f & UP == 0 {
                break;
            }
            if f & LO != 0 {
                last_both = Some(i);
            }
            i += len;
        }
        // The star keeps the whole run when the next character is LO (then it is Ll), else it
        // gives back to the last character of the run that is also LO.
        let j = if f & LO != 0 { i } else { last_both? };
        let e = self.run_end(b, j, LO);
        Some(self.contraction_end(b, e))
    }

    /// `[UP]+[LO]*(?i:'s|…)?` at `x`.
    #[inline]
    fn upper_then_lower(&self, b: &[u8], x: usize) -> Option<usize> {
        if x >= b.len() || self.tables.char_at(b, x).0 & UP == 0 {
            return None;
        }
        let u = self.run_end(b, x, UP);
        let e = self.run_end(b, u, LO);
        Some(self.contraction_end(b, e))
    }

    /// `e`, or the end of the case-insensitive contraction at `e`.
    #[inline]
    fn contraction_end(&self, b: &[u8], e: usize) -> usize {
        if self.contractions && e < b.len() && b[e] == b'\'' {
            self.tables.contraction(b, e, true).unwrap_or(e)
        } else {
            e
        }
    }
}
