//! PCI drivers: an id table, `probe` and `remove`, and the PCI function a
//! driver binds to.
//!
//! C header: [`include/linux/pci.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/pci.h)
//!
//! A driver implements [`Driver`] and keeps a [`Registration`] for as long
//! as the module is loaded. The PCI core calls [`Driver::probe`] for every
//! function whose ids match the table; what `probe` returns is kept with
//! the function and handed to [`Driver::remove`] when the function is
//! unbound (a `rmmod`, a sysfs `unbind`, hot removal).

use core::ffi::{c_int, CStr};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::Deref;
use core::pin::Pin;
use core::ptr::{addr_of, addr_of_mut, NonNull};

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::device;
use crate::error::{from_result, to_result, Error, Result};
use crate::init::{pin_init_from_closure, Opaque, PinInit};
use crate::io::{Io, IoRaw};
use crate::module::ThisModule;
use crate::unload::{Entry, Ops};

/// "Any vendor", "any device" in a [`DeviceId`] (`PCI_ANY_ID`).
pub const ANY_ID: u32 = u32::MAX;

// ANCHOR: device_id
/// One entry of a driver's id table: a `struct pci_device_id`.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct DeviceId(bindings::pci_device_id);

impl DeviceId {
    /// Matches `vendor:device`, any subsystem (`PCI_DEVICE()` in C).
    pub const fn new(vendor: u16, device: u16) -> Self {
        Self::raw(vendor as u32, device as u32, 0, 0)
    }

    /// Matches any function of `class` (24 bits: class, subclass,
    /// programming interface) under `mask` (`PCI_DEVICE_CLASS()` in C).
    pub const fn with_class(class: u32, mask: u32) -> Self {
        Self::raw(ANY_ID, ANY_ID, class, mask)
    }

    /// The table's end: every table ends with it, which
    /// [`Registration`] checks at compile time.
    pub const END: Self = Self::raw(0, 0, 0, 0);

    const fn raw(vendor: u32, device: u32, class: u32, class_mask: u32) -> Self {
        let any = if vendor == 0 { 0 } else { ANY_ID };
        Self(bindings::pci_device_id {
            vendor,
            device,
            subvendor: any,
            subdevice: any,
            class,
            class_mask,
            driver_data: 0,
            override_only: 0,
        })
    }

    /// The vendor id the entry matches (`ANY_ID` for any).
    pub const fn vendor(&self) -> u32 {
        self.0.vendor
    }

    /// The device id the entry matches (`ANY_ID` for any).
    pub const fn device(&self) -> u32 {
        self.0.device
    }

    const fn is_end(&self) -> bool {
        self.0.vendor == 0 && self.0.subvendor == 0 && self.0.class_mask == 0
    }
}
// ANCHOR_END: device_id

/// Whether `ids` ends with [`DeviceId::END`] and holds no other end.
const fn table_is_terminated(ids: &[DeviceId]) -> bool {
    if ids.is_empty() || !ids[ids.len() - 1].is_end() {
        return false;
    }
    let mut i = 0;
    while i + 1 < ids.len() {
        if ids[i].is_end() {
            return false;
        }
        i += 1;
    }
    true
}

// ANCHOR: driver
/// A PCI driver.
pub trait Driver: 'static {
    /// What the driver shares between all its devices (an id allocator for
    /// their names), given to [`Registration::new`] and to every `probe`.
    type Context: Send + Sync;

    /// What `probe` makes for a function and `remove` gets back: the
    /// driver's state for that device, dropped after `remove`.
    type Data: Send + Sync;

    /// The driver's name, in `/sys/bus/pci/drivers/`.
    const NAME: &'static CStr;

    /// The ids of the functions the driver can drive, ending with
    /// [`DeviceId::END`].
    const ID_TABLE: &'static [DeviceId];

    /// Sets up a function whose ids matched `id`. An error leaves the
    /// function unbound. May sleep.
    fn probe(dev: &Device, id: &DeviceId, context: &Self::Context) -> Result<Self::Data>;

    /// The function is being unbound: stops the device and drops `data`,
    /// in the order the driver chooses (by default, just drops it). May
    /// sleep.
    fn remove(_dev: &Device, data: Self::Data) {
        drop(data);
    }
}
// ANCHOR_END: driver

