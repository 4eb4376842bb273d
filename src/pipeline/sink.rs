//! Where a pipeline puts tokens: ids only (the fast path), or ids with offsets.

use crate::encoding::Encoding;
use crate::models::byte_bpe::PieceToken;

/// A receiver of tokens with their `[start, end)` byte spans in the input.
pub(crate) trait Sink {
    /// Whether the spans are kept: pipelines may skip the work of computing them when not.
    const OFFSETS: bool = true;

    fn push(&mut self, id: u32, start: usize, end: usize);

    /// Pushes consecutive `tokens`, the first starting at byte `at`.
    #[inline]
    fn push_tokens(&mut self, at: usize, tokens: &[PieceToken]) {
        push_each(self, at, tokens.iter().copied());
    }

    /// The text the added token just pushed took, when it is more than its content (the
    /// whitespace `lstrip`/`rstrip` took): the reference shows that as the token's string.
    #[inline]
    fn added_text(&mut self, _text: &str) {}
}

/// Pushes consecutive `tokens` into `sink` one by one, the first starting at byte `at`.
#[inline]
pub(crate) fn push_each<S: Sink + ?Sized>(
    sink: &mut S,
    at: usize,
    tokens: impl IntoIterator<Item = PieceToken>,
) {
    let mut start = at;
    for t in tokens {
        sink.push(t.id, start, start + t.len as usize);
        start += t.len as usize;
    }
}

impl Sink for Vec<u32> {
    const OFFSETS: bool = false;

    #[inline]
    fn push(&mut self, id: u32, _start: usize, _end: usize) {
        Vec::push(self, id);
    }

    /// One reservation for all (random text makes about a token per byte).
    #[inline]
    fn push_tokens(&mut self, _at: usize, tokens: &[PieceToken]) {
        self.extend(tokens.iter().map(|t| t.id));
    }
}

impl Sink for Encoding {
    #[inline]
    fn push(&mut self, id: u32, start: usize, end: usize) {
        self.push_token(id, start, end);
    }
}

impl Encoding {
    #[inline]
    fn push_token(&mut self, id: u32, start: usize, end: usize) {
        self.ids.push(id);
        self.offsets.push((start as u32, end as u32));
    }
}

/// An [`Encoding`] being filled, and the strings of the added tokens that took more than their
/// content (see [`Sink::added_text`]): index and text.
pub(crate) struct TakingEncoding<'a> {
    pub encoding: &'a mut Encoding,
    pub taken: Vec<(usize, String)>,
}

impl Sink for TakingEncoding<'_> {
    #[inline]
    fn push(&mut self, id: u32, start: usize, end: usize) {
        self.encoding.push_token(id, start, end);
    }

    fn added_text(&mut self, text: &str) {
        if let Some(last) = self.encoding.ids.len().checked_sub(1) {
            self.taken.push((last, text.to_owned()));
        }
    }
}
