//! Where a pipeline puts tokens: ids only (the fast path), or ids with offsets.

use crate::encoding::Encoding;

/// A receiver of tokens with their `[start, end)` byte spans in the input.
pub(crate) trait Sink {
    /// Whether the spans are kept: pipelines may skip the work of computing them when not.
    const OFFSETS: bool = true;

    fn push(&mut self, id: u32, start: usize, end: usize);
}

impl Sink for Vec<u32> {
    const OFFSETS: bool = false;

    #[inline]
    fn push(&mut self, id: u32, _start: usize, _end: usize) {
        Vec::push(self, id);
    }
}

impl Sink for Encoding {
    #[inline]
    fn push(&mut self, id: u32, start: usize, end: usize) {
        self.ids.push(id);
        self.offsets.push((start as u32, end as u32));
    }
}
