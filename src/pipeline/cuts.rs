//! Safe cut points: where one long text may be cut so that its parts, encoded separately, give
//! exactly the tokens of the whole — so that one huge text can be encoded on every core
//! ([`crate::Tokenizer::last_safe_cut`]).
//!
//! A cut `p` of a text `T` is *safe* when the ids and offsets of `T` are those of `T[..p]`
//! followed by those of `T[p..]` with their offsets moved by `p`, whatever `T` holds after the
//! bytes the decision looked at. Every pipeline with cuts encodes in four stages, and a cut is
//! safe when each stage's output on `T` is the concatenation of its outputs on the two parts:
//! 1. the post-processor's template tokens (`[CLS]`, `<s>`, …): each part would get its own, so
//!    a pipeline that adds any has no cuts;
//! 2. the added tokens matched in the raw text, which cut it into added tokens and text
//!    segments: [`AddedGuard`] proves the matches on `T` are those of the two parts, so that a
//!    text segment holding `p` in `T` is the last one of `T[..p]` joined to the first of `T[p..]`
//!    (whose "end of text" and "start of text" the next stage must then not notice);
//! 3. the normalizer and pre-tokenizer, which cut each segment into pieces: the rule of the
//!    family ([`ByteLevelCuts`], [`WordPieceCuts`]) proves `p` is a piece boundary in `T` and the
//!    pieces on either side are those of the parts;
//! 4. the model, which encodes each piece alone (the caches are exact): a piece's ids depend on
//!    its bytes only, its tokens' offsets are the piece's offset plus offsets inside it, so they
//!    move with the piece.
//!
//! Every rule cuts between two ASCII bytes (`T[p - 1]` and `T[p]`), so both parts of a valid
//! UTF-8 text are valid UTF-8, and only looks at bytes before `p + 1`. Rules are conservative:
//! a cut not found costs parallelism, never exactness.
//!
//! Families without safe cuts, and why (SentencePiece `.model` files have cuts for parts that
//! continue the text instead: `SentencePiece::last_part_cut` in `spm`):
//! - SentencePiece unigram (`.model`): the reference adds scores in `f32` along the whole text,
//!   so the Viterbi choice between near-ties can depend on the running score where a word
//!   starts; reusing per-word results was measured to give other tokens.
//! - SentencePiece BPE (`.model`): even where the ids would agree (`add_dummy_prefix` with
//!   `remove_extra_whitespaces`: `T[..p]` drops its trailing spaces, `T[p..]` gets the dummy
//!   `▁`), the offsets cannot: in `T` the `▁` of the word after the cut is the space before it
//!   (at `p - 1`, or at `p` for a cut before the space); in `T[p..]` it is the dummy prefix,
//!   which maps to the word's first byte.
//! - SentencePiece-style `tokenizer.json` (Llama 2): `Prepend("▁")` (or `Metaspace`'s prepend)
//!   puts a `▁` before each text, which `T` has not at `p`, and the BPE runs over the whole
//!   normalized text (no pre-tokenizer). It has part cuts (`PartCuts` in `hf_spm_bpe`): a part
//!   after the first gets no prefix.

use crate::pipeline::added_tokens::AddedToken;

/// The most bytes before a cut that these rules read (`T[p - 5 ..= p]`).
pub(crate) const LOOKBACK: usize = 5;
use crate::pretokenize::Pattern;

/// `\s` and `char::is_whitespace` on an ASCII byte: `\t`, `\n`, `\x0B`, `\x0C`, `\r` and space.
#[inline]
fn ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// Whether the character that ends at `end` of `text` is not whitespace (Unicode `White_Space`,
/// which is both `\s` of the regexes and `char::is_whitespace`); true at the start of the text.
/// A malformed or cut character: false (no cut).
fn no_space_before(text: &[u8], end: usize) -> bool {
    let Some(&last) = end.checked_sub(1).map(|i| &text[i]) else {
        return true;
    };
    if last.is_ascii() {
        return !ascii_space(last);
    }
    // The lead byte: at most three continuation bytes back.
    let start = (end.saturating_sub(4)..end)
        .rev()
        .find(|&i| text[i] & 0xC0 != 0x80);
    let Some(start) = start else { return false };
    match std::str::from_utf8(&text[start..end]) {
        Ok(s) => {
            let mut chars = s.chars();
            matches!((chars.next(), chars.next()), (Some(c), None) if !c.is_whitespace())
        }
        Err(_) => false,
    }
}

