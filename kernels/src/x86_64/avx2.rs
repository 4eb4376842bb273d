//! The AVX2 tier: `Block64` as two `__m256i`, `vpshufb` lookups, and a batched trie walk with
//! `vpgatherdd`. CRC-32C reuses the SSE4.2 `crc32` loop: AVX2 has nothing better for it.

use core::arch::x86_64::*;

use crate::generic::{self, Block64};
use crate::spec::byte_class::{BlockMasks, ByteClassTable};
use crate::spec::byte_set::ByteSet;
use crate::spec::double_array::{DoubleArray, TrieMatch, unit};
use crate::spec::prune::PruneTable;

/// 64 bytes as two AVX2 registers.
#[derive(Clone, Copy)]
pub(crate) struct AvxBlock([__m256i; 2]);

/// Applies a two-operand intrinsic register by register.
macro_rules! each2 {
    ($f:ident, $a:expr, $b:expr) => {{
        let (a, b) = ($a.0, $b.0);
        AvxBlock([$f(a[0], b[0]), $f(a[1], b[1])])
    }};
}

impl AvxBlock {
    /// The two 32-bit `vpmovmskb` results as one 64-bit mask.
    #[inline(always)]
    unsafe fn movemask(self) -> u64 {
        unsafe {
            let lo = _mm256_movemask_epi8(self.0[0]) as u32 as u64;
            let hi = _mm256_movemask_epi8(self.0[1]) as u32 as u64;
            lo | (hi << 32)
        }
    }
}

// SAFETY (every method): the caller runs on a CPU with AVX2 (the `Block64` contract); loads and
// stores touch exactly the 64 bytes their contract names.
impl Block64 for AvxBlock {
    /// The 16-entry table in both 128-bit lanes: `vpshufb` looks up within each lane.
    type Table16 = __m256i;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        unsafe {
            let p = ptr as *const __m256i;
            AvxBlock([_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))])
        }
    }

    #[inline(always)]
    unsafe fn store(self, ptr: *mut u8) {
        unsafe {
            let p = ptr as *mut __m256i;
            _mm256_storeu_si256(p, self.0[0]);
            _mm256_storeu_si256(p.add(1), self.0[1]);
        }
    }

    #[inline(always)]
    unsafe fn load_chunks(p: [*const u8; 4]) -> Self {
        unsafe {
            let chunk = |q: *const u8| _mm_loadu_si128(q as *const __m128i);
            AvxBlock([
                _mm256_set_m128i(chunk(p[1]), chunk(p[0])),
                _mm256_set_m128i(chunk(p[3]), chunk(p[2])),
            ])
        }
    }

    #[inline(always)]
    unsafe fn store_chunks(self, p: [*mut u8; 4]) {
        unsafe {
            let [a, b] = self.0;
            _mm_storeu_si128(p[0] as *mut __m128i, _mm256_castsi256_si128(a));
            _mm_storeu_si128(p[1] as *mut __m128i, _mm256_extracti128_si256::<1>(a));
            _mm_storeu_si128(p[2] as *mut __m128i, _mm256_castsi256_si128(b));
            _mm_storeu_si128(p[3] as *mut __m128i, _mm256_extracti128_si256::<1>(b));
        }
    }

    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        unsafe { AvxBlock([_mm256_set1_epi8(b as i8); 2]) }
    }

    #[inline(always)]
    unsafe fn table16(t: &[u8; 16]) -> __m256i {
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr() as *const __m128i)) }
    }

    #[inline(always)]
    unsafe fn lookup16(t: __m256i, idx: Self) -> Self {
        unsafe {
            AvxBlock([
                _mm256_shuffle_epi8(t, idx.0[0]),
                _mm256_shuffle_epi8(t, idx.0[1]),
            ])
        }
    }

    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        unsafe { each2!(_mm256_and_si256, self, o) }
    }

    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        unsafe { each2!(_mm256_or_si256, self, o) }
    }

    #[inline(always)]
    unsafe fn eq(self, o: Self) -> Self {
        unsafe { each2!(_mm256_cmpeq_epi8, self, o) }
    }

    #[inline(always)]
    unsafe fn gt_signed(self, o: Self) -> Self {
        unsafe { each2!(_mm256_cmpgt_epi8, self, o) }
    }

    #[inline(always)]
    unsafe fn low_nibbles(self) -> Self {
        unsafe { self.and(Self::splat(0x0F)) }
    }

    #[inline(always)]
    unsafe fn high_nibbles(self) -> Self {
        // There is no 8-bit shift: shift 16-bit lanes, then clear the bits that came across.
        unsafe {
            AvxBlock([
                _mm256_srli_epi16(self.0[0], 4),
                _mm256_srli_epi16(self.0[1], 4),
            ])
            .low_nibbles()
        }
    }

    #[inline(always)]
    unsafe fn nonzero_mask(self) -> u64 {
        unsafe { !self.eq(Self::splat(0)).movemask() }
    }

    #[inline(always)]
    unsafe fn sign_mask(self) -> u64 {
        unsafe { self.movemask() }
    }

    #[inline(always)]
    unsafe fn bit_mask(self, k: u32) -> u64 {
        // Shifting 16-bit lanes left by 7 - k moves bit k of both bytes to their bit 7, which is
        // what `vpmovmskb` collects: two instructions per register instead of and/compare/move.
        unsafe {
            let count = _mm_cvtsi32_si128(7 - k as i32);
            AvxBlock([
                _mm256_sll_epi16(self.0[0], count),
                _mm256_sll_epi16(self.0[1], count),
            ])
            .movemask()
        }
    }

    #[inline(always)]
    unsafe fn any_nonzero(self) -> bool {
        unsafe {
            let all = _mm256_or_si256(self.0[0], self.0[1]);
            _mm256_testz_si256(all, all) == 0
        }
    }

    #[inline(always)]
    unsafe fn any_sign(self) -> bool {
        unsafe { _mm256_movemask_epi8(_mm256_or_si256(self.0[0], self.0[1])) != 0 }
    }
}

