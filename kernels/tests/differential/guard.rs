//! A page of memory between two `PROT_NONE` guard pages: an input placed flush against either
//! guard makes any read outside the input fault, so an over-read (or under-read) by a kernel
//! crashes the test instead of passing unnoticed.

use std::ptr;

pub struct GuardedPage {
    /// Start of the mapping: guard page, data page, guard page.
    base: *mut u8,
    page: usize,
}

impl GuardedPage {
    pub fn new() -> GuardedPage {
        // SAFETY: plain anonymous mapping and protection changes on memory this struct owns;
        // failures are checked.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let base = libc::mmap(
                ptr::null_mut(),
                3 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(base, libc::MAP_FAILED, "mmap failed");
            let base = base as *mut u8;
            assert_eq!(
                libc::mprotect(base as *mut _, page, libc::PROT_NONE),
                0,
                "mprotect failed"
            );
            assert_eq!(
                libc::mprotect(base.add(2 * page) as *mut _, page, libc::PROT_NONE),
                0,
                "mprotect failed"
            );
            GuardedPage { base, page }
        }
    }

    pub fn page_size(&self) -> usize {
        self.page
    }

    fn data(&mut self) -> &mut [u8] {
        // SAFETY: the middle page is mapped read-write and owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.page), self.page) }
    }

    /// `content` copied so that it ends exactly where the trailing guard page begins.
    pub fn flush_end(&mut self, content: &[u8]) -> &[u8] {
        let page = self.page;
        let data = self.data();
        data[page - content.len()..].copy_from_slice(content);
        &data[page - content.len()..]
    }

    /// `content` copied so that it starts exactly where the leading guard page ends.
    pub fn flush_start(&mut self, content: &[u8]) -> &[u8] {
        let data = self.data();
        data[..content.len()].copy_from_slice(content);
        &data[..content.len()]
    }
}

impl Drop for GuardedPage {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.base as *mut _, 3 * self.page);
        }
    }
}
