//! Kernel algorithms written once, over [`Block64`]: 64 bytes held in one, two or four vector
//! registers. Everything here is `#[inline(always)]` and carries no `#[target_feature]`; the
//! per-ISA entry points (`x86_64::sse42`, `x86_64::avx2`, `aarch64::neon`) carry the features and
//! instantiate these bodies, so the intrinsics inline into code compiled for the right ISA.
//!
//! No closures are used in these bodies: a closure does not inherit its caller's target features,
//! and an intrinsic inside it would stay an out-of-line call.

pub mod classes;
pub mod escape;
/// Only the x86 tiers use the row decomposition; NEON has a better 256-entry lookup of its own.
#[cfg(target_arch = "x86_64")]
pub mod prune;

/// 64 bytes in vector registers, and the handful of operations the kernels need.
///
/// # Safety
/// Every method may execute instructions of the implementing ISA: callers must run on a CPU with
/// the features of the tier that owns the implementation (guaranteed by holding its
/// [`crate::Kernels`]).
pub(crate) trait Block64: Copy {
    /// A 16-entry byte table in register form, for [`Block64::lookup16`].
    type Table16: Copy;

    /// Loads 64 bytes from `ptr` (no alignment needed).
    /// # Safety
    /// `ptr..ptr + 64` must be readable.
    unsafe fn load(ptr: *const u8) -> Self;
    /// Stores 64 bytes to `ptr` (no alignment needed).
    /// # Safety
    /// `ptr..ptr + 64` must be writable.
    unsafe fn store(self, ptr: *mut u8);
    /// Loads four 16-byte chunks, chunk `k` into bytes `16 k..16 k + 16`.
    /// # Safety
    /// Each `p[k]..p[k] + 16` must be readable.
    unsafe fn load_chunks(p: [*const u8; 4]) -> Self;
    /// Stores bytes `16 k..16 k + 16` to `p[k]`, in order `k = 0..4`.
    /// # Safety
    /// Each `p[k]..p[k] + 16` must be writable.
    unsafe fn store_chunks(self, p: [*mut u8; 4]);
    /// Every byte equal to `b`.
    unsafe fn splat(b: u8) -> Self;
    /// A table for [`Block64::lookup16`].
    unsafe fn table16(t: &[u8; 16]) -> Self::Table16;
    /// `t[idx[i]]` for every byte; defined only for index bytes below 16 (where `pshufb` and
    /// `tbl` agree).
    unsafe fn lookup16(t: Self::Table16, idx: Self) -> Self;
    unsafe fn and(self, o: Self) -> Self;
    unsafe fn or(self, o: Self) -> Self;
    /// 0xFF where the bytes are equal, else 0. (Used by the x86 tiers only.)
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    unsafe fn eq(self, o: Self) -> Self;
    /// 0xFF where `self > o` as signed bytes, else 0.
    unsafe fn gt_signed(self, o: Self) -> Self;
    /// `b & 0x0F` for every byte.
    unsafe fn low_nibbles(self) -> Self;
    /// `b >> 4` for every byte.
    unsafe fn high_nibbles(self) -> Self;
    /// Bit `i` set when byte `i` is not zero.
    unsafe fn nonzero_mask(self) -> u64;
    /// Bit `i` set when bit 7 of byte `i` is set.
    unsafe fn sign_mask(self) -> u64;
    /// Bit `i` set when bit `k` (`k < 8`) of byte `i` is set.
    #[inline(always)]
    unsafe fn bit_mask(self, k: u32) -> u64 {
        unsafe { self.and(Self::splat(1 << k)).nonzero_mask() }
    }
    /// Whether any byte is non-zero (cheaper than the mask on some ISAs).
    #[inline(always)]
    unsafe fn any_nonzero(self) -> bool {
        unsafe { self.nonzero_mask() != 0 }
    }
    /// Whether any byte has bit 7 set (cheaper than the mask on some ISAs).
    #[inline(always)]
    unsafe fn any_sign(self) -> bool {
        unsafe { self.sign_mask() != 0 }
    }
}

/// Inputs shorter than this go to the scalar code: setting up tables and copying a partial block
/// costs more than looking up a handful of bytes one by one.
pub(crate) const SHORT: usize = 16;