/// See [`crate::scalar::classes::classify`].
///
/// # Safety
/// The CPU supports this tier; `out.len() == data.len().div_ceil(64)`.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn classify(table: &ByteClassTable, data: &[u8], out: &mut [BlockMasks]) {
    unsafe { generic::classes::classify::<AvxBlock>(table, data, out) }
}

/// See [`crate::scalar::classes::find`] (`NEGATE = false`).
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn find_in(set: &ByteSet, data: &[u8]) -> Option<usize> {
    unsafe { generic::classes::find::<AvxBlock, false>(set, data) }
}

/// See [`crate::scalar::classes::find`] (`NEGATE = true`).
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn find_not_in(set: &ByteSet, data: &[u8]) -> Option<usize> {
    unsafe { generic::classes::find::<AvxBlock, true>(set, data) }
}

/// See [`crate::scalar::classes::count_utf8_chars`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn count_utf8_chars(data: &[u8]) -> usize {
    unsafe { generic::classes::count_utf8_chars::<AvxBlock>(data) }
}

/// See [`crate::scalar::classes::ascii_prefix_len`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn ascii_prefix_len(data: &[u8]) -> usize {
    unsafe { generic::classes::ascii_prefix_len::<AvxBlock>(data) }
}

/// Up to this many distinct non-zero rows, the row lookup beats scalar (4 instructions per row
/// and 32 bytes against one load per byte; `cargo bench --bench kernels -- prune_map`).
pub const PRUNE_MAX_ROWS: usize = 8;

/// See [`crate::scalar::prune::map`]; tables with more than [`PRUNE_MAX_ROWS`] distinct rows use
/// the scalar loop.
///
/// # Safety
/// The CPU supports this tier; `out.len() == data.len()`.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn prune_map(table: &PruneTable, data: &[u8], out: &mut [u8]) {
    unsafe { generic::prune::map::<AvxBlock>(table, data, out, PRUNE_MAX_ROWS) }
}

