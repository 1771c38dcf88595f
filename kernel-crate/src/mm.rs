//! Memory maps: the `vm_area_struct` an `mmap(2)` of a device creates.
//!
//! C header: [`include/linux/mm.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mm.h),
//! [`include/linux/mm_types.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mm_types.h).
//!
//! A driver sees a [`Vma`] mutably inside its
//! [`FileOperations::mmap`](crate::file::FileOperations::mmap) callback,
//! where the kernel holds the address space's `mmap_lock` for writing, and
//! shared later through [`MmapReadGuard::vma_lookup`], under the lock taken
//! for reading: that is how a driver inserts pages on demand, after the
//! `mmap`. An [`Mm`] (taken at `mmap` from [`Vma::mm`]) keeps the address
//! space's `struct mm_struct` allocated; [`Mm::get_user`] tells whether it
//! still has users, i.e. whether the process still has its memory.
//!
//! A driver takes its pages back from user space with
//! [`MarkedVma::zap_page_range`]: only in an area it set up itself
//! ([`Vma::set_inserted_pages_only`]) and marked ([`Vma::set_private`]),
//! found again by [`Vma::marked`], with the `mmap_lock` held (a reclaim
//! path takes it with [`MmUser::mmap_read_trylock`]).
//!
//! Such an area counts itself gone when it is unmapped ([`closed_areas`]),
//! so that a driver need not look it up to know it is still there.
//!
//! Compared with mainline's `rust/kernel/mm/virt.rs`: the flags change only
//! through typed setters ([`Vma::set_dontcopy`], [`Vma::try_clear_maywrite`],
//! ...), the word itself written by a private `unsafe` function, as there;
//! mainline puts the setters on a `VmaNew` that only `mmap` sees, this
//! crate on the `&mut Vma` that only `mmap` gets (a looked-up area is a
//! shared `&Vma`). [`MmapReadGuard`] is not `Send`, as mainline's. Where
//! this crate is stricter: zapping only in marked areas ([`MarkedVma`]).

use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::bindings;
use crate::error::{code::EINVAL, to_result, Result};
use crate::init::Opaque;
use crate::page::Page;

/// Flags of [`Vma::flags`] (`vm_flags_t`, `include/linux/mm.h`), to read.
///
/// A driver changes them only through [`Vma`]'s typed setters, during its
/// `mmap`: most bits are the memory manager's own (`VM_HUGETLB`,
/// `VM_PFNMAP`, `VM_SHARED`, ...), and setting one on a driver's area
/// breaks its assumptions (`VM_HUGETLB` there is a `BUG()` in
/// `mm/hugetlb.c` on the next fault or unmap).
pub mod flags {
    use crate::bindings;

    /// The area is mapped readable.
    pub const READ: usize = bindings::RUST_CONST_HELPER_VM_READ as usize;
    /// The area is mapped writable.
    pub const WRITE: usize = bindings::RUST_CONST_HELPER_VM_WRITE as usize;
    /// The area is mapped executable.
    pub const EXEC: usize = bindings::RUST_CONST_HELPER_VM_EXEC as usize;
    /// `mprotect` may make the area readable later.
    pub const MAYREAD: usize = bindings::RUST_CONST_HELPER_VM_MAYREAD as usize;
    /// `mprotect` may make the area writable later.
    pub const MAYWRITE: usize = bindings::RUST_CONST_HELPER_VM_MAYWRITE as usize;
    /// `mprotect` may make the area executable later.
    pub const MAYEXEC: usize = bindings::RUST_CONST_HELPER_VM_MAYEXEC as usize;
    /// A child of `fork` does not inherit the area.
    pub const DONTCOPY: usize = bindings::RUST_CONST_HELPER_VM_DONTCOPY as usize;
    /// `mremap` may not grow the area.
    pub const DONTEXPAND: usize = bindings::RUST_CONST_HELPER_VM_DONTEXPAND as usize;
    /// The area may hold pages inserted by `vm_insert_page`, which need
    /// not be the page cache's.
    pub const MIXEDMAP: usize = bindings::RUST_CONST_HELPER_VM_MIXEDMAP as usize;
}

