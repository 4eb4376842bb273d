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
pub mod trie;

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
    /// 0xFF where the bytes are equal, else 0.
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
    /// Whether any byte has bit 7 set (cheaper than the mask on some ISAs).
    #[inline(always)]
    unsafe fn any_sign(self) -> bool {
        unsafe { self.sign_mask() != 0 }
    }
}

/// Loads the last `data.len() - at` bytes (fewer than 64) as a block padded with zeros.
///
/// Copying the tail to the stack keeps every read inside `data`: no over-read past the end of the
/// buffer, whatever follows it in memory (the guard-page tests check this).
///
/// # Safety
/// The CPU must support `B`'s ISA.
#[inline(always)]
pub(crate) unsafe fn load_tail<B: Block64>(data: &[u8], at: usize) -> B {
    let rest = &data[at..];
    debug_assert!(rest.len() < 64);
    let mut buf = [0u8; 64];
    buf[..rest.len()].copy_from_slice(rest);
    // SAFETY: `buf` is 64 readable bytes.
    unsafe { B::load(buf.as_ptr()) }
}

/// The low `n` bits set (`n <= 64`).
#[inline(always)]
pub(crate) fn low_bits(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}
