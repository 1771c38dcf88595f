//! Heap memory: allocation flags and owned heap types over `kmalloc`.
//!
//! C header: [`include/linux/slab.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/slab.h)
//! (and [`include/linux/gfp.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/gfp.h)
//! for the flags).
//!
//! Every operation that can allocate takes [`Flags`] and returns a `Result`
//! whose error is [`AllocError`], which converts into `ENOMEM`. There is no
//! infallible path: this crate does not use Rust's `alloc` crate (it is not
//! even built, see `kbuild/rust-module.mk`), so nothing allocates behind the
//! module's back and no allocation failure turns into a panic. The checker
//! rejects any module that links one of `alloc`'s failure paths anyway.
//!
//! - [`KBox`]: one value on the heap.
//! - [`RawBuf`]: a growable buffer of slots, the building block of vectors.
//! - [`KVec`]: a growable vector.
//! - [`KString`]: a growable UTF-8 string, with [`kformat!`](crate::kformat).
//!
//! All of them sit on [`krealloc`] and `kfree`.
//!
//! # Sizes and alignment
//!
//! `kmalloc` aligns every block to `ARCH_KMALLOC_MINALIGN` (8 on x86-64) and
//! a block whose size is a power of two to that size (up to a page). A type
//! aligned to more than 8 bytes therefore gets a block rounded up to a power
//! of two; one aligned to more than a page is refused with [`AllocError`].
//! A request larger than `KMALLOC_MAX_SIZE` (4 MiB here) cannot be served;
//! it is still passed to the kernel, with `__GFP_NOWARN` added so that the
//! refusal is an `ENOMEM` and not a warning with a stack trace in the log.
//! Smaller failures keep the kernel's usual allocation-failure report,
//! unless the caller passes `__GFP_NOWARN` itself.
//!
//! [`krealloc`]: https://elixir.bootlin.com/linux/v6.1/source/mm/slab_common.c#L1397

use core::alloc::Layout;
use core::fmt;
use core::ops::{BitOr, BitOrAssign};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::bindings;
use crate::error::{code::ENOMEM, Error};

mod kbox;
mod kstring;
mod kvec;
mod raw_buf;

pub use kbox::KBox;
pub use kstring::KString;
pub use kvec::KVec;
pub use raw_buf::RawBuf;

// ANCHOR: flags
/// Allocation flags, C's `gfp_t`: how the allocator may get memory.
///
/// Combine them with `|`: `GFP_KERNEL | __GFP_ZERO`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Flags(bindings::gfp_t);

impl Flags {
    /// The raw `gfp_t` value.
    pub const fn as_raw(self) -> bindings::gfp_t {
        self.0
    }

    /// Whether every flag of `other` is set in `self`.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

/// The allocation flags of C, as [`Flags`] constants.
pub mod flags {
    use super::Flags;
    use crate::bindings;

    /// The usual flags in process context: the allocator may sleep, reclaim
    /// memory and start I/O to do so.
    pub const GFP_KERNEL: Flags = Flags(bindings::RUST_CONST_HELPER_GFP_KERNEL);
    /// For contexts that cannot sleep (interrupt handlers, under a
    /// spinlock): never sleeps, may use the emergency reserves.
    pub const GFP_ATOMIC: Flags = Flags(bindings::RUST_CONST_HELPER_GFP_ATOMIC);
    /// Zero the new memory.
    pub const __GFP_ZERO: Flags = Flags(bindings::RUST_CONST_HELPER___GFP_ZERO);
    /// Do not log a warning when the allocation fails.
    pub const __GFP_NOWARN: Flags = Flags(bindings::RUST_CONST_HELPER___GFP_NOWARN);
}
// ANCHOR_END: flags

pub use flags::*;

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Flags({:#x})", self.0)
    }
}

// ANCHOR: alloc_error
/// An allocation failed: the memory was not available, or the size was
/// beyond what the allocator can serve. It converts into `ENOMEM`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AllocError;

impl From<AllocError> for Error {
    fn from(_: AllocError) -> Error {
        ENOMEM
    }
}
// ANCHOR_END: alloc_error

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&ENOMEM, f)
    }
}

