//! [`WaitQueue`]: the kernel's wait queue, as safe building blocks: a
//! queue, an entry on it, and the calls that put a task to sleep on it.
//! [`CondVar`](super::CondVar) is the finished primitive; these are for
//! building one (lab 06).
//!
//! C header: [`include/linux/wait.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/wait.h)

use core::ffi::CStr;
use core::marker::{PhantomData, PhantomPinned};
use core::pin::Pin;
use core::ptr;

use super::LockClassKey;
use crate::bindings;
use crate::init::{pin_init_from_closure, Opaque, PinInit};

/// An initialiser for a [`WaitQueue`], with a lock class of its own:
/// `new_wait_queue!()` or `new_wait_queue!("name")`.
#[macro_export]
macro_rules! new_wait_queue {
    ($($name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::WaitQueue::new; $($name)?)
    };
}

// ANCHOR: wait_queue
/// A wait queue head (`struct wait_queue_head`): a list of sleeping tasks,
/// protected by its own spinlock.
///
/// # Invariants
///
/// `head` has been initialised by `__init_waitqueue_head` and never moves.
pub struct WaitQueue {
    head: Opaque<bindings::wait_queue_head>,
    _pin: PhantomPinned,
}
// ANCHOR_END: wait_queue

// SAFETY: the queue may be used from any thread; its spinlock protects it.
unsafe impl Send for WaitQueue {}
// SAFETY: as above.
unsafe impl Sync for WaitQueue {}

/// How a task sleeps: whether a signal wakes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sleep {
    /// `TASK_UNINTERRUPTIBLE`: only a wake-up ends the sleep.
    Uninterruptible,
    /// `TASK_INTERRUPTIBLE`: a wake-up or a pending signal ends it.
    Interruptible,
}

impl WaitQueue {
    // ANCHOR: new
    /// An initialiser of a wait queue; use [`new_wait_queue!`], which gives
    /// each call site its own lock class.
    ///
    /// [`new_wait_queue!`]: crate::new_wait_queue
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        let init = move |slot: *mut Self| {
            // SAFETY: the slot is valid and will not move (contract of
            // `PinInit`); the name and key are `'static`.
            unsafe {
                bindings::__init_waitqueue_head(
                    Opaque::raw_get(ptr::addr_of_mut!((*slot).head)),
                    name.as_ptr(),
                    key.as_raw(),
                )
            };
            // INVARIANT: the head is initialised in place.
            Ok(())
        };
        // SAFETY: the closure initialises the only field with data and
        // never fails.
        unsafe { pin_init_from_closure(init) }
    }
    // ANCHOR_END: new

    // ANCHOR: prepare_to_wait
    /// Puts `entry` (the current task) on the queue and sets the task's
    /// state to `sleep`: from now on a wake-up on this queue makes the task
    /// runnable again, even before it calls [`schedule`](crate::task::schedule).
    /// The entry leaves the queue when it is dropped (`finish_wait`).
    pub fn prepare_to_wait<'q>(&'q self, entry: Pin<&mut WaitEntry<'q>>, sleep: Sleep) {
        let state = match sleep {
            Sleep::Uninterruptible => bindings::RUST_CONST_HELPER_TASK_UNINTERRUPTIBLE,
            Sleep::Interruptible => bindings::RUST_CONST_HELPER_TASK_INTERRUPTIBLE,
        };
        // SAFETY: the entry is pinned, so its C struct stays where the queue
        // will point; only `queue` is written, which is not pinned.
        let entry = unsafe { entry.get_unchecked_mut() };
        match entry.queue {
            None => {
                // SAFETY: the entry is not on any queue yet.
                unsafe { bindings::init_wait_entry(entry.entry.as_raw(), 0) };
            }
            Some(queue) if !ptr::eq(queue, self) => {
                // SAFETY: the entry is on (or was on) `queue`, which outlives
                // it (`'q`).
                unsafe { bindings::finish_wait(queue.head.as_raw(), entry.entry.as_raw()) };
            }
            Some(_) => {}
        }
        // INVARIANT: `queue` is set before the entry is added to it.
        entry.queue = Some(self);
        // SAFETY: the queue is initialised (type invariant) and the entry
        // too; the entry is pinned and leaves the queue in its `Drop`.
        unsafe {
            bindings::prepare_to_wait_exclusive(self.head.as_raw(), entry.entry.as_raw(), state)
        };
    }
    // ANCHOR_END: prepare_to_wait

    /// The C `wait_queue_head`, for `poll_wait`.
    pub(crate) fn as_raw(&self) -> *mut bindings::wait_queue_head {
        self.head.as_raw()
    }

    /// Wakes one task waiting on the queue, if any.
    pub fn wake_one(&self) {
        self.wake(1);
    }

    /// Wakes every task waiting on the queue.
    pub fn wake_all(&self) {
        self.wake(0);
    }

    fn wake(&self, count: i32) {
        // SAFETY: the queue is initialised (type invariant).
        unsafe {
            bindings::__wake_up(
                self.head.as_raw(),
                bindings::RUST_CONST_HELPER_TASK_NORMAL,
                count,
                ptr::null_mut(),
            )
        };
    }
}

// ANCHOR: wait_entry
/// The current task's place on a [`WaitQueue`] (`struct
/// wait_queue_entry`). It must not move while it is on a queue, so it is
/// used pinned, typically on the stack: `let mut entry = pin!(WaitEntry::new());`
///
/// # Invariants
///
/// If `queue` is `Some`, `entry` was initialised by `init_wait_entry` and
/// may be on that queue, which outlives the entry (`'q`).
pub struct WaitEntry<'q> {
    entry: Opaque<bindings::wait_queue_entry>,
    queue: Option<&'q WaitQueue>,
    _not_send: PhantomData<*mut ()>,
}
// ANCHOR_END: wait_entry

impl WaitEntry<'_> {
    /// An entry for the current task, on no queue yet.
    #[expect(clippy::new_without_default, reason = "used pinned, with `pin!`")]
    pub const fn new() -> Self {
        // INVARIANT: `queue` is `None`.
        Self {
            entry: Opaque::uninit(),
            queue: None,
            _not_send: PhantomData,
        }
    }
}

impl Drop for WaitEntry<'_> {
    fn drop(&mut self) {
        if let Some(queue) = self.queue {
            // SAFETY: the entry was initialised and may be on `queue`, which
            // is alive (type invariant); `finish_wait` takes it off if it
            // is, and sets the task running.
            unsafe { bindings::finish_wait(queue.head.as_raw(), self.entry.as_raw()) };
        }
    }
}
