//! Pages of memory: one `struct page` from the page allocator.
//!
//! C header: [`include/linux/gfp.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/gfp.h),
//! [`include/linux/highmem.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/highmem.h).
//!
//! A [`Page`] is the memory behind a mapping that a driver shares with user
//! space ([`crate::mm::Vma::insert_page`]); the driver reads and writes it
//! through a temporary kernel mapping (`kmap_local_page`).

use core::ptr::NonNull;

use crate::alloc::{AllocError, Flags};
use crate::bindings;
use crate::error::{code::EINVAL, Result};

/// The size of a page in bytes.
pub const PAGE_SIZE: usize = bindings::RUST_CONST_HELPER_PAGE_SIZE;

// ANCHOR: page
/// One page of memory, owned: dropping it frees the page (a mapping that
/// holds a reference of its own keeps it alive until unmapped).
///
/// # Invariants
///
/// `page` is an order-0 page from `alloc_page`, which this `Page` owns.
pub struct Page {
    page: NonNull<bindings::page>,
}
// ANCHOR_END: page

// SAFETY: a page may be used and freed from any thread; `Page` gives no
// access that is tied to the allocating one.
unsafe impl Send for Page {}
// SAFETY: `&Page` only reads and writes through temporary mappings of
// the caller's own; concurrent `write`s race on the bytes only (as user
// space does on the same page), never on kernel state.
unsafe impl Sync for Page {}

impl Page {
    /// Allocates a page (`alloc_page`); add `__GFP_ZERO` to `flags` for a
    /// zeroed one.
    pub fn alloc(flags: Flags) -> Result<Page, AllocError> {
        // SAFETY: `alloc_page` may be called with any flags; it returns
        // null on failure.
        let page = unsafe { bindings::rust_helper_alloc_page(flags.as_raw()) };
        // INVARIANT: a non-null result is an order-0 page, now ours.
        Ok(Page {
            page: NonNull::new(page).ok_or(AllocError)?,
        })
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::page {
        self.page.as_ptr()
    }

    /// Runs `f` on a temporary kernel mapping of the page.
    fn with_mapped<R>(&self, f: impl FnOnce(*mut u8) -> R) -> R {
        // SAFETY: the page is allocated (type invariant).
        let addr = unsafe { bindings::rust_helper_kmap_local_page(self.as_raw()) };
        let r = f(addr.cast());
        // SAFETY: `addr` is the mapping made above, unmapped once.
        unsafe { bindings::rust_helper_kunmap_local(addr) };
        r
    }

    /// Copies `data` into the page at `offset`; `EINVAL` if it does not fit.
    pub fn write(&self, offset: usize, data: &[u8]) -> Result {
        if offset
            .checked_add(data.len())
            .is_none_or(|end| end > PAGE_SIZE)
        {
            return Err(EINVAL);
        }
        self.with_mapped(|addr| {
            // SAFETY: `addr` maps the whole page, and `offset + len` is
            // within it (checked above); `data` is a Rust slice, which
            // cannot overlap the page's temporary mapping.
            unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), addr.add(offset), data.len()) }
        });
        Ok(())
    }

    /// Copies the next `len` bytes of `reader` into the page at `offset`,
    /// straight from user memory (no copy in between); `EINVAL` if they
    /// do not fit, `EFAULT` as for
    /// [`UserSliceReader::read_slice`](crate::user::UserSliceReader::read_slice).
    ///
    /// The copy may fault in user pages and sleep: call it with no
    /// spinlock held, and better with no lock at all that the fault path's
    /// `mmap_lock` could be ordered against.
    pub fn read_from_user(
        &self,
        offset: usize,
        reader: &mut crate::user::UserSliceReader,
        len: usize,
    ) -> Result {
        if offset.checked_add(len).is_none_or(|end| end > PAGE_SIZE) {
            return Err(EINVAL);
        }
        self.with_mapped(|addr| {
            // SAFETY: `addr` maps the whole page (kmap_local_page allows
            // page faults while it is held), and `offset + len` is within
            // it (checked above).
            unsafe { reader.read_raw(addr.add(offset), len) }
        })
    }

    /// Copies bytes of the page at `offset` into `out`; `EINVAL` if they
    /// are not all inside the page.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        if offset
            .checked_add(out.len())
            .is_none_or(|end| end > PAGE_SIZE)
        {
            return Err(EINVAL);
        }
        self.with_mapped(|addr| {
            // SAFETY: as in `write`, with the copy the other way.
            unsafe { core::ptr::copy_nonoverlapping(addr.add(offset), out.as_mut_ptr(), out.len()) }
        });
        Ok(())
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: the page is ours and order 0 (type invariant); a mapping
        // that holds its own reference keeps it until it is unmapped.
        unsafe { bindings::__free_pages(self.as_raw(), 0) };
    }
}
