//! Lab 06: a condition variable, built from the kernel crate's wait queue.
//!
//! A thread that waits puts itself on the queue *before* it releases the
//! lock, so that a notification sent in between is not lost, then sleeps;
//! a notification wakes it; it takes the lock again and returns, and its
//! caller checks its condition again.

use core::pin::{pin, Pin};

use kernel::new_wait_queue;
use kernel::prelude::*;
use kernel::sync::{MutexGuard, Sleep, WaitEntry, WaitQueue};
use kernel::task;

// ANCHOR: condvar
/// A condition variable: threads wait on it, holding a mutex's guard,
/// until another thread notifies it.
pub(crate) struct CondVar {
    /// The tasks waiting, pinned on the heap: a wait queue must not move.
    queue: Pin<KBox<WaitQueue>>,
}
// ANCHOR_END: condvar

impl CondVar {
    /// A condition variable with no waiter; fails with `ENOMEM`.
    pub(crate) fn new() -> Result<Self> {
        Ok(CondVar {
            queue: KBox::pin_init(new_wait_queue!("lab06_condvar"), GFP_KERNEL)?,
        })
    }

    // ANCHOR: wait
    /// Releases the mutex of `guard`, sleeps until notified (or, if
    /// `sleep` is interruptible, until a signal is pending), and takes the
    /// mutex again.
    fn wait_as<T>(&self, guard: &mut MutexGuard<'_, T>, sleep: Sleep) {
        let mut entry = pin!(WaitEntry::new());
        // On the queue first, with the task marked as sleeping: a notify
        // from now on makes it runnable again, so it cannot be lost.
        self.queue.prepare_to_wait(entry.as_mut(), sleep);
        // Only then release the lock, and sleep.
        guard.do_unlocked(task::schedule);
        // `entry` is dropped here: the task leaves the queue.
    }
    // ANCHOR_END: wait

    /// Waits until notified; signals do not wake it.
    pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        self.wait_as(guard, Sleep::Uninterruptible);
    }

    // ANCHOR: wait_interruptible
    /// Waits until notified or until a signal is pending; returns `true`
    /// if a signal is pending (the caller should give up).
    pub(crate) fn wait_interruptible<T>(&self, guard: &mut MutexGuard<'_, T>) -> bool {
        self.wait_as(guard, Sleep::Interruptible);
        task::signal_pending()
    }
    // ANCHOR_END: wait_interruptible

    /// Wakes one waiter.
    pub(crate) fn notify_one(&self) {
        self.queue.wake_one();
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self) {
        self.queue.wake_all();
    }
}
