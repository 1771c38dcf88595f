//! Lab 05: a mutex whose data is reachable only through its guard.
//!
//! Build it from two safe pieces of the kernel crate (the book's chapter
//! "Locks, guards and pinning" explains both):
//!
//! - a kernel mutex that protects nothing itself, `kernel::sync::Mutex<()>`,
//!   made in place on the heap with
//!   `KBox::pin_init(new_mutex!((), "lab05_mutex"), GFP_KERNEL)?`; it must
//!   never move, and a `Pin<KBox<_>>` can be moved without moving it;
//! - a `kernel::sync::LockedBy<T, kernel::sync::Mutex<()>>`, which holds the
//!   value and hands it out only to the holder of that mutex's guard
//!   (`access(&guard)`, `access_mut(&mut guard)`).
//!
//! The placeholders below (an `Infallible` field: a value that cannot
//! exist) only keep the skeleton compiling; `new` fails until you replace
//! them.

use core::convert::Infallible;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};

use kernel::prelude::*;

// ANCHOR: mutex
// ANCHOR: todo
/// A value protected by a kernel mutex.
pub(crate) struct Mutex<T> {
    // TODO: the kernel mutex (pinned on the heap) and the value (in a
    // `LockedBy` of that mutex).
    todo: Infallible,
    _value: PhantomData<T>,
}
// ANCHOR_END: mutex

impl<T> Mutex<T> {
    // ANCHOR: new
    /// A mutex holding `value`; fails with `ENOMEM`.
    pub(crate) fn new(value: T) -> Result<Self> {
        // TODO: make the kernel mutex, then the `LockedBy` that it protects.
        let _ = value;
        Err(ENOSYS)
    }
    // ANCHOR_END: new

    // ANCHOR: lock
    /// Takes the mutex, sleeping until it is free, and returns the guard
    /// through which the value is reached.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        // TODO: lock the kernel mutex and keep its guard in yours.
        match self.todo {}
    }
    // ANCHOR_END: lock
}

// ANCHOR: guard
/// Proof that the mutex is held: the only way to its value. The mutex is
/// released when the guard is dropped.
pub(crate) struct MutexGuard<'a, T> {
    // TODO: what the guard needs to reach the value: the kernel mutex's
    // guard, and the `LockedBy`.
    todo: Infallible,
    _value: PhantomData<&'a mut T>,
}
// ANCHOR_END: guard
// ANCHOR_END: todo

// ANCHOR: deref
impl<T: Sync> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // TODO: the value, through the `LockedBy` and the kernel guard.
        match self.todo {}
    }
}

impl<T: Sync> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // TODO: the value, mutable.
        match self.todo {}
    }
}
// ANCHOR_END: deref
