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
//! let reg = miscdev::Registration::<MyFile>::new_pinned(c_str!("mydev"), shared, module)?;
//! ```

use core::ffi::CStr;
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr::addr_of_mut;

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{to_result, Error, Result};
use crate::file::{FileOperations, FileOpsVtable, OpenAdapter};
use crate::init::{pin_init_from_closure, Opaque, PinInit};
use crate::module::ThisModule;

// ANCHOR: registration
/// A registered misc device; dropping it deregisters the device.
///
/// `misc_register` links the `struct miscdevice` into a global list and
/// the `file_operations` are read on every open: neither may move while
/// registered, so a registration only exists pinned.
///
/// # Invariants
///
/// `mdev` is registered with `misc_register`, its `fops` points at `fops`
/// and `open_data` is initialised, from a successful initialisation until
/// drop.
pub struct Registration<T: FileOperations> {
    mdev: Opaque<bindings::miscdevice>,
    fops: Opaque<bindings::file_operations>,
    open_data: T::OpenData,
    _pin: PhantomPinned,
}
// ANCHOR_END: registration

// SAFETY: the registration only gives out `&T::OpenData` (which is `Sync`),
// and `misc_deregister` may be called from any thread.
unsafe impl<T: FileOperations> Sync for Registration<T> {}
// SAFETY: as above; `T::OpenData: Send` lets it be dropped anywhere.
unsafe impl<T: FileOperations> Send for Registration<T> {}

impl<T: FileOperations> Registration<T> {
    /// An initialiser that registers `/dev/<name>`.
    pub fn new(
        name: &'static CStr,
        open_data: T::OpenData,
        module: &'static ThisModule,
    ) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and will not move
            // (contract of `PinInit`); the fields are written before C
            // sees them.
            unsafe {
                let fops = Opaque::raw_get(addr_of_mut!((*slot).fops));
                fops.write(FileOpsVtable::<Self, T>::build(module));
                addr_of_mut!((*slot).open_data).write(open_data);
                let mdev = Opaque::raw_get(addr_of_mut!((*slot).mdev));
                mdev.write(core::mem::zeroed());
                (*mdev).minor = bindings::RUST_CONST_HELPER_MISC_DYNAMIC_MINOR;
                (*mdev).name = name.as_ptr();
                (*mdev).fops = fops;
                (*mdev).mode = 0o666;
            }
            // SAFETY: the miscdevice is fully initialised and pinned.
            let ret =
                unsafe { bindings::misc_register(Opaque::raw_get(addr_of_mut!((*slot).mdev))) };
            if let Err(e) = to_result(ret) {
                // SAFETY: initialised above and not registered: drop it so
                // the slot holds nothing that needs dropping.
                unsafe { core::ptr::drop_in_place(addr_of_mut!((*slot).open_data)) };
                return Err(e);
            }
            // INVARIANT: registered, with `fops` and `open_data` set.
            Ok(())
        };
        // SAFETY: on `Ok` every field is initialised; on `Err` the only
        // field that needs dropping has been dropped.
        unsafe { pin_init_from_closure(init) }
    }

    /// Registers `/dev/<name>` in a new heap block.
    pub fn new_pinned(
        name: &'static CStr,
        open_data: T::OpenData,
        module: &'static ThisModule,
    ) -> Result<Pin<KBox<Self>>> {
        KBox::pin_init(Self::new(name, open_data, module), GFP_KERNEL)
    }

    /// The data shared by every open of the device.
    pub fn open_data(&self) -> &T::OpenData {
        &self.open_data
    }
}

// ANCHOR: open_adapter
// SAFETY: `misc_open` stores the `struct miscdevice` in `private_data`
// before it calls our `open`, and holds `misc_mtx`, which
// `misc_deregister` takes too: the registration outlives the callback.
unsafe impl<T: FileOperations> OpenAdapter<T::OpenData> for Registration<T> {
    unsafe fn open_data(
        _inode: *mut bindings::inode,
        file: *mut bindings::file,
    ) -> *const T::OpenData {
        // SAFETY: the caller passes the file being opened.
        let mdev = unsafe { (*file).private_data };
        let reg = crate::container_of!(mdev.cast::<Opaque<bindings::miscdevice>>(), Self, mdev);
        // SAFETY: see above: `private_data` is the `mdev` field of a live
        // `Registration<T>`, so `reg` points at that registration.
        unsafe { addr_of_mut!((*reg).open_data) }
    }
}
// ANCHOR_END: open_adapter

impl<T: FileOperations> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: registered (type invariants); nothing is opened through
        // it after this returns, and open files do not use it.
        unsafe { bindings::misc_deregister(self.mdev.get()) };
    }
}