/// The added tokens' side of a cut (stage 2): which cuts the added-token matcher
/// ([`crate::pipeline::added_tokens::AddedTokens::split`]) cannot tell from the ends of texts.
///
/// Proof. The matcher scans positions left to right; at each it takes the longest token
/// starting there, then applies `single_word` (a word character just before or after rejects
/// the match, which is skipped over all the same), `lstrip` (the match takes the whitespace
/// before it, not before the previous match) and `rstrip` (the whitespace after it). Let
/// `a = T[p - 1]` and `b = T[p]`, both ASCII. Suppose:
/// - no token holds the bytes `a b` next to each other: then no occurrence of a token in `T`
///   spans `p`, so at every position before `p` the longest token is the same in `T` and in
///   `T[..p]`, and at every position from `p` on the same in `T` and in `T[p..]`;
/// - the word tests agree: the only occurrences whose test looks across `p` are those that end
///   at `p` (they test `b`, where `T[..p]` has nothing, which passes) and those that start at
///   `p` (they test `a`, where `T[p..]` has nothing); so no `single_word` token may end with `a`
///   while `b` is a word character (ASCII: a letter, a digit or `_`), nor start with `b` while
///   `a` is one;
/// - whitespace taken by `rstrip` does not cross `p`: a match ending at `e ≤ p` takes the
///   whitespace run after it, which crosses `p` only when `T[e..=p]` is whitespace — so `b` is
///   whitespace and either `e = p` (the token ends with `a`) or `a` is whitespace too;
/// - whitespace taken by `lstrip` does not cross `p`: a match starting at `q ≥ p` takes the
///   whitespace before it, which crosses `p` only when `T[p - 1..q]` is whitespace — so `a` is
///   whitespace and either `q = p` (the token starts with `b`) or `b` is whitespace too.
///
/// Then the matcher's decisions before `p` are those it makes on `T[..p]` (no match or taken
/// whitespace reaches past `p`), it arrives at `p` with no match open, and from `p` on it
/// decides as it does on `T[p..]` (matches and their tests look only at `T[p - 1..]`, and
/// `lstrip` stops at `p`); the text segment around `p`, if any, is split in two at `p`.
#[derive(Debug)]
pub(crate) struct AddedGuard {
    /// Bit `a << 8 | b`: some token holds the bytes `a b` next to each other.
    pairs: Box<[u64; 1024]>,
    single_word_last: [bool; 256],
    single_word_first: [bool; 256],
    rstrip_last: [bool; 256],
    lstrip_first: [bool; 256],
    any_rstrip: bool,
    any_lstrip: bool,
}

impl AddedGuard {
    /// The guard of the tokens the matcher looks for (all their flags, duplicates included:
    /// more than needed is only more careful); `None` when there are none.
    pub(crate) fn new<'a>(tokens: impl IntoIterator<Item = &'a AddedToken>) -> Option<AddedGuard> {
        let mut guard = AddedGuard {
            pairs: Box::new([0; 1024]),
            single_word_last: [false; 256],
            single_word_first: [false; 256],
            rstrip_last: [false; 256],
            lstrip_first: [false; 256],
            any_rstrip: false,
            any_lstrip: false,
        };
        let mut any = false;
        for t in tokens {
            let bytes = t.content.as_bytes();
            let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
                continue; // never matched
            };
            any = true;
            for w in bytes.windows(2) {
                let bit = (w[0] as usize) << 8 | w[1] as usize;
                guard.pairs[bit / 64] |= 1 << (bit % 64);
            }
            if t.single_word {
                guard.single_word_last[last as usize] = true;
                guard.single_word_first[first as usize] = true;
            }
            if t.rstrip {
                guard.rstrip_last[last as usize] = true;
                guard.any_rstrip = true;
            }
            if t.lstrip {
                guard.lstrip_first[first as usize] = true;
                guard.any_lstrip = true;
            }
        }
        any.then_some(guard)
    }

    /// Whether the conditions of the proof above hold at `p` (`0 < p < text.len()`).
    pub(crate) fn allows(&self, text: &[u8], p: usize) -> bool {
        let (a, b) = (text[p - 1], text[p]);
        if !a.is_ascii() || !b.is_ascii() {
            return false;
        }
        let bit = (a as usize) << 8 | b as usize;
        if self.pairs[bit / 64] & (1 << (bit % 64)) != 0 {
            return false;
        }
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if (self.single_word_last[a as usize] && word(b))
            || (self.single_word_first[b as usize] && word(a))
        {
            return false;
        }
        if ascii_space(b) && (self.rstrip_last[a as usize] || (self.any_rstrip && ascii_space(a))) {
            return false;
        }
        if ascii_space(a) && (self.lstrip_first[b as usize] || (self.any_lstrip && ascii_space(b)))
        {
            return false;
        }
        true
    }
}

