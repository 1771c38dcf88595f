//! [`CondVar`]: a condition variable, built on the crate's [`WaitQueue`].
//!
//! C header: [`include/linux/wait.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/wait.h)

use core::ffi::CStr;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, Ordering};

use super::lock::{Backend, Guard};
use super::wait::{Sleep, WaitEntry, WaitQueue};
use super::LockClassKey;
use crate::bindings;
use crate::init::PinInit;

/// An initialiser for a [`CondVar`], with a lock class of its own (for the
/// wait queue's spinlock): `new_condvar!()` or `new_condvar!("name")`.
#[macro_export]
macro_rules! new_condvar {
    ($($name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::CondVar::new; $($name)?)
    };
}

// ANCHOR: condvar
/// A condition variable: a thread waits on it, holding a lock's guard,
/// until another thread notifies it.
///
/// Waiting releases the lock while the thread sleeps and takes it again
/// before returning. A wake-up says "look again", not "the condition
/// holds": callers wait in a loop that checks their condition.
///
/// ```rust
/// # struct Shared {
/// #     ready: Mutex<bool>,
/// #     changed: CondVar,
/// # }
/// # let shared = Arc::pin_init(
/// #     pin_init!(Shared { ready <- new_mutex!(true), changed <- new_condvar!() }),
/// #     GFP_KERNEL,
/// # )?;
/// let mut ready = shared.ready.lock();
/// while !*ready {
///     if shared.changed.wait_interruptible(&mut ready) {
///         return Err(EINTR); // a signal is pending
///     }
/// }
/// ```
///
/// # Invariants
///
/// If `polled` is false, the queue was never given to `poll_wait` (see
/// `CondVar::poll_head`).
pub struct CondVar {
    /// The waiting tasks; pinned with the condition variable.
    queue: WaitQueue,
    polled: AtomicBool,
}
// ANCHOR_END: condvar

impl CondVar {
    /// An initialiser of a condition variable; use [`new_condvar!`], which
    /// gives each call site its own lock class.
    ///
    /// [`new_condvar!`]: crate::new_condvar
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        // INVARIANT: nothing has polled the new queue yet.
        crate::pin_init!(CondVar {
            queue <- WaitQueue::new(name, key),
            polled <- AtomicBool::new(false),
        })
    }

    /// The wait queue head, for `poll_wait` ([`crate::file::PollTable`]).
    ///
    /// An epoll instance keeps the entry that `poll_wait` adds until the
    /// file is closed or removed from it, which may be after this condition
    /// variable is gone: once this is called, `Drop` tells epoll to let go
    /// of the queue first.
    pub(crate) fn poll_head(&self) -> *mut bindings::wait_queue_head {
        // INVARIANT: set before the queue can be handed to `poll_wait`.
        self.polled.store(true, Ordering::Relaxed);
        self.queue.as_raw()
    }

    // ANCHOR: wait_internal
    fn wait_internal<T: ?Sized, B: Backend>(&self, sleep: Sleep, guard: &mut Guard<'_, T, B>) {
        let mut entry = pin!(WaitEntry::new());
        // On the queue, with the task marked sleeping, *before* the lock
        // is released: a notification sent between the unlock and
        // `schedule` is not lost, it makes the task runnable again and
        // `schedule` returns at once.
        self.queue.prepare_to_wait(entry.as_mut(), sleep);
        guard.do_unlocked(crate::task::schedule);
        // Dropping `entry` takes the task off the queue (`finish_wait`).
    }
    // ANCHOR_END: wait_internal

    /// Releases the lock of `guard`, sleeps until notified, and takes the
    /// lock again. Signals do not wake it.
    pub fn wait<T: ?Sized, B: Backend>(&self, guard: &mut Guard<'_, T, B>) {
        self.wait_internal(Sleep::Uninterruptible, guard);
    }

    /// Like [`wait`](CondVar::wait), but a signal wakes it too. Returns
    /// `true` if a signal is pending: the caller should give up (typically
    /// with `EINTR`) rather than wait again.
    pub fn wait_interruptible<T: ?Sized, B: Backend>(&self, guard: &mut Guard<'_, T, B>) -> bool {
        self.wait_internal(Sleep::Interruptible, guard);
        crate::task::signal_pending()
    }

    /// Wakes one waiter, if any.
    pub fn notify_one(&self) {
        self.queue.wake_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.queue.wake_all();
    }
}

impl Drop for CondVar {
    fn drop(&mut self) {
        if !*self.polled.get_mut() {
            return;
        }
        // SAFETY: the queue is initialised (`WaitQueue`'s invariant). Waking it with
        // `POLLFREE` makes every epoll entry on it leave the queue; epoll
        // readers that saw the queue before hold the RCU read lock, and
        // `synchronize_rcu` waits for them, so nothing touches the queue
        // after this returns (the RFC's `PollCondVar` does the same).
        unsafe {
            bindings::__wake_up_pollfree(self.queue.as_raw());
            bindings::synchronize_rcu();
        }
    }
}
