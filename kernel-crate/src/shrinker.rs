//! Shrinkers: caches that give memory back when the kernel runs short.
//!
//! C header: [`include/linux/shrinker.h`](https://elixir.bootlin.com/linux/v6.12/source/include/linux/shrinker.h)
//!
//! The kernels differ here, not the API: 6.1 registers a `struct shrinker`
//! that the driver embeds (`register_shrinker`/`unregister_shrinker`);
//! since 6.7 the kernel allocates it (`shrinker_alloc`), the driver fills
//! in the callbacks and `private_data` and registers it
//! (`shrinker_register`), and `shrinker_free` unregisters it, waits for
//! callbacks under way and frees it after an RCU grace period (shrinkers
//! now run without a global lock). [`Registration`] does either.
//!
//! A driver that keeps memory it could do without (pages of freed
//! buffers, say) registers a [`Shrinker`]: under memory pressure, and on
//! `echo 2 > /proc/sys/vm/drop_caches`, the kernel asks it how much it
//! could free ([`Shrinker::count_objects`]) and then to free some
//! ([`Shrinker::scan_objects`]). Both run in the middle of an allocation
//! that is reclaiming memory, perhaps the driver's own: they must not
//! wait for a lock that an allocating thread may hold (take them with
//! `try_lock` and give up instead), and should not allocate.

use core::ffi::{c_ulong, CStr};
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr::{addr_of, addr_of_mut};

use crate::alloc::KBox;
use crate::bindings;
#[cfg(not(kernel_shrinker_alloc))]
use crate::error::to_result;
use crate::error::{Error, Result};
#[cfg(not(kernel_shrinker_alloc))]
use crate::init::Opaque;
use crate::init::{pin_init_from_closure, PinInit};
use crate::unload::{Entry, Ops};

/// `SHRINK_STOP` and `SHRINK_EMPTY` of `include/linux/shrinker.h`,
/// `(~0UL)` and `(~0UL - 1)`, which bindgen does not evaluate.
const SHRINK_STOP: c_ulong = !0;
const SHRINK_EMPTY: c_ulong = !0 - 1;

/// What [`Shrinker::count_objects`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// Nothing to free, now or soon (`SHRINK_EMPTY`).
    Empty,
    /// This many objects could be freed (0: none just now).
    Freeable(usize),
}

/// What [`Shrinker::scan_objects`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// Freed this many objects.
    Freed(usize),
    /// Could free nothing without waiting (`SHRINK_STOP`): the kernel
    /// stops asking in this round.
    Stop,
}

/// The request of one [`Shrinker::scan_objects`] call
/// (`struct shrink_control`), read-only.
pub struct ShrinkControl<'a>(&'a bindings::shrink_control);

impl ShrinkControl<'_> {
    /// How many objects the kernel asks to free (`nr_to_scan`).
    pub fn nr_to_scan(&self) -> usize {
        self.0.nr_to_scan as usize
    }
}

/// A cache that the kernel may ask to shrink. See the module docs for
/// the context the callbacks run in.
pub trait Shrinker: Send + Sync {
    /// How many objects [`Shrinker::scan_objects`] could free now. Called
    /// often: it should be cheap (a counter), not a walk.
    fn count_objects(&self) -> Count;

    /// Frees up to [`ShrinkControl::nr_to_scan`] objects, without waiting
    /// for locks.
    fn scan_objects(&self, sc: &ShrinkControl<'_>) -> Scan;
}

impl<T: Shrinker> Shrinker for crate::sync::Arc<T> {
    fn count_objects(&self) -> Count {
        (**self).count_objects()
    }