/// What a byte-level BPE pipeline allows around its pre-tokenizer (stage 3 and its inputs).
#[derive(Debug)]
pub(crate) struct ByteLevelOptions {
    /// Cuts before a space (rule S): not when the post-processor trims offsets with
    /// `add_prefix_space`, where the first token of a text keeps one leading space in its
    /// offsets — the token `" word"` starting `T[p..]` would, the same token in `T` would not.
    pub space: bool,
    /// Cuts after a newline (rule N): not with the pre-tokenizer's `add_prefix_space`, which
    /// puts a space before `T[p..]` (rule S survives it: `T[p..]` starts with a space and gets
    /// none).
    pub newline: bool,
    /// A normalizer runs (only steps that act on each character alone before an ASCII one: see
    /// [`crate::normalize::hf::Normalizer::splits_before_ascii`]).
    pub normalized: bool,
    /// The added tokens looked for in the text, if any.
    pub added: Option<AddedGuard>,
}

/// The cuts of byte-level BPE with one of the known split regexes (tiktoken's encodings, and
/// `tokenizer.json` files whose pre-tokenizer is one of those regexes alone).
///
/// The pieces are the regex's matches, which tile the text (every character is in one). The
/// match at a piece start `s` depends on `T[s..]` only: no pattern has a look-behind, an anchor
/// at the start or a `\b`, and `$` and `(?!\S)` look forwards. So for the pieces of `T` and of
/// the two parts to agree it suffices that
/// - (a) no match of `T` that starts before `p` ends after `p`, and the regex, run from each of
///   those starts on `T[..p]`, finds the same match as on `T` — then the pieces of `T[..p]` are
///   those of `T` before `p`, and `p` is a piece start of `T`;
/// - (b) from `p` on, the matches on `T` are those on `T[p..]`: they are, by the above.
///
/// For (a), compare the backtracking engine run from `s < p` on `T` and on `T[..p]`: it takes
/// the same steps unless one of them depends on position `p` — a character test there (which
/// always fails on `T[..p]`, whose text ends there), `(?!\S)` there (true at the end) or `$`
/// there (true at the end). The two rules below make every such test give the same answer,
/// or (for two tests of rule N) give a different path to the same match.
///
/// The patterns' alternatives, for reference (`L`, `N` letters and numbers, `UP`/`LO` o200k's
/// upper-or-other and lower-or-other letter classes, `(?i:'s…)` the contractions):
/// - GPT-2 (r50k, p50k): `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
///   (tiktoken's spelling adds `\s++$` before `\s+(?!\S)`: the same pieces);
/// - cl100k (Llama 3, gpt-3.5; Qwen with `\p{N}`): `(?i:'s…)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,k}|
///   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`; tiktoken's `cl100k_base` has `\s++$`
///   before `\s*[\r\n]` (one newline, not `+`);
/// - o200k: `[^\r\n\p{L}\p{N}]?UP*LO+(?i:'s…)?|[^\r\n\p{L}\p{N}]?UP+LO*(?i:'s…)?|\p{N}{1,3}|
///   ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`; tekken: the same without the
///   contractions and with `\p{N}`.
///
/// **Rule S** (a space): `T[p] = ' '` and `T[p - 1]` ASCII graphic (`!`…`~`).
/// A space can be taken by: the optional ` ` at the start of an alternative, the optional
/// prefix `[^\r\n\p{L}\p{N}]?` at the start of a letter alternative, and `\s` in the
/// whitespace alternatives, whose runs start at the match start. So a match holding `p` and
/// starting before `p` would be a whitespace run holding `p - 1`, which is not whitespace:
/// every character test at `p` from a start `s < p` is one of `\p{L}`, `\p{N}`, `UP`, `LO`,
/// `[^\s\p{L}\p{N}]`, `[\r\n]`, `[\r\n/]`, a contraction's letter or `'` — all false on a space,
/// as at the end of a text. `(?!\S)` at `p` is true on both (a space is not `\S`). `$` at `p`
/// follows only `\s++`, whose run would have to hold `p - 1`: never tested. So (a) holds.
/// (`T[p + 1]` does not matter: the piece at `p` is decided by `T[p..]` alone.)
///
/// **Rule N** (after a newline): `T[p - 1] = '\n'`, `T[p]` ASCII graphic, and `T[p] ≠ '/'` for
/// o200k and tekken. For GPT-2 also: the character before `T[p - 1]` is not whitespace (or
/// there is none). A newline is taken only by `\s` (whitespace runs, starting at the match
/// start) and by `[\r\n]` / `[\r\n/]` (after punctuation, and in `\s*[\r\n]+`). Every test of
/// these classes at `p` is false on `T[p]` (not whitespace, not `/`), as at the end; letter,
/// number and punctuation tests at `p` come only after a newline at `p - 1` was taken by the
/// `[\r\n]*` closing a punctuation alternative, which ends there. Left: `(?!\S)` and `$` at
/// `p`, reached when a whitespace run `T[s..p]` from the match start `s` was taken whole.
/// - cl100k, o200k, tekken: `\s*[\r\n]+` comes before `\s+(?!\S)` and matches `T[s..p]` on
///   both texts (the greedy `\s*` gives back to the last newline, `p - 1`; `[\r\n]+` cannot go
///   on at `p`), so `(?!\S)` at `p` is never reached. tiktoken's `cl100k_base` tries `\s++$`
///   first: it fails on `T` (`$` is false at `p`) and matches `T[s..p]` on `T[..p]`, and on `T`
///   the next alternative `\s*[\r\n]` then matches `T[s..p]` too: the same match.
/// - GPT-2 has no newline alternative: on `T`, `\s+(?!\S)` fails at `p` and backtracks to
///   `T[s..p - 1]`, while `T[..p]` takes `T[s..p]` whole (`"a \nb"`: `" "`, `"\n"` against
///   `" \n"`). Hence the extra condition: with no whitespace before the newline the run is
///   `s = p - 1`, where both texts get `"\n"` (`T` through `\s+`, or `\s++$` failing then `\s`).
///
/// With a normalizer ([`ByteLevelOptions::normalized`]) the rules are read on the normalized
/// text, where `T[p - 1]` and `T[p]` are unchanged or lowercased (still graphic, still not
/// `/`); the character before the newline is then required to be ASCII graphic (not left to
/// the normalizer).
#[derive(Debug)]
pub(crate) struct ByteLevelCuts {
    options: ByteLevelOptions,
    /// The pattern has `\s*[\r\n]+` before `\s+(?!\S)` (all but GPT-2).
    newline_run: bool,
    /// The punctuation alternative ends with `[\r\n/]*` (o200k, tekken).
    slash: bool,
}

