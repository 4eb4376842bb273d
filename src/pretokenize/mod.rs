//! Pre-tokenizers for byte-level BPE: hand-written scanners that split text exactly as the
//! GPT-2, cl100k (Llama 3, Qwen), o200k and Mistral's tekken regexes do under `fancy-regex`
//! (tiktoken's engine), matchers for DeepSeek V3's three `Split` regexes (module `deepseek`),
//! and a `fancy-regex` fallback for any other pattern.
//!
//! The regexes are alternations with leftmost-first, backtracking semantics; `scan` writes each
//! alternation out by hand (one token at a time from a token start), and `ascii` runs the same
//! decisions over the byte-class bit masks of [`simdtok_kernels::Kernels::classify`] on ASCII
//! stretches, 64 bytes at a time. The character classes are `regex-syntax`'s own (`unicode`:
//! Unicode 16.0 with regex-syntax 0.8.11). The matches of these patterns tile the text: every
//! character belongs to exactly one piece.
//!
//! Semantics worth knowing (all checked against the regexes):
//! - `\s+(?!\S)` gives back the last whitespace character of a run before a non-space, which
//!   then prefixes the next token (`"a  b"` → `"a"`, `" "`, `" b"` in every pattern);
//! - cl100k and o200k take any one non-letter, non-digit, non-newline character as a letter
//!   token's prefix (`"(hello"`, `"\u{a0}Hacker"`), and a punctuation token absorbs the
//!   newlines after it (`".\n"`; o200k also `/`);
//! - the contractions are case-insensitive in cl100k and o200k with Unicode simple case folding,
//!   so `'ſ` (long s) is one; `’s` (U+2019) never is; GPT-2's are case-sensitive;
//! - o200k's `[UP]*[LO]+` backtracks over the classes' overlap (Lm, Lo, M): `"\u{301}A "` →
//!   `"\u{301}"`, `"A"`, `" "` and `"中A"` → `"中"`, `"A"`, while cl100k keeps `"中A"`;
//! - tiktoken's own cl100k string ([`Pattern::TiktokenCl100k`]) differs from the
//!   `tokenizer.json` one only at the end of a text (`\s++$`); tiktoken applies it to each
//!   segment between special tokens, so "end of the text" is the end of each segment.
//!
//! ```
//! use simdtok::pretokenize::{Pattern, Splitter};
//! let kernels = simdtok::kernels::Kernels::active().unwrap();
//! let splitter = Splitter::new(Pattern::Cl100k { digits: 3 }, kernels);
//! let text = "Hello world's 12345!\n";
//! let mut pieces = Vec::new();
//! splitter.split(text, |s, e| pieces.push(&text[s..e]));
//! assert_eq!(pieces, ["Hello", " world", "'s", " ", "123", "45", "!\n"]);
//! ```
//!
//! Hugging Face `tokenizers` evaluates the same pattern strings with Oniguruma, whose classes
//! (Unicode version, `\s`) may differ from `regex-syntax`'s; the scanners follow `fancy-regex`.

mod ascii;
pub mod chain;
mod deepseek;
mod deepseek_ascii;
mod scan;
pub mod shape;
pub(crate) mod unicode;

use std::sync::OnceLock;

use simdtok_kernels::Kernels;

use scan::{Kind, Scanner};
use shape::Shape;
use unicode::Tables;

/// GPT-2's pattern as `tokenizers`' `ByteLevel` pre-tokenizer has it (`use_regex: true`).
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// tiktoken's `r50k_pat_str` (gpt2, r50k_base, p50k_base, p50k_edit): the same splits.
const GPT2_TIKTOKEN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// cl100k as the `tokenizer.json` files of Llama 3 and gpt-3.5-turbo have it, before and after
/// the digit count.
const CL100K_HEAD: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|";
const CL100K_TAIL: &str = r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
pub(crate) const CL100K: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen 2/3: cl100k with single digits.
pub(crate) const CL100K_1: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// tiktoken's `cl100k_base` pat_str. Not equivalent to [`CL100K`]: `\s++$` makes a whitespace run
/// reaching the end of the text one piece (`"a\n "` → `"a"`, `"\n "`; the `tokenizer.json` form
/// gives `"a"`, `"\n"`, `" "`).
const CL100K_TIKTOKEN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// o200k: tiktoken's `o200k_base` (its parts joined with `|`) and gpt-4o's `tokenizer.json`.
pub(crate) const O200K: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Mistral's `tekken` pattern (Mistral-Nemo, Mistral Small 3, Pixtral, Ministral; Megatron's
/// `PATTERN_TIKTOKEN_V2`): o200k without the contractions and with single digits.
pub(crate) const TEKKEN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// DeepSeek V3's second `Split`: runs of CJK ideographs, hiragana and katakana.
const DEEPSEEK_CJK: &str = "[一-龥぀-ゟ゠-ヿ]+";
/// DeepSeek V3's third `Split`, as its `tokenizer.json` spells it, and with the quote escaped
/// (`\"`, the same class) as other copies spell it.
const DEEPSEEK_WORDS: &str = r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##;
pub(crate) const DEEPSEEK_WORDS_ESCAPED: &str = r##"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##;

