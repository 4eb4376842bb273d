//! [`Kernels`]: one static table of function pointers per tier, and the safe methods that call
//! through it.
//!
//! The pointers are `unsafe fn`s because the SIMD ones may only run on a CPU with their tier's
//! features. [`Kernels::for_tier`] is the only way to obtain a table and returns one only for a
//! tier this CPU supports, so holding a `&Kernels` is the proof those calls are sound; the safe
//! methods check every other precondition (buffer sizes, positions) before calling.

use std::mem::MaybeUninit;

use crate::Tier;
use crate::scalar;
use crate::spec::byte_class::{BlockMasks, ByteClassTable};
use crate::spec::byte_set::ByteSet;
use crate::spec::double_array::{DoubleArray, TrieMatch, WalkFrom};
use crate::spec::prune::PruneTable;
use crate::spec::space_escape::escape_capacity;

type ClassifyFn = unsafe fn(&ByteClassTable, &[u8], &mut [BlockMasks]);
type FindFn = unsafe fn(&ByteSet, &[u8]) -> Option<usize>;
type CountFn = unsafe fn(&[u8]) -> usize;
type CrcFn = unsafe fn(u32, &[u8]) -> u32;
type CrcManyFn = unsafe fn(&[&[u8]], &mut [u32]);
type PruneMapFn = unsafe fn(&PruneTable, &[u8], &mut [u8]);
type EscapeFn = unsafe fn(&[u8], &mut [MaybeUninit<u8>], bool, bool) -> (usize, bool);

/// The kernels of one tier.
pub struct Kernels {
    tier: Tier,
    classify: ClassifyFn,
    find_in: FindFn,
    find_not_in: FindFn,
    count_utf8_chars: CountFn,
    ascii_prefix_len: CountFn,
    crc32c_append: CrcFn,
    crc32c_many: CrcManyFn,
    prune_map: PruneMapFn,
    escape_spaces: EscapeFn,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernels")
            .field("tier", &self.tier)
            .finish_non_exhaustive()
    }
}

/// Safe scalar functions as `unsafe fn` pointers (the scalar tier needs no CPU feature).
mod scalar_entry {
    use super::*;

    pub unsafe fn classify(t: &ByteClassTable, d: &[u8], o: &mut [BlockMasks]) {
        scalar::classes::classify(t, d, o)
    }
    pub unsafe fn find_in(s: &ByteSet, d: &[u8]) -> Option<usize> {
        scalar::classes::find::<false>(s, d)
    }
    pub unsafe fn find_not_in(s: &ByteSet, d: &[u8]) -> Option<usize> {
        scalar::classes::find::<true>(s, d)
    }
    pub unsafe fn count_utf8_chars(d: &[u8]) -> usize {
        scalar::classes::count_utf8_chars(d)
    }
    pub unsafe fn ascii_prefix_len(d: &[u8]) -> usize {
        scalar::classes::ascii_prefix_len(d)
    }
    pub unsafe fn crc32c_append(c: u32, d: &[u8]) -> u32 {
        scalar::crc32c::append(c, d)
    }
    pub unsafe fn crc32c_many(p: &[&[u8]], o: &mut [u32]) {
        scalar::crc32c::many(p, o)
    }
    pub unsafe fn prune_map(t: &PruneTable, d: &[u8], o: &mut [u8]) {
        scalar::prune::map(t, d, o)
    }
    pub unsafe fn escape_spaces(
        s: &[u8],
        d: &mut [MaybeUninit<u8>],
        collapse: bool,
        prev: bool,
    ) -> (usize, bool) {
        scalar::space_escape::escape_spaces(s, d, collapse, prev)
    }
}

static SCALAR: Kernels = Kernels {
    tier: Tier::Scalar,
    classify: scalar_entry::classify,
    find_in: scalar_entry::find_in,
    find_not_in: scalar_entry::find_not_in,
    count_utf8_chars: scalar_entry::count_utf8_chars,
    ascii_prefix_len: scalar_entry::ascii_prefix_len,
    crc32c_append: scalar_entry::crc32c_append,
    crc32c_many: scalar_entry::crc32c_many,
    prune_map: scalar_entry::prune_map,
    escape_spaces: scalar_entry::escape_spaces,
};