/// Live allocations made through this crate by this module.
///
/// Each module links its own copy of the kernel crate, so this counts the
/// module's own blocks only.
static LIVE_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// How many blocks this module has allocated and not freed yet: 0 once
/// everything it allocated was dropped. A leak-detection aid.
pub fn live_allocations() -> usize {
    LIVE_ALLOCATIONS.load(Ordering::Relaxed)
}

const MINALIGN: usize = bindings::RUST_CONST_HELPER_ARCH_KMALLOC_MINALIGN;
const PAGE_SIZE: usize = bindings::RUST_CONST_HELPER_PAGE_SIZE;
const KMALLOC_MAX_SIZE: usize = bindings::RUST_CONST_HELPER_KMALLOC_MAX_SIZE;

/// The size to ask `kmalloc` for so that the block is aligned for `layout`
/// (see the module documentation), or an error if no size would do.
fn kmalloc_size(layout: Layout) -> Result<usize, AllocError> {
    if layout.align() <= MINALIGN {
        Ok(layout.size())
    } else if layout.align() <= PAGE_SIZE {
        layout
            .size()
            .max(layout.align())
            .checked_next_power_of_two()
            .ok_or(AllocError)
    } else {
        Err(AllocError)
    }
}

// ANCHOR: realloc
/// Allocates a block for `layout` (`old` is `None`) or resizes the block
/// `old` to `layout`, with `krealloc`. On failure `old` is left as it was.
///
/// The new block is aligned for `layout`. With `__GFP_ZERO` a new block is
/// zeroed; bytes added by resizing are not guaranteed to be (`krealloc` may
/// grow a block in place).
///
/// # Safety
///
/// `layout.size()` is not zero. `old`, if any, is a block returned by this
/// function for a layout of the same alignment and not freed since; on
/// success it must no longer be used (the returned block replaces it).
pub(crate) unsafe fn realloc(
    old: Option<NonNull<u8>>,
    layout: Layout,
    mut flags: Flags,
) -> Result<NonNull<u8>, AllocError> {
    let size = kmalloc_size(layout)?;
    if size > KMALLOC_MAX_SIZE {
        // Bound to fail: fail quietly, the caller gets ENOMEM.
        flags |= __GFP_NOWARN;
    }
    // Without fault injection (Debian's kernels) the helper always says
    // no: the call is left out.
    // SAFETY: the helper only reads and writes the current task's counter.
    #[cfg(CONFIG_FAULT_INJECTION)]
    if unsafe { bindings::rust_helper_alloc_should_fail() } {
        return Err(AllocError);
    }
    let old_ptr = old.map_or(ptr::null(), |p| p.as_ptr().cast_const());
    // SAFETY: `old_ptr` is NULL or a live block from `krealloc` (the caller
    // guarantees it), and `size` is not zero, so `krealloc` returns a new
    // block or NULL and never frees `old_ptr` on failure.
    #[cfg(not(kernel_krealloc_noprof))]
    let new = unsafe { bindings::krealloc(old_ptr.cast(), size, flags.as_raw()) };
    // 6.10+: `krealloc` is a macro that tags the call site for allocation
    // profiling around `krealloc_noprof`, the function; the crate's blocks
    // are then counted under the caller of `krealloc_noprof`.
    // SAFETY: as above.
    #[cfg(kernel_krealloc_noprof)]
    let new = unsafe { bindings::krealloc_noprof(old_ptr.cast(), size, flags.as_raw()) };
    let new = NonNull::new(new.cast::<u8>()).ok_or(AllocError)?;
    if old.is_none() {
        LIVE_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
    Ok(new)
}
// ANCHOR_END: realloc

/// Frees a block from [`realloc`].
///
/// # Safety
///
/// `ptr` is a block returned by [`realloc`] and not freed since; it must not
/// be used afterwards.
pub(crate) unsafe fn free(ptr: NonNull<u8>) {
    // SAFETY: the caller guarantees that `ptr` is a live `krealloc` block.
    unsafe { bindings::kfree(ptr.as_ptr().cast_const().cast()) };
    LIVE_ALLOCATIONS.fetch_sub(1, Ordering::Relaxed);
}