/// A pre-tokenizer pattern with a hand-written scanner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// GPT-2, r50k, p50k: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
    /// (tiktoken's `r50k_pat_str` splits identically and is accepted too).
    Gpt2,
    /// cl100k as `tokenizer.json` files have it (Llama 3, gpt-3.5-turbo with `digits: 3`; Qwen 2/3
    /// with `digits: 1`, i.e. `\p{N}`): digit runs are cut into groups of at most `digits`
    /// (`0` reads as `1`).
    Cl100k {
        /// The `k` of `\p{N}{1,k}`.
        digits: u8,
    },
    /// o200k (tiktoken's `o200k_base`, gpt-4o's `tokenizer.json`: the same string).
    O200k,
    /// Mistral's `tekken` (Mistral-Nemo's `tokenizer.json`): o200k without the contractions
    /// (`"don't"` → `"don"`, `"'t"`) and with `\p{N}` for `\p{N}{1,3}` (one digit per piece).
    Tekken,
    /// `\p{N}{1,max}` alone (`\p{N}` for 1): DeepSeek V3's first `Split`. Its matches do not
    /// tile the text (see [`Pattern::tiles`]).
    Numbers {
        /// The `k` of `\p{N}{1,k}`.
        max: u8,
    },
    /// DeepSeek V3's `[一-龥぀-ゟ゠-ヿ]+`; matches only.
    DeepSeekCjk,
    /// DeepSeek V3's word pattern (`[!"#…~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|…`);
    /// matches only.
    DeepSeekWords,
    /// tiktoken's own `cl100k_base` pat_str (possessive quantifiers, `\s++$`): the same pieces as
    /// `Cl100k { digits: 3 }` except that a whitespace run reaching the end of the text is one
    /// piece even when it holds a newline before other whitespace.
    TiktokenCl100k,
}

impl Pattern {
    /// The pattern that `source` (a tokenizer.json Split regex, or a tiktoken pat_str) means, if
    /// a scanner implements it: spelled as the pattern's own source, or written another way with
    /// the same [`Shape`] (escaped or literal control characters, reordered classes, `{1,3}`
    /// written out, `(?i:…)` spelled out: see [`shape`]).
    pub fn from_regex_source(source: &str) -> Option<Pattern> {
        Pattern::from_spelling(source).or_else(|| Pattern::from_shape(&Shape::of(source)?))
    }

    /// The pattern whose source is exactly `source`, without parsing it.
    fn from_spelling(source: &str) -> Option<Pattern> {
        match source {
            GPT2 | GPT2_TIKTOKEN => return Some(Pattern::Gpt2),
            CL100K_TIKTOKEN => return Some(Pattern::TiktokenCl100k),
            O200K => return Some(Pattern::O200k),
            TEKKEN => return Some(Pattern::Tekken),
            DEEPSEEK_CJK => return Some(Pattern::DeepSeekCjk),
            DEEPSEEK_WORDS | DEEPSEEK_WORDS_ESCAPED => return Some(Pattern::DeepSeekWords),
            r"\p{N}" => return Some(Pattern::Numbers { max: 1 }),
            _ => {}
        }
        if let Some(k) = source
            .strip_prefix(r"\p{N}{1,")
            .and_then(|k| k.strip_suffix('}'))
        {
            return group_size(k).map(|max| Pattern::Numbers { max });
        }
        let digits = source
            .strip_prefix(CL100K_HEAD)?
            .strip_suffix(CL100K_TAIL)?;
        if digits == r"\p{N}" {
            return Some(Pattern::Cl100k { digits: 1 });
        }
        let k = digits.strip_prefix(r"\p{N}{1,")?.strip_suffix('}')?;
        group_size(k).map(|digits| Pattern::Cl100k { digits })
    }