/// A batched prefix search with gathers: walks in groups of eight consecutive starts, one per
/// 32-bit lane, in lockstep until all eight have ended; each step gathers the eight text bytes,
/// the eight units and (where a key ends) the eight value units. The lane state stays in
/// registers for the whole group (refilling lanes one by one goes through memory and stalls on
/// store forwarding every step).
///
/// **Not dispatched**: on the machines measured so far it is about 2× slower than the scalar walk
/// (`cargo bench --bench kernels -- trie_prefix_search_batch`, figures in `docs/benchmarks.md`),
/// so every tier's table uses the scalar walk. It is kept, tested against scalar and benchmarked,
/// for CPUs whose gathers are cheaper.
///
/// Same contract as [`crate::scalar::trie::prefix_search_batch`].
///
/// # Safety
/// The CPU supports this tier; the preconditions of the scalar version hold.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn trie_prefix_search_batch_gather(
    da: &DoubleArray,
    text: &[u8],
    starts: &[u32],
    stride: usize,
    counts: &mut [u32],
    matches: &mut [TrieMatch],
) {
    // The text gather reads 4 bytes ending at the wanted one (see below), which needs 4 bytes of
    // text; gather indices are signed 32-bit. Outside those limits the scalar walk it is.
    if text.len() < 4 || text.len() > i32::MAX as usize {
        crate::scalar::trie::prefix_search_batch(da, text, starts, stride, counts, matches);
        return;
    }
    let units = da.units();
    // The layout addresses at most 2^29 units, so positions and their XORs fit in i32.
    debug_assert!(units.len() <= 1 << 29);
    // SAFETY: every gather is masked to lanes whose index is in bounds (argued at each gather);
    // masked-off lanes do not access memory. Lane arrays are 8 × 32 bits, loaded/stored whole.
    unsafe {
        let text_len = _mm256_set1_epi32(text.len() as i32);
        let units_len = _mm256_set1_epi32(units.len() as i32);
        let zero = _mm256_setzero_si256();
        let one = _mm256_set1_epi32(1);
        let three = _mm256_set1_epi32(3);
        let byte_mask = _mm256_set1_epi32(0xFF);
        let label_mask = _mm256_set1_epi32(unit::IS_VALUE as i32 | 0xFF);
        let leaf_bit = _mm256_set1_epi32(1 << 8);
        let scale_bit = _mm256_set1_epi32(1 << 9);
        let value_mask = _mm256_set1_epi32(!unit::IS_VALUE as i32);
        let lane_ids = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let root = _mm256_set1_epi32(unit::offset(units[0]) as i32);
        let mut lane_at = [0i32; 8];
        let mut lane_values = [0u32; 8];
        for (g, group) in starts.chunks(8).enumerate() {
            // Lanes 0..n walk; the others are off from the start. The masked load and store
            // touch only the group's own elements of `starts` and `counts`.
            let used = _mm256_cmpgt_epi32(_mm256_set1_epi32(group.len() as i32), lane_ids);
            let begin = _mm256_maskload_epi32(group.as_ptr() as *const i32, used);
            let mut at = begin;
            let mut node = root;
            let mut live = used;
            let mut found = [0u32; 8];
            while _mm256_movemask_ps(_mm256_castsi256_ps(live)) != 0 {
                // Lanes with a byte left to read: live and `at < text.len()`.
                let in_text = _mm256_and_si256(live, _mm256_cmpgt_epi32(text_len, at));
                // The byte at `at` is the top byte of the 4 bytes at `at - 3` (or at 0 when
                // `at < 3`, shifted by `8 * at`): `at - 3 + 4 <= text.len()` as `at < text.len()`,
                // and `0 + 4 <= text.len()` as `text.len() >= 4`. Never a read past the end.
                let from = _mm256_max_epi32(_mm256_sub_epi32(at, three), zero);
                let shift = _mm256_slli_epi32(_mm256_sub_epi32(at, from), 3);
                let word = _mm256_mask_i32gather_epi32::<1>(
                    zero,
                    text.as_ptr() as *const i32,
                    from,
                    in_text,
                );
                let c = _mm256_and_si256(_mm256_srlv_epi32(word, shift), byte_mask);
                // The child unit: in bounds when `0 <= pos < units.len()` (pos >= 0: both XOR
                // operands are below 2^30).
                let pos = _mm256_xor_si256(node, c);
                let in_units = _mm256_and_si256(in_text, _mm256_cmpgt_epi32(units_len, pos));
                let u = _mm256_mask_i32gather_epi32::<4>(
                    zero,
                    units.as_ptr() as *const i32,
                    pos,
                    in_units,
                );
                let ok = _mm256_and_si256(
                    in_units,
                    _mm256_cmpeq_epi32(_mm256_and_si256(u, label_mask), c),
                );
                // offset(u) = (u >> 10) << ((u & 0x200) >> 6)
                let offset = _mm256_sllv_epi32(
                    _mm256_srli_epi32(u, 10),
                    _mm256_srli_epi32(_mm256_and_si256(u, scale_bit), 6),
                );
                let child = _mm256_xor_si256(pos, offset);
                let leaf = _mm256_and_si256(
                    ok,
                    _mm256_cmpeq_epi32(_mm256_and_si256(u, leaf_bit), leaf_bit),
                );
                // The value unit: in bounds when `child < units.len()` (it is >= 0 as above).
                let leaf_ok = _mm256_and_si256(leaf, _mm256_cmpgt_epi32(units_len, child));
                // A lane goes on when its step matched and, if a key ended, its value was readable.
                live = _mm256_andnot_si256(_mm256_andnot_si256(leaf_ok, leaf), ok);
                node = child;
                at = _mm256_add_epi32(at, one);
                let mut leaves = _mm256_movemask_ps(_mm256_castsi256_ps(leaf_ok)) as u32;
                if leaves != 0 {
                    let value = _mm256_mask_i32gather_epi32::<4>(
                        zero,
                        units.as_ptr() as *const i32,
                        child,
                        leaf_ok,
                    );
                    _mm256_storeu_si256(
                        lane_values.as_mut_ptr() as *mut __m256i,
                        _mm256_and_si256(value, value_mask),
                    );
                    _mm256_storeu_si256(
                        lane_at.as_mut_ptr() as *mut __m256i,
                        _mm256_sub_epi32(at, begin),
                    );
                    while leaves != 0 {
                        let l = leaves.trailing_zeros() as usize;
                        leaves &= leaves - 1;
                        let f = found[l] as usize;
                        if f < stride {
                            matches[(8 * g + l) * stride + f] = TrieMatch {
                                len: lane_at[l] as u32,
                                value: lane_values[l],
                            };
                        }
                        found[l] += 1;
                    }
                }
            }
            let found = _mm256_loadu_si256(found.as_ptr() as *const __m256i);
            _mm256_maskstore_epi32(counts[8 * g..].as_mut_ptr() as *mut i32, used, found);
        }
    }
}

/// See [`crate::scalar::space_escape::escape_spaces`].
///
/// # Safety
/// The CPU supports this tier.
#[inline]
#[target_feature(enable = "avx2,ssse3,sse4.1,sse4.2,popcnt")]
pub unsafe fn escape_spaces(
    src: &[u8],
    dst: &mut [std::mem::MaybeUninit<u8>],
    collapse: bool,
    prev_space: bool,
) -> (usize, bool) {
    unsafe {
        generic::escape::escape_spaces::<super::escape::SseBytes>(src, dst, collapse, prev_space)
    }
}