impl ByteLevelCuts {
    /// The cuts of `pattern`'s pieces; `None` for a pattern with no proven rule (the
    /// match-only ones, a fallback regex) or when `options` allow none.
    pub(crate) fn new(pattern: Pattern, options: ByteLevelOptions) -> Option<ByteLevelCuts> {
        let (newline_run, slash) = match pattern {
            Pattern::Gpt2 => (false, false),
            Pattern::Cl100k { .. } | Pattern::TiktokenCl100k => (true, false),
            Pattern::O200k | Pattern::Tekken => (true, true),
            Pattern::Numbers { .. } | Pattern::DeepSeekCjk | Pattern::DeepSeekWords => {
                return None;
            }
        };
        (options.space || options.newline).then_some(ByteLevelCuts {
            options,
            newline_run,
            slash,
        })
    }

    /// The last safe cut of `text` ([`crate::Tokenizer::last_safe_cut`]).
    pub(crate) fn last(&self, text: &[u8]) -> Option<usize> {
        // Rule S cuts at a space, rule N after a newline: positions from the last one back.
        memchr::memrchr2_iter(b' ', b'\n', text)
            .map(|i| if text[i] == b' ' { i } else { i + 1 })
            .find(|&p| 0 < p && p < text.len() && self.safe_at(text, p))
    }

