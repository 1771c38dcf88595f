//! Pages of memory: one `struct page` from the page allocator.
//!
//! C header: [`include/linux/gfp.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/gfp.h),
//! [`include/linux/highmem.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/highmem.h).
//!
//! A [`Page`] is the memory behind a mapping that a driver shares with user
//! space ([`crate::mm::Vma::insert_page`]); the driver reads and writes it
//! through a temporary kernel mapping (`kmap_local_page`).
//!
//! Two differences from mainline's `Page` (`rust/kernel/page.rs`), both
//! because a page here is safe to share with user space:
//!
//! - [`Page::alloc`] always zeroes the page (`__GFP_ZERO`, as C Binder
//!   allocates its pages): the page may be mapped into a process or read
//!   back, and stale kernel data (pointers, keys) must not reach user
//!   space. Mainline leaves that to the caller's flags. The cost is one
//!   clear of 4 KiB per allocation (a few hundred nanoseconds), which
//!   Debian's `init_on_alloc=1` pays anyway.
//! - [`Page::read`] and [`Page::write`] are safe on a shared `&Page`: the
//!   page's bytes may change at any time (user space writes them through
//!   its mapping, another thread through its own `&Page`), so they are
//!   copied with relaxed atomic accesses, word by word, never with plain
//!   ones: two racing calls race on the values only, as user space does,
//!   which is no data race in Rust's sense. Mainline's `read_raw` and
//!   `write_raw` are `unsafe` and make the caller exclude the race.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};

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
// SAFETY: `&Page` only reads and writes the page's bytes with atomic
// accesses, through temporary mappings of the caller's own: concurrent
// calls race on the values only (as user space does on the same page),
// never on kernel state, and are no data race.
unsafe impl Sync for Page {}

impl Page {
    // ANCHOR: alloc
    /// Allocates a zeroed page (`alloc_page` with `__GFP_ZERO`, added to
    /// `flags`): a new page holds nothing of the kernel's, even on a kernel
    /// without `init_on_alloc`.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn alloc(flags: Flags) -> Result<Page, AllocError> {
        let flags = flags | crate::alloc::flags::__GFP_ZERO;
        // SAFETY: `alloc_page` may be called with any flags; it returns
        // null on failure.
        let page = unsafe { bindings::rust_helper_alloc_page(flags.as_raw()) };
        // INVARIANT: a non-null result is an order-0 page, now ours.
        Ok(Page {
            page: NonNull::new(page).ok_or(AllocError)?,
        })
    }
    // ANCHOR_END: alloc

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
            // within it (checked above).
            unsafe { copy_to_shared(data, addr.add(offset)) }
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
            unsafe { copy_from_shared(addr.add(offset), out) }
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

/// The bytes before the first word-aligned address at or after `dst`,
/// at most `len`.
fn head_len(dst: *const u8, len: usize) -> usize {
    dst.align_offset(size_of::<usize>()).min(len)
}

/// Copies `src` to `dst`, memory that others may write at the same time,
/// with relaxed atomic stores (whole aligned words, bytes at the ends).
///
/// # Safety
///
/// `dst` is valid for writes of `src.len()` bytes, and every access to
/// them that may run at the same time is atomic or outside Rust (user
/// space, C).
pub(crate) unsafe fn copy_to_shared(src: &[u8], dst: *mut u8) {
    let head = head_len(dst, src.len());
    let (bytes, rest) = src.split_at(head);
    let words = rest.chunks_exact(size_of::<usize>());
    let tail = words.remainder();
    let mut at = dst;
    for &b in bytes {
        // SAFETY: `at` is in range (contract); any alignment suits a byte.
        unsafe { AtomicU8::from_ptr(at) }.store(b, Relaxed);
        // SAFETY: still in range or one past it.
        at = unsafe { at.add(1) };
    }
    for w in words {
        let w = usize::from_ne_bytes(w.try_into().unwrap_or_default());
        // SAFETY: in range (contract), and aligned for a word after the
        // head.
        unsafe { AtomicUsize::from_ptr(at.cast()) }.store(w, Relaxed);
        // SAFETY: still in range or one past it.
        at = unsafe { at.add(size_of::<usize>()) };
    }
    for &b in tail {
        // SAFETY: as for the head.
        unsafe { AtomicU8::from_ptr(at) }.store(b, Relaxed);
        // SAFETY: as for the head.
        at = unsafe { at.add(1) };
    }
}

/// Copies `src`, memory that others may write at the same time, to `dst`
/// with relaxed atomic loads (whole aligned words, bytes at the ends).
///
/// # Safety
///
/// As for [`copy_to_shared`], with `src` valid for reads of `dst.len()`
/// bytes.
pub(crate) unsafe fn copy_from_shared(src: *const u8, dst: &mut [u8]) {
    let head = head_len(src, dst.len());
    let (bytes, rest) = dst.split_at_mut(head);
    let mut words = rest.chunks_exact_mut(size_of::<usize>());
    let mut at = src.cast_mut();
    for b in bytes {
        // SAFETY: `at` is in range (contract); any alignment suits a byte.
        *b = unsafe { AtomicU8::from_ptr(at) }.load(Relaxed);
        // SAFETY: still in range or one past it.
        at = unsafe { at.add(1) };
    }
    for w in &mut words {
        // SAFETY: in range (contract), and aligned for a word after the
        // head.
        let v = unsafe { AtomicUsize::from_ptr(at.cast()) }.load(Relaxed);
        w.copy_from_slice(&v.to_ne_bytes());
        // SAFETY: still in range or one past it.
        at = unsafe { at.add(size_of::<usize>()) };
    }
    for b in words.into_remainder() {
        // SAFETY: as for the head.
        *b = unsafe { AtomicU8::from_ptr(at) }.load(Relaxed);
        // SAFETY: as for the head.
        at = unsafe { at.add(1) };
    }
}