    /// The pattern whose regex has the shape `shape`.
    fn from_shape(shape: &Shape) -> Option<Pattern> {
        static FIXED: OnceLock<Vec<(Shape, Pattern)>> = OnceLock::new();
        let fixed = FIXED.get_or_init(|| {
            [
                (GPT2, Pattern::Gpt2),
                (GPT2_TIKTOKEN, Pattern::Gpt2),
                (CL100K_TIKTOKEN, Pattern::TiktokenCl100k),
                (O200K, Pattern::O200k),
                (TEKKEN, Pattern::Tekken),
                (DEEPSEEK_CJK, Pattern::DeepSeekCjk),
                (DEEPSEEK_WORDS, Pattern::DeepSeekWords),
            ]
            .into_iter()
            .map(|(source, pattern)| (Shape::of(source).expect("a known pattern parses"), pattern))
            .collect()
        });
        if let Some((_, pattern)) = fixed.iter().find(|(s, _)| s == shape) {
            return Some(*pattern);
        }
        // The two families with a digit count: try the count the shape's first digit run has.
        let digits = shape::first_run_of(shape, &Shape::of(r"\p{N}")?)?;
        let digits = u8::try_from(digits).ok().filter(|&k| k >= 1)?;
        [Pattern::Numbers { max: digits }, Pattern::Cl100k { digits }]
            .into_iter()
            .find(|p| Shape::of(p.regex_source()).as_ref() == Some(shape))
    }

    /// Whether the matches tile the text (every character in one): all but the match-only
    /// patterns (`Numbers`, `DeepSeekCjk`, `DeepSeekWords`), whose gaps a `Split` keeps.
    pub fn tiles(&self) -> bool {
        !matches!(
            self,
            Pattern::Numbers { .. } | Pattern::DeepSeekCjk | Pattern::DeepSeekWords
        )
    }

    /// The regex this pattern implements (for `Gpt2`, the `tokenizer.json` spelling).
    pub fn regex_source(&self) -> &'static str {
        match *self {
            Pattern::Gpt2 => GPT2,
            Pattern::Cl100k { digits: 0 | 1 } => CL100K_1,
            Pattern::Cl100k { digits: 3 } => CL100K,
            Pattern::Cl100k { digits } => {
                static OTHERS: [OnceLock<String>; 256] = [const { OnceLock::new() }; 256];
                OTHERS[digits as usize]
                    .get_or_init(|| format!(r"{CL100K_HEAD}\p{{N}}{{1,{digits}}}{CL100K_TAIL}"))
            }
            Pattern::O200k => O200K,
            Pattern::Tekken => TEKKEN,
            Pattern::Numbers { max: 0 | 1 } => r"\p{N}",
            Pattern::Numbers { max } => {
                static NUMBERS: [OnceLock<String>; 256] = [const { OnceLock::new() }; 256];
                NUMBERS[max as usize].get_or_init(|| format!(r"\p{{N}}{{1,{max}}}"))
            }
            Pattern::DeepSeekCjk => DEEPSEEK_CJK,
            Pattern::DeepSeekWords => DEEPSEEK_WORDS,
            Pattern::TiktokenCl100k => CL100K_TIKTOKEN,
        }
    }

    fn scanner(self) -> Scanner {
        let tables = Tables::get();
        let (kind, digits, whole_trailing_space) = match self {
            Pattern::Gpt2 => (Kind::Gpt2, usize::MAX, false),
            Pattern::Cl100k { digits } => (Kind::Cl100k, digits.max(1) as usize, false),
            Pattern::O200k => (Kind::O200k, 3, false),
            Pattern::Tekken => (Kind::O200k, 1, false),
            // The match-only patterns use the scanner's tables and runs, never its `next`.
            Pattern::Numbers { max } => (Kind::O200k, max.max(1) as usize, false),
            Pattern::DeepSeekCjk | Pattern::DeepSeekWords => (Kind::O200k, 1, false),
            Pattern::TiktokenCl100k => (Kind::Cl100k, 3, true),
        };
        Scanner {
            kind,
            digits,
            whole_trailing_space,
            // Tekken's letters take none; the match-only patterns have no letter rule.
            contractions: self.tiles() && self != Pattern::Tekken,
            tables,
        }
    }
}

