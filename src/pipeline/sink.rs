//! Where a pipeline puts tokens: ids only (the fast path), or ids with offsets.

use crate::encoding::Encoding;
use crate::models::token::PieceToken;

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

    /// Pushes the first `n` of `ids` (at most four), consecutive tokens from byte `at` whose
    /// ends, relative to `at`, are `ends`: a cached piece.
    #[inline]
    fn push_cached(&mut self, at: usize, ids: &[u32; 4], ends: &[u8; 4], n: usize) {
        push_cached_each(self, at, ids, ends, n);
    }

    /// The output vector, when the sink keeps ids and nothing else: [`IdsCursor`] then writes
    /// into it directly.
    #[inline]
    fn ids_only(&mut self) -> Option<&mut Vec<u32>> {
        None
    }

    /// The text the added token just pushed took, when it is more than its content (the
    /// whitespace `lstrip`/`rstrip` took): the reference shows that as the token's string.
    #[inline]
    fn added_text(&mut self, _text: &str) {}
}

/// How [`MapSpans`] moves a token's span: the reference's offsets of the token whose bytes are
/// `start..end` of what the pipeline encoded.
pub(crate) trait SpanMap {
    fn map(&mut self, start: usize, end: usize) -> (usize, usize);
}

/// A sink that hands tokens on to `sink` with their spans moved by `map`. When `sink` keeps no
/// spans, every call goes to it as it is, so that the ids' fast paths (`ids_only`, cached
/// pieces written four ids at a time) stay.
pub(crate) struct MapSpans<'a, S: Sink, M: SpanMap> {
    pub sink: &'a mut S,
    pub map: M,
}

impl<S: Sink, M: SpanMap> Sink for MapSpans<'_, S, M> {
    const OFFSETS: bool = S::OFFSETS;

    #[inline]
    fn push_tokens(&mut self, at: usize, tokens: &[PieceToken]) {
        if !S::OFFSETS {
            return self.sink.push_tokens(at, tokens);
        }
        push_each(self, at, tokens.iter().copied());
    }

    #[inline]
    fn ids_only(&mut self) -> Option<&mut Vec<u32>> {
        if S::OFFSETS {
            return None;
        }
        self.sink.ids_only()
    }

    #[inline]
    fn push_cached(&mut self, at: usize, ids: &[u32; 4], ends: &[u8; 4], n: usize) {
        if !S::OFFSETS {
            return self.sink.push_cached(at, ids, ends, n);
        }
        push_cached_each(self, at, ids, ends, n);
    }

    #[inline]
    fn push(&mut self, id: u32, start: usize, end: usize) {
        if !S::OFFSETS {
            return self.sink.push(id, start, end);
        }
        let (start, end) = self.map.map(start, end);
        self.sink.push(id, start, end);
    }
}

/// `start..end` widened to the characters of `text` it touches: a token that starts or ends
/// inside a character (a byte-level token of part of one) is given the whole character, as the
/// reference's offsets are.
#[inline]
pub(crate) fn widen_to_chars(text: &str, start: usize, end: usize) -> (usize, usize) {
    let mut s = start;
    while !text.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = end;
    while !text.is_char_boundary(e) {
        e += 1;
    }
    (s, e)
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

/// [`Sink::push_cached`] one token at a time through `push`.
#[inline]
pub(crate) fn push_cached_each<S: Sink + ?Sized>(
    sink: &mut S,
    at: usize,
    ids: &[u32; 4],
    ends: &[u8; 4],
    n: usize,
) {
    let mut start = at;
    for (&id, &end) in ids.iter().zip(ends).take(n) {
        sink.push(id, start, at + end as usize);
        start = at + end as usize;
    }
}

impl Sink for Vec<u32> {
    const OFFSETS: bool = false;

    #[inline]
    fn ids_only(&mut self) -> Option<&mut Vec<u32>> {
        Some(self)
    }

    #[inline]
    fn push(&mut self, id: u32, _start: usize, _end: usize) {
        Vec::push(self, id);
    }

    /// All four ids written, the length moved by `n`: no loop whose count (one token or two,
    /// word by word) the branch predictor would have to guess. ([`IdsCursor::push_four`] does
    /// the same over many pieces; a cursor made for one piece measured 3 % slower on lines.)
    #[inline]
    fn push_cached(&mut self, _at: usize, ids: &[u32; 4], _ends: &[u8; 4], n: usize) {
        debug_assert!(n <= 4);
        self.reserve(4);
        let len = self.len();
        // SAFETY: `reserve(4)` leaves room for four more ids past `len`, so the write stays in
        // the allocation; the length grows by `n <= 4` of them, all initialised.
        unsafe {
            self.as_mut_ptr()
                .add(len)
                .cast::<[u32; 4]>()
                .write_unaligned(*ids);
            self.set_len(len + n.min(4));
        }
    }

    /// One reservation for all (random text makes about a token per byte).
    #[inline]
    fn push_tokens(&mut self, _at: usize, tokens: &[PieceToken]) {
        self.extend(tokens.iter().map(|t| t.id));
    }
}

/// Appends ids to a vector through a length, room and pointer kept in registers across a loop
/// over many pieces: through `Vec::push` (or `&mut Vec` in general), every token reloaded the
/// vector's length and pointer from memory and stored the length back, since the calls between
/// pushes might have moved them. The vector's length is brought up to date when the cursor is
/// dropped, and before the vector is lent out ([`IdsCursor::with_vec`]).
pub(crate) struct IdsCursor<'a> {
    ids: &'a mut Vec<u32>,
    /// Ids written: `ids[..len]` are initialised.
    len: usize,
    /// `capacity - len`.
    room: usize,
    /// `ids.as_mut_ptr()`.
    base: *mut u32,
    /// How many ids to reserve room for when it runs out.
    grow_by: usize,
}