#[cfg(target_arch = "x86_64")]
static SSE42: Kernels = {
    use crate::x86_64::sse42 as k;
    Kernels {
        tier: Tier::Sse42,
        classify: k::classify,
        find_in: k::find_in,
        find_not_in: k::find_not_in,
        count_utf8_chars: k::count_utf8_chars,
        ascii_prefix_len: k::ascii_prefix_len,
        crc32c_append: k::crc32c_append,
        crc32c_many: k::crc32c_many,
        prune_map: k::prune_map,
        escape_spaces: k::escape_spaces,
    }
};

#[cfg(target_arch = "x86_64")]
static AVX2: Kernels = {
    use crate::x86_64::avx2 as k;
    Kernels {
        tier: Tier::Avx2,
        classify: k::classify,
        find_in: k::find_in,
        find_not_in: k::find_not_in,
        count_utf8_chars: k::count_utf8_chars,
        ascii_prefix_len: k::ascii_prefix_len,
        // AVX2 adds nothing to CRC-32C: the SSE4.2 `crc32` loop it is.
        crc32c_append: crate::x86_64::sse42::crc32c_append,
        crc32c_many: crate::x86_64::sse42::crc32c_many,
        prune_map: k::prune_map,
        escape_spaces: k::escape_spaces,
    }
};

#[cfg(target_arch = "aarch64")]
static NEON: Kernels = {
    use crate::aarch64::neon as k;
    Kernels {
        tier: Tier::Neon,
        classify: k::classify,
        find_in: k::find_in,
        find_not_in: k::find_not_in,
        count_utf8_chars: k::count_utf8_chars,
        ascii_prefix_len: k::ascii_prefix_len,
        crc32c_append: k::crc32c_append,
        crc32c_many: k::crc32c_many,
        prune_map: k::prune_map,
        escape_spaces: k::escape_spaces,
    }
};

