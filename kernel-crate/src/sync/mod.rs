//! Synchronisation primitives: locks whose data is reachable only through
//! a guard, a condition variable, a reference-counted pointer, and data
//! protected by a lock that lives elsewhere.
//!
//! - [`Mutex`] over `struct mutex` ([`include/linux/mutex.h`]): sleeps
//!   while it waits.
//! - [`SpinLock`] over `spinlock_t` ([`include/linux/spinlock.h`]): spins,
//!   for code that must not sleep; [`SpinLockIrq`] also disables interrupts
//!   on this CPU while held.
//! - [`CondVar`] over a wait queue ([`include/linux/wait.h`]).
//! - [`Arc`] over `refcount_t` ([`include/linux/refcount.h`]), and
//!   [`ArcBorrow`], an `Arc` borrowed (from an `Arc` or a raw pointer).
//! - [`LockedBy`]: data guarded by a lock that is not its own.
//! - [`WaitQueue`] and [`WaitEntry`]: the pieces a condition variable is
//!   made of, for building one.
//!
//! Every lock and condition variable is initialised in place and cannot
//! move afterwards (see [`crate::init`]); the macros [`new_mutex!`],
//! [`new_spinlock!`], [`new_spinlock_irq!`] and [`new_condvar!`] return its
//! initialiser and give each call site its own [`LockClassKey`], so that
//! lockdep (on a kernel with `CONFIG_LOCKDEP`) tells the sites apart.
//!
//! [`include/linux/mutex.h`]: https://elixir.bootlin.com/linux/v6.1/source/include/linux/mutex.h
//! [`include/linux/spinlock.h`]: https://elixir.bootlin.com/linux/v6.1/source/include/linux/spinlock.h
//! [`include/linux/wait.h`]: https://elixir.bootlin.com/linux/v6.1/source/include/linux/wait.h
//! [`include/linux/refcount.h`]: https://elixir.bootlin.com/linux/v6.1/source/include/linux/refcount.h
//! [`new_mutex!`]: crate::new_mutex
//! [`new_spinlock!`]: crate::new_spinlock
//! [`new_spinlock_irq!`]: crate::new_spinlock_irq
//! [`new_condvar!`]: crate::new_condvar

use crate::bindings;
use crate::init::Opaque;

mod arc;
mod condvar;
pub mod lock;
mod locked_by;
mod wait;

pub use arc::{Arc, ArcBorrow};
pub use condvar::CondVar;
pub use lock::mutex::{Mutex, MutexGuard};
pub use lock::spinlock::{irqs_disabled, SpinLock, SpinLockGuard, SpinLockIrq, SpinLockIrqGuard};
pub use lock::{Guard, Lock};
pub use locked_by::LockedBy;
pub use wait::{Sleep, WaitEntry, WaitQueue};

// ANCHOR: might_sleep
/// Says that the caller may sleep here (`might_sleep()`): on a kernel built
/// with `CONFIG_DEBUG_ATOMIC_SLEEP` (the debug kernel) a call from atomic
/// context (a spinlock held, interrupts off, an RCU read-side section, an
/// interrupt handler) prints "BUG: sleeping function called from invalid
/// context" with the stack, even when this call would not have slept. The
/// crate's sleeping functions call it first; elsewhere it only offers
/// the scheduler a chance to preempt.
///
/// Mainline's `kernel::task::might_sleep` passes the caller's file and
/// line (`#[track_caller]`); this one goes through a C helper, so the
/// report names the helper's line, and its stack names the caller.
pub fn might_sleep() {
    // SAFETY: `might_sleep()` may be called from any context: that is
    // what it checks.
    unsafe { bindings::rust_helper_might_sleep() }
}

/// [`might_sleep`] for a task that has marked itself sleeping (after
/// [`WaitQueue::prepare_to_wait`], before `schedule`): the same check of
/// the context, without `might_sleep`'s warning that the task is not
/// running.
///
/// Without `CONFIG_DEBUG_ATOMIC_SLEEP` (Debian's kernels) the check does
/// nothing, and the call to the helper is left out.
#[inline]
pub(crate) fn might_sleep_prepared() {
    // SAFETY: as for `might_sleep`.
    #[cfg(CONFIG_DEBUG_ATOMIC_SLEEP)]
    unsafe {
        bindings::rust_helper_might_sleep_prepared()
    }
}
// ANCHOR_END: might_sleep

// ANCHOR: lock_class_key
/// A lockdep lock class: every lock initialised with the same key belongs
/// to one class, and lockdep checks the order in which classes are taken.
///
/// Keys live in `static`s, one per call site of [`new_mutex!`] and its
/// siblings ([`static_lock_class!`] makes one). On a kernel without lockdep
/// (Debian's) the C struct is empty and the key costs nothing.
///
/// [`new_mutex!`]: crate::new_mutex
/// [`static_lock_class!`]: crate::static_lock_class
pub struct LockClassKey(Opaque<bindings::lock_class_key>);
// ANCHOR_END: lock_class_key

// SAFETY: lockdep only reads and writes a key under its own locks; Rust
// never touches it.
unsafe impl Sync for LockClassKey {}

impl LockClassKey {
    /// A key for a `static`: lockdep registers static keys by address.
    #[expect(clippy::new_without_default, reason = "only used in statics")]
    pub const fn new() -> Self {
        Self(Opaque::uninit())
    }

    /// The address of the C key.
    pub const fn as_raw(&self) -> *mut bindings::lock_class_key {
        self.0.as_raw()
    }
}

// ANCHOR: new_named
/// A `&'static LockClassKey` of its own for the call site.
#[macro_export]
macro_rules! static_lock_class {
    () => {{
        static CLASS: $crate::sync::LockClassKey = $crate::sync::LockClassKey::new();
        &CLASS
    }};
}

/// What every `new_*!` initialiser macro expands to: `$new($args...,
/// name, key)`, with the name given (or `file:line`) and a lock class of
/// its own for the call site.
#[doc(hidden)]
#[macro_export]
macro_rules! new_named {
    ($new:path $(, $arg:expr)*; $($name:literal)?) => {
        $new($($arg,)* $crate::optional_name!($($name)?), $crate::static_lock_class!())
    };
}
// ANCHOR_END: new_named

/// A `&'static CStr` from a string literal: `c_str!("name")`.
#[macro_export]
macro_rules! c_str {
    ($s:expr) => {{
        const S: &::core::ffi::CStr =
            match ::core::ffi::CStr::from_bytes_with_nul(::core::concat!($s, "\0").as_bytes()) {
                Ok(s) => s,
                Err(_) => ::core::panic!("c_str!: the string contains a NUL byte"),
            };
        S
    }};
}

/// The lock's name for lockdep: the one given, or `file:line`.
#[doc(hidden)]
#[macro_export]
macro_rules! optional_name {
    () => {
        $crate::c_str!(::core::concat!(::core::file!(), ":", ::core::line!()))
    };
    ($name:literal) => {
        $crate::c_str!($name)
    };
}