/// A PCI function (`struct pci_dev`), counted: a `Device` keeps the C
/// structure alive, and cloning it takes another reference.
///
/// # Invariants
///
/// `ptr` points at a live `struct pci_dev` on which this value holds a
/// reference (`pci_dev_get`), except for the borrowed one that the probe
/// and remove callbacks lend, which lives in a `ManuallyDrop` inside a
/// callback that the PCI core keeps the device alive for.
pub struct Device {
    ptr: NonNull<bindings::pci_dev>,
}

// SAFETY: a `struct pci_dev` is reference counted and may be used and put
// from any thread.
unsafe impl Send for Device {}
// SAFETY: the methods taking `&self` call C functions that may run
// concurrently (they lock inside, or only read).
unsafe impl Sync for Device {}

impl Device {
    /// The function the PCI core passed to a callback, borrowed for it.
    ///
    /// # Safety
    ///
    /// `ptr` is a live `struct pci_dev` that stays alive while the result
    /// is used.
    unsafe fn borrowed(ptr: *mut bindings::pci_dev) -> ManuallyDrop<Device> {
        // INVARIANT: borrowed, in a `ManuallyDrop` (see above); a C callback
        // never passes NULL.
        ManuallyDrop::new(Device {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
        })
    }

    /// The C `struct pci_dev`.
    pub fn as_raw(&self) -> *mut bindings::pci_dev {
        self.ptr.as_ptr()
    }

    /// The generic device inside, for DMA and logging.
    pub fn as_dev(&self) -> &device::Device {
        // SAFETY: the function is alive (type invariants) and so is its
        // embedded `struct device`, for as long as `&self`.
        unsafe { device::Device::from_raw(bindings::rust_helper_pci_dev_device(self.as_raw())) }
    }

    raw_getters! {
        /// The vendor id.
        fn vendor_id() -> u16 = rust_helper_pci_vendor;
        /// The device id.
        fn device_id() -> u16 = rust_helper_pci_device;
        /// The class code: class, subclass and programming interface.
        fn class() -> u32 = rust_helper_pci_class;
    }

    /// Enables the device's memory and I/O decoding (`pcim_enable_device`).
    /// The PCI core disables it again when the driver unbinds.
    ///
    /// # Context
    ///
    /// May sleep (it may power the device up): process context only.
    pub fn enable_device(&self) -> Result {
        // SAFETY: the function is alive (type invariants).
        to_result(unsafe { bindings::pcim_enable_device(self.as_raw()) }).map(drop)
    }

    /// Lets the device master the bus: it may then do DMA.
    pub fn set_master(&self) {
        // SAFETY: the function is alive (type invariants).
        unsafe { bindings::pci_set_master(self.as_raw()) }
    }

    /// Stops the device from mastering the bus: no more DMA.
    pub fn clear_master(&self) {
        // SAFETY: the function is alive (type invariants).
        unsafe { bindings::pci_clear_master(self.as_raw()) }
    }

    /// The length of BAR `bar`, and whether it is memory (not I/O ports).
    pub(crate) fn resource(&self, bar: u32) -> Result<(usize, bool)> {
        if bar > 5 {
            return Err(crate::error::code::EINVAL);
        }
        // SAFETY: the function is alive (type invariants) and `bar` is one
        // of its six standard resources.
        let len = unsafe { bindings::rust_helper_pci_resource_len(self.as_raw(), bar as c_int) };
        // SAFETY: as above.
        let flags =
            unsafe { bindings::rust_helper_pci_resource_flags(self.as_raw(), bar as c_int) };
        let is_mem = flags & bindings::RUST_CONST_HELPER_IORESOURCE_MEM != 0;
        Ok((
            usize::try_from(len).map_err(|_| crate::error::code::EINVAL)?,
            is_mem,
        ))
    }

