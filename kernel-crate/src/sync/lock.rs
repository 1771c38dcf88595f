//! The generic lock behind [`Mutex`](super::Mutex) and
//! [`SpinLock`](super::SpinLock): a C lock and the data it protects, whose
//! only way to the data is a [`Guard`].
//!
//! C headers: [`include/linux/mutex.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mutex.h),
//! [`include/linux/spinlock.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/spinlock.h)

use core::cell::UnsafeCell;
use core::ffi::{c_char, CStr};
use core::marker::{PhantomData, PhantomPinned};
use core::ops::{Deref, DerefMut};
use core::ptr::addr_of_mut;

use super::LockClassKey;
use crate::bindings;
use crate::init::{pin_init_from_closure, Opaque, PinInit};

// ANCHOR: backend_macro
/// Defines `$name`, the [`Backend`] of a C lock whose `lock` and `unlock`
/// take nothing but the lock: `init`, `lock` and `unlock` name the C
/// functions. `lock` must give exclusive ownership until `unlock`.
macro_rules! plain_backend {
    (
        $(#[$meta:meta])* $name:ident, $state:ty,
        init: $init:path, lock: $lock:path, unlock: $unlock:path
    ) => {
        $(#[$meta])*
        pub struct $name;

        // SAFETY: `$lock` gives exclusive ownership until `$unlock` (the
        // macro's contract).
        unsafe impl $crate::sync::lock::Backend for $name {
            type State = $state;
            type GuardState = ();

            unsafe fn init(
                ptr: *mut $state,
                name: *const ::core::ffi::c_char,
                key: *mut $crate::bindings::lock_class_key,
            ) {
                // SAFETY: the caller guarantees that `ptr` is valid and
                // pinned and that `name` and `key` are `'static`.
                unsafe { $init(ptr, name, key) };
            }

            unsafe fn lock(ptr: *mut $state) {
                // SAFETY: the caller guarantees that the lock is initialised.
                unsafe { $lock(ptr) };
            }

            unsafe fn unlock(ptr: *mut $state, _state: &()) {
                // SAFETY: the caller guarantees that this thread holds the lock.
                unsafe { $unlock(ptr) };
            }
        }
    };
}
// ANCHOR_END: backend_macro

pub mod mutex;
pub mod spinlock;

/// The C side of a lock: how to initialise, take and release it.
///
/// # Safety
///
/// [`lock`](Backend::lock) must give the caller exclusive ownership of
/// the lock until the matching [`unlock`](Backend::unlock): no two
/// callers hold it at once.
pub unsafe trait Backend {
    /// The C lock type.
    type State;
    /// What `lock` returns and `unlock` needs back (nothing for the
    /// crate's backends: not even [`SpinLockIrq`](super::SpinLockIrq)'s
    /// saved interrupt flags, which are per CPU so that guards may be
    /// dropped in any order).
    type GuardState;

    /// Initialises the lock at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is valid for writes and will not move while the lock is used;
    /// `name` and `key` live forever.
    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key);

    /// Takes the lock, waiting as long as it takes.
    ///
    /// # Safety
    ///
    /// `ptr` was initialised by [`init`](Backend::init).
    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState;

    /// Releases the lock.
    ///
    /// # Safety
    ///
    /// The caller holds the lock at `ptr`, taken by [`lock`](Backend::lock)
    /// on this thread, which returned `state`.
    unsafe fn unlock(ptr: *mut Self::State, state: &Self::GuardState);
}

// ANCHOR: lock
/// A C lock and the data it protects.
///
/// The data is in an `UnsafeCell`, so a shared `&Lock` can change it, and
/// no method hands it out except through a [`Guard`], which exists only
/// while the lock is held. The C lock must not move once initialised, so a
/// `Lock` is made in place from [`Lock::new`]'s initialiser and is `!Unpin`.
///
/// # Invariants
///
/// `state` has been initialised by `B::init` and never moves afterwards.
pub struct Lock<T: ?Sized, B: Backend> {
    state: Opaque<B::State>,
    _pin: PhantomPinned,
    data: UnsafeCell<T>,
}
// ANCHOR_END: lock

// ANCHOR: send_sync
// SAFETY: sending the lock sends the data; the C lock itself may be used
// from any thread.
unsafe impl<T: ?Sized + Send, B: Backend> Send for Lock<T, B> {}
// SAFETY: a shared `&Lock` reaches the data only through a guard, which the
// lock makes exclusive; so threads that share the lock pass `T` between them
// (`T: Send`) but never share it (`T: Sync` is not needed).
unsafe impl<T: ?Sized + Send, B: Backend> Sync for Lock<T, B> {}
// ANCHOR_END: send_sync

impl<T, B: Backend> Lock<T, B> {
    /// An initialiser of a lock holding `data`. Use the `new_mutex!` family
    /// of macros, which give each call site its own lock class.
    pub fn new(data: T, name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes (contract of `PinInit`).
            unsafe { addr_of_mut!((*slot).data).write(UnsafeCell::new(data)) };
            // SAFETY: the state is in the slot, which will not move; the
            // name and key are `'static`.
            unsafe {
                B::init(
                    Opaque::raw_get(addr_of_mut!((*slot).state)),
                    name.as_ptr(),
                    key.as_raw(),
                )
            };
            // INVARIANT: `state` is initialised and pinned from now on.
            Ok(())
        };
        // SAFETY: the closure initialises both fields and never fails.
        unsafe { pin_init_from_closure(init) }
    }
}

