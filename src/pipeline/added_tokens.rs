//! Added tokens (`[CLS]`, `<|endoftext|>`, …) found in the raw text before anything else runs,
//! as `tokenizers`' `AddedVocabulary` does for tokens with `normalized: false`: leftmost-longest
//! matches, with its `single_word`, `lstrip` and `rstrip` rules.

use simdtok_kernels::{ByteSet, DoubleArray, Kernels};

/// One added token, as a `tokenizer.json` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    /// The id.
    pub id: u32,
    /// The text.
    pub content: String,
    /// Only a whole word: no word character just before or after the match.
    pub single_word: bool,
    /// The match takes the whitespace before it.
    pub lstrip: bool,
    /// The match takes the whitespace after it.
    pub rstrip: bool,
    /// Matched against the normalized text rather than the raw one.
    pub normalized: bool,
    /// Skipped by decoding.
    pub special: bool,
}

/// A piece of the input: plain text, or an added token (with the span it covers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Text to normalize and encode, `[start, end)`.
    Text(usize, usize),
    /// An added token's id and the span of the input it takes.
    Token(u32, usize, usize),
}

/// The matcher of the raw-text added tokens.
#[derive(Debug)]
pub struct AddedTokens {
    tokens: Vec<AddedToken>,
    /// Contents → index in `tokens`.
    trie: Option<DoubleArray>,
    /// First bytes of the contents: positions worth a trie walk.
    first_bytes: ByteSet,
}

impl AddedTokens {
    /// The matcher of `tokens` (those with `normalized: true` must have been refused before).
    pub fn new(tokens: Vec<AddedToken>) -> Result<AddedTokens, String> {
        Self::matching(tokens, |_| true)
    }

    /// [`AddedTokens::new`], with only the tokens for which `matched` holds looked for in text
    /// ([`AddedTokens::split`]); all of them are the [`AddedTokens::tokens`].
    pub fn matching(
        tokens: Vec<AddedToken>,
        matched: impl Fn(&AddedToken) -> bool,
    ) -> Result<AddedTokens, String> {
        // The reference's automaton keeps one value per distinct content: the last one added.
        let mut entries: Vec<(&[u8], u32)> = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            if t.content.is_empty() || !matched(t) {
                continue;
            }
            if t.content.as_bytes().contains(&0) {
                return Err(format!(
                    "added token {:?} contains NUL, which is not supported",
                    t.content
                ));
            }
            match entries.iter_mut().find(|(k, _)| *k == t.content.as_bytes()) {
                Some(entry) => entry.1 = i as u32,
                None => entries.push((t.content.as_bytes(), i as u32)),
            }
        }
        let first: Vec<u8> = entries.iter().map(|(k, _)| k[0]).collect();
        let trie = if entries.is_empty() {
            None
        } else {
            Some(DoubleArray::build(&entries).map_err(|e| format!("added tokens: {e}"))?)
        };
        Ok(AddedTokens {
            tokens,
            trie,
            first_bytes: ByteSet::of_bytes(&first),
        })
    }

    /// The tokens.
    pub fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    /// Whether any token can match.
    pub fn is_empty(&self) -> bool {
        self.trie.is_none()
    }

    /// The added token whose content is `token`, if any.
    pub fn find(&self, token: &str) -> Option<&AddedToken> {
        self.tokens.iter().rev().find(|t| t.content == token)
    }

    /// Cuts `text` into plain text and added tokens, in order, covering it exactly.
    pub fn split(&self, kernels: &Kernels, text: &str, out: &mut Vec<Split>) {
        out.clear();
        let Some(trie) = &self.trie else {
            if !text.is_empty() {
                out.push(Split::Text(0, text.len()));
            }
            return;
        };
        let bytes = text.as_bytes();
        let mut done = 0; // everything before is in `out`
        let mut at = 0;
        while let Some(pos) = kernels.find_in(&self.first_bytes, bytes, at) {
            at = pos + 1;
            let mut longest = None;
            kernels.trie_prefix_walk(trie, &bytes[pos..], |len, i| longest = Some((len, i)));
            let Some((len, i)) = longest else { continue };
            let token = &self.tokens[i as usize];
            let (mut start, mut stop) = (pos, pos + len as usize);
            if token.single_word
                && (ends_with_word(&text[..start]) || starts_with_word(&text[stop..]))
            {
                // The reference's automaton has consumed the match all the same: the search
                // goes on after it.
                at = stop;
                continue;
            }
            if token.lstrip {
                let trimmed = text[..start].trim_end_matches(char::is_whitespace).len();
                start = trimmed.max(done);
            }
            if token.rstrip {
                stop = text.len() - text[stop..].trim_start_matches(char::is_whitespace).len();
            }
            if done < start {
                out.push(Split::Text(done, start));
            }
            out.push(Split::Token(token.id, start, stop));
            done = stop;
            at = stop;
        }
        if done < text.len() {
            out.push(Split::Text(done, text.len()));
        }
    }
}

/// A character of the regex class `\w` (alphabetic, marks, decimal digits, connector
/// punctuation, joiners), as the reference's `single_word` test uses it.
fn is_word_char(c: char) -> bool {
    use unicode_categories::UnicodeCategories;
    c.is_alphanumeric()
        || c.is_mark()
        || c.is_punctuation_connector()
        || matches!(c, '\u{200C}' | '\u{200D}')
}

fn ends_with_word(s: &str) -> bool {
    s.chars().next_back().is_some_and(is_word_char)
}

fn starts_with_word(s: &str) -> bool {
    s.chars().next().is_some_and(is_word_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(id: u32, content: &str) -> AddedToken {
        AddedToken {
            id,
            content: content.into(),
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: false,
            special: true,
        }
    }

    fn split(tokens: Vec<AddedToken>, text: &str) -> Vec<Split> {
        let matcher = AddedTokens::new(tokens).unwrap();
        let mut out = Vec::new();
        matcher.split(Kernels::scalar(), text, &mut out);
        out
    }

    #[test]
    fn leftmost_longest() {
        let toks = vec![token(1, "[CLS]"), token(2, "[CLS]x"), token(3, "S]")];
        assert_eq!(
            split(toks, "a[CLS]xb[CLS]"),
            vec![
                Split::Text(0, 1),
                Split::Token(2, 1, 7),
                Split::Text(7, 8),
                Split::Token(1, 8, 13)
            ]
        );
    }

    #[test]
    fn strip_and_single_word() {
        let mut t = token(7, "<m>");
        t.lstrip = true;
        t.rstrip = true;
        assert_eq!(
            split(vec![t], "a  <m>  b"),
            vec![Split::Text(0, 1), Split::Token(7, 1, 8), Split::Text(8, 9)]
        );
        let mut w = token(8, "ab");
        w.single_word = true;
        assert_eq!(
            split(vec![w], "xab ab"),
            vec![Split::Text(0, 4), Split::Token(8, 4, 6)]
        );
    }
}