/// The `vm_ops` of [`Vma::set_inserted_pages_only`]: `fault` and `close`.
static INSERTED_PAGES_ONLY: bindings::vm_operations_struct = bindings::vm_operations_struct {
    fault: Some(fault_sigbus),
    close: Some(close_count),
    // SAFETY: all zeroes is a valid `vm_operations_struct`: every other
    // callback absent (`None`).
    ..unsafe { core::mem::zeroed() }
};

/// The fault handler of [`INSERTED_PAGES_ONLY`]: a page the driver did
/// not insert is not there.
unsafe extern "C" fn fault_sigbus(_vmf: *mut bindings::vm_fault) -> bindings::vm_fault_t {
    bindings::RUST_CONST_HELPER_VM_FAULT_SIGBUS
}

/// How many areas with [`INSERTED_PAGES_ONLY`] have been closed.
static CLOSED: AtomicU64 = AtomicU64::new(0);

/// The `close` of [`INSERTED_PAGES_ONLY`] (an unmap, in part or whole, or
/// the process's exit): counts the area gone.
unsafe extern "C" fn close_count(_area: *mut bindings::vm_area_struct) {
    CLOSED.fetch_add(1, Ordering::Release);
}

/// How many areas set up by [`Vma::set_inserted_pages_only`] in this
/// module have been unmapped (in part or whole) or gone with their
/// process. A driver that found its area while the count was `n` knows it
/// is still mapped while the count stays `n`, without taking the
/// `mmap_lock` (as C Binder's `close` clears its `alloc->vma`, checked
/// instead of a lookup).
pub fn closed_areas() -> u64 {
    CLOSED.load(Ordering::Acquire)
}

// ANCHOR: vma
/// A virtual memory area: one `mmap(2)` of a file.
///
/// Seen by mutable reference for the duration of an `mmap` callback,
/// during which the kernel holds the `mmap_lock` of the address space for
/// writing, or by shared reference borrowed from an [`MmapReadGuard`]:
/// either way the `mmap_lock` is held while the reference lives.
#[repr(transparent)]
pub struct Vma(Opaque<bindings::vm_area_struct>);
// ANCHOR_END: vma

impl Vma {
    /// # Safety
    ///
    /// `ptr` is a `vm_area_struct` being set up by an `mmap` file
    /// operation, valid for `'a`, whose `mmap_lock` is held for writing
    /// for `'a`.
    ///
    /// (A shared `&Vma` is only made by [`MmapReadGuard::vma_lookup`].)
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

    /// The address space the area belongs to, kept allocated by the
    /// returned handle (`mmgrab`).
    pub fn mm(&self) -> Mm {
        // SAFETY: the area is valid (see `from_raw`), and its `vm_mm` is
        // the live address space that holds it.
        let mm = unsafe { bindings::rust_helper_vma_mm(self.as_raw()) };
        // SAFETY: `mm` is live (above); `mmgrab` takes the count that
        // `Mm`'s drop gives back.
        unsafe { bindings::rust_helper_mmgrab(mm) };
        // INVARIANT: the count was just taken.
        Mm {
            // SAFETY: `vm_mm` of a live area is never null.
            mm: unsafe { NonNull::new_unchecked(mm) },
        }
    }

    /// The area's private word (`vm_private_data`), as a number: what the
    /// driver that mapped it stored with [`Vma::set_private`], zero else.
    /// Only compared, never dereferenced.
    pub fn private(&self) -> usize {
        // SAFETY: the area is valid and its `mmap_lock` held (see
        // `from_raw`, `vma_lookup`); the field is read, not followed.
        unsafe { bindings::rust_helper_vma_private_data(self.as_raw()) as usize }
    }