    fn scan_objects(&self, sc: &ShrinkControl<'_>) -> Scan {
        (**self).scan_objects(sc)
    }
}

// ANCHOR: registration
/// A registered shrinker whose callbacks are `T`'s; dropping it
/// unregisters it (and waits for callbacks under way).
///
/// ```rust
/// # use kernel::shrinker::{self, Count, Scan, ShrinkControl, Shrinker};
/// struct Nothing;
/// impl Shrinker for Nothing {
///     fn count_objects(&self) -> Count {
///         Count::Empty
///     }
///     fn scan_objects(&self, _sc: &ShrinkControl<'_>) -> Scan {
///         Scan::Stop
///     }
/// }
/// let reg = shrinker::Registration::new_pinned(c_str!("nothing"), Nothing)?;
/// drop(reg);
/// ```
///
/// A leaked registration (`mem::forget`, `KBox::leak`, an `Arc` cycle) is
/// unregistered by the module's exit, with a warning ([`crate::unload`]):
/// reclaim never calls into the unloaded module.
///
/// # Invariants
///
/// From a successful initialisation until drop, `data` is initialised and
/// `unload` enrolled; `shrinker` is registered (`register_shrinker`, or
/// since 6.7 allocated and registered with `private_data` pointing at the
/// registration) with the callbacks of `Self` until the drop, or the
/// module's exit if that comes first (it has then unregistered it).
pub struct Registration<T: Shrinker> {
    /// 6.1: the shrinker itself, registered in place.
    #[cfg(not(kernel_shrinker_alloc))]
    shrinker: Opaque<bindings::shrinker>,
    /// 6.7+: the kernel's shrinker (`shrinker_alloc`), whose
    /// `private_data` points at this registration.
    #[cfg(kernel_shrinker_alloc)]
    shrinker: *mut bindings::shrinker,
    data: T,
    unload: Entry,
    _pin: PhantomPinned,
}
// ANCHOR_END: registration

// SAFETY: the registration gives out `&T` only (`T: Sync`), and
// `unregister_shrinker`/`shrinker_free` may be called from any thread; the
// 6.7+ pointer is to the kernel's shrinker, only used to free it.
unsafe impl<T: Shrinker> Sync for Registration<T> {}
// SAFETY: as above; `T: Send` lets it be dropped on any thread.
unsafe impl<T: Shrinker> Send for Registration<T> {}

impl<T: Shrinker> Registration<T> {
    /// An initialiser that registers a shrinker named `name` (seen in
    /// debugfs with `CONFIG_SHRINKER_DEBUG`) calling `data`.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new(name: &'static CStr, data: T) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and will not move
            // (contract of `PinInit`); the data is written before the
            // shrinker is registered, so no callback sees it uninitialised.
            unsafe { addr_of_mut!((*slot).data).write(data) };
            // SAFETY: as above; an entry that is not enrolled needs no
            // dropping.
            unsafe { addr_of_mut!((*slot).unload).write(Entry::new(Self::UNLOAD)) };
            // SAFETY: `slot` is valid for writes and pinned (above).
            let registered = unsafe { Self::register(slot, name) };
            if let Err(e) = registered {
                // SAFETY: initialised above and never seen by C: drop it
                // so that the slot holds nothing that needs dropping.
                unsafe { core::ptr::drop_in_place(addr_of_mut!((*slot).data)) };
                return Err(e);
            }
            // SAFETY: written above, pinned with the slot.
            unsafe { Entry::enrol(addr_of!((*slot).unload)) };
            // INVARIANT: registered with the callbacks of `Self`, `data` is
            // set and the entry enrolled.
            Ok(())
        };
        // SAFETY: on `Ok` every field is initialised; on `Err` the only
        // field that needs dropping has been dropped, and a shrinker that
        // failed to register holds nothing.
        unsafe { pin_init_from_closure(init) }
    }

    /// Registers the shrinker in a new heap block.
    ///
    /// # Context
    ///
    /// May sleep (registering takes the subsystem's mutex and allocates): run
    /// the initialiser in process context only. Dropping the registration may
    /// sleep too.
    pub fn new_pinned(name: &'static CStr, data: T) -> Result<Pin<KBox<Self>>> {
        Entry::pin_own_block(Self::new(name, data), |reg| &reg.unload)
    }

    /// How the module's exit unregisters a leaked registration.
    const UNLOAD: &'static Ops = &Ops {
        name: core::any::type_name::<Self>,
        stop: Self::unregister_leaked,
        reclaim: None,
        kthread: false,
    };

    /// Unregisters a shrinker that was leaked, at the module's exit.
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
        // unregister it again (the sweep holds the entry); waits for the
        // callbacks under way.
        unsafe { Self::unregister(reg) };
    }

    /// Sets up `(*slot).shrinker` with the callbacks of `Self` and
    /// registers it (6.1: in place).
    ///
    /// # Safety
    ///
    /// `slot` is valid for writes, pinned, and its `data` initialised.
    #[cfg(not(kernel_shrinker_alloc))]
    unsafe fn register(slot: *mut Self, name: &'static CStr) -> Result {
        // SAFETY: the field is valid for writes and pinned with the slot
        // (caller).
        let s = unsafe { Opaque::raw_get(addr_of_mut!((*slot).shrinker)) };
        // SAFETY: as above; all zeroes is a valid `struct shrinker`
        // (no flags, no list, the default batch), completed with the
        // callbacks and the default `seeks` before C sees it.
        unsafe {
            s.write(core::mem::zeroed());
            (*s).count_objects = Some(count_objects::<T>);
            (*s).scan_objects = Some(scan_objects::<T>);
            (*s).seeks = bindings::RUST_CONST_HELPER_DEFAULT_SEEKS;
        }
        // SAFETY: the shrinker is initialised and pinned until `Drop`
        // unregisters it; `name` is only formatted into a copy.
        to_result(unsafe { bindings::rust_helper_register_shrinker(s, name.as_ptr()) }).map(drop)
    }

    /// Allocates the kernel's shrinker for `Self`'s callbacks on `slot`,
    /// stores it in `(*slot).shrinker` and registers it (6.7+).
    ///
    /// # Safety
    ///
    /// `slot` is valid for writes, pinned, and its `data` initialised.
    #[cfg(kernel_shrinker_alloc)]
    unsafe fn register(slot: *mut Self, name: &'static CStr) -> Result {
        // SAFETY: `name` is only formatted into a copy.
        let s = unsafe { bindings::rust_helper_shrinker_alloc(name.as_ptr()) };
        if s.is_null() {
            return Err(crate::error::code::ENOMEM);
        }
        // SAFETY: `s` is a new shrinker, not registered: nothing else reads
        // it yet. `slot` is pinned (caller) and outlives the registration
        // (`Drop` frees the shrinker first), so `private_data` stays valid
        // for every callback.
        unsafe {
            (*s).count_objects = Some(count_objects::<T>);
            (*s).scan_objects = Some(scan_objects::<T>);
            (*s).seeks = bindings::RUST_CONST_HELPER_DEFAULT_SEEKS;
            (*s).private_data = slot.cast();
            addr_of_mut!((*slot).shrinker).write(s);
            bindings::shrinker_register(s);
        }
        Ok(())
    }

    /// Unregisters the shrinker of `reg`; waits for the callbacks under
    /// way (6.1: `unregister_shrinker` takes `shrinker_rwsem`, which they
    /// run under; 6.7+: `shrinker_free` drops the last reference and waits
    /// for the ones the callbacks hold), so `data` outlives them.
    ///
    /// # Safety
    ///
    /// `reg` is a live registration whose shrinker is registered; called
    /// once for it.
    unsafe fn unregister(reg: *const Self) {
        // SAFETY: registered (caller).
        #[cfg(not(kernel_shrinker_alloc))]
        unsafe {
            bindings::unregister_shrinker(Opaque::raw_get(addr_of!((*reg).shrinker)))
        };
        // SAFETY: allocated and registered (caller); freed once.
        #[cfg(kernel_shrinker_alloc)]
        unsafe {
            bindings::shrinker_free((*reg).shrinker)
        };
    }

    /// The data the callbacks are called on.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// The registration around a shrinker that [`Registration::new`]
    /// registered.
    ///
    /// # Safety
    ///
    /// `s` is the `shrinker` of a live `Registration<T>`.
    unsafe fn from_raw<'a>(s: *mut bindings::shrinker) -> &'a Self {
        #[cfg(not(kernel_shrinker_alloc))]
        let reg = crate::container_of!(s.cast::<Opaque<bindings::shrinker>>(), Self, shrinker);
        // SAFETY: `s` is live (caller), and its `private_data` was set to
        // the registration by `register`.
        #[cfg(kernel_shrinker_alloc)]
        let reg = unsafe { (*s).private_data }.cast::<Self>().cast_const();
        // SAFETY: `s` is the field of a live registration (caller), so
        // `reg` points at it.
        unsafe { &*reg }
    }
}

