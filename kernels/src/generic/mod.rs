//! Kernel algorithms written once, over [`Block64`]: 64 bytes held in one, two or four vector
//! registers. Everything here is `#[inline(always)]` and carries no `#[target_feature]`; the
//! per-ISA entry points (`x86_64::sse42`, `x86_64::avx2`, `aarch64::neon`) carry the features and
//! instantiate these bodies, so the intrinsics inline into code compiled for the right ISA.
//!
//! No closures are used in these bodies: a closure does not inherit its caller's target features,
//! and an intrinsic inside it would stay an out-of-line call.

pub mod classes;
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
/// Never a read outside `data`, whatever follows it in memory (the guard-page tests check this):
/// - an input of at least 64 bytes ends with one more 64-byte load that *overlaps* the last full
///   block and ends exactly at the end of the input; the `overlap` low bits of its masks repeat
///   positions already handled and are discarded;
/// - a shorter input is copied into a zeroed 64-byte stack buffer.
pub(crate) struct Tail<B> {
    pub block: B,
    /// How many leading bytes of `block` precede the tail (0 for the stack copy).
    pub overlap: usize,
    /// The number of tail bytes (`1..64`; the caller handles an empty tail).
    pub len: usize,
}

impl<B: Block64> Tail<B> {
    /// The tail of `data` after its `full` complete blocks (`data.len() > 64 * full`).
    ///
    /// # Safety
    /// The CPU must support `B`'s ISA.
    #[inline(always)]
    pub unsafe fn read(data: &[u8], full: usize) -> Tail<B> {
        let len = data.len() - 64 * full;
        debug_assert!((1..64).contains(&len));
        if data.len() >= 64 {
            // SAFETY: `data.len() - 64 .. data.len()` lies inside `data`.
            let block = unsafe { B::load(data.as_ptr().add(data.len() - 64)) };
            Tail {
                block,
                overlap: 64 - len,
                len,
            }
        } else {
            let mut buf = [0u8; 64];
            buf[..len].copy_from_slice(&data[64 * full..]);
            // SAFETY: `buf` is 64 readable bytes.
            let block = unsafe { B::load(buf.as_ptr()) };
            Tail {
                block,
                overlap: 0,
                len,
            }
        }
    }

    /// A mask of `block` reduced to the tail's bytes, bit 0 = first tail byte.
    #[inline(always)]
    pub fn bits(&self, mask: u64) -> u64 {
        (mask >> self.overlap) & low_bits(self.len)
    }
}

/// The low `n` bits set (`n <= 64`).
#[inline(always)]
pub(crate) fn low_bits(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}
