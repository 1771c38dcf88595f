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

use core::ffi::CStr;
use core::pin::Pin;
use core::ptr::addr_of_mut;

use crate::alloc::KBox;
use crate::bindings;
use crate::error::{code::EINVAL, to_result, Error, Result};
use crate::file::FileOperations;
use crate::init::{Opaque, PinInit};
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
/// `alloc_chrdev_region`, and `cdev` was added for all of them with
/// `cdev_add`.
pub struct CharRegion {
    cdev: Opaque<bindings::cdev>,
    dev: bindings::dev_t,
    minors: u32,
}

// SAFETY: `chrdev_open` finds the cdev through `inode->i_cdev` (or the
// device number) and holds a reference on it during `open` and until the
// file is released: `cdev_get` takes one on the cdev's owner, the module,
// before its kobject reference, and fails once the module is going away.
// So while any open of the device is under way, `rmmod` fails with `EBUSY`
// and the registration, which the module keeps until its exit, is alive;
// `cdev_del` on drop happens-before the registration is freed, and after
// it no new open finds the cdev. (Without the owner, an open racing with
// `rmmod` could keep a kobject reference into the freed registration.)
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
        // SAFETY: the caller passes a device valid for writes that will not
        // move; `cdev_init` zeroes and initialises the cdev, whose owner is
        // then the module, as `cdev.owner = THIS_MODULE` does in C (see
        // above).
        let cdev = unsafe {
            addr_of_mut!((*device).dev).write(dev);
            addr_of_mut!((*device).minors).write(minors);
            let cdev = Opaque::raw_get(addr_of_mut!((*device).cdev));
            bindings::cdev_init(cdev, fops);
            bindings::rust_helper_cdev_set_owner(cdev, ThisModule::THIS.as_raw());
            cdev
        };
        // SAFETY: the cdev is initialised and pinned.
        if let Err(e) = to_result(unsafe { bindings::cdev_add(cdev, dev, minors) }) {
            // SAFETY: undo the above: the region is ours, and a cdev that
            // was not added holds nothing to free.
            unsafe { bindings::unregister_chrdev_region(dev, minors) };
            return Err(e);
        }
        // INVARIANT: region allocated and cdev added.
        Ok(())
    }

    unsafe fn unregister(device: *mut CharRegion) {
        // SAFETY: the caller guarantees it was registered: added and
        // allocated (type invariants of `CharRegion`).
        unsafe {
            bindings::cdev_del(Opaque::raw_get(addr_of_mut!((*device).cdev)));
            bindings::unregister_chrdev_region((*device).dev, (*device).minors);
        }
    }

    unsafe fn device_of_open(
        inode: *mut bindings::inode,
        _file: *mut bindings::file,
    ) -> *mut CharRegion {
        // SAFETY: the caller passes a live inode of this device; `i_cdev`
        // is in an anonymous union (with `i_pipe`, `i_link`).
        let cdev = unsafe { (*inode).__bindgen_anon_4.i_cdev };
        crate::container_of!(cdev.cast::<Opaque<bindings::cdev>>(), CharRegion, cdev)
    }
}

impl<T: FileOperations> Registration<T> {
    /// An initialiser that allocates `minors` (1 to 256) device numbers
    /// named `name` in `/proc/devices` and adds the device; every open gets
    /// `open_data`.
    pub fn new(
        name: &'static CStr,
        minors: u32,
        open_data: T::OpenData,
    ) -> impl PinInit<Self, Error> {
        Self::init((name, minors), open_data)
    }

    /// Registers the region in a new heap block.
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