impl<T: ?Sized, B: Backend> Lock<T, B> {
    // ANCHOR: lock_fn
    /// Takes the lock and returns the guard through which the data is
    /// reached; the lock is released when the guard is dropped.
    ///
    /// # Context
    ///
    /// A [`Mutex`](super::Mutex) may sleep here (`mutex_lock` calls
    /// `might_sleep()`): process context only, no spinlock held. A
    /// [`SpinLock`](super::SpinLock) spins and never sleeps; code holding
    /// its guard must not sleep.
    pub fn lock(&self) -> Guard<'_, T, B> {
        // SAFETY: `state` is initialised (type invariant).
        let state = unsafe { B::lock(self.state.as_raw()) };
        // INVARIANT: the lock is held, by this thread.
        Guard {
            lock: self,
            state,
            _not_send: PhantomData,
        }
    }
    // ANCHOR_END: lock_fn

    /// The data, through a unique borrow of the lock: no one else can lock
    /// it, so no locking is needed.
    pub fn get_mut(self: core::pin::Pin<&mut Self>) -> &mut T {
        // SAFETY: the data is not structurally pinned; only `state` is, and
        // it is not touched.
        unsafe { self.get_unchecked_mut() }.data.get_mut()
    }
}

// ANCHOR: guard
/// Proof that a [`Lock`] is held, and the only way to its data.
///
/// `!Send`: the C lock must be released by the thread that took it.
///
/// # Invariants
///
/// The current thread holds `lock`, taken by `B::lock`, which returned
/// `state`.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct Guard<'a, T: ?Sized, B: Backend> {
    lock: &'a Lock<T, B>,
    state: B::GuardState,
    _not_send: PhantomData<*mut ()>,
}
// ANCHOR_END: guard

// SAFETY: a shared `&Guard` only gives `&T`, so sharing the guard shares
// the data.
unsafe impl<T: ?Sized + Sync, B: Backend> Sync for Guard<'_, T, B> {}

impl<'a, T: ?Sized, B: Backend> Guard<'a, T, B> {
    /// The lock this guard holds.
    pub fn lock_ref(&self) -> &'a Lock<T, B> {
        self.lock
    }

    /// Releases the lock, runs `f`, and takes the lock again. Used by
    /// [`CondVar`](super::CondVar) to sleep without the lock.
    ///
    /// # Context
    ///
    /// Taking a [`Mutex`](super::Mutex) again may sleep, as
    /// [`Lock::lock`] does.
    pub fn do_unlocked<U>(&mut self, f: impl FnOnce() -> U) -> U {
        // SAFETY: the lock is held, with `self.state` (type invariant).
        unsafe { B::unlock(self.lock.state.as_raw(), &self.state) };
        let result = f();
        // SAFETY: `state` is initialised (type invariant of `Lock`).
        // INVARIANT: the lock is held again, with the new state.
        self.state = unsafe { B::lock(self.lock.state.as_raw()) };
        result
    }
}

// ANCHOR: deref
impl<T: ?Sized, B: Backend> Deref for Guard<'_, T, B> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the lock is held (type invariant), so no one else
        // reaches the data.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized, B: Backend> DerefMut for Guard<'_, T, B> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the lock is held (type invariant), and `&mut self` makes
        // this the only reference through the guard.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized, B: Backend> Drop for Guard<'_, T, B> {
    fn drop(&mut self) {
        // SAFETY: the lock is held, with `self.state` (type invariant).
        unsafe { B::unlock(self.lock.state.as_raw(), &self.state) };
    }
}
// ANCHOR_END: deref
