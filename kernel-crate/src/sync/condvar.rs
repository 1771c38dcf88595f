//! [`CondVar`]: a condition variable over a wait queue.
//!
//! C header: [`include/linux/wait.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/wait.h)

use core::ffi::CStr;
use core::marker::PhantomPinned;
use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering};

use super::lock::{Backend, Guard};
use super::LockClassKey;
use crate::bindings;
use crate::init::{pin_init_from_closure, Opaque, PinInit};

/// An initialiser for a [`CondVar`], with a lock class of its own (for the
/// wait queue's spinlock): `new_condvar!()` or `new_condvar!("name")`.
#[macro_export]
macro_rules! new_condvar {
    ($($name:literal)? $(,)?) => {
        $crate::sync::CondVar::new(
            $crate::optional_name!($($name)?),
            $crate::static_lock_class!(),
        )
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
/// `wait_queue_head` has been initialised by `__init_waitqueue_head` and
/// never moves. If `polled` is false, the queue was never given to
/// `poll_wait` (see `CondVar::poll_head`).
pub struct CondVar {
    wait_queue_head: Opaque<bindings::wait_queue_head>,
    polled: AtomicBool,
    _pin: PhantomPinned,
}
// ANCHOR_END: condvar

// SAFETY: the wait queue may be used from any thread; its own spinlock
// protects it.
unsafe impl Send for CondVar {}
// SAFETY: as above.
unsafe impl Sync for CondVar {}

impl CondVar {
    /// An initialiser of a condition variable; use [`new_condvar!`], which
    /// gives each call site its own lock class.
    ///
    /// [`new_condvar!`]: crate::new_condvar
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        let init = move |slot: *mut Self| {
            // SAFETY: the slot is valid and will not move (contract of
            // `PinInit`); the name and key are `'static`.
            unsafe {
                bindings::__init_waitqueue_head(
                    Opaque::raw_get(ptr::addr_of_mut!((*slot).wait_queue_head)),
                    name.as_ptr(),
                    key.as_ptr(),
                );
                ptr::addr_of_mut!((*slot).polled).write(AtomicBool::new(false));
            };
            // INVARIANT: the wait queue head is initialised in place, and
            // nothing has polled it yet.
            Ok(())
        };
        // SAFETY: the closure initialises both fields with data and never
        // fails.
        unsafe { pin_init_from_closure(init) }
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
        self.wait_queue_head.get()
    }

    // ANCHOR: wait_internal
    fn wait_internal<T: ?Sized, B: Backend>(&self, state: u32, guard: &mut Guard<'_, T, B>) {
        // The entry lives on this stack frame and does not move until
        // `finish_wait` has taken it off the queue.
        let wait = Opaque::<bindings::wait_queue_entry>::uninit();
        // SAFETY: `wait` is valid for writes; it is not on any queue yet.
        unsafe { bindings::init_wait_entry(wait.get(), 0) };
        // SAFETY: both are initialised; `prepare_to_wait_exclusive` sets the
        // task state *before* the lock is released, so a notification sent
        // between the unlock and `schedule` is not lost: it makes the task
        // runnable again and `schedule` returns at once.
        unsafe {
            bindings::prepare_to_wait_exclusive(self.wait_queue_head.get(), wait.get(), state as _)
        };
        // SAFETY: `schedule` may be called from any sleepable context; the
        // caller's lock is released around it.
        guard.do_unlocked(|| unsafe { bindings::schedule() });
        // SAFETY: the entry was added by `prepare_to_wait_exclusive` above.
        unsafe { bindings::finish_wait(self.wait_queue_head.get(), wait.get()) };
    }
    // ANCHOR_END: wait_internal

    /// Releases the lock of `guard`, sleeps until notified, and takes the
    /// lock again. Signals do not wake it.
    pub fn wait<T: ?Sized, B: Backend>(&self, guard: &mut Guard<'_, T, B>) {
        self.wait_internal(bindings::RUST_CONST_HELPER_TASK_UNINTERRUPTIBLE, guard);
    }

    /// Like [`wait`](CondVar::wait), but a signal wakes it too. Returns
    /// `true` if a signal is pending: the caller should give up (typically
    /// with `EINTR`) rather than wait again.
    pub fn wait_interruptible<T: ?Sized, B: Backend>(&self, guard: &mut Guard<'_, T, B>) -> bool {
        self.wait_internal(bindings::RUST_CONST_HELPER_TASK_INTERRUPTIBLE, guard);
        crate::task::signal_pending()
    }

    fn notify(&self, count: i32) {
        // SAFETY: the wait queue is initialised (type invariant).
        unsafe {
            bindings::__wake_up(
                self.wait_queue_head.get(),
                bindings::RUST_CONST_HELPER_TASK_NORMAL,
                count,
                ptr::null_mut(),
            )
        };
    }

    /// Wakes one waiter, if any.
    pub fn notify_one(&self) {
        self.notify(1);
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.notify(0);
    }
}

impl Drop for CondVar {
    fn drop(&mut self) {
        if !*self.polled.get_mut() {
            return;
        }
        // SAFETY: the queue is initialised (type invariant). Waking it with
        // `POLLFREE` makes every epoll entry on it leave the queue; epoll
        // readers that saw the queue before hold the RCU read lock, and
        // `synchronize_rcu` waits for them, so nothing touches the queue
        // after this returns (the RFC's `PollCondVar` does the same).
        unsafe {
            bindings::__wake_up_pollfree(self.wait_queue_head.get());
            bindings::synchronize_rcu();
        }
    }
}
