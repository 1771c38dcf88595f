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
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr::addr_of_mut;

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{code::EINVAL, to_result, Error, Result};
use crate::file::{FileOperations, FileOpsVtable, OpenAdapter};
use crate::init::{pin_init_from_closure, Opaque, PinInit};
use crate::module::ThisModule;

/// A registered region of `minors` char devices; dropping it removes them.
///
/// # Invariants
///
/// From a successful initialisation until drop: `dev` is the first number
/// of a region of `minors` numbers from `alloc_chrdev_region`, and `cdev`
/// was added for all of them with `cdev_add`, with `fops` as operations.
pub struct Registration<T: FileOperations> {
    cdev: Opaque<bindings::cdev>,
    fops: Opaque<bindings::file_operations>,
    dev: bindings::dev_t,
    minors: u32,
    open_data: T::OpenData,
    _pin: PhantomPinned,
}

// SAFETY: as for `miscdev::Registration`: only `&T::OpenData` is shared,
// and the C functions used on drop may run on any thread.
unsafe impl<T: FileOperations> Sync for Registration<T> {}
// SAFETY: as above.
unsafe impl<T: FileOperations> Send for Registration<T> {}

impl<T: FileOperations> Registration<T> {
    /// An initialiser that allocates `minors` (1 to 256) device numbers
    /// named `name` in `/proc/devices` and adds the device.
    pub fn new(
        name: &'static CStr,
        minors: u32,
        open_data: T::OpenData,
        module: &'static ThisModule,
    ) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| {
            if !(1..=256).contains(&minors) {
                return Err(EINVAL);
            }
            let mut dev: bindings::dev_t = 0;
            // SAFETY: `dev` is valid for writes; `name` is `'static`, as the
            // region keeps it.
            to_result(unsafe {
                bindings::alloc_chrdev_region(&mut dev, 0, minors, name.as_ptr())
            })?;
            // SAFETY: `slot` is valid and will not move (contract of
            // `PinInit`); `cdev_init` zeroes and initialises the cdev, whose
            // owner is then the module, as `cdev.owner = THIS_MODULE` does
            // in C (see the `OpenAdapter` implementation below).
            unsafe {
                let fops = Opaque::raw_get(addr_of_mut!((*slot).fops));
                fops.write(FileOpsVtable::<Self, T>::build(module));
                addr_of_mut!((*slot).dev).write(dev);
                addr_of_mut!((*slot).minors).write(minors);
                addr_of_mut!((*slot).open_data).write(open_data);
                let cdev = Opaque::raw_get(addr_of_mut!((*slot).cdev));
                bindings::cdev_init(cdev, fops);
                bindings::rust_helper_cdev_set_owner(cdev, module.as_ptr());
            }
            // SAFETY: the cdev is initialised and pinned.
            let ret = unsafe {
                bindings::cdev_add(Opaque::raw_get(addr_of_mut!((*slot).cdev)), dev, minors)
            };
            if let Err(e) = to_result(ret) {
                // SAFETY: undo the above: the region is ours, `open_data`
                // was written and nothing else saw it.
                unsafe {
                    bindings::unregister_chrdev_region(dev, minors);
                    core::ptr::drop_in_place(addr_of_mut!((*slot).open_data));
                }
                return Err(e);
            }
            // INVARIANT: region allocated and cdev added.
            Ok(())
        };
        // SAFETY: on `Ok` every field is initialised; on `Err` nothing is
        // left that needs dropping.
        unsafe { pin_init_from_closure(init) }
    }

    /// Registers the region in a new heap block.
    pub fn new_pinned(
        name: &'static CStr,
        minors: u32,
        open_data: T::OpenData,
        module: &'static ThisModule,
    ) -> Result<Pin<KBox<Self>>> {
        KBox::pin_init(Self::new(name, minors, open_data, module), GFP_KERNEL)
    }

    /// The major number of the region.
    pub fn major(&self) -> u32 {
        self.dev >> bindings::RUST_CONST_HELPER_MINORBITS
    }

    /// The data shared by every open.
    pub fn open_data(&self) -> &T::OpenData {
        &self.open_data
    }
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
unsafe impl<T: FileOperations> OpenAdapter<T::OpenData> for Registration<T> {
    unsafe fn open_data(
        inode: *mut bindings::inode,
        _file: *mut bindings::file,
    ) -> *const T::OpenData {
        // SAFETY: the caller passes a live inode of this device; `i_cdev`
        // is in an anonymous union (with `i_pipe`, `i_link`).
        let cdev = unsafe { (*inode).__bindgen_anon_4.i_cdev };
        let reg = crate::container_of!(cdev.cast::<Opaque<bindings::cdev>>(), Self, cdev);
        // SAFETY: `i_cdev` is the `cdev` field of a live `Registration<T>`
        // (see above), so `reg` points at that registration.
        unsafe { addr_of_mut!((*reg).open_data) }
    }
}

impl<T: FileOperations> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: added and allocated (type invariants).
        unsafe {
            bindings::cdev_del(self.cdev.get());
            bindings::unregister_chrdev_region(self.dev, self.minors);
        }
    }
}
