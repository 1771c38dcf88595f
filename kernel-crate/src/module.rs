//! Loadable modules: the [`Module`] trait and the state the `module!` macro
//! keeps for it.
//!
//! C header: [`include/linux/module.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/module.h)

use core::cell::UnsafeCell;
use core::ffi::c_int;
use core::mem::MaybeUninit;

use crate::bindings;
use crate::error::{from_result, Result};

// ANCHOR: module_trait
/// A kernel module: created when the module is loaded, dropped when it is
/// unloaded.
///
/// The `module!` macro names the type that implements it and generates the
/// entry points the kernel calls.
pub trait Module: Sized + Sync + Send {
    /// Initialises the module. An error makes `insmod` fail with that error,
    /// and the module is not loaded.
    fn init(module: &'static ThisModule) -> Result<Self>;
}
// ANCHOR_END: module_trait

/// The `struct module` of the module being built, known as `THIS_MODULE` in C.
///
/// # Invariants
///
/// The pointer is the module's own `__this_module`, which lives as long as
/// the module's code does.
pub struct ThisModule(*mut bindings::module);

unsafe extern "C" {
    /// The `struct module` of the `.ko` this code is linked into, defined
    /// in its `.mod.c` by modpost. Every module links its own copy of this
    /// crate (a static library), so this is always the module's own.
    static __this_module: bindings::module;
}

// SAFETY: `ThisModule` only hands out the pointer; the kernel synchronises
// access to the `struct module` it points to.
unsafe impl Sync for ThisModule {}

impl ThisModule {
    /// The module this code is linked into, `THIS_MODULE` in C: the
    /// `module!` macro's `THIS_MODULE`, and the owner of the tables this
    /// crate builds at compile time (`file_operations.owner`).
    // INVARIANT: `__this_module` of the module this code is linked into
    // (see the declaration above).
    pub const THIS: ThisModule = ThisModule(&raw const __this_module as *mut bindings::module);

    /// Returns the raw pointer, for C functions that take an owner.
    pub const fn as_raw(&self) -> *mut bindings::module {
        self.0
    }

    /// Takes this module's parameter lock, which the kernel holds while it
    /// writes a parameter; reading a writable parameter needs the guard:
    /// `count.read(&THIS_MODULE.kernel_param_lock())`. Released when the
    /// guard is dropped. May sleep.
    pub fn kernel_param_lock(&self) -> crate::module_param::KParamGuard<'_> {
        crate::module_param::KParamGuard::lock(self)
    }
}

/// Where the `module!` macro keeps the value returned by [`Module::init`]
/// between loading and unloading.
///
/// # Invariants
///
/// The slot holds an initialised `T` from a successful [`ModuleSlot::init`]
/// until [`ModuleSlot::exit`].
pub struct ModuleSlot<T: Module>(UnsafeCell<MaybeUninit<T>>);

// SAFETY: the slot is written only by `init` and `exit`, whose callers
// guarantee they never run concurrently; in between, `T: Sync` makes shared
// access sound.
unsafe impl<T: Module> Sync for ModuleSlot<T> {}

impl<T: Module> ModuleSlot<T> {
    /// An empty slot, for a `static`.
    #[expect(clippy::new_without_default, reason = "only used in statics")]
    pub const fn new() -> Self {
        Self(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// Runs [`Module::init`] and keeps its value; returns what the C
    /// `init_module` must return: 0 or a negative errno.
    ///
    /// # Safety
    ///
    /// Called once, from `init_module`, before [`ModuleSlot::exit`] and never
    /// concurrently with it.
    pub unsafe fn init(&self, module: &'static ThisModule) -> c_int {
        from_result(|| {
            let value = T::init(module).inspect_err(|_| crate::unload::sweep())?;
            // SAFETY: the caller guarantees no other access to the slot runs
            // now.
            unsafe { (*self.0.get()).write(value) };
            // INVARIANT: the slot now holds an initialised `T`.
            Ok(0)
        })
    }

    /// Drops the value kept by a successful [`ModuleSlot::init`], then
    /// stops what the module leaked and waits for its work items: the
    /// kernel threads and registrations still alive ([`crate::unload`]),
    /// and the work items queued or running ([`crate::workqueue`]). A
    /// failed init does the same. No driver has to remember either.
    ///
    /// # Safety
    ///
    /// Called once, from `cleanup_module`, after `init` returned 0; the
    /// kernel never calls `cleanup_module` when `init_module` failed.
    pub unsafe fn exit(&self) {
        // SAFETY: by the type invariants and the caller's guarantee, the slot
        // holds an initialised `T` and nothing else accesses it.
        unsafe { (*self.0.get()).assume_init_drop() };
        // The module's threads, callbacks and work items run its code: they
        // end before it goes, even those of values it leaked.
        crate::unload::sweep();
    }
}
