//! Misc devices: a character device with major 10 and one minor, and a
//! node in `/dev` made by devtmpfs.
//!
//! C header: [`include/linux/miscdevice.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/miscdevice.h)
//!
//! ```rust
//! # use kernel::file::{File, FileOperations};
//! # struct MyFile;
//! # #[vtable]
//! # impl FileOperations for MyFile {
//! #     type OpenData = ();
//! #     fn open(_shared: &(), _file: &File) -> Result<Self> {
//! #         Ok(MyFile)
//! #     }
//! # }
//! # let shared = ();
//! let reg = miscdev::Registration::<MyFile>::new_pinned(c_str!("mydev"), shared)?;
//! ```

use core::ffi::CStr;
use core::pin::Pin;

use crate::alloc::KBox;
use crate::bindings;
use crate::error::{to_result, Error, Result};
use crate::file::FileOperations;
use crate::init::{Opaque, PinInit};
use crate::registration::{self, Kind};

/// A registered misc device whose files are `T`; dropping it deregisters
/// the device. See [`registration::Registration`].
pub type Registration<T> = registration::Registration<Misc, T>;

/// The kind of a misc device registration: a `struct miscdevice`.
pub struct Misc;

// ANCHOR: kind
// SAFETY: `misc_open` finds the `struct miscdevice` in the list that
// `misc_register` added it to, stores it in `file->private_data` before it
// calls our `open`, and holds `misc_mtx` during the call, which
// `misc_deregister` takes too: the device stays registered until the
// callback returns, and no open reaches it after `misc_deregister`. An open
// file does not use the miscdevice: `misc_open` gave the file our
// `file_operations`, whose owner is the module.
unsafe impl Kind for Misc {
    type Device = Opaque<bindings::miscdevice>;
    /// The name of the node in `/dev`.
    type Options = &'static CStr;

    unsafe fn register(
        device: *mut Self::Device,
        fops: &'static bindings::file_operations,
        name: &'static CStr,
    ) -> Result {
        let mdev = Opaque::raw_get(device);
        // SAFETY: the caller passes a device valid for writes that will not
        // move; the fields are written before C sees them, and `name` is
        // `'static`, as the registration keeps it.
        unsafe {
            mdev.write(core::mem::zeroed());
            (*mdev).minor = bindings::RUST_CONST_HELPER_MISC_DYNAMIC_MINOR;
            (*mdev).name = name.as_ptr();
            (*mdev).fops = fops;
            (*mdev).mode = 0o666;
        }
        // SAFETY: the miscdevice is fully initialised and pinned. On error
        // it is not registered and holds nothing to free.
        to_result(unsafe { bindings::misc_register(mdev) }).map(drop)
    }

    unsafe fn unregister(device: *mut Self::Device) {
        // SAFETY: the caller guarantees it was registered.
        unsafe { bindings::misc_deregister(Opaque::raw_get(device)) };
    }

    unsafe fn open<R>(
        _inode: *mut bindings::inode,
        file: *mut bindings::file,
        f: impl FnOnce(*mut Self::Device) -> Result<R>,
    ) -> Result<R> {
        // SAFETY: the caller passes the file being opened, whose
        // `private_data` `misc_open` set to the miscdevice; `misc_open`
        // holds `misc_mtx` until we return, so the device stays registered
        // (see above).
        f(unsafe { (*file).private_data.cast() })
    }
}
// ANCHOR_END: kind

impl<T: FileOperations> Registration<T> {
    /// An initialiser that registers `/dev/<name>`; every open gets
    /// `open_data`.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new(name: &'static CStr, open_data: T::OpenData) -> impl PinInit<Self, Error> {
        Self::init(name, open_data)
    }

    /// Registers `/dev/<name>` in a new heap block.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new_pinned(name: &'static CStr, open_data: T::OpenData) -> Result<Pin<KBox<Self>>> {
        Self::init_pinned(name, open_data)
    }
}