    /// Stores `value` in the area's private word. The kernel never reads
    /// it (the only `vm_ops` this crate installs,
    /// [`Vma::set_inserted_pages_only`]'s, do not): the driver uses it to
    /// know the area again ([`Vma::private`]).
    pub fn set_private(&mut self, value: usize) {
        // SAFETY: the area is valid and its `mmap_lock` is held for
        // writing (see `from_raw`); the area's `vm_ops` are none or this
        // crate's, which do not use `vm_private_data`.
        unsafe {
            bindings::rust_helper_vma_set_private_data(
                self.as_raw(),
                value as *mut core::ffi::c_void,
            )
        };
    }

    // ANCHOR: inserted_pages_only
    /// Makes the area's pages the driver's alone, as C Binder's
    /// `binder_vm_ops` do: touching a page the driver has not inserted
    /// ([`Vma::insert_page`]) raises `SIGBUS`. An area left without
    /// `vm_ops` is taken for anonymous memory: a read there would map the
    /// zero page, and the driver's later insertion at that address would
    /// fail with `EBUSY`.
    pub fn set_inserted_pages_only(&mut self) {
        // SAFETY: the area is valid and its `mmap_lock` is held for
        // writing (see `from_raw`), so its `vm_ops` are ours to set. The
        // table is a static of this module, which outlives the area: the
        // area holds its file, and the file's operations hold the module.
        unsafe { bindings::rust_helper_vma_set_ops(self.as_raw(), &INSERTED_PAGES_ONLY) };
    }
    // ANCHOR_END: inserted_pages_only

    // ANCHOR: set_flags
    /// A child of `fork` does not inherit the area (`VM_DONTCOPY`).
    pub fn set_dontcopy(&mut self) {
        // SAFETY: not copying an area on `fork` is always acceptable.
        unsafe { update_flags(self, flags::DONTCOPY, 0) };
    }

    /// `mremap` may not grow the area (`VM_DONTEXPAND`).
    pub fn set_dontexpand(&mut self) {
        // SAFETY: refusing to grow an area is always acceptable.
        unsafe { update_flags(self, flags::DONTEXPAND, 0) };
    }

    /// The area may hold pages the driver inserts (`VM_MIXEDMAP`), as
    /// [`Vma::insert_page`] requires.
    pub fn set_mixedmap(&mut self) {
        // SAFETY: `VM_MIXEDMAP` on an area being set up only says that its
        // pages may be inserted ones; `vm_insert_page` would set it itself.
        unsafe { update_flags(self, flags::MIXEDMAP, 0) };
    }

    /// Forbids `mprotect` to make the area readable (clears
    /// `VM_MAYREAD`); `EINVAL` if it is readable already.
    pub fn try_clear_mayread(&mut self) -> Result {
        self.try_clear_may(flags::READ, flags::MAYREAD)
    }

    /// Forbids `mprotect` to make the area writable (clears
    /// `VM_MAYWRITE`); `EINVAL` if it is writable already.
    pub fn try_clear_maywrite(&mut self) -> Result {
        self.try_clear_may(flags::WRITE, flags::MAYWRITE)
    }

    /// Forbids `mprotect` to make the area executable (clears
    /// `VM_MAYEXEC`); `EINVAL` if it is executable already.
    pub fn try_clear_mayexec(&mut self) -> Result {
        self.try_clear_may(flags::EXEC, flags::MAYEXEC)
    }

    /// Clears `may` unless `now`, the access it allows, is already on.
    fn try_clear_may(&mut self, now: usize, may: usize) -> Result {
        if self.flags() & now != 0 {
            return Err(EINVAL);
        }
        // SAFETY: an area without the access (checked) may lose the
        // right to gain it: that only makes `mprotect` refuse more.
        unsafe { update_flags(self, 0, may) };
        Ok(())
    }
    // ANCHOR_END: set_flags

