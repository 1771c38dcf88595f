//! Generic devices: a borrowed `struct device`, the part of every bus's
//! device (a PCI function's `pdev->dev`) that DMA and logging work on.
//!
//! C header: [`include/linux/device.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/device.h)

use core::ffi::CStr;

use crate::bindings;
use crate::init::Opaque;

/// A `struct device`, only ever seen through a reference that a bus
/// abstraction hands out (such as [`crate::pci::Device::as_dev`]).
///
/// # Invariants
///
/// A `&Device` points at a live, registered `struct device`.
#[repr(transparent)]
pub struct Device(Opaque<bindings::device>);

// SAFETY: a `struct device` is reference counted and its fields that this
// type reads are set before registration; the kernel allows using it from
// any thread.
unsafe impl Sync for Device {}
// SAFETY: as above: nothing in it is tied to a thread.
unsafe impl Send for Device {}

impl Device {
    /// The device at `ptr`, borrowed for `'a`.
    ///
    /// # Safety
    ///
    /// `ptr` points at a live `struct device` that stays alive for `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::device) -> &'a Device {
        // SAFETY: `Device` is a transparent wrapper of the C struct, and the
        // caller guarantees it is alive for `'a`.
        // INVARIANT: as the caller guarantees.
        unsafe { &*ptr.cast::<Device>() }
    }

    /// The C `struct device`.
    pub fn as_raw(&self) -> *mut bindings::device {
        self.0.as_raw()
    }

    /// The device's name, as `dev_name()` gives it (`0000:00:04.0` for a
    /// PCI function).
    pub fn name(&self) -> &CStr {
        // SAFETY: the device is alive (type invariants); its name is set
        // when it is registered and lives as long as the device.
        let name = unsafe { bindings::rust_helper_dev_name(self.as_raw()) };
        // SAFETY: `dev_name` returns a NUL-terminated string that lives as
        // long as the device, which outlives `&self`.
        unsafe { CStr::from_ptr(name) }
    }
}

/// A counted reference on a `struct device` (`get_device`), for objects
/// that use the device after the borrow they were made from ends: DMA
/// allocations free their memory through it.
///
/// # Invariants
///
/// `ptr` points at a `struct device` on which this value holds a
/// reference.
pub struct DeviceRef {
    ptr: core::ptr::NonNull<bindings::device>,
}

// SAFETY: references on a `struct device` may be taken and put from any
// thread.
unsafe impl Send for DeviceRef {}
// SAFETY: `&DeviceRef` only gives `&Device`, which is `Sync`.
unsafe impl Sync for DeviceRef {}

impl DeviceRef {
    /// Takes a reference on `dev`.
    pub fn new(dev: &Device) -> Self {
        // SAFETY: `dev` is alive (type invariants of `Device`).
        unsafe { bindings::get_device(dev.as_raw()) };
        // INVARIANT: `get_device` took a reference on `dev`, whose address
        // (from a reference) is not NULL; `Device` is transparent.
        DeviceRef {
            ptr: core::ptr::NonNull::from(dev).cast(),
        }
    }
}

impl core::ops::Deref for DeviceRef {
    type Target = Device;

    fn deref(&self) -> &Device {
        // SAFETY: the reference keeps the device alive as long as `self`.
        unsafe { Device::from_raw(self.ptr.as_ptr()) }
    }
}

impl Drop for DeviceRef {
    fn drop(&mut self) {
        // SAFETY: this value holds a reference (type invariants).
        unsafe { bindings::put_device(self.ptr.as_ptr()) };
    }
}
