//! Lab 05: a mutex whose data is reachable only through its guard.
//!
//! Built from two safe pieces of the kernel crate: a kernel mutex that
//! protects nothing itself (`kernel::sync::Mutex<()>`), kept on the heap so
//! that it never moves, and a `LockedBy`, which holds the data and gives it
//! only to the holder of that mutex's guard.

use core::ops::{Deref, DerefMut};
use core::pin::Pin;

use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{self, LockedBy};

// ANCHOR: mutex
/// A value protected by a kernel mutex.
pub(crate) struct Mutex<T> {
    /// The kernel mutex, pinned on the heap: it must not move once
    /// initialised, and a `Pin<KBox<_>>` can be moved without moving it.
    lock: Pin<KBox<sync::Mutex<()>>>,
    /// The value, reachable only with a guard of `lock`.
    data: LockedBy<T, sync::Mutex<()>>,
}
// ANCHOR_END: mutex

impl<T> Mutex<T> {
    // ANCHOR: new
    /// A mutex holding `value`; fails with `ENOMEM`.
    pub(crate) fn new(value: T) -> Result<Self> {
        let lock = KBox::pin_init(new_mutex!((), "lab05_mutex"), GFP_KERNEL)?;
        let data = LockedBy::new(&lock, value);
        Ok(Mutex { lock, data })
    }
    // ANCHOR_END: new

    // ANCHOR: lock
    /// Takes the mutex, sleeping until it is free, and returns the guard
    /// through which the value is reached.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard {
            data: &self.data,
            held: self.lock.lock(),
        }
    }
    // ANCHOR_END: lock
}

// ANCHOR: guard
/// Proof that the mutex is held: the only way to its value. The mutex is
/// released when the guard is dropped (when `held` is).
pub(crate) struct MutexGuard<'a, T> {
    data: &'a LockedBy<T, sync::Mutex<()>>,
    held: sync::MutexGuard<'a, ()>,
}
// ANCHOR_END: guard

// ANCHOR: deref
impl<T: Sync> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.data.access(&self.held)
    }
}

impl<T: Sync> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.data.access_mut(&mut self.held)
    }
}
// ANCHOR_END: deref
