//! Tables of megabytes (the per-thread piece caches) on transparent huge pages where the OS
//! gives them. A cache probed at random over 2–4 MiB touches a new 4 KiB page nearly every time:
//! on 2 MiB pages the probes need one TLB entry per 2 MiB instead of a page walk each, the
//! prefetches ahead of them are not dropped for a TLB miss (Zen drops them), and a fresh table
//! faults in twice per 4 MiB instead of 1024 times (a cold slice of unseen English, cl100k:
//! +45 % on an EPYC).
//!
//! On Linux a table of at least [`HUGE_PAGE`] bytes is allocated aligned to it and marked
//! `MADV_HUGEPAGE` before its first touch, so that the first writes fault in huge pages when
//! the kernel's policy (`/sys/kernel/mm/transparent_hugepage/enabled`, `always` or `madvise`)
//! allows; under `never`, or elsewhere, it is an ordinary allocation and works the same.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The size of a transparent huge page on x86-64 and on aarch64 Linux with 4 KiB base pages.
pub const HUGE_PAGE: usize = 2 << 20;

/// A fixed-length slice of `T`, on huge pages when it is large (see the module documentation).
pub struct HugeSlice<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    /// The allocation's layout (`None` for an empty slice, which allocates nothing).
    layout: Option<Layout>,
}

// SAFETY: a `HugeSlice` owns its elements as a `Box<[T]>` does, with no shared state.
unsafe impl<T: Copy + Send> Send for HugeSlice<T> {}
// SAFETY: as above; `&HugeSlice` gives only `&[T]`.
unsafe impl<T: Copy + Sync> Sync for HugeSlice<T> {}

impl<T: Copy> HugeSlice<T> {
    /// An empty slice (no allocation).
    pub fn empty() -> HugeSlice<T> {
        HugeSlice {
            ptr: NonNull::dangling(),
            len: 0,
            layout: None,
        }
    }

    /// `len` copies of `value`.
    pub fn filled(len: usize, value: T) -> HugeSlice<T> {
        let bytes = std::mem::size_of::<T>()
            .checked_mul(len)
            .expect("HugeSlice: size overflows");
        if bytes == 0 {
            return HugeSlice {
                len,
                ..HugeSlice::empty()
            };
        }
        let huge = cfg!(target_os = "linux") && bytes >= HUGE_PAGE;
        let layout = if huge {
            // Whole huge pages, so that the last one is not shared with another allocation.
            let size = bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE;
            Layout::from_size_align(size, HUGE_PAGE.max(std::mem::align_of::<T>()))
        } else {
            Layout::array::<T>(len)
        }
        .expect("HugeSlice: size overflows");
        // SAFETY: `layout` has a non-zero size (`bytes > 0`).
        let raw = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            handle_alloc_error(layout)
        };
        if huge {
            advise_huge(raw, layout.size());
        }
        for i in 0..len {
            // SAFETY: the allocation holds `len` elements of `T`, aligned for `T` (the layout's
            // alignment is at least `T`'s); each is written once, before any is read.
            unsafe { ptr.as_ptr().add(i).write(value) };
        }
        HugeSlice {
            ptr,
            len,
            layout: Some(layout),
        }
    }

    /// Whether the slice was allocated on a huge-page boundary and marked for huge pages
    /// (whether the kernel gave them is its own affair: `AnonHugePages` in `/proc/self/smaps`).
    pub fn advised_huge(&self) -> bool {
        self.layout.is_some_and(|l| l.align() >= HUGE_PAGE)
    }
}

/// Marks `size` bytes from `ptr` (aligned to [`HUGE_PAGE`], not yet touched) for huge pages.
/// A hint: a kernel that refuses it leaves ordinary pages, so the result is ignored.
#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, size: usize) {
    // SAFETY: `ptr..ptr + size` is a live allocation of ours; `madvise` with MADV_HUGEPAGE
    // changes only how the kernel backs those pages, never their contents.
    unsafe {
        libc::madvise(ptr.cast(), size, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _size: usize) {}

impl<T: Copy> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: allocated by `alloc` with exactly this layout; `T: Copy` needs no drop.
            unsafe { dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}

impl<T: Copy> Deref for HugeSlice<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised elements (or is dangling with a zero-sized
        // allocation: `len` 0, or `T` zero-sized, both valid for a slice).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for HugeSlice<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Default for HugeSlice<T> {
    fn default() -> Self {
        HugeSlice::empty()
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for HugeSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HugeSlice")
            .field("len", &self.len)
            .field("advised_huge", &self.advised_huge())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_empty_slices_are_ordinary() {
        let empty = HugeSlice::<u64>::empty();
        assert!(empty.is_empty() && !empty.advised_huge());
        let zero = HugeSlice::filled(0, 1u32);
        assert!(zero.is_empty());
        let units = HugeSlice::filled(5, ());
        assert_eq!(units.len(), 5);
        let mut small = HugeSlice::filled(1000, 7u32);
        assert!(!small.advised_huge());
        assert!(small.iter().all(|&v| v == 7));
        small[999] = 8;
        assert_eq!(small.iter().map(|&v| v as u64).sum::<u64>(), 7 * 999 + 8);
    }

    #[test]
    fn large_slices_are_whole_aligned_huge_pages_on_linux() {
        #[derive(Clone, Copy, PartialEq, Debug)]
        #[repr(align(64))]
        struct Line([u64; 8]);
        // 2 MiB and a line: rounded up to two huge pages.
        let n = HUGE_PAGE / 64 + 1;
        let mut lines = HugeSlice::filled(n, Line([3; 8]));
        assert_eq!(lines.len(), n);
        assert_eq!(lines.as_ptr() as usize % 64, 0);
        if cfg!(target_os = "linux") {
            assert!(lines.advised_huge());
            assert_eq!(lines.as_ptr() as usize % HUGE_PAGE, 0);
        }
        assert!(lines.iter().all(|l| *l == Line([3; 8])));
        lines[n - 1] = Line([4; 8]);
        assert_eq!(lines[n - 1], Line([4; 8]));
        assert_eq!(lines[n - 2], Line([3; 8]));
    }
}