    // ANCHOR: marked
    /// The area as one of this module's, if it is: set up by its `mmap`
    /// with [`Vma::set_inserted_pages_only`] (so its pages are only those
    /// the driver inserted) and marked with `mark` ([`Vma::set_private`]).
    /// Only such an area may have pages zapped
    /// ([`MarkedVma::zap_page_range`]).
    pub fn marked(&self, mark: usize) -> Option<&MarkedVma> {
        // SAFETY: the area is valid and its `mmap_lock` held (see
        // `from_raw`, `vma_lookup`); the field is read, not followed.
        let ops = unsafe { bindings::rust_helper_vma_ops(self.as_raw()) };
        if !core::ptr::eq(ops, &INSERTED_PAGES_ONLY) || self.private() != mark {
            return None;
        }
        // INVARIANT: checked above; it holds while the `mmap_lock` is
        // held, which the reference (borrowed from `self`) does not
        // outlast: only an `mmap` sets `vm_ops`, under the lock taken for
        // writing.
        // SAFETY: `MarkedVma` is a transparent wrapper of `Vma`.
        Some(unsafe { &*(self as *const Vma).cast::<MarkedVma>() })
    }
    // ANCHOR_END: marked

    // ANCHOR: insert_page
    /// Maps `page` at `address` in the area (`vm_insert_page`). The area
    /// takes its own reference on the page: the page stays allocated
    /// while it is mapped, even after the `Page` is dropped. `EFAULT` for
    /// an address outside the area, `EBUSY` if a page is mapped there
    /// already, `EINVAL` without [`flags::MIXEDMAP`] (which `mmap` sets).
    pub fn insert_page(&self, address: usize, page: &Page) -> Result {
        // Without MIXEDMAP `vm_insert_page` would set it, which needs the
        // lock for writing (it BUG()s when it could take it for reading).
        if self.flags() & flags::MIXEDMAP == 0 {
            return Err(EINVAL);
        }
        // SAFETY: the area is valid and its `mmap_lock` is held (see
        // `from_raw`, `vma_lookup`), as `vm_insert_page` requires; it has
        // MIXEDMAP (checked), so the read lock is enough; the page is
        // allocated (by the invariants of `Page`), and `vm_insert_page`
        // checks the address against the area.
        to_result(unsafe {
            bindings::vm_insert_page(self.as_raw(), address as core::ffi::c_ulong, page.as_raw())
        })?;
        Ok(())
    }
    // ANCHOR_END: insert_page
}

/// Sets `set` and clears `clear` in the flags of `vma` (in 6.1 an `mmap`
/// handler writes `vm_flags` directly, under the `mmap_lock`).
///
/// A free function, private to this module, not a method: the typed
/// setters of [`Vma`] are the only ways to it (mainline's
/// `VmaNew::update_flags` is a private `unsafe` method).
///
/// # Safety
///
/// The change leaves the area in a state the memory manager accepts for a
/// driver's mapping: only the bits of the typed setters, each under its
/// own condition.
unsafe fn update_flags(vma: &mut Vma, set: usize, clear: usize) {
    let new = (vma.flags() | set) & !clear;
    // SAFETY: the area is valid and its `mmap_lock` is held for writing
    // (a `&mut Vma` is only made by `Vma::from_raw`): the flags are ours
    // to change; the caller guarantees that the new ones are acceptable.
    unsafe { bindings::rust_helper_vma_set_flags(vma.as_raw(), new as core::ffi::c_ulong) };
}

// ANCHOR: marked_vma
/// An area that this module set up ([`Vma::set_inserted_pages_only`]) and
/// marked: made by [`Vma::marked`], and, like a `&Vma`, only seen while
/// the `mmap_lock` is held.
///
/// # Invariants
///
/// The area's `vm_ops` are this module's `INSERTED_PAGES_ONLY`: it maps
/// only pages the driver inserted (`vm_insert_page`, so `VM_MIXEDMAP`, no
/// huge pages, no file or anonymous memory).
#[repr(transparent)]
pub struct MarkedVma(Vma);
// ANCHOR_END: marked_vma

