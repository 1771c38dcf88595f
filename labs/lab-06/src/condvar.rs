//! Lab 06: a condition variable, built from the kernel crate's wait queue.
//!
//! The pieces (the book's chapter "Condition variables" explains them):
//!
//! - `kernel::sync::WaitQueue`, made in place on the heap with
//!   `KBox::pin_init(new_wait_queue!("lab06_condvar"), GFP_KERNEL)?`;
//! - `kernel::sync::WaitEntry`, the current task's place on a queue, which
//!   exists only inside `WaitEntry::with(|entry| ...)`: it is put on the
//!   queue by `queue.prepare_to_wait(entry, sleep)` and taken off when the
//!   closure returns;
//! - `guard.do_unlocked(f)` releases a mutex, runs `f` and takes the mutex
//!   again; `kernel::task::schedule` sleeps; `kernel::task::signal_pending`
//!   tells whether a signal is pending.
//!
//! The order matters: a notification must not be lost between the moment
//! the waiter releases the lock and the moment it sleeps.
//!
//! The placeholders below (an `Infallible` field: a value that cannot
//! exist) only keep the skeleton compiling; `new` fails until you replace
//! them.

use core::convert::Infallible;

use kernel::prelude::*;
use kernel::sync::MutexGuard;

// ANCHOR: condvar
// ANCHOR: todo
/// A condition variable: threads wait on it, holding a mutex's guard,
/// until another thread notifies it.
pub(crate) struct CondVar {
    // TODO: the wait queue, pinned on the heap.
    todo: Infallible,
}
// ANCHOR_END: condvar

impl CondVar {
    /// A condition variable with no waiter; fails with `ENOMEM`.
    pub(crate) fn new() -> Result<Self> {
        // TODO
        Err(ENOSYS)
    }
    // ANCHOR_END: todo

    /// Waits until notified; signals do not wake it.
    pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        // TODO: on the queue, release the lock, sleep, leave the queue.
        let _ = guard;
        match self.todo {}
    }

    // ANCHOR: wait_interruptible
    /// Waits until notified or until a signal is pending; returns `true`
    /// if a signal is pending (the caller should give up).
    pub(crate) fn wait_interruptible<T>(&self, guard: &mut MutexGuard<'_, T>) -> bool {
        // TODO
        let _ = guard;
        match self.todo {}
    }
    // ANCHOR_END: wait_interruptible

    /// Wakes one waiter.
    pub(crate) fn notify_one(&self) {
        // TODO
        match self.todo {}
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self) {
        // TODO
        match self.todo {}
    }
}
