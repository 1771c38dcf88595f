//! Character devices: a region of device numbers with several minors,
//! served by one `struct cdev`.
//!
//! C headers: [`include/linux/cdev.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/cdev.h),
//! [`include/linux/fs.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/fs.h)
//! (`alloc_chrdev_region`, `unregister_chrdev_region`).
//!
//! Unlike a misc device, a region gets no `/dev` node by itself: read the
//! major from `/proc/devices` and `mknod /dev/name c MAJOR MINOR`.
//! [`File::minor`](crate::file::File::minor) tells the opens apart.
//!
//! # Lifetimes
//!
//! Every open file holds a reference to the `struct cdev` it was opened
//! through until its last `close(2)` (`cdev_get` in `chrdev_open`,
//! `cdev_put` in `__fput`), which may be long after the registration is
//! dropped. So the cdev is not part of the registration: it comes from
//! `cdev_alloc`, and its kobject frees it (in the core's release function,
//! not in module code) when the last of those references goes;
//! `cdev_del` only drops the registration's.
//!
//! `chrdev_open` calls the driver's `open` with no lock held, so a
//! registration being dropped at the same time must wait for it: each
//! module keeps its registered regions in a list under a mutex of its own
//! (in the C helpers), which an `open` holds while it looks its region up
//! and runs [`FileOperations::open`],
//! and which unregistering takes to unlink the region. A late open through
//! an unregistered cdev finds nothing and fails with `ENXIO`. (A misc
//! device gets the same from `misc_mtx`.) As for a misc device, an `open`
//! that registers or drops a char device region of its own module
//! deadlocks.
//!
//! The module cannot be unloaded under an open file: the cdev's owner and
//! the `file_operations`' owner are the module (C's `.owner =
//! THIS_MODULE`), so `cdev_get` and `fops_get` take a module reference for
//! each open file, and `rmmod` fails with `EBUSY` until the last `close`.
//!
//! Mainline Rust for Linux has no char device region abstraction now; the
//! older `rust` branch's `chrdev::Registration` also used `cdev_alloc`, but
//! gave `open` no shared data (`OpenData = ()`), so it had nothing to look
//! up. This crate keeps the shared data of [`Registration::open_data`], at
//! the price of the lookup under a module-wide mutex.

use core::ffi::CStr;
use core::marker::PhantomData;
use core::pin::Pin;
use core::ptr::{addr_of_mut, null_mut};
use core::sync::atomic::{AtomicPtr, Ordering};

use crate::alloc::KBox;
use crate::bindings;
use crate::error::{
    code::{EINVAL, ENOMEM, ENXIO},
    to_result, Error, Result,
};
use crate::file::FileOperations;
use crate::init::PinInit;
use crate::module::ThisModule;
use crate::registration::{self, Kind};

/// A registered region of char devices whose files are `T`; dropping it
/// removes them. See [`registration::Registration`].
pub type Registration<T> = registration::Registration<Chrdev, T>;

/// The kind of a char device region registration.
pub struct Chrdev;

/// A region of device numbers and the `struct cdev` that serves them.
///
/// # Invariants
///
/// Once registered (by `Chrdev::register`) and until unregistered: `dev` is
/// the first number of a region of `minors` numbers from
/// `alloc_chrdev_region`; `cdev` is a cdev from `cdev_alloc` whose
/// reference this region holds, added with `cdev_add` for all of them; and
/// the region is on the module's list of regions, linked by `next`.
pub struct CharRegion {
    cdev: *mut bindings::cdev,
    dev: bindings::dev_t,
    minors: u32,
    /// The next region on the module's list.
    next: *mut CharRegion,
}

/// The first of this module's registered regions, linked by
/// `CharRegion::next`; read and written only under [`OpenLock`].
static REGIONS: AtomicPtr<CharRegion> = AtomicPtr::new(null_mut());

/// The module's char device open mutex (`rust_helper_chrdev_open_lock`),
/// held until dropped, by the thread that took it (not `Send`).
struct OpenLock(PhantomData<*mut ()>);

impl OpenLock {
    fn lock() -> OpenLock {
        // SAFETY: a static mutex of the helpers, unlocked by `drop`.
        unsafe { bindings::rust_helper_chrdev_open_lock() };
        OpenLock(PhantomData)
    }

    /// Takes `region` off the list, if it is on it.
    ///
    /// # Safety
    ///
    /// Every region on the list is valid (they are, while registered).
    unsafe fn unlink(&self, region: *mut CharRegion) {
        // The head, then the `next` of each region in turn: writers hold
        // the lock, as we do.
        let mut link = REGIONS.as_ptr();
        loop {
            // SAFETY: `link` is the head or the `next` of a valid region.
            let here = unsafe { *link };
            if here.is_null() {
                return;
            }
            if here == region {
                // SAFETY: `region` is on the list, so valid.
                unsafe { *link = (*region).next };
                return;
            }
            // SAFETY: `here` is on the list, so valid.
            link = unsafe { addr_of_mut!((*here).next) };
        }
    }
}

impl Drop for OpenLock {
    fn drop(&mut self) {
        // SAFETY: taken by `lock`.
        unsafe { bindings::rust_helper_chrdev_open_unlock() };
    }
}

