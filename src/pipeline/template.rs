//! The tokens a post-processor's template puts around every text (`[CLS] … [SEP]`, `<s>`), as
//! the pipelines add them: before a text's first part and after its last, with the offsets
//! `(0, 0)` the references give them.

use crate::pipeline::PartPlace;
use crate::pipeline::sink::Sink;

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Template {
    prefix: Vec<u32>,
    suffix: Vec<u32>,
}

impl Template {
    /// The template of `prefix` and `suffix` when `add_special_tokens`, else one that adds
    /// nothing.
    pub fn new(prefix: &[u32], suffix: &[u32], add_special_tokens: bool) -> Template {
        if !add_special_tokens {
            return Template::default();
        }
        Template {
            prefix: prefix.to_vec(),
            suffix: suffix.to_vec(),
        }
    }

    /// Whether it adds any token: then the two halves of a text are not texts of their own (no
    /// safe cuts), though they are parts of it.
    pub fn adds_tokens(&self) -> bool {
        !(self.prefix.is_empty() && self.suffix.is_empty())
    }

    /// How many tokens it appends to a text.
    pub fn suffix_len(&self) -> usize {
        self.suffix.len()
    }

    /// The tokens before the text when `place` is its first part (none otherwise), for a
    /// pipeline that writes ids without a [`Sink`].
    pub fn prefix_at(&self, place: PartPlace) -> &[u32] {
        if place.first { &self.prefix } else { &[] }
    }

    /// The tokens after the text when `place` is its last part (none otherwise).
    pub fn suffix_at(&self, place: PartPlace) -> &[u32] {
        if place.last { &self.suffix } else { &[] }
    }

    /// Pushes the tokens before the text, when `place` is its first part.
    #[inline]
    pub fn open<S: Sink>(&self, place: PartPlace, sink: &mut S) {
        if place.first {
            for &id in &self.prefix {
                sink.push(id, 0, 0);
            }
        }
    }

    /// Pushes the tokens after the text, when `place` is its last part.
    #[inline]
    pub fn close<S: Sink>(&self, place: PartPlace, sink: &mut S) {
        if place.last {
            for &id in &self.suffix {
                sink.push(id, 0, 0);
            }
        }
    }
}
