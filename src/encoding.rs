//! The result of encoding one text: ids, byte spans into the text, and (when asked for) the
//! token strings.

/// Tokens of one text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoding {
    /// Token ids.
    pub ids: Vec<u32>,
    /// For each token, `[begin, end)` byte offsets into the original text.
    pub offsets: Vec<(u32, u32)>,
    /// For each token, its string as the reference shows it; empty unless requested.
    pub pieces: Vec<String>,
}

impl Encoding {
    /// Empties all fields, keeping their capacity.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.offsets.clear();
        self.pieces.clear();
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub(crate) fn push(&mut self, id: u32, span: (u32, u32), piece: Option<String>) {
        self.ids.push(id);
        self.offsets.push(span);
        if let Some(p) = piece {
            self.pieces.push(p);
        }
    }

    /// Extends the last token to `end`, appending `more` to its string.
    pub(crate) fn extend_last(&mut self, end: u32, more: Option<&[u8]>) {
        if let Some(span) = self.offsets.last_mut() {
            span.1 = end;
        }
        if let (Some(p), Some(more)) = (self.pieces.last_mut(), more) {
            p.push_str(&String::from_utf8_lossy(more));
        }
    }
}