impl<'a> IdsCursor<'a> {
    /// A cursor at the end of `ids`, with room for `expected` more ids reserved.
    #[inline]
    pub fn new(ids: &'a mut Vec<u32>, expected: usize) -> IdsCursor<'a> {
        let grow_by = expected.max(16);
        ids.reserve(grow_by);
        let len = ids.len();
        IdsCursor {
            room: ids.capacity() - len,
            base: ids.as_mut_ptr(),
            len,
            ids,
            grow_by,
        }
    }

    /// Appends the first `n` (at most four) of `four`: all four are written, the length moves by
    /// `n`, so no branch depends on `n`.
    #[inline]
    pub fn push_four(&mut self, four: [u32; 4], n: usize) {
        debug_assert!(n <= 4);
        if self.room < 4 {
            self.grow();
        }
        // SAFETY: `room >= 4`, so `ids`' allocation (at `base`, unmoved since `room` was
        // computed) has four slots from `len`; they are written whole, and at most four of them
        // (`n.min(4)`) are counted as initialised.
        unsafe {
            self.base
                .add(self.len)
                .cast::<[u32; 4]>()
                .write_unaligned(four)
        };
        let n = n.min(4);
        self.len += n;
        self.room -= n;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let grow_by = self.grow_by;
        self.with_vec(|ids| ids.reserve(grow_by));
    }

    /// Lends the vector (its length brought up to date) to `f`, which may push into it.
    #[inline]
    pub fn with_vec<R>(&mut self, f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
        // SAFETY: `ids[..len]` are initialised and `len <= capacity` (see `push_four`).
        unsafe { self.ids.set_len(self.len) };
        let r = f(self.ids);
        self.len = self.ids.len();
        self.room = self.ids.capacity() - self.len;
        self.base = self.ids.as_mut_ptr();
        r
    }
}

impl Drop for IdsCursor<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `with_vec`.
        unsafe { self.ids.set_len(self.len) };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_cursor_appends_what_pushes_would() {
        for expected in [0, 1, 3, 50] {
            let mut ids = vec![9u32; 5];
            ids.shrink_to_fit();
            let mut want = ids.clone();
            {
                let mut out = IdsCursor::new(&mut ids, expected);
                for i in 0..1000u32 {
                    if i % 97 == 0 {
                        // Lent out between pushes: what is pushed then stays, in order.
                        out.with_vec(|v| v.extend([i; 7]));
                        want.extend([i; 7]);
                    }
                    let n = (i % 5) as usize;
                    out.push_four([i, i + 1, i + 2, i + 3], n);
                    want.extend([i, i + 1, i + 2, i + 3].into_iter().take(n));
                }
            }
            assert_eq!(ids, want, "{expected}");
        }
    }

    #[test]
    fn cached_tokens_are_pushed_as_one_by_one() {
        let ids = [7, 8, 9, 10];
        let ends = [2, 3, 7, 9];
        for n in 0..=4 {
            // Ids only, with the vector full to capacity, nearly full, and empty.
            for (cap, len) in [(0, 0), (5, 5), (8, 6), (4, 1), (16, 3)] {
                let mut fast: Vec<u32> = Vec::with_capacity(cap);
                fast.extend((0..len as u32).map(|i| 100 + i));
                let mut slow = fast.clone();
                fast.push_cached(40, &ids, &ends, n);
                push_cached_each(&mut slow, 40, &ids, &ends, n);
                assert_eq!(fast, slow, "{n} {cap} {len}");
                assert_eq!(fast.len(), len + n);
            }
            // With offsets: consecutive spans from `at`.
            let mut e = Encoding::default();
            e.push_cached(40, &ids, &ends, n);
            let want: Vec<(u32, u32)> = [(40, 42), (42, 43), (43, 47), (47, 49)][..n].to_vec();
            assert_eq!((&e.ids[..], &e.offsets), (&ids[..n], &want));
        }
    }
}