// SAFETY: an open of a file of the region calls the closure under the open
// lock, only with a region still on the list (so registered: type
// invariants), and `unregister` takes it off the list under the same lock
// before anything else: it waits for the closure, and no later `open` finds
// the region. The cdev holds `fops` from `register` on.
unsafe impl Kind for Chrdev {
    type Device = CharRegion;
    /// The name in `/proc/devices` and the number of minors (1 to 256).
    type Options = (&'static CStr, u32);

    unsafe fn register(
        device: *mut CharRegion,
        fops: &'static bindings::file_operations,
        (name, minors): (&'static CStr, u32),
    ) -> Result {
        if !(1..=256).contains(&minors) {
            return Err(EINVAL);
        }
        let mut dev: bindings::dev_t = 0;
        // SAFETY: `dev` is valid for writes; `name` is `'static`, as the
        // region keeps it.
        to_result(unsafe { bindings::alloc_chrdev_region(&mut dev, 0, minors, name.as_ptr()) })?;
        // SAFETY: `fops` and the module are valid for as long as the cdev
        // can be opened: the `file_operations` are a constant of the
        // module, and each open pins the module through the owner.
        let cdev = unsafe { bindings::rust_helper_cdev_alloc(fops, ThisModule::THIS.as_raw()) };
        if cdev.is_null() {
            // SAFETY: the region is ours, allocated above.
            unsafe { bindings::unregister_chrdev_region(dev, minors) };
            return Err(ENOMEM);
        }
        let lock = OpenLock::lock();
        // SAFETY: the caller passes a device valid for writes that will not
        // move until `unregister`; it goes on the list under the lock,
        // before the cdev is added, so that an open finds it.
        unsafe {
            device.write(CharRegion {
                cdev,
                dev,
                minors,
                next: REGIONS.load(Ordering::Relaxed),
            });
        }
        REGIONS.store(device, Ordering::Relaxed);
        drop(lock);
        // SAFETY: the cdev is set up (`rust_helper_cdev_alloc`).
        if let Err(e) = to_result(unsafe { bindings::cdev_add(cdev, dev, minors) }) {
            // SAFETY: every region on the list is registered, or this one,
            // which is valid.
            unsafe { OpenLock::lock().unlink(device) };
            // SAFETY: undo the above: a cdev that was not added holds only
            // the reference of `cdev_alloc`, and the region is ours.
            unsafe {
                bindings::rust_helper_cdev_put(cdev);
                bindings::unregister_chrdev_region(dev, minors);
            }
            return Err(e);
        }
        // INVARIANT: region allocated, cdev added, and on the list.
        Ok(())
    }

    unsafe fn unregister(device: *mut CharRegion) {
        // SAFETY: every region on the list is registered (type invariants).
        // Once this one is off it, no open finds it, and those under way
        // are done (they hold the lock).
        unsafe { OpenLock::lock().unlink(device) };
        // SAFETY: the caller guarantees it was registered: added and
        // allocated (type invariants). `cdev_del` drops our reference to
        // the cdev; open files keep theirs, and the last frees it.
        unsafe {
            bindings::cdev_del((*device).cdev);
            bindings::unregister_chrdev_region((*device).dev, (*device).minors);
        }
    }

    unsafe fn open<R>(
        inode: *mut bindings::inode,
        _file: *mut bindings::file,
        f: impl FnOnce(*mut CharRegion) -> Result<R>,
    ) -> Result<R> {
        // SAFETY: the caller passes a live inode of a char device;
        // `chrdev_open` set `i_cdev` (in an anonymous union, with `i_pipe`
        // and `i_link`) to the cdev it opens and holds a reference to, so
        // it stays put. It is only compared, never dereferenced.
        let cdev = unsafe { (*inode).__bindgen_anon_4.i_cdev };
        let _lock = OpenLock::lock();
        let mut region = REGIONS.load(Ordering::Relaxed);
        while !region.is_null() {
            // SAFETY: regions on the list are registered, so valid (type
            // invariants), while we hold the lock.
            let (this, next) = unsafe { ((*region).cdev, (*region).next) };
            if this == cdev {
                // The lock is held until `f` returns.
                return f(region);
            }
            region = next;
        }
        // Unregistered since `chrdev_open` found the cdev.
        Err(ENXIO)
    }
}

impl<T: FileOperations> Registration<T> {
    /// An initialiser that allocates `minors` (1 to 256) device numbers
    /// named `name` in `/proc/devices` and adds the device; every open gets
    /// `open_data`.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new(
        name: &'static CStr,
        minors: u32,
        open_data: T::OpenData,
    ) -> impl PinInit<Self, Error> {
        Self::init((name, minors), open_data)
    }

    /// Registers the region in a new heap block.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new_pinned(
        name: &'static CStr,
        minors: u32,
        open_data: T::OpenData,
    ) -> Result<Pin<KBox<Self>>> {
        Self::init_pinned((name, minors), open_data)
    }

    /// The major number of the region.
    pub fn major(&self) -> u32 {
        self.device().dev >> bindings::RUST_CONST_HELPER_MINORBITS
    }
}