/// `count_objects` of the shrinkers of `Registration<T>`.
///
/// # Safety
///
/// Called by the kernel's reclaim for a shrinker of a live
/// `Registration<T>`.
unsafe extern "C" fn count_objects<T: Shrinker>(
    s: *mut bindings::shrinker,
    _sc: *mut bindings::shrink_control,
) -> c_ulong {
    // SAFETY: the kernel calls this only for a registered shrinker, and
    // `Drop` unregisters it (waiting for callbacks) before the
    // registration goes.
    let reg = unsafe { Registration::<T>::from_raw(s) };
    match reg.data.count_objects() {
        Count::Empty => SHRINK_EMPTY,
        // Never one of the special values at the top of the range.
        Count::Freeable(n) => (n as c_ulong).min(SHRINK_EMPTY - 1),
    }
}

/// `scan_objects` of the shrinkers of `Registration<T>`.
///
/// # Safety
///
/// As for [`count_objects`]; `sc` is valid for the call.
unsafe extern "C" fn scan_objects<T: Shrinker>(
    s: *mut bindings::shrinker,
    sc: *mut bindings::shrink_control,
) -> c_ulong {
    // SAFETY: as in `count_objects`.
    let reg = unsafe { Registration::<T>::from_raw(s) };
    // SAFETY: `sc` is valid for the call (`do_shrink_slab`'s), and only
    // read here.
    let sc = ShrinkControl(unsafe { &*sc });
    match reg.data.scan_objects(&sc) {
        Scan::Stop => SHRINK_STOP,
        Scan::Freed(n) => (n as c_ulong).min(SHRINK_EMPTY - 1),
    }
}

impl<T: Shrinker> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: enrolled (type invariants), left once, here.
        if unsafe { Entry::leave(&self.unload) } {
            // SAFETY: registered (type invariants: the module's exit has not
            // unregistered it), and unregistered once, here.
            unsafe { Self::unregister(self) };
        }
    }
}