    /// Claims memory BAR `bar` under `name` and maps it; it must be at
    /// least `SIZE` bytes long. See [`Bar`].
    ///
    /// # Context
    ///
    /// May sleep (`pci_iomap` maps with `ioremap`, which allocates): process
    /// context only.
    pub fn iomap_region<const SIZE: usize>(
        &self,
        bar: u32,
        name: &'static CStr,
    ) -> Result<Bar<SIZE>> {
        Bar::map(self, bar, name)
    }
}

impl Clone for Device {
    fn clone(&self) -> Self {
        // SAFETY: the function is alive (type invariants).
        unsafe { bindings::pci_dev_get(self.as_raw()) };
        // INVARIANT: the new value holds the reference just taken.
        Device { ptr: self.ptr }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: this value holds a reference (type invariants; the
        // borrowed ones are never dropped).
        unsafe { bindings::pci_dev_put(self.as_raw()) };
    }
}

// ANCHOR: bar
/// A mapped memory BAR of a PCI function, at least `SIZE` bytes long: its
/// registers are an [`Io`] (`bar.read32::<OFFSET>()` through `Deref`).
///
/// Holds a reference on the function, its BAR claimed under the driver's
/// name and the mapping; dropping it unmaps and releases the BAR.
///
/// # Invariants
///
/// `io` is the whole of a mapping (`pci_iomap`) of BAR `num` of `pdev`,
/// and `num` is claimed by this value.
pub struct Bar<const SIZE: usize> {
    pdev: Device,
    io: IoRaw<SIZE>,
    num: u32,
}
// ANCHOR_END: bar

impl<const SIZE: usize> Bar<SIZE> {
    /// Claims memory BAR `num` of `pdev` under `name` and maps all of it.
    /// `ENODEV` if the BAR is not memory or is shorter than `SIZE`.
    fn map(pdev: &Device, num: u32, name: &'static CStr) -> Result<Self> {
        let (len, is_mem) = pdev.resource(num)?;
        if !is_mem || len < SIZE || len == 0 {
            return Err(crate::error::code::ENODEV);
        }
        // SAFETY: the function is alive (`pdev`); `num` is 0..=5 (checked
        // by `resource`), and `name` is `'static`, as the claim keeps it.
        to_result(unsafe {
            bindings::pci_request_region(pdev.as_raw(), num as c_int, name.as_ptr())
        })?;
        // SAFETY: as above; length 0 maps the whole BAR.
        let addr = unsafe { bindings::pci_iomap(pdev.as_raw(), num as c_int, 0) };
        let io = if addr.is_null() {
            Err(crate::error::code::ENODEV)
        } else {
            IoRaw::new(addr, len)
        };
        let io = match io {
            Ok(io) => io,
            Err(e) => {
                if !addr.is_null() {
                    // SAFETY: mapped just above, unmapped once.
                    unsafe { bindings::pci_iounmap(pdev.as_raw(), addr) };
                }
                // SAFETY: claimed just above.
                unsafe { bindings::pci_release_region(pdev.as_raw(), num as c_int) };
                return Err(e);
            }
        };
        // INVARIANT: `io` is the whole mapping of the claimed BAR.
        Ok(Bar {
            pdev: pdev.clone(),
            io,
            num,
        })
    }
}

impl<const SIZE: usize> Deref for Bar<SIZE> {
    type Target = Io<SIZE>;