impl core::ops::Deref for MarkedVma {
    type Target = Vma;

    fn deref(&self) -> &Vma {
        &self.0
    }
}

impl MarkedVma {
    // ANCHOR: zap_page_range
    /// Unmaps the pages of the `size` bytes at `address` from user space
    /// (`zap_page_range` on 6.1, `zap_page_range_single` on 6.12, as
    /// `madvise(MADV_DONTNEED)` does): the area
    /// drops its references on them, and a later touch faults (`SIGBUS`,
    /// [`Vma::set_inserted_pages_only`]) until the driver inserts a page
    /// again. `EINVAL` unless both are page-aligned and the range lies
    /// inside the area (`zap_page_range` would go on into the next areas).
    /// May sleep.
    pub fn zap_page_range(&self, address: usize, size: usize) -> Result {
        let aligned = (address | size).is_multiple_of(crate::page::PAGE_SIZE);
        let inside = address >= self.start()
            && address
                .checked_add(size)
                .is_some_and(|end| end <= self.end());
        if !aligned || !inside {
            return Err(EINVAL);
        }
        // SAFETY: the area is valid and its `mmap_lock` held (see
        // `Vma::from_raw`, `vma_lookup`), for reading at least, which is
        // what `zap_page_range` needs; the range is page-aligned and
        // inside it (checked), and its pages are only inserted ones (type
        // invariant), so nothing but the driver's pages is unmapped.
        #[cfg(not(kernel_zap_page_range_single))]
        unsafe {
            bindings::zap_page_range(
                self.as_raw(),
                address as core::ffi::c_ulong,
                size as core::ffi::c_ulong,
            )
        };
        // 6.3+: `zap_page_range` is gone; `zap_page_range_single` (no
        // `zap_details`: every page) stays inside the one area, as the
        // check above already ensures for 6.1's.
        // SAFETY: as above (the same lock and range).
        #[cfg(kernel_zap_page_range_single)]
        unsafe {
            bindings::zap_page_range_single(
                self.as_raw(),
                address as core::ffi::c_ulong,
                size as core::ffi::c_ulong,
                core::ptr::null_mut(),
            )
        };
        Ok(())
    }
    // ANCHOR_END: zap_page_range
}

// ANCHOR: mm
/// A counted reference to an address space (`struct mm_struct`): it stays
/// allocated (`mmgrab`/`mmdrop`), but its mappings go when its last user
/// (the process) exits; [`Mm::get_user`] checks for that.
///
/// # Invariants
///
/// `mm` is an address space on which this `Mm` holds one `mmgrab` count.
pub struct Mm {
    mm: NonNull<bindings::mm_struct>,
}
// ANCHOR_END: mm

// SAFETY: the counts of an `mm_struct` may be taken and dropped from any
// thread; `Mm` gives no access that is tied to one.
unsafe impl Send for Mm {}
// SAFETY: `&Mm` only takes counts and locks, which are thread safe.
unsafe impl Sync for Mm {}

impl Mm {
    /// A user of the address space (`mmget_not_zero`), or `None` if it has
    /// none left: the process has exited and its mappings are gone.
    pub fn get_user(&self) -> Option<MmUser<'_>> {
        // SAFETY: the address space is allocated (type invariant).
        if unsafe { bindings::rust_helper_mmget_not_zero(self.mm.as_ptr()) } {
            // INVARIANT: the user count was just taken.
            Some(MmUser { mm: self })
        } else {
            None
        }
    }
}

impl Drop for Mm {
    fn drop(&mut self) {
        // SAFETY: gives back the count this `Mm` holds (type invariant).
        unsafe { bindings::rust_helper_mmdrop(self.mm.as_ptr()) };
    }
}