    fn safe_at(&self, text: &[u8], p: usize) -> bool {
        let (a, b) = (text[p - 1], text[p]);
        let rule = if b == b' ' {
            self.options.space && a.is_ascii_graphic()
        } else if a == b'\n' {
            self.options.newline
                && b.is_ascii_graphic()
                && !(self.slash && b == b'/')
                && (self.newline_run || self.no_space_before_newline(text, p - 1))
        } else {
            false
        };
        rule && self
            .options
            .added
            .as_ref()
            .is_none_or(|g| g.allows(text, p))
    }

    /// GPT-2's extra condition of rule N: no whitespace before the newline at `nl`.
    fn no_space_before_newline(&self, text: &[u8], nl: usize) -> bool {
        if self.options.normalized {
            nl == 0 || text[nl - 1].is_ascii_graphic()
        } else {
            no_space_before(text, nl)
        }
    }
}

/// The cuts of the BERT pipeline (WordPiece): after an ASCII space, tab or newline, before an
/// ASCII graphic character.
///
/// Proof. The BERT pre-tokenizer cuts the normalized text at whitespace (dropped) and around
/// punctuation; the words between are encoded alone. The BERT normalizer maps each input
/// character to characters that all take its span ([`crate::normalize::bert`]): it drops
/// controls, maps whitespace to a space, puts spaces around CJK ideographs, strips accents and
/// lowercases, each character by itself (the reference's NFD could move combining marks
/// across characters, but not across `T[p - 1]`, a starter). `T[p - 1]` is whitespace with or
/// without the normalizer (`char::is_whitespace`), so no word holds it: the words of `T` are
/// those of `T[..p]` (whose trailing whitespace makes none) followed by those of `T[p..]`, each
/// with the same characters and spans. `T[p]` graphic keeps it clear of the added tokens'
/// stripped whitespace ([`AddedGuard`] still checks). (`\r` alone is not looked for: a line
/// end is `\n` or `\r\n`, and after `\n` is where the cut goes.)
#[derive(Debug)]
pub(crate) struct WordPieceCuts {
    added: Option<AddedGuard>,
}

impl WordPieceCuts {
    /// The cuts of a BERT pipeline whose added tokens are `added`.
    pub(crate) fn new(added: Option<AddedGuard>) -> WordPieceCuts {
        WordPieceCuts { added }
    }