    fn deref(&self) -> &Io<SIZE> {
        // SAFETY: `io` is mapped until `drop` (type invariants), which
        // cannot run while `self` is borrowed.
        unsafe { Io::from_raw(&self.io) }
    }
}

impl<const SIZE: usize> Drop for Bar<SIZE> {
    fn drop(&mut self) {
        // SAFETY: the mapping and the claim are this value's (type
        // invariants), undone once; `pdev` keeps the function alive.
        unsafe {
            bindings::pci_iounmap(self.pdev.as_raw(), self.io.addr());
            bindings::pci_release_region(self.pdev.as_raw(), self.num as c_int);
        }
    }
}

// ANCHOR: registration
/// A registered PCI driver `T`; dropping it unregisters the driver, which
/// unbinds (and so removes) every device it drives first.
///
/// A leaked registration (`mem::forget`, `KBox::leak`, an `Arc` cycle) is
/// unregistered by the module's exit, with a warning ([`crate::unload`]):
/// no probe or remove calls into the unloaded module.
///
/// # Invariants
///
/// From a successful initialisation until drop, `context` is initialised
/// and `unload` enrolled; `driver` is registered with the PCI core, with
/// `T`'s name, id table and callbacks, until the drop, or the module's exit
/// if that comes first (it has then unregistered it).
pub struct Registration<T: Driver> {
    driver: Opaque<bindings::pci_driver>,
    context: T::Context,
    unload: Entry,
    _driver: PhantomData<T>,
}
// ANCHOR_END: registration

// SAFETY: the registration is only touched by C after `register`, and
// `pci_unregister_driver` may be called from any thread; the context is
// `Send`.
unsafe impl<T: Driver> Send for Registration<T> {}
// SAFETY: `&Registration` gives nothing access to the C structure, and the
// context is `Sync`.
unsafe impl<T: Driver> Sync for Registration<T> {}

impl<T: Driver> Registration<T> {
    /// Fails the build if `T::ID_TABLE` does not end with
    /// [`DeviceId::END`]: the PCI core walks the table until it finds it.
    const ID_TABLE_ENDS: () = assert!(
        table_is_terminated(T::ID_TABLE),
        "a PCI id table must end with DeviceId::END, and only there"
    );

    /// An initialiser that registers driver `T`, owned by `module`; every
    /// probe gets `context`.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new(module: &'static ThisModule, context: T::Context) -> impl PinInit<Self, Error> {
        // Evaluated at compile time, for every driver type.
        let () = Self::ID_TABLE_ENDS;
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and will not move
            // (contract of `PinInit`); the context and the driver are
            // written before the PCI core sees them. The name and the
            // table are `'static`.
            let drv = unsafe {
                addr_of_mut!((*slot).context).write(context);
                addr_of_mut!((*slot).unload).write(Entry::new(Self::UNLOAD));
                let drv = Opaque::raw_get(addr_of_mut!((*slot).driver));
                drv.write(core::mem::zeroed());
                (*drv).name = T::NAME.as_ptr();
                (*drv).id_table = T::ID_TABLE.as_ptr().cast();
                (*drv).probe = Some(probe_callback::<T>);
                (*drv).remove = Some(remove_callback::<T>);
                drv
            };
            // SAFETY: the driver is initialised and pinned; on error it is
            // not registered and holds nothing to free.
            to_result(unsafe {
                bindings::__pci_register_driver(drv, module.as_raw(), T::NAME.as_ptr())
            })?;
            // SAFETY: written above, pinned with the slot.
            unsafe { Entry::enrol(addr_of!((*slot).unload)) };
            // INVARIANT: registered, and the entry enrolled.
            Ok(())
        };
        // SAFETY: on `Ok` the driver and the context are initialised (the
        // marker needs nothing); on `Err` nothing needs dropping.
        unsafe { pin_init_from_closure(init) }
    }

    /// Registers driver `T` in a new heap block.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new_pinned(module: &'static ThisModule, context: T::Context) -> Result<Pin<KBox<Self>>> {
        Entry::pin_own_block(Self::new(module, context), |reg| &reg.unload)
    }

    /// How the module's exit unregisters a leaked registration.
    const UNLOAD: &'static Ops = &Ops {
        name: core::any::type_name::<Self>,
        stop: Self::unregister_leaked,
        reclaim: None,
        kthread: false,
    };

    /// Unregisters a driver whose registration was leaked, at the module's
    /// exit: its devices are removed first.
    ///
    /// # Safety
    ///
    /// `e` is the `unload` entry of a live registration, taken by the
    /// sweep; called once.
    unsafe fn unregister_leaked(e: *const Entry) {
        let reg = crate::container_of!(e, Self, unload);
        // SAFETY: the registration is live while the sweep holds its entry
        // (caller).
        unsafe { (*e).warn_leaked(c"unregistering it") };
        // SAFETY: registered (type invariants), and its `Drop` will not
        // unregister it again (the sweep holds the entry).
        unsafe { bindings::pci_unregister_driver(Opaque::raw_get(addr_of!((*reg).driver))) };
    }
}

