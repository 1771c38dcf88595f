//! [`CondVar`]: a condition variable, built on the crate's [`WaitQueue`].
//!
//! C header: [`include/linux/wait.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/wait.h)

use core::ffi::CStr;

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
/// A `poll` may leave its waiters on the queue after it returns
/// ([`crate::file::PollTable`]); it only takes a condition variable that
/// the polled file's state owns, which outlives them, so dropping a
/// `CondVar` has nothing to tell pollers and never sleeps (mainline's
/// `PollCondVar` wakes them with `POLLFREE` and waits for an RCU grace
/// period instead).
pub struct CondVar {
    /// The waiting tasks; pinned with the condition variable.
    queue: WaitQueue,
}
// ANCHOR_END: condvar

impl CondVar {
    /// An initialiser of a condition variable; use [`new_condvar!`], which
    /// gives each call site its own lock class.
    ///
    /// [`new_condvar!`]: crate::new_condvar
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        crate::pin_init!(CondVar {
            queue <- WaitQueue::new(name, key),
        })
    }

    /// The wait queue head, for `poll_wait`. [`crate::file::PollTable`]
    /// only takes a condition variable that outlives the entries that
    /// pollers leave on it.
    pub(crate) fn poll_head(&self) -> *mut bindings::wait_queue_head {
        self.queue.as_raw()
    }

    // ANCHOR: wait_internal
    fn wait_internal<T: ?Sized, B: Backend>(&self, sleep: Sleep, guard: &mut Guard<'_, T, B>) {
        WaitEntry::with(|entry| {
            // On the queue, with the task marked sleeping, *before* the
            // lock is released: a notification sent between the unlock and
            // `schedule` is not lost, it makes the task runnable again and
            // `schedule` returns at once.
            self.queue.prepare_to_wait(entry, sleep);
            guard.do_unlocked(|| {
                // With the guard's own lock released, nothing may keep the
                // task atomic: the debug kernel says so here, even if a
                // notification came first and `schedule` would not sleep.
                super::might_sleep_prepared();
                crate::task::schedule();
            });
        });
        // `with` has taken the task off the queue (`finish_wait`).
    }
    // ANCHOR_END: wait_internal

    /// Releases the lock of `guard`, sleeps until notified, and takes the
    /// lock again. Signals do not wake it.
    ///
    /// # Context
    ///
    /// This function sleeps: the guard's lock may be a spinlock (it is
    /// released while the task sleeps), but no other spinlock may be held,
    /// nor may it be called with interrupts off or in an interrupt
    /// handler. The debug kernel reports such a call.
    pub fn wait<T: ?Sized, B: Backend>(&self, guard: &mut Guard<'_, T, B>) {
        self.wait_internal(Sleep::Uninterruptible, guard);
    }

    /// Like [`wait`](CondVar::wait), but a signal wakes it too. Returns
    /// `true` if a signal is pending: the caller should give up (typically
    /// with `EINTR`) rather than wait again.
    ///
    /// # Context
    ///
    /// This function sleeps, as [`wait`](CondVar::wait) does.
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
