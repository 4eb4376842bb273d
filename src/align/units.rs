//! The units the diff compares: each token lowercased, then NFKD-normalized (the reference's
//! order: `text.to_lowercase().nfkd()`), concatenated, with the start of every token.
//!
//! When every token of both sides is ASCII, the units are bytes (lowercased by table; NFKD
//! leaves ASCII alone), so the diff compares 8 of them a word and the buffers are a quarter the
//! size; otherwise they are `u32` scalar values.

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

/// Characters below this (Latin-1, Latin Extended-A and -B, IPA, spacing modifiers) are
/// normalized by table: each one's lowercased NFKD form starts with a starter (canonical
/// combining class 0; the test `table_chars_start_with_starters` checks every one), so no
/// reordering of combining marks crosses from one to the next and a token of them normalizes
/// as the concatenation of its characters' forms. Every combining mark is at U+0300 or above.
const TABLE_END: u32 = 0x300;

/// The lowercased NFKD form of every character below [`TABLE_END`], made by the reference's
/// own path: `forms[start[c]..start[c + 1]]`.
struct Table {
    start: Vec<u32>,
    forms: Vec<u32>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut start = vec![0];
        let mut forms = Vec::new();
        for c in (0..TABLE_END).map(|c| char::from_u32(c).expect("below the surrogates")) {
            forms.extend(c.to_string().to_lowercase().nfkd().map(u32::from));
            start.push(forms.len() as u32);
        }
        Table { start, forms }
    })
}

/// Appends the normalized form of `text` by [`table`], or returns `false` (with `out` as it
/// was) if a character of `text` is not in it.
fn push_by_table(text: &str, out: &mut Vec<u32>) -> bool {
    let table = table();
    let len = out.len();
    for c in text.chars() {
        let c = c as usize;
        if c >= TABLE_END as usize {
            out.truncate(len);
            return false;
        }
        let (from, to) = (table.start[c] as usize, table.start[c + 1] as usize);
        out.extend_from_slice(&table.forms[from..to]);
    }
    true
}

/// One side's normalized text: `units`, and `starts[i]..starts[i + 1]` the units of token `i`.
#[derive(Debug, Default)]
pub(crate) struct Side<U> {
    pub units: Vec<U>,
    pub starts: Vec<usize>,
}

impl<U> Side<U> {
    pub fn clear(&mut self) {
        self.units.clear();
        self.starts.clear();
        self.starts.push(0);
    }
}

/// A token for the normalizer: a string, or (for the character maps) one character.
pub(crate) trait TokenText {
    /// Appends this token's normalized characters to `out`.
    fn push_normalized(&self, out: &mut Vec<u32>);
    /// Appends this token's normalized bytes to `out`; only called when the token is ASCII.
    /// Appends this token's lowercased bytes to `out` and says whether it is ASCII (if not,
    /// what was appended is of no use: the pair is normalized as scalar values instead).
    fn push_ascii_lowercase(&self, out: &mut Vec<u8>) -> bool;
}

impl<S: AsRef<str>> TokenText for S {
    fn push_normalized(&self, out: &mut Vec<u32>) {
        let text = self.as_ref();
        if text.is_ascii() {
            out.extend(text.bytes().map(|b| u32::from(b.to_ascii_lowercase())));
        } else if push_by_table(text, out) {
            // Latin letters with accents, and GPT-2's byte alphabet (Ġ, Ċ, …).
        } else if text.contains('\u{3a3}') {
            // Capital sigma lowercases by its context (final or not): only str::to_lowercase
            // knows the rule, so such tokens take the reference's own path.
            out.extend(text.to_lowercase().nfkd().map(u32::from));
        } else {
            // Without a capital sigma, str::to_lowercase is char::to_lowercase of each char.
            out.extend(
                text.chars()
                    .flat_map(char::to_lowercase)
                    .nfkd()
                    .map(u32::from),
            );
        }
    }

    fn push_ascii_lowercase(&self, out: &mut Vec<u8>) -> bool {
        // Byte by byte: tokens are a few bytes, where a copy call and a second pass cost more.
        let mut high = 0;
        out.extend(self.as_ref().bytes().map(|b| {
            high |= b;
            b.to_ascii_lowercase()
        }));
        high < 0x80
    }
}

/// One character as a token (the reference's `get_charmap` turns each character into a string).
#[derive(Clone, Copy)]
pub(crate) struct CharToken(pub char);

impl TokenText for CharToken {
    fn push_normalized(&self, out: &mut Vec<u32>) {
        // A lone character has no context, so str::to_lowercase of it is char::to_lowercase
        // (a lone capital sigma is not word-final: it becomes σ).
        if self.0.is_ascii() {
            out.push(u32::from(self.0.to_ascii_lowercase()));
        } else if (self.0 as u32) < TABLE_END {
            let table = table();
            let c = self.0 as usize;
            let (from, to) = (table.start[c] as usize, table.start[c + 1] as usize);
            out.extend_from_slice(&table.forms[from..to]);
        } else {
            out.extend(self.0.to_lowercase().nfkd().map(u32::from));
        }
    }

    fn push_ascii_lowercase(&self, out: &mut Vec<u8>) -> bool {
        out.push((self.0 as u8).to_ascii_lowercase());
        self.0.is_ascii()
    }
}

/// A unit that tokens normalize into: bytes for all-ASCII pairs, scalar values for the others.
pub(crate) trait Normalized: Sized {
    /// Appends the token's units; `false` if it has none of this type (non-ASCII as bytes).
    fn push_token<T: TokenText>(token: &T, out: &mut Vec<Self>) -> bool;
}

impl Normalized for u8 {
    fn push_token<T: TokenText>(token: &T, out: &mut Vec<u8>) -> bool {
        token.push_ascii_lowercase(out)
    }
}

impl Normalized for u32 {
    fn push_token<T: TokenText>(token: &T, out: &mut Vec<u32>) -> bool {
        token.push_normalized(out);
        true
    }
}

/// Fills `side` with the normalized units of `tokens`, or returns `false` at the first token
/// that has none of this type.
pub(crate) fn normalize<U: Normalized, T: TokenText>(
    tokens: impl Iterator<Item = T>,
    side: &mut Side<U>,
) -> bool {
    side.clear();
    for token in tokens {
        if !U::push_token(&token, &mut side.units) {
            return false;
        }
        side.starts.push(side.units.len());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_normalization::char::canonical_combining_class;

    #[test]
    fn table_chars_start_with_starters() {
        for c in (0..TABLE_END).filter_map(char::from_u32) {
            let form: Vec<char> = c.to_string().to_lowercase().nfkd().collect();
            if let Some(&first) = form.first() {
                assert_eq!(canonical_combining_class(first), 0, "{c:?} → {form:?}");
            }
        }
    }

    #[test]
    fn tokens_normalize_as_the_reference() {
        let tokens = [
            "Ġthe",
            "ÀÉÎõü",
            "ǅǈǋ",
            "İstanbul",
            "ΣΑΣ",
            "e\u{301}\u{323}",
            "ﬁ",
            "½",
            "Äb\u{308}",
        ];
        for token in tokens {
            let mut got = Vec::new();
            token.push_normalized(&mut got);
            let want: Vec<u32> = token.to_lowercase().nfkd().map(u32::from).collect();
            assert_eq!(got, want, "{token:?}");
        }
    }
}