/// The `k` of `\p{N}{1,k}` written canonically (no sign, no leading zero), 1 to 255.
fn group_size(k: &str) -> Option<u8> {
    if k.starts_with('0') || !k.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    k.parse::<u8>().ok().filter(|&k| k >= 1)
}

/// Splits text into pre-tokenizer pieces: a pattern's scanner, or a `fancy-regex` fallback.
pub struct Splitter {
    inner: Inner,
    kernels: &'static Kernels,
}

enum Inner {
    Scan(Box<Scan>),
    Regex(Box<fancy_regex::Regex>),
}

struct Scan {
    pattern: Pattern,
    scanner: Scanner,
    fast: ascii::Fast,
}

impl std::fmt::Debug for Splitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Scan(scan) => f
                .debug_struct("Splitter")
                .field("pattern", &scan.pattern)
                .field("tier", &self.kernels.tier())
                .finish(),
            Inner::Regex(re) => f
                .debug_struct("Splitter")
                .field("regex", &re.as_str())
                .finish(),
        }
    }
}

impl Splitter {
    /// The scanner of `pattern`, running on `kernels`.
    pub fn new(pattern: Pattern, kernels: &'static Kernels) -> Splitter {
        let scanner = pattern.scanner();
        Splitter {
            inner: Inner::Scan(Box::new(Scan {
                pattern,
                scanner,
                fast: ascii::Fast::new(scanner),
            })),
            kernels,
        }
    }

    /// Any other regex: a `fancy_regex` fallback (the generic path for tokenizer.json patterns
    /// without a scanner). A source that [`Pattern::from_regex_source`] knows gets its scanner.
    /// Err: the regex does not compile.
    pub fn from_regex(source: &str, kernels: &'static Kernels) -> Result<Splitter, String> {
        if let Some(pattern) = Pattern::from_regex_source(source) {
            return Ok(Splitter::new(pattern, kernels));
        }
        let regex = fancy_regex::Regex::new(source).map_err(|e| format!("{source:?}: {e}"))?;
        Ok(Splitter {
            inner: Inner::Regex(Box::new(regex)),
            kernels,
        })
    }

    /// The source of a fallback regex that costs more than a scan (one that runs on
    /// `fancy-regex`, no scanner implementing it); `None` for a scanner, and for a regex of
    /// literal strings (a `String` split pattern), which the regex engine finds with `memchr`.
    pub fn fallback_regex(&self) -> Option<&str> {
        match &self.inner {
            Inner::Scan(_) => None,
            Inner::Regex(re) => match Shape::of(re.as_str()) {
                Some(Shape::Words(_)) => None,
                _ => Some(re.as_str()),
            },
        }
    }

    /// The pattern of a scanner, `None` for a fallback regex.
    pub fn pattern(&self) -> Option<Pattern> {
        match &self.inner {
            Inner::Scan(scan) => Some(scan.pattern),
            Inner::Regex(_) => None,
        }
    }

    /// Calls `piece(start, end)` for each match, in order (byte offsets). For the scanners the
    /// matches tile `text` (save the match-only patterns: [`Pattern::tiles`]); for those and a
    /// fallback regex, the gaps between matches are NOT reported (the caller gets matches only,
    /// like tiktoken's find_iter). Should the fallback regex fail at
    /// run time (`fancy-regex`'s backtracking limit), the rest of the text after the last match is
    /// reported as one piece rather than dropped.
    pub fn split(&self, text: &str, mut piece: impl FnMut(usize, usize)) {
        match &self.inner {
            Inner::Scan(scan) => match scan.pattern {
                Pattern::Numbers { .. } => {
                    deepseek::numbers(self.kernels, &scan.scanner, text.as_bytes(), &mut piece)
                }
                Pattern::DeepSeekCjk => {
                    deepseek::cjk_runs(self.kernels, text.as_bytes(), &mut piece)
                }
                Pattern::DeepSeekWords => {
                    deepseek::words(self.kernels, &scan.scanner, text.as_bytes(), &mut piece)
                }
                _ => scan
                    .fast
                    .split(self.kernels, &scan.scanner, text, &mut piece),
            },
            Inner::Regex(re) => {
                let mut last = 0;
                for m in re.find_iter(text) {
                    match m {
                        Ok(m) => {
                            piece(m.start(), m.end());
                            last = m.end();
                        }
                        Err(_) => {
                            if last < text.len() {
                                piece(last, text.len());
                            }
                            return;
                        }
                    }
                }
            }
        }
    }
}
