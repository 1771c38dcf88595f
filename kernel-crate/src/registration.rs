//! What a misc device and a char device region share: a pinned
//! registration that keeps the driver's [`FileOperations::OpenData`]
//! beside the C structure that the VFS finds when one of its files is
//! opened, registers it with the `file_operations` of [`FileOperations`],
//! and unregisters it when dropped.
//!
//! [`crate::miscdev`] and [`crate::chrdev`] each add a [`Kind`]: the C
//! structure, how to register it and how an `open` finds it.
//!
//! C headers: [`include/linux/miscdevice.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/miscdevice.h),
//! [`include/linux/cdev.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/cdev.h).

use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr::{addr_of, addr_of_mut};

use crate::alloc::KBox;
use crate::bindings;
use crate::error::{Error, Result};
use crate::file::{FileOperations, FileOpsVtable, OpenAdapter};
use crate::init::{pin_init_from_closure, PinInit};
use crate::unload::{Entry, Ops};

/// A kind of device registration: the C structure that the VFS finds on
/// open, and how it is registered and unregistered.
///
/// # Safety
///
/// After a successful [`register`](Kind::register) of a `device` and until
/// [`unregister`](Kind::unregister) returns, every file opened through
/// `device` is opened with the given `file_operations`. [`open`](Kind::open)
/// called with the `open` callback's arguments of such a file calls its
/// closure at most once, with that `device`, and `unregister` of that
/// device does not return before the closure has (so the registration
/// around it is alive for the whole call); once `unregister` has started,
/// `open` fails without calling it.
pub unsafe trait Kind {
    /// The C structure (and what else the kind keeps), embedded in the
    /// registration, pinned.
    type Device;
    /// What registering needs besides the `file_operations`, such as the
    /// name.
    type Options;

    /// Initialises and registers the device at `device` with `fops`.
    ///
    /// # Safety
    ///
    /// `device` is valid for writes and will not move until
    /// [`unregister`](Kind::unregister); on error it holds nothing that
    /// needs dropping or unregistering.
    unsafe fn register(
        device: *mut Self::Device,
        fops: &'static bindings::file_operations,
        options: Self::Options,
    ) -> Result;

    /// Unregisters a device that [`register`](Kind::register) registered.
    ///
    /// # Safety
    ///
    /// `device` was registered, and is unregistered only once.
    unsafe fn unregister(device: *mut Self::Device);

    /// Calls `f` with the device that a file being opened belongs to, while
    /// it stays registered; `ENXIO` if it is no longer registered.
    ///
    /// # Safety
    ///
    /// `inode` and `file` are the arguments of an `open` callback of a file
    /// opened with the `file_operations` of a device that
    /// [`register`](Kind::register) registered.
    unsafe fn open<R>(
        inode: *mut bindings::inode,
        file: *mut bindings::file,
        f: impl FnOnce(*mut Self::Device) -> Result<R>,
    ) -> Result<R>;
}

// ANCHOR: registration
/// A registered device of kind `K` whose files are `T`; dropping it
/// unregisters the device.
///
/// C keeps pointers into the device (a global list of misc devices, the
/// cdev map) and reads the `file_operations` on every open: it may not
/// move while registered, so a registration only exists pinned.
///
/// A leaked registration (`mem::forget`, `KBox::leak`, an `Arc` cycle) is
/// unregistered by the module's exit, with a warning ([`crate::unload`]):
/// no open reaches the unloaded module's code.
///
/// # Invariants
///
/// From a successful initialisation until drop, `open_data` is
/// initialised and `unload` enrolled; `device` is registered
/// (`K::register`) with the `file_operations` of
/// `FileOpsVtable<Self, T>` until the drop, or the module's exit if that
/// comes first (it has then unregistered it).
pub struct Registration<K: Kind, T: FileOperations> {
    device: K::Device,
    open_data: T::OpenData,
    unload: Entry,
    _pin: PhantomPinned,
}
// ANCHOR_END: registration

// SAFETY: the registration only gives out `&T::OpenData` (which is `Sync`),
// and the kinds' unregister functions may be called from any thread.
unsafe impl<K: Kind, T: FileOperations> Sync for Registration<K, T> {}
// SAFETY: as above; `T::OpenData: Send` lets it be dropped anywhere.
unsafe impl<K: Kind, T: FileOperations> Send for Registration<K, T> {}

