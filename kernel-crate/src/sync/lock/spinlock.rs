//! [`SpinLock`] and [`SpinLockIrq`] over `spinlock_t`.
//!
//! C header: [`include/linux/spinlock.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/spinlock.h)

use core::ffi::{c_char, c_ulong};

use super::Backend;
use crate::bindings;

/// A lock that spins while it waits, with preemption disabled while it is
/// held: code holding it must not sleep.
pub type SpinLock<T> = super::Lock<T, SpinLockBackend>;

/// The guard of a [`SpinLock`].
pub type SpinLockGuard<'a, T> = super::Guard<'a, T, SpinLockBackend>;

/// A [`SpinLock`] that also disables interrupts on this CPU while held
/// (`spin_lock_irqsave`): for data an interrupt handler shares.
pub type SpinLockIrq<T> = super::Lock<T, SpinLockIrqBackend>;

/// The guard of a [`SpinLockIrq`]; it restores the interrupt state it
/// saved when dropped.
pub type SpinLockIrqGuard<'a, T> = super::Guard<'a, T, SpinLockIrqBackend>;

/// An initialiser for a [`SpinLock`] holding `$value`, with a lock class
/// of its own: `new_spinlock!(0)` or `new_spinlock!(0, "name")`.
#[macro_export]
macro_rules! new_spinlock {
    ($value:expr $(, $name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::SpinLock::new, $value; $($name)?)
    };
}

/// An initialiser for a [`SpinLockIrq`] holding `$value`, with a lock
/// class of its own.
#[macro_export]
macro_rules! new_spinlock_irq {
    ($value:expr $(, $name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::SpinLockIrq::new, $value; $($name)?)
    };
}

// `spin_lock` gives exclusive ownership until `spin_unlock`.
plain_backend!(
    /// The [`Backend`] of [`SpinLock`]: `spin_lock` and `spin_unlock`.
    SpinLockBackend,
    bindings::spinlock_t,
    init: bindings::rust_helper_spin_lock_init,
    lock: bindings::rust_helper_spin_lock,
    unlock: bindings::rust_helper_spin_unlock
);

/// The [`Backend`] of [`SpinLockIrq`]: `spin_lock_irqsave` and
/// `spin_unlock_irqrestore`.
pub struct SpinLockIrqBackend;

// SAFETY: `spin_lock_irqsave` gives exclusive ownership until
// `spin_unlock_irqrestore`.
unsafe impl Backend for SpinLockIrqBackend {
    type State = bindings::spinlock_t;
    type GuardState = c_ulong;

    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key) {
        // SAFETY: the caller's guarantees are those of `SpinLockBackend::init`.
        unsafe { SpinLockBackend::init(ptr, name, key) };
    }

    unsafe fn lock(ptr: *mut Self::State) -> c_ulong {
        // SAFETY: the caller guarantees that the lock is initialised.
        unsafe { bindings::rust_helper_spin_lock_irqsave(ptr) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &c_ulong) {
        // SAFETY: the caller guarantees that this thread holds the lock,
        // taken with the flags it saved.
        unsafe { bindings::rust_helper_spin_unlock_irqrestore(ptr, *flags) };
    }
}
