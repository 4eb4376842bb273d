//! A hint to start loading a cache line that will be read soon (a table entry whose address is
//! known a step ahead of its use), so that its miss overlaps the work in between.

/// Starts loading the cache line holding `value` into every cache level. A hint only: it never
/// faults, and on targets without a prefetch instruction it does nothing.
#[inline(always)]
pub fn prefetch_read<T>(value: &T) {
    let p = value as *const T;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetch` needs SSE, which every x86-64 CPU has; a prefetch reads nothing
    // architecturally and cannot fault, and `p` comes from a reference anyway.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` is a hint that cannot fault and writes no register or memory; `p` comes
    // from a reference.
    unsafe {
        core::arch::asm!(
            "prfm pldl1keep, [{p}]",
            p = in(reg) p,
            options(nostack, readonly, preserves_flags)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_any_element_is_harmless() {
        let table = vec![7u64; 4096];
        for v in &table {
            prefetch_read(v);
        }
        prefetch_read(&table[table.len() - 1]);
        assert_eq!(table.iter().sum::<u64>(), 7 * 4096);
    }
}
