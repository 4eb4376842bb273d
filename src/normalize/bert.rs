//! The BERT normalizer (`BertNormalizer` of Hugging Face `tokenizers`), one character at a time.
//!
//! The reference runs four passes over the whole text — clean, isolate CJK, strip accents (NFD,
//! then drop nonspacing marks), lowercase — each keeping an alignment per byte. Every output
//! character comes from exactly one input character and inherits its span, so the same result
//! comes from running the four steps on each character in turn, which is what this does. The
//! one thing a per-character NFD cannot do is reorder combining marks across characters; with
//! accents stripped the nonspacing marks are gone anyway, and the few spacing marks with a
//! non-zero combining class (musical symbols U+1D165…, Hangul tone marks U+302E/F) are not
//! reordered here.

use unicode_normalization_alignments::char::decompose_canonical;

use super::bert_chars::{self, CHANGES_LOWER, CHINESE, DECOMPOSES, DROP, NONSPACING_MARK};

/// The options of a `BertNormalizer`, with `strip_accents` resolved (unset follows
/// `lowercase`, as in the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BertNormalizer {
    /// Drop control characters, map whitespace to spaces.
    pub clean_text: bool,
    /// Surround CJK ideographs with spaces.
    pub handle_chinese_chars: bool,
    /// NFD, then drop nonspacing marks.
    pub strip_accents: bool,
    /// `char::to_lowercase`, character by character.
    pub lowercase: bool,
}

impl BertNormalizer {
    /// The options as a `tokenizer.json` or `BertWordPieceTokenizer` gives them.
    pub fn new(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
    ) -> BertNormalizer {
        BertNormalizer {
            clean_text,
            handle_chinese_chars,
            strip_accents: strip_accents.unwrap_or(lowercase),
            lowercase,
        }
    }

    /// What becomes of one input character.
    #[inline]
    pub fn classify(&self, c: char) -> CharAction {
        let f = bert_chars::flags(c);
        if self.clean_text && f & DROP != 0 {
            CharAction::Drop
        } else if self.handle_chinese_chars && f & CHINESE != 0 {
            CharAction::Isolate
        } else if (self.strip_accents && f & (DECOMPOSES | NONSPACING_MARK) != 0)
            || (self.lowercase && f & CHANGES_LOWER != 0)
        {
            CharAction::Transform
        } else {
            CharAction::Keep
        }
    }

    /// The characters `c` becomes after accent stripping and lowercasing (for a character that
    /// [`BertNormalizer::classify`] did not drop). Whitespace is not mapped here: to the
    /// pre-tokenizer every whitespace character is the same boundary.
    #[inline]
    pub fn transform(&self, c: char, mut emit: impl FnMut(char)) {
        let mut lower = |d: char| {
            if self.lowercase && bert_chars::flags(d) & CHANGES_LOWER != 0 {
                d.to_lowercase().for_each(&mut emit);
            } else {
                emit(d);
            }
        };
        if self.strip_accents {
            decompose_canonical(c, |d| {
                if bert_chars::flags(d) & NONSPACING_MARK == 0 {
                    lower(d);
                }
            });
        } else {
            lower(c);
        }
    }
}

/// What the normalizer does with one input character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharAction {
    /// Removed (`clean_text`).
    Drop,
    /// A CJK ideograph: a word of its own (after [`BertNormalizer::transform`]).
    Isolate,
    /// Changed by [`BertNormalizer::transform`].
    Transform,
    /// Unchanged.
    Keep,
}