impl<T: Driver> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: enrolled (type invariants), left once, here.
        if unsafe { Entry::leave(&self.unload) } {
            // SAFETY: registered (type invariants: the module's exit has not
            // unregistered it), and dropped only once; the PCI core removes
            // every bound device before this returns.
            unsafe { bindings::pci_unregister_driver(self.driver.as_raw()) };
        }
    }
}

/// The `probe` of driver `T`'s `pci_driver`.
///
/// # Safety
///
/// Called by the PCI core with a live function and the entry of
/// `T::ID_TABLE` that matched it.
unsafe extern "C" fn probe_callback<T: Driver>(
    pdev: *mut bindings::pci_dev,
    id: *const bindings::pci_device_id,
) -> c_int {
    from_result(|| {
        // SAFETY: the PCI core keeps `pdev` alive during the callback.
        let dev = unsafe { Device::borrowed(pdev) };
        // SAFETY: `id` points into `T::ID_TABLE` (or a dynamic id the core
        // keeps alive during probe), and `DeviceId` is transparent.
        let id = unsafe { &*id.cast::<DeviceId>() };
        // SAFETY: the driver core sets the device's driver before it calls
        // probe, and this probe belongs to a `Registration<T>`'s driver.
        let drv = unsafe { bindings::rust_helper_pci_dev_driver(pdev) };
        let reg = crate::container_of!(
            drv.cast::<Opaque<bindings::pci_driver>>(),
            Registration<T>,
            driver
        );
        // SAFETY: `drv` is the `driver` field of a live `Registration<T>`:
        // it stays registered (and alive) until every probe and remove of
        // its devices has returned; its context is initialised (type
        // invariants).
        let context = unsafe { &(*reg).context };
        let data = KBox::new(T::probe(&dev, id, context)?, GFP_KERNEL)?;
        // SAFETY: the function is alive; `remove_callback` takes the box
        // back, and nothing else reads the driver data.
        unsafe { bindings::rust_helper_pci_set_drvdata(pdev, KBox::into_raw(data).cast()) };
        Ok(0)
    })
}

/// The `remove` of driver `T`'s `pci_driver`.
///
/// # Safety
///
/// Called by the PCI core with a function that `probe_callback::<T>`
/// bound, once.
unsafe extern "C" fn remove_callback<T: Driver>(pdev: *mut bindings::pci_dev) {
    // SAFETY: the PCI core keeps `pdev` alive during the callback.
    let dev = unsafe { Device::borrowed(pdev) };
    // SAFETY: a successful probe stored a `KBox<T::Data>` here, and remove
    // runs once per probe: the box is taken back exactly once.
    let data =
        unsafe { KBox::<T::Data>::from_raw(bindings::rust_helper_pci_get_drvdata(pdev).cast()) };
    T::remove(&dev, KBox::into_inner(data));
    // SAFETY: the function is alive; the pointer is no longer valid.
    unsafe { bindings::rust_helper_pci_set_drvdata(pdev, core::ptr::null_mut()) };
}
