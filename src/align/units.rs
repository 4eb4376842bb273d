//! The units the diff compares: each token lowercased, then NFKD-normalized (the reference's
//! order: `text.to_lowercase().nfkd()`), concatenated, with the start of every token.
//!
//! When every token of both sides is ASCII, the units are bytes (lowercased by table; NFKD
//! leaves ASCII alone), so the diff compares 8 of them a word and the buffers are a quarter the
//! size; otherwise they are `u32` scalar values.

use unicode_normalization::UnicodeNormalization;

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
    fn push_ascii_lowercase(&self, out: &mut Vec<u8>);
    fn is_ascii(&self) -> bool;
}

impl<S: AsRef<str>> TokenText for S {
    fn push_normalized(&self, out: &mut Vec<u32>) {
        let text = self.as_ref();
        if text.is_ascii() {
            out.extend(text.bytes().map(|b| u32::from(b.to_ascii_lowercase())));
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

    fn push_ascii_lowercase(&self, out: &mut Vec<u8>) {
        out.extend(self.as_ref().bytes().map(|b| b.to_ascii_lowercase()));
    }

    fn is_ascii(&self) -> bool {
        self.as_ref().is_ascii()
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
        } else {
            out.extend(self.0.to_lowercase().nfkd().map(u32::from));
        }
    }

    fn push_ascii_lowercase(&self, out: &mut Vec<u8>) {
        out.push((self.0 as u8).to_ascii_lowercase());
    }

    fn is_ascii(&self) -> bool {
        self.0.is_ascii()
    }
}

/// Fills `side` with the normalized characters of `tokens`.
pub(crate) fn normalize_wide<T: TokenText>(tokens: impl Iterator<Item = T>, side: &mut Side<u32>) {
    side.clear();
    for token in tokens {
        token.push_normalized(&mut side.units);
        side.starts.push(side.units.len());
    }
}

/// Fills `side` with the lowercased bytes of `tokens`, all of which are ASCII.
pub(crate) fn normalize_ascii<T: TokenText>(tokens: impl Iterator<Item = T>, side: &mut Side<u8>) {
    side.clear();
    for token in tokens {
        token.push_ascii_lowercase(&mut side.units);
        side.starts.push(side.units.len());
    }
}