/// The statically compiled table of a tier, whether or not this CPU can run it.
fn compiled_table(tier: Tier) -> Option<&'static Kernels> {
    match tier {
        Tier::Scalar => Some(&SCALAR),
        #[cfg(target_arch = "x86_64")]
        Tier::Sse42 => Some(&SSE42),
        #[cfg(target_arch = "x86_64")]
        Tier::Avx2 => Some(&AVX2),
        #[cfg(target_arch = "aarch64")]
        Tier::Neon => Some(&NEON),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// The results of a batched prefix search: for each start, how many keys matched and the first
/// `stride` of them.
#[derive(Clone, Debug, Default)]
pub struct TrieBatch {
    stride: usize,
    counts: Vec<u32>,
    matches: Vec<TrieMatch>,
}

impl TrieBatch {
    /// An empty result buffer.
    pub fn new() -> TrieBatch {
        TrieBatch::default()
    }

    /// How many results each start can hold.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The number of starts searched.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether no start was searched.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The matches of the `i`-th start, shortest first (at most `stride`).
    pub fn matches(&self, i: usize) -> &[TrieMatch] {
        let n = (self.counts[i] as usize).min(self.stride);
        &self.matches[i * self.stride..i * self.stride + n]
    }

    /// How many keys matched at the `i`-th start (may exceed `stride`).
    pub fn count(&self, i: usize) -> usize {
        self.counts[i] as usize
    }

    /// Sizes the buffers without clearing them: the kernels write every count and the first
    /// `min(count, stride)` matches of every start, and only those are ever read.
    fn reset(&mut self, starts: usize, stride: usize) {
        self.stride = stride;
        self.counts.resize(starts, 0);
        if self.matches.len() < starts * stride {
            self.matches.resize(starts * stride, TrieMatch::default());
        }
    }
}

impl Kernels {
    /// The table of `tier`, or `None` when the tier is not compiled for this architecture or this
    /// CPU lacks one of its features. The only way to obtain a table.
    pub fn for_tier(tier: Tier) -> Option<&'static Kernels> {
        if tier.is_supported() {
            compiled_table(tier)
        } else {
            None
        }
    }

    /// The portable table (always available).
    pub fn scalar() -> &'static Kernels {
        &SCALAR
    }

    /// This table's tier.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// Per-class masks of every 64-byte block of `data`; `out` is resized to
    /// `data.len().div_ceil(64)` blocks. Bits past the end of the data are clear.
    pub fn classify(&self, table: &ByteClassTable, data: &[u8], out: &mut Vec<BlockMasks>) {
        out.clear();
        out.resize(data.len().div_ceil(64), BlockMasks::default());
        // SAFETY: `self` exists only for a supported tier; `out` has one entry per block.
        unsafe { (self.classify)(table, data, out) }
    }

    /// The first position at or after `from` whose byte is in `set`; `None` when there is none
    /// (or `from >= data.len()`).
    #[inline]
    pub fn find_in(&self, set: &ByteSet, data: &[u8], from: usize) -> Option<usize> {
        let rest = data.get(from..)?;
        // SAFETY: `self` exists only for a supported tier.
        unsafe { (self.find_in)(set, rest) }.map(|i| from + i)
    }

    /// The first position at or after `from` whose byte is not in `set`.
    #[inline]
    pub fn find_not_in(&self, set: &ByteSet, data: &[u8], from: usize) -> Option<usize> {
        let rest = data.get(from..)?;
        // SAFETY: `self` exists only for a supported tier.
        unsafe { (self.find_not_in)(set, rest) }.map(|i| from + i)
    }

    /// The number of bytes that are not UTF-8 continuation bytes: for valid UTF-8, the number of
    /// characters (code points).
    #[inline]
    pub fn count_utf8_chars(&self, data: &[u8]) -> usize {
        // SAFETY: `self` exists only for a supported tier.
        unsafe { (self.count_utf8_chars)(data) }
    }

    /// Appends `src` to `out` with each space (0x20) escaped as SentencePiece's `▁` (U+2581) —
    /// or, when `collapse` and the byte before it is a space (for the first byte: `prev_space`),
    /// dropped — and every other byte copied; returns whether the last byte of `src` is a space
    /// (`prev_space` when `src` is empty). See [`crate::spec::space_escape`].
    #[inline]
    pub fn escape_spaces_append(
        &self,
        src: &[u8],
        out: &mut Vec<u8>,
        collapse: bool,
        prev_space: bool,
    ) -> bool {
        let room = escape_capacity(src.len());
        out.reserve(room);
        let len = out.len();
        // SAFETY: `self` exists only for a supported tier; the destination holds the room the
        // kernel needs (`reserve` above).
        let (written, last) = unsafe {
            (self.escape_spaces)(
                src,
                &mut out.spare_capacity_mut()[..room],
                collapse,
                prev_space,
            )
        };
        // SAFETY: every tier writes each of the first `written` bytes of its destination (each
        // step stores at least as many bytes as it advances by), and `written <= room`.
        unsafe { out.set_len(len + written) };
        last
    }

    /// The length of the longest all-ASCII prefix of `data`.
    #[inline]
    pub fn ascii_prefix_len(&self, data: &[u8]) -> usize {
        // SAFETY: `self` exists only for a supported tier.
        unsafe { (self.ascii_prefix_len)(data) }
    }

    /// The CRC-32C (Castagnoli) of `data`; the same value on every tier.
    #[inline]
    pub fn crc32c(&self, data: &[u8]) -> u32 {
        self.crc32c_append(0, data)
    }

    /// Continues a CRC-32C: `crc32c_append(crc32c(a), b) == crc32c(a ++ b)`.
    #[inline]
    pub fn crc32c_append(&self, crc: u32, data: &[u8]) -> u32 {
        // SAFETY: `self` exists only for a supported tier.
        unsafe { (self.crc32c_append)(crc, data) }
    }

    /// `out[i] = crc32c(pieces[i])`: one call for many short pieces, which is several times
    /// faster than one [`Kernels::crc32c`] call each (a call costs as much as hashing 16 bytes).
    ///
    /// # Panics
    /// When `out.len() != pieces.len()`.
    pub fn crc32c_many(&self, pieces: &[&[u8]], out: &mut [u32]) {
        assert_eq!(out.len(), pieces.len(), "one CRC per piece");
        // SAFETY: `self` exists only for a supported tier; the lengths match.
        unsafe { (self.crc32c_many)(pieces, out) }
    }

    /// `out[i] = table.value(data[i])`; `out` is resized to `data.len()`.
    pub fn prune_map(&self, table: &PruneTable, data: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.resize(data.len(), 0);
        // SAFETY: `self` exists only for a supported tier; `out.len() == data.len()`.
        unsafe { (self.prune_map)(table, data, out) }
    }

    /// The first position at or after `from` whose byte has a non-zero value in `table`.
    #[inline]
    pub fn prune_find_nonzero(
        &self,
        table: &PruneTable,
        data: &[u8],
        from: usize,
    ) -> Option<usize> {
        self.find_in(&table.nonzero, data, from)
    }

    /// Appends to `out` every key of `da` that is a prefix of `key`, shortest first; returns how
    /// many.
    ///
    /// Every tier uses the scalar walk for the trie kernels: a walk is a chain of dependent loads
    /// ending in an unpredictable branch, which no vector instruction shortens. For the batched
    /// form, eight walks in lockstep with AVX2 gathers
    /// ([`crate::x86_64::avx2::trie_prefix_search_batch_gather`]), eight interleaved scalar walks
    /// and two interleaved walks took 2.2×, 2.6× and 0.95× the time of one walk after another on
    /// the machine measured (see "Notes per kernel" in `docs/benchmark-history.md`), so there is
    /// no per-tier batched walk.
    #[inline]
    pub fn trie_prefix_search(
        &self,
        da: &DoubleArray,
        key: &[u8],
        out: &mut Vec<TrieMatch>,
    ) -> usize {
        scalar::trie::prefix_search(da, key, out)
    }

    /// Calls `on_match(length, value)` for every key of `da` that is a prefix of `key`, shortest
    /// first: [`Kernels::trie_prefix_search`] without a buffer, for callers that consume matches
    /// as they come (a Viterbi lattice). Returns how many bytes of `key` the walk read (up to
    /// and including the first that leaves the trie, else all): any key that starts with those
    /// bytes has the same matches.
    #[inline(always)]
    pub fn trie_prefix_walk(
        &self,
        da: &DoubleArray,
        key: &[u8],
        on_match: impl FnMut(u32, u32),
    ) -> usize {
        scalar::trie::walk_any(da, key, on_match)
    }

    /// [`Kernels::trie_prefix_walk`] resumed where a walk stood at a node
    /// ([`DoubleArray::walk_from`]): matches' lengths and the bytes read count from the start of
    /// `key`, so a walk over `prefix + key` equals the steps over `prefix` then this (lengths
    /// shifted by the prefix's). A `from` of another trie is harmless: it may find nonsense,
    /// never read out of bounds.
    #[inline(always)]
    pub fn trie_prefix_walk_from(
        &self,
        da: &DoubleArray,
        from: WalkFrom,
        key: &[u8],
        on_match: impl FnMut(u32, u32),
    ) -> usize {
        scalar::trie::walk_any_from(da, from, key, on_match)
    }

    /// The longest key of `da` that is a prefix of `key` (one value load, for the last key
    /// passed; the same on every tier, as [`Kernels::trie_prefix_search`] says why).
    #[inline(always)]
    pub fn trie_longest_prefix(&self, da: &DoubleArray, key: &[u8]) -> Option<TrieMatch> {
        scalar::trie::longest_prefix(da, key)
    }

    /// Prefix searches of `text` from each of `starts`. Each start keeps at most `stride` matches
    /// (`da.max_key_len()` is always enough; the count is exact anyway). The same on every tier
    /// (see [`Kernels::trie_prefix_search`]).
    ///
    /// # Panics
    /// When a start is past the end of `text`, or `starts.len() * stride` overflows.
    pub fn trie_prefix_search_batch(
        &self,
        da: &DoubleArray,
        text: &[u8],
        starts: &[u32],
        stride: usize,
        out: &mut TrieBatch,
    ) {
        assert!(
            starts.iter().all(|&s| s as usize <= text.len()),
            "every start must be at most text.len()"
        );
        let total = starts
            .len()
            .checked_mul(stride)
            .expect("starts × stride overflows");
        out.reset(starts.len(), stride);
        scalar::trie::prefix_search_batch(
            da,
            text,
            starts,
            stride,
            &mut out.counts,
            &mut out.matches[..total],
        )
    }
}
