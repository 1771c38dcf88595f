//! Lab 06: a condition variable, built from the kernel crate's wait queue.
//!
// TODO-BEGIN
//! A thread that waits puts itself on the queue *before* it releases the
//! lock, so that a notification sent in between is not lost, then sleeps;
//! a notification wakes it; it takes the lock again and returns, and its
//! caller checks its condition again.
// TODO-ELSE
// //! The pieces (the book's chapter "Condition variables" explains them):
// //!
// //! - `kernel::sync::WaitQueue`, made in place on the heap with
// //!   `KBox::pin_init(new_wait_queue!("lab06_condvar"), GFP_KERNEL)?`;
// //! - `kernel::sync::WaitEntry`, the current task's place on a queue, which
// //!   exists only inside `WaitEntry::with(|entry| ...)`: it is put on the
// //!   queue by `queue.prepare_to_wait(entry, sleep)` and taken off when the
// //!   closure returns;
// //! - `guard.do_unlocked(f)` releases a mutex, runs `f` and takes the mutex
// //!   again; `kernel::task::schedule` sleeps; `kernel::task::signal_pending`
// //!   tells whether a signal is pending.
// //!
// //! The order matters: a notification must not be lost between the moment
// //! the waiter releases the lock and the moment it sleeps.
// //!
// //! The placeholders below (an `Infallible` field: a value that cannot
// //! exist) only keep the skeleton compiling; `new` fails until you replace
// //! them.
// TODO-END

// TODO-BEGIN
use core::pin::Pin;
// TODO-ELSE
// use core::convert::Infallible;
// TODO-END

// TODO-BEGIN
use kernel::new_wait_queue;
// TODO-END
use kernel::prelude::*;
// TODO-BEGIN
use kernel::sync::{MutexGuard, Sleep, WaitEntry, WaitQueue};
use kernel::task;
// TODO-ELSE
// use kernel::sync::MutexGuard;
// TODO-END

// ANCHOR: condvar
// ANCHOR: todo
/// A condition variable: threads wait on it, holding a mutex's guard,
/// until another thread notifies it.
pub(crate) struct CondVar {
    // TODO-BEGIN
    /// The tasks waiting, pinned on the heap: a wait queue must not move.
    queue: Pin<KBox<WaitQueue>>,
    // TODO-ELSE
    // // TODO: the wait queue, pinned on the heap.
    // todo: Infallible,
    // TODO-END
}
// ANCHOR_END: condvar

impl CondVar {
    /// A condition variable with no waiter; fails with `ENOMEM`.
    pub(crate) fn new() -> Result<Self> {
        // TODO-BEGIN
        Ok(CondVar {
            queue: KBox::pin_init(new_wait_queue!("lab06_condvar"), GFP_KERNEL)?,
        })
        // TODO-ELSE
        // // TODO
        // Err(ENOSYS)
        // TODO-END
    }
    // TODO-BEGIN

    // ANCHOR: wait
    /// Releases the mutex of `guard`, sleeps until notified (or, if
    /// `sleep` is interruptible, until a signal is pending), and takes the
    /// mutex again.
    fn wait_as<T>(&self, guard: &mut MutexGuard<'_, T>, sleep: Sleep) {
        WaitEntry::with(|entry| {
            // On the queue first, with the task marked as sleeping: a
            // notify from now on makes it runnable again, so it cannot be
            // lost.
            self.queue.prepare_to_wait(entry, sleep);
            // Only then release the lock, and sleep.
            guard.do_unlocked(task::schedule);
        });
        // `with` has returned: the task has left the queue.
    }
    // ANCHOR_END: wait
    // TODO-ELSE
    // // ANCHOR_END: todo
    // TODO-END

    /// Waits until notified; signals do not wake it.
    pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        // TODO-BEGIN
        self.wait_as(guard, Sleep::Uninterruptible);
        // TODO-ELSE
        // // TODO: on the queue, release the lock, sleep, leave the queue.
        // let _ = guard;
        // match self.todo {}
        // TODO-END
    }

    // ANCHOR: wait_interruptible
    /// Waits until notified or until a signal is pending; returns `true`
    /// if a signal is pending (the caller should give up).
    pub(crate) fn wait_interruptible<T>(&self, guard: &mut MutexGuard<'_, T>) -> bool {
        // TODO-BEGIN
        self.wait_as(guard, Sleep::Interruptible);
        task::signal_pending()
        // TODO-ELSE
        // // TODO
        // let _ = guard;
        // match self.todo {}
        // TODO-END
    }
    // ANCHOR_END: wait_interruptible

    /// Wakes one waiter.
    pub(crate) fn notify_one(&self) {
        // TODO-BEGIN
        self.queue.wake_one();
        // TODO-ELSE
        // // TODO
        // match self.todo {}
        // TODO-END
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self) {
        // TODO-BEGIN
        self.queue.wake_all();
        // TODO-ELSE
        // // TODO
        // match self.todo {}
        // TODO-END
    }
}
