//! The probes: one `#[inline(never)]`, monomorphic function per kernel × tier, with a stable
//! unmangled symbol (`simdtok_probe_<tier>_<kernel>`) that the checker looks up in the
//! disassembly.
//!
//! Each probe carries exactly the `#[target_feature]` set of the entry point it calls, so the
//! `#[inline]` entry point (and the `#[inline(always)]` generic body under it) is inlined into the
//! probe: the probe's code is the kernel's code as a caller compiled for that tier gets it. If the
//! two feature sets drift apart, inlining stops, the probe becomes a bare call, and the checks on
//! its mnemonics and loops fail, which is the point.
//!
//! The probes are never executed (they would need a CPU with the tier); `main` only takes their
//! addresses through `black_box` ([`keep`]) so the linker cannot drop them.

/// Defines one probe per line: `symbol, "features", path::to::entry_point;`. The macro only
/// repeats the boilerplate; every line of the table says which symbol probes which entry point
/// with which features.
macro_rules! probes {
    ($($name:ident, $features:literal, $kernel:path, ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        $(
            /// A probe (see the module docs).
            ///
            /// # Safety
            /// Never called: it exists to be disassembled.
            #[unsafe(no_mangle)]
            #[inline(never)]
            #[target_feature(enable = $features)]
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                unsafe { $kernel($($arg),*) }
            }
        )*

        /// Every probe's address, so that the probes stay in the binary.
        pub fn keep() -> Vec<*const ()> {
            vec![$($name as *const ()),*]
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::mem::MaybeUninit;

    use simdtok_kernels::x86_64::{avx2, sse42};
    use simdtok_kernels::{
        BlockMasks, ByteClassTable, ByteSet, DoubleArray, PruneTable, TrieMatch,
    };

    // The features of `sse42::*` and `avx2::*` (`sse42::crc32c_append` needs only "sse4.2"; the
    // AVX2 table reuses it, so its AVX2 probe inlines it into AVX2-compiled code).
    probes! {
        simdtok_probe_sse42_classify, "ssse3,sse4.1,sse4.2,popcnt", sse42::classify,
            (t: &ByteClassTable, d: &[u8], o: &mut [BlockMasks]);
        simdtok_probe_sse42_find_in, "ssse3,sse4.1,sse4.2,popcnt", sse42::find_in,
            (s: &ByteSet, d: &[u8]) -> Option<usize>;
        simdtok_probe_sse42_count_utf8_chars, "ssse3,sse4.1,sse4.2,popcnt", sse42::count_utf8_chars,
            (d: &[u8]) -> usize;
        simdtok_probe_sse42_ascii_prefix_len, "ssse3,sse4.1,sse4.2,popcnt", sse42::ascii_prefix_len,
            (d: &[u8]) -> usize;
        simdtok_probe_sse42_prune_map, "ssse3,sse4.1,sse4.2,popcnt", sse42::prune_map,
            (t: &PruneTable, d: &[u8], o: &mut [u8]);
        simdtok_probe_sse42_crc32c, "sse4.2", sse42::crc32c_append,
            (c: u32, d: &[u8]) -> u32;
        simdtok_probe_sse42_escape_spaces, "ssse3,sse4.1,sse4.2,popcnt", sse42::escape_spaces,
            (s: &[u8], d: &mut [MaybeUninit<u8>], c: bool, p: bool) -> (usize, bool);

        simdtok_probe_avx2_classify, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::classify,
            (t: &ByteClassTable, d: &[u8], o: &mut [BlockMasks]);
        simdtok_probe_avx2_find_in, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::find_in,
            (s: &ByteSet, d: &[u8]) -> Option<usize>;
        simdtok_probe_avx2_count_utf8_chars, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::count_utf8_chars,
            (d: &[u8]) -> usize;
        simdtok_probe_avx2_ascii_prefix_len, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::ascii_prefix_len,
            (d: &[u8]) -> usize;
        simdtok_probe_avx2_prune_map, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::prune_map,
            (t: &PruneTable, d: &[u8], o: &mut [u8]);
        simdtok_probe_avx2_crc32c, "avx2,ssse3,sse4.1,sse4.2,popcnt", sse42::crc32c_append,
            (c: u32, d: &[u8]) -> u32;
        simdtok_probe_avx2_escape_spaces, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::escape_spaces,
            (s: &[u8], d: &mut [MaybeUninit<u8>], c: bool, p: bool) -> (usize, bool);
        simdtok_probe_avx2_trie_batch_gather, "avx2,ssse3,sse4.1,sse4.2,popcnt", avx2::trie_prefix_search_batch_gather,
            (da: &DoubleArray, t: &[u8], s: &[u32], n: usize, c: &mut [u32], m: &mut [TrieMatch]);
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::mem::MaybeUninit;

    use simdtok_kernels::aarch64::neon;
    use simdtok_kernels::{BlockMasks, ByteClassTable, ByteSet, PruneTable};

    // The features of `neon::*` ("crc" for `crc32c_append`).
    probes! {
        simdtok_probe_neon_classify, "neon", neon::classify,
            (t: &ByteClassTable, d: &[u8], o: &mut [BlockMasks]);
        simdtok_probe_neon_find_in, "neon", neon::find_in,
            (s: &ByteSet, d: &[u8]) -> Option<usize>;
        simdtok_probe_neon_count_utf8_chars, "neon", neon::count_utf8_chars,
            (d: &[u8]) -> usize;
        simdtok_probe_neon_ascii_prefix_len, "neon", neon::ascii_prefix_len,
            (d: &[u8]) -> usize;
        simdtok_probe_neon_prune_map, "neon", neon::prune_map,
            (t: &PruneTable, d: &[u8], o: &mut [u8]);
        simdtok_probe_neon_crc32c, "crc", neon::crc32c_append,
            (c: u32, d: &[u8]) -> u32;
        simdtok_probe_neon_escape_spaces, "neon", neon::escape_spaces,
            (s: &[u8], d: &mut [MaybeUninit<u8>], c: bool, p: bool) -> (usize, bool);
    }
}

#[cfg(target_arch = "aarch64")]
pub use arm::keep;
#[cfg(target_arch = "x86_64")]
pub use x86::keep;

/// No probes on other architectures.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn keep() -> Vec<*const ()> {
    Vec::new()
}
