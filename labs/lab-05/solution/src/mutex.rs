//! Lab 05: a mutex whose data is reachable only through its guard.
//!
// TODO-BEGIN
//! Built from two safe pieces of the kernel crate: a kernel mutex that
//! protects nothing itself (`kernel::sync::Mutex<()>`), kept on the heap so
//! that it never moves, and a `LockedBy`, which holds the data and gives it
//! only to the holder of that mutex's guard.
// TODO-ELSE
// //! Build it from two safe pieces of the kernel crate (the book's chapter
// //! "Locks, guards and pinning" explains both):
// //!
// //! - a kernel mutex that protects nothing itself, `kernel::sync::Mutex<()>`,
// //!   made in place on the heap with
// //!   `KBox::pin_init(new_mutex!((), "lab05_mutex"), GFP_KERNEL)?`; it must
// //!   never move, and a `Pin<KBox<_>>` can be moved without moving it;
// //! - a `kernel::sync::LockedBy<T, kernel::sync::Mutex<()>>`, which holds the
// //!   value and hands it out only to the holder of that mutex's guard
// //!   (`access(&guard)`, `access_mut(&mut guard)`).
// //!
// //! The placeholders below (an `Infallible` field: a value that cannot
// //! exist) only keep the skeleton compiling; `new` fails until you replace
// //! them.
// TODO-END

// TODO-BEGIN
// TODO-ELSE
// use core::convert::Infallible;
// use core::marker::PhantomData;
// TODO-END
use core::ops::{Deref, DerefMut};
// TODO-BEGIN
use core::pin::Pin;
// TODO-END

// TODO-BEGIN
use kernel::new_mutex;
// TODO-END
use kernel::prelude::*;
// TODO-BEGIN
use kernel::sync::{self, LockedBy};
// TODO-END

// ANCHOR: mutex
// ANCHOR: todo
/// A value protected by a kernel mutex.
pub(crate) struct Mutex<T> {
    // TODO-BEGIN
    /// The kernel mutex, pinned on the heap: it must not move once
    /// initialised, and a `Pin<KBox<_>>` can be moved without moving it.
    lock: Pin<KBox<sync::Mutex<()>>>,
    /// The value, reachable only with a guard of `lock`.
    data: LockedBy<T, sync::Mutex<()>>,
    // TODO-ELSE
    // // TODO: the kernel mutex (pinned on the heap) and the value (in a
    // // `LockedBy` of that mutex).
    // todo: Infallible,
    // _value: PhantomData<T>,
    // TODO-END
}
// ANCHOR_END: mutex

impl<T> Mutex<T> {
    // ANCHOR: new
    /// A mutex holding `value`; fails with `ENOMEM`.
    pub(crate) fn new(value: T) -> Result<Self> {
        // TODO-BEGIN
        let lock = KBox::pin_init(new_mutex!((), "lab05_mutex"), GFP_KERNEL)?;
        let data = LockedBy::new(&lock, value);
        Ok(Mutex { lock, data })
        // TODO-ELSE
        // // TODO: make the kernel mutex, then the `LockedBy` that it protects.
        // let _ = value;
        // Err(ENOSYS)
        // TODO-END
    }
    // ANCHOR_END: new

    // ANCHOR: lock
    /// Takes the mutex, sleeping until it is free, and returns the guard
    /// through which the value is reached.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        // TODO-BEGIN
        MutexGuard {
            data: &self.data,
            held: self.lock.lock(),
        }
        // TODO-ELSE
        // // TODO: lock the kernel mutex and keep its guard in yours.
        // match self.todo {}
        // TODO-END
    }
    // ANCHOR_END: lock
}

// ANCHOR: guard
/// Proof that the mutex is held: the only way to its value. The mutex is
// TODO-BEGIN
/// released when the guard is dropped (when `held` is).
// TODO-ELSE
// /// released when the guard is dropped.
// TODO-END
pub(crate) struct MutexGuard<'a, T> {
    // TODO-BEGIN
    data: &'a LockedBy<T, sync::Mutex<()>>,
    held: sync::MutexGuard<'a, ()>,
    // TODO-ELSE
    // // TODO: what the guard needs to reach the value: the kernel mutex's
    // // guard, and the `LockedBy`.
    // todo: Infallible,
    // _value: PhantomData<&'a mut T>,
    // TODO-END
}
// ANCHOR_END: guard
// ANCHOR_END: todo

// ANCHOR: deref
impl<T: Sync> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // TODO-BEGIN
        self.data.access(&self.held)
        // TODO-ELSE
        // // TODO: the value, through the `LockedBy` and the kernel guard.
        // match self.todo {}
        // TODO-END
    }
}

impl<T: Sync> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // TODO-BEGIN
        self.data.access_mut(&mut self.held)
        // TODO-ELSE
        // // TODO: the value, mutable.
        // match self.todo {}
        // TODO-END
    }
}
// ANCHOR_END: deref