/// How the bytes after the last full 64-byte block are read.
///
/// Never a read outside `data`, whatever follows it in memory (the guard-page tests check this),
/// and never through a stack buffer (storing pieces and reloading them as a wider vector stalls
/// on store forwarding, which costs more than the whole kernel on short inputs):
/// - an input of at least 64 bytes ends with one more 64-byte load that *overlaps* the last full
///   block and ends exactly at the end of the input; the leading bits of its masks repeat
///   positions already handled and are discarded;
/// - a shorter input (16..=63 bytes) is loaded as four 16-byte chunks at offsets
///   `min(16 k, len - 16)`: chunk `k` holds positions `offset[k]..offset[k] + 16`, some of them
///   twice, and masks are mapped back to positions chunk by chunk.
pub(crate) struct Tail<B> {
    pub block: B,
    /// Where the block's bytes come from.
    pub layout: TailLayout,
    /// The number of tail bytes (`1..64`; the caller handles an empty tail).
    pub len: usize,
}

/// The position map of a [`Tail`] block.
#[derive(Clone, Copy)]
pub(crate) enum TailLayout {
    /// Byte `i` of the block is tail byte `i - overlap` (the first `overlap` are not tail bytes).
    Overlap(usize),
    /// Byte `16 k + j` of the block is tail byte `offsets[k] + j`.
    Chunks([usize; 4]),
}

impl<B: Block64> Tail<B> {
    /// The tail of `data` after its `full` complete blocks (`data.len() > 64 * full`, and
    /// `data.len() >= 16`: shorter inputs take the scalar path).
    ///
    /// # Safety
    /// The CPU must support `B`'s ISA.
    #[inline(always)]
    pub unsafe fn read(data: &[u8], full: usize) -> Tail<B> {
        let len = data.len() - 64 * full;
        debug_assert!((1..64).contains(&len) && data.len() >= SHORT);
        let p = data.as_ptr();
        if data.len() >= 64 {
            // SAFETY: `data.len() - 64 .. data.len()` lies inside `data`.
            let block = unsafe { B::load(p.add(data.len() - 64)) };
            Tail {
                block,
                layout: TailLayout::Overlap(64 - len),
                len,
            }
        } else {
            // `full == 0`, so the tail is all of `data`, and 16 <= len < 64.
            let offsets = [0, 16, 32, 48].map(|o: usize| o.min(len - 16));
            // SAFETY: each chunk `offset..offset + 16` ends at most at `len`.
            let block = unsafe { B::load_chunks(offsets.map(|o| p.add(o))) };
            Tail {
                block,
                layout: TailLayout::Chunks(offsets),
                len,
            }
        }
    }

    /// A mask of `block` mapped to the tail's bytes, bit 0 = first tail byte.
    #[inline(always)]
    pub fn bits(&self, mask: u64) -> u64 {
        match self.layout {
            TailLayout::Overlap(skip) => (mask >> skip) & low_bits(self.len),
            TailLayout::Chunks(offsets) => {
                let mut m = 0;
                for (k, o) in offsets.into_iter().enumerate() {
                    m |= ((mask >> (16 * k)) & 0xFFFF) << o;
                }
                m
            }
        }
    }

    /// Stores a block computed from this tail's block (byte for byte) into `out`, the output of
    /// the whole input (`out.len() == data.len()`): every tail byte gets its value, and bytes
    /// written twice get the same value twice.
    ///
    /// # Safety
    /// The CPU must support `B`'s ISA.
    #[inline(always)]
    pub unsafe fn store(&self, values: B, out: &mut [u8]) {
        let p = out.as_mut_ptr();
        // SAFETY: the stores cover exactly the ranges the loads of `read` covered, inside `out`
        // as they were inside `data` of the same length.
        unsafe {
            match self.layout {
                TailLayout::Overlap(_) => values.store(p.add(out.len() - 64)),
                TailLayout::Chunks(offsets) => values.store_chunks(offsets.map(|o| p.add(o))),
            }
        }
    }
}

/// The low `n` bits set (`n <= 64`).
#[inline(always)]
pub(crate) fn low_bits(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}