    /// The last safe cut of `text` ([`crate::Tokenizer::last_safe_cut`]).
    pub(crate) fn last(&self, text: &[u8]) -> Option<usize> {
        memchr::memrchr3_iter(b' ', b'\t', b'\n', text)
            .map(|i| i + 1)
            .find(|&p| {
                p < text.len()
                    && text[p].is_ascii_graphic()
                    && self.added.as_ref().is_none_or(|g| g.allows(text, p))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(content: &str) -> AddedToken {
        AddedToken {
            id: 0,
            content: content.into(),
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: false,
            special: true,
        }
    }

    fn cuts(pattern: Pattern, added: Option<AddedGuard>) -> ByteLevelCuts {
        let options = ByteLevelOptions {
            space: true,
            newline: true,
            normalized: false,
            added,
        };
        ByteLevelCuts::new(pattern, options).unwrap()
    }

    #[test]
    fn space_rule_needs_a_graphic_byte_before() {
        let c = cuts(Pattern::Cl100k { digits: 3 }, None);
        assert_eq!(c.last(b"hello world"), Some(5));
        // Not between two spaces: the first one.
        assert_eq!(c.last(b"hello  world"), Some(5));
        assert_eq!(c.last(b"a\t world"), None);
        assert_eq!(c.last(b"\xc2\xa0 world"), None);
        // Never at 0; at the last byte when it is the space.
        assert_eq!(c.last(b" x"), None);
        assert_eq!(c.last(b"x "), Some(1));
    }

    #[test]
    fn newline_rule_per_pattern() {
        let gpt2 = cuts(Pattern::Gpt2, None);
        let cl100k = cuts(Pattern::Cl100k { digits: 3 }, None);
        let o200k = cuts(Pattern::O200k, None);
        assert_eq!(gpt2.last(b"a\nb"), Some(2));
        // GPT-2: whitespace before the newline.
        assert_eq!(gpt2.last(b"a\t\nb"), None);
        // (but before the space)
        assert_eq!(gpt2.last(b"a \nb"), Some(1));
        assert_eq!(gpt2.last(b"a\r\nb"), None);
        assert_eq!(gpt2.last("a\u{3000}\nb".as_bytes()), None);
        assert_eq!(gpt2.last("\u{3002}\nb".as_bytes()), Some(4));
        assert_eq!(gpt2.last(b"\nb"), Some(1));
        // An invalid byte before the newline: no cut.
        assert_eq!(gpt2.last(b"\xff\nb"), None);
        assert_eq!(cl100k.last(b"a \nb"), Some(3));
        assert_eq!(cl100k.last(b"a\r\nb"), Some(3));
        // Not before whitespace, nor before `/` for o200k.
        assert_eq!(cl100k.last(b"a\n b"), None);
        assert_eq!(cl100k.last(b"a\n/"), Some(2));
        assert_eq!(o200k.last(b"a.\n/"), None);
    }

    #[test]
    fn added_tokens_guard() {
        let mut lstrip = token("<m>");
        lstrip.lstrip = true;
        let mut rstrip = token("x>");
        rstrip.rstrip = true;
        let mut word = token("ab");
        word.single_word = true;
        let toks = [token("a b"), lstrip, rstrip, word];
        let g = AddedGuard::new(&toks).unwrap();
        // "a b" spans the cut before its space.
        assert!(!g.allows(b"a b", 1));
        assert!(g.allows(b"c b", 1));
        // lstrip: `<m>` right after whitespace, or whitespace on both sides.
        assert!(!g.allows(b"\n<m>", 1));
        assert!(!g.allows(b"\n <m>", 1));
        assert!(g.allows(b"\nq<m>", 1));
        // rstrip: `x>` right before whitespace.
        assert!(!g.allows(b"x> y", 2));
        assert!(g.allows(b"y) y", 2));
        // single_word: a token ending before the cut with a word character after it, or
        // starting after it with one before.
        assert!(!g.allows(b"abc", 2));
        assert!(g.allows(b"ab c", 2));
        assert!(!g.allows(b"_ab", 1));
        assert!(g.allows(b"\nab", 1));
        assert!(AddedGuard::new(&[token("")]).is_none());
        // Whitespace on both sides (no rule cuts there yet): any stripping token may reach
        // across.
        let mut l = token("<l>");
        l.lstrip = true;
        let mut r = token("<r>");
        r.rstrip = true;
        let (l, r) = (
            AddedGuard::new(&[l]).unwrap(),
            AddedGuard::new(&[r]).unwrap(),
        );
        for g in [&l, &r] {
            assert!(!g.allows(b"\n x", 1));
            assert!(g.allows(b"\nx ", 1));
        }
        assert!(l.allows(b"x> y", 2) && !r.allows(b"r> y", 2));
        assert!(!l.allows(b"\n<l>", 1) && r.allows(b"\n<r>", 1));
    }
}