impl<K: Kind, T: FileOperations> Registration<K, T> {
    /// An initialiser that registers the device with `options`; every open
    /// gets `open_data`.
    pub(crate) fn init(options: K::Options, open_data: T::OpenData) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and will not move (contract
            // of `PinInit`); the open data is written before the device is
            // registered, so no open can see it uninitialised.
            unsafe { addr_of_mut!((*slot).open_data).write(open_data) };
            // SAFETY: as above; an entry that is not enrolled needs no
            // dropping.
            unsafe { addr_of_mut!((*slot).unload).write(Entry::new(Self::UNLOAD)) };
            let fops = FileOpsVtable::<Self, T>::build();
            // SAFETY: the device field is valid for writes and pinned with
            // the slot; it stays there until `Drop` unregisters it.
            let registered = unsafe { K::register(addr_of_mut!((*slot).device), fops, options) };
            if let Err(e) = registered {
                // SAFETY: initialised above and never seen by C: drop it so
                // the slot holds nothing that needs dropping.
                unsafe { core::ptr::drop_in_place(addr_of_mut!((*slot).open_data)) };
                return Err(e);
            }
            // SAFETY: written above, pinned with the slot.
            unsafe { Entry::enrol(addr_of!((*slot).unload)) };
            // INVARIANT: registered with `fops`, `open_data` is set and the
            // entry enrolled.
            Ok(())
        };
        // SAFETY: on `Ok` every field is initialised; on `Err` the only
        // field that needs dropping has been dropped, and the device holds
        // nothing (contract of `Kind::register`).
        unsafe { pin_init_from_closure(init) }
    }

    /// Registers the device in a new heap block.
    pub(crate) fn init_pinned(
        options: K::Options,
        open_data: T::OpenData,
    ) -> Result<Pin<KBox<Self>>> {
        Entry::pin_own_block(Self::init(options, open_data), |reg| &reg.unload)
    }

    /// How the module's exit unregisters a leaked registration.
    const UNLOAD: &'static Ops = &Ops {
        name: core::any::type_name::<Self>,
        stop: Self::unregister_leaked,
        reclaim: None,
        kthread: false,
    };

    /// Unregisters a registration that was leaked, at the module's exit.
    ///
    /// # Safety
    ///
    /// `e` is the `unload` entry of a live registration, taken by the
    /// sweep; called once.
    unsafe fn unregister_leaked(e: *const Entry) {
        let reg = crate::container_of!(e, Self, unload).cast_mut();
        // SAFETY: the registration is live while the sweep holds its entry
        // (caller).
        unsafe { (*e).warn_leaked(c"unregistering it") };
        // SAFETY: registered (type invariants), and its `Drop` will not
        // unregister it again (the sweep holds the entry). Only the C
        // structure is touched, through a raw pointer: its owner may hold
        // a reference to the registration.
        unsafe { K::unregister(addr_of_mut!((*reg).device)) };
    }

    /// The data shared by every open of the device.
    pub fn open_data(&self) -> &T::OpenData {
        &self.open_data
    }

    /// What the kind keeps (its C structure), for the kind's own accessors.
    pub(crate) fn device(&self) -> &K::Device {
        &self.device
    }
}

// ANCHOR: open_adapter
// SAFETY: by the contract of `Kind`, `K::open` calls the closure only with
// the `device` field of a registration whose device stays registered until
// the closure returns, so the registration around it is alive and its
// `open_data` initialised (type invariants): it is dropped only after
// `unregister` returns.
unsafe impl<K: Kind, T: FileOperations> OpenAdapter<T::OpenData> for Registration<K, T> {
    unsafe fn with_open_data<R>(
        inode: *mut bindings::inode,
        file: *mut bindings::file,
        f: impl FnOnce(&T::OpenData) -> Result<R>,
    ) -> Result<R> {
        let open = |device: *mut K::Device| {
            let reg = crate::container_of!(device, Self, device);
            // SAFETY: `device` is the `device` field of a registration
            // that stays alive during this call (see above).
            f(unsafe { &*addr_of_mut!((*reg).open_data) })
        };
        // SAFETY: the caller passes the arguments of an `open` callback of
        // a file opened through this registration's device.
        unsafe { K::open(inode, file, open) }
    }
}
// ANCHOR_END: open_adapter

impl<K: Kind, T: FileOperations> Drop for Registration<K, T> {
    fn drop(&mut self) {
        // SAFETY: enrolled (type invariants), left once, here.
        if unsafe { Entry::leave(&self.unload) } {
            // SAFETY: registered (type invariants: the module's exit has not
            // unregistered it), and dropped only once; no open uses the
            // registration after this returns (contract of `Kind`), and
            // open files do not use it.
            unsafe { K::unregister(addr_of_mut!(self.device)) };
        }
    }
}
