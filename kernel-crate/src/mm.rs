//! Memory maps: the `vm_area_struct` an `mmap(2)` of a device creates.
//!
//! C header: [`include/linux/mm.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mm.h),
//! [`include/linux/mm_types.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mm_types.h).
//!
//! A driver sees a [`Vma`] only inside its
//! [`FileOperations::mmap`](crate::file::FileOperations::mmap) callback,
//! where the kernel holds the address space's `mmap_lock` for writing: the
//! area is being set up, and pages inserted then need no lookup.

use crate::bindings;
use crate::error::{to_result, Result};
use crate::init::Opaque;
use crate::page::Page;

/// Flags of [`Vma::flags`] (`vm_flags_t`, `include/linux/mm.h`).
pub mod flags {
    use crate::bindings;

    /// The area is mapped writable.
    pub const WRITE: usize = bindings::RUST_CONST_HELPER_VM_WRITE as usize;
    /// `mprotect` may make the area writable later.
    pub const MAYWRITE: usize = bindings::RUST_CONST_HELPER_VM_MAYWRITE as usize;
    /// A child of `fork` does not inherit the area.
    pub const DONTCOPY: usize = bindings::RUST_CONST_HELPER_VM_DONTCOPY as usize;
    /// The area may hold pages inserted by `vm_insert_page`, which need
    /// not be the page cache's.
    pub const MIXEDMAP: usize = bindings::RUST_CONST_HELPER_VM_MIXEDMAP as usize;
}

// ANCHOR: vma
/// A virtual memory area being set up by `mmap(2)`.
///
/// Only ever seen by mutable reference, for the duration of an `mmap`
/// callback, during which the kernel holds the `mmap_lock` of the address
/// space for writing.
#[repr(transparent)]
pub struct Vma(Opaque<bindings::vm_area_struct>);
// ANCHOR_END: vma

impl Vma {
    /// # Safety
    ///
    /// `ptr` is a `vm_area_struct` being set up by an `mmap` file
    /// operation, valid for `'a`, whose `mmap_lock` is held for writing
    /// for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::vm_area_struct) -> &'a mut Vma {
        // SAFETY: `Vma` is a transparent wrapper of the C struct; the
        // caller guarantees that it is valid and ours for `'a`.
        unsafe { &mut *ptr.cast::<Vma>() }
    }

    fn as_raw(&self) -> *mut bindings::vm_area_struct {
        self.0.as_raw()
    }

    /// The first address of the area.
    pub fn start(&self) -> usize {
        // SAFETY: the area is valid (see `from_raw`).
        unsafe { bindings::rust_helper_vma_start(self.as_raw()) as usize }
    }

    /// The address just past the area.
    pub fn end(&self) -> usize {
        // SAFETY: the area is valid (see `from_raw`).
        unsafe { bindings::rust_helper_vma_end(self.as_raw()) as usize }
    }

    /// The area's flags ([`flags`]).
    pub fn flags(&self) -> usize {
        // SAFETY: the area is valid (see `from_raw`).
        unsafe { bindings::rust_helper_vma_flags(self.as_raw()) as usize }
    }

    /// Sets `set` and clears `clear` in the area's flags (in 6.1 an `mmap`
    /// handler writes `vm_flags` directly, under the `mmap_lock`).
    pub fn update_flags(&mut self, set: usize, clear: usize) {
        let new = (self.flags() | set) & !clear;
        // SAFETY: the area is valid and its `mmap_lock` is held for
        // writing (see `from_raw`): the flags are ours to change.
        unsafe { bindings::rust_helper_vma_set_flags(self.as_raw(), new as core::ffi::c_ulong) };
    }

    // ANCHOR: insert_page
    /// Maps `page` at `address` in the area (`vm_insert_page`). The area
    /// takes its own reference on the page: the page stays allocated
    /// while it is mapped, even after the `Page` is dropped. `EFAULT` for
    /// an address outside the area, `EINVAL` without [`flags::MIXEDMAP`].
    pub fn insert_page(&mut self, address: usize, page: &Page) -> Result {
        // SAFETY: the area is valid and its `mmap_lock` is held for
        // writing (see `from_raw`), as `vm_insert_page` requires; the page
        // is allocated (by the invariants of `Page`), and `vm_insert_page`
        // checks the address against the area.
        to_result(unsafe {
            bindings::vm_insert_page(self.as_raw(), address as core::ffi::c_ulong, page.as_raw())
        })?;
        Ok(())
    }
    // ANCHOR_END: insert_page
}