/// A user of an address space: its mappings stay while it lives
/// (`mmget`/`mmput`). `mmput` may sleep.
///
/// # Invariants
///
/// The user count of `mm` was taken for this `MmUser`.
pub struct MmUser<'a> {
    mm: &'a Mm,
}

impl MmUser<'_> {
    /// Takes the `mmap_lock` for reading (may sleep). Hold no lock that a
    /// page fault or an `mmap` could be waiting for while taking it.
    pub fn mmap_read_lock(&self) -> MmapReadGuard<'_> {
        // SAFETY: the address space has a user (type invariant), so its
        // lock is initialised and live.
        unsafe { bindings::rust_helper_mmap_read_lock(self.mm.mm.as_ptr()) };
        // INVARIANT: the lock was just taken.
        MmapReadGuard {
            mm: self,
            _not_send: PhantomData,
        }
    }

    /// Takes the `mmap_lock` for reading if that needs no wait
    /// (`mmap_read_trylock`): for paths that must not sleep on it, such as
    /// a shrinker's, which may run inside an allocation made under it.
    pub fn mmap_read_trylock(&self) -> Option<MmapReadGuard<'_>> {
        // SAFETY: as in `mmap_read_lock`.
        if unsafe { bindings::rust_helper_mmap_read_trylock(self.mm.mm.as_ptr()) } {
            // INVARIANT: the lock was just taken.
            Some(MmapReadGuard {
                mm: self,
                _not_send: PhantomData,
            })
        } else {
            None
        }
    }

    /// Gives the user back without tearing the address space down here if
    /// it was the last (`mmput_async`: a workqueue does it): for reclaim
    /// paths, which must not run `exit_mmap` (C Binder's shrinker).
    pub fn put_async(self) {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: gives back the user count taken for this `MmUser` (type
        // invariant), once: `drop` will not run.
        unsafe { bindings::mmput_async(this.mm.mm.as_ptr()) };
    }
}

impl Drop for MmUser<'_> {
    fn drop(&mut self) {
        // SAFETY: gives back the user count taken for this `MmUser` (type
        // invariant).
        unsafe { bindings::mmput(self.mm.mm.as_ptr()) };
    }
}

// ANCHOR: mmap_read_guard
/// The `mmap_lock` of an address space, held for reading: the areas
/// found by [`MmapReadGuard::vma_lookup`] stay while it is held.
///
/// Not `Send`: an `rw_semaphore` is released by the task that took it
/// (lockdep and the semaphore's owner tracking assume it), as mainline's
/// guard, which holds a `NotThreadSafe`.
///
/// # Invariants
///
/// This guard holds the `mmap_lock` of `mm` for reading.
pub struct MmapReadGuard<'a> {
    mm: &'a MmUser<'a>,
    _not_send: PhantomData<*mut ()>,
}
// ANCHOR_END: mmap_read_guard

impl MmapReadGuard<'_> {
    /// The area that contains `address`, if any (`vma_lookup`).
    pub fn vma_lookup(&self, address: usize) -> Option<&Vma> {
        // SAFETY: the lock is held (type invariant), as `vma_lookup`
        // requires.
        let vma = unsafe {
            bindings::rust_helper_vma_lookup(self.mm.mm.mm.as_ptr(), address as core::ffi::c_ulong)
        };
        // SAFETY: a non-null result is an area of this address space,
        // valid while the lock is held, which the returned reference's
        // lifetime (that of `self`) does not outlast; `Vma` is a
        // transparent wrapper of the C struct.
        NonNull::new(vma).map(|v| unsafe { &*v.as_ptr().cast::<Vma>() })
    }
}

impl Drop for MmapReadGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the lock is held by this guard (type invariant).
        unsafe { bindings::rust_helper_mmap_read_unlock(self.mm.mm.mm.as_ptr()) };
    }
}
