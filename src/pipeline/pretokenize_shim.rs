//! TEMPORARY: the real regex until the hand-written scanners of `crate::pretokenize` land;
//! same API.

use simdtok_kernels::Kernels;

/// See `crate::pretokenize::Pattern`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// gpt2 / r50k / p50k.
    Gpt2,
    /// cl100k.
    Cl100k {
        /// Digits per group.
        digits: u8,
    },
    /// o200k.
    O200k,
}

impl Pattern {
    /// The regex.
    pub fn regex_source(&self) -> &'static str {
        match self {
            Pattern::Gpt2 => {
                r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"
            }
            Pattern::Cl100k { .. } => {
                r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
            }
            Pattern::O200k => concat!(
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                "|",
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            ),
        }
    }
}

/// See `crate::pretokenize::Splitter`.
#[derive(Debug)]
pub struct Splitter(fancy_regex::Regex);

impl Splitter {
    /// The splitter of `pattern`.
    pub fn new(pattern: Pattern, _kernels: &'static Kernels) -> Splitter {
        Splitter(fancy_regex::Regex::new(pattern.regex_source()).expect("valid"))
    }

    /// Calls `piece(start, end)` for each match.
    pub fn split(&self, text: &str, mut piece: impl FnMut(usize, usize)) {
        for m in self.0.find_iter(text) {
            let m = m.expect("no backtrack limit on these patterns");
            piece(m.start(), m.end());
        }
    }
}

impl Splitter {
    /// Any regex (fancy-regex syntax).
    pub fn from_regex(source: &str, _kernels: &'static Kernels) -> Result<Splitter, String> {
        fancy_regex::Regex::new(source)
            .map(Splitter)
            .map_err(|e| format!("the pre-tokenizer regex does not compile: {e}"))
    }
}
