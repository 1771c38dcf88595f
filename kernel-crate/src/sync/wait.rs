//! [`WaitQueue`]: the kernel's wait queue, as safe building blocks: a
//! queue, an entry on it, and the calls that put a task to sleep on it.
//! [`CondVar`](super::CondVar) is the finished primitive; these are for
//! building one (lab 06).
//!
//! C header: [`include/linux/wait.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/wait.h)
//!
//! # An entry lives only inside [`WaitEntry::with`]
//!
//! A queued entry points at its task (`init_wait_entry` stores `current`),
//! and a wake-up calls `try_to_wake_up` on that task. An entry that stays
//! on the queue after its task has exited makes the next wake-up a
//! use-after-free of the `task_struct`. An owned, pinned entry can stay:
//! `KBox::pin` it, queue it, `mem::forget` the box (leaking is safe), and
//! its `Drop`, the `finish_wait`, never runs. So no entry is ever owned
//! outside this module: [`WaitEntry::with`] makes one on its own stack and
//! lends it to a closure as `Pin<&mut WaitEntry>`, and takes it off the
//! queue when the closure returns. A borrow cannot be leaked past its
//! owner's frame, the entry is `!Unpin` (it cannot be swapped out from
//! under the pin) and `!Send`, and the kernel never unwinds: a `panic!`
//! oopses the task, as it would with any lock held.
//!
//! Mainline Rust for Linux exposes no entry at all: its `CondVar` keeps a
//! `wait_queue_entry` on the stack of its own wait function. This crate
//! lends the entry to a closure so that lab 06 can build that function,
//! with the same guarantee.

use core::ffi::CStr;
use core::marker::{PhantomData, PhantomPinned};
use core::pin::{pin, Pin};
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
    /// The entry leaves the queue when [`WaitEntry::with`] returns
    /// (`finish_wait`). Calling it again with the same entry (in a loop,
    /// after a wake-up) puts the entry back and sets the state again.
    ///
    /// It does not sleep itself, and may be called with a spinlock held
    /// (the one the caller then releases before `schedule`); the sleep is
    /// `schedule`'s, which must not happen in atomic context.
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
        // too; the entry is pinned and leaves the queue in its `Drop`, which
        // runs when `WaitEntry::with` returns (the entry is never owned
        // outside it, so it cannot be leaked).
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
/// wait_queue_entry`). It must not move while it is on a queue, and must
/// leave the queue before its task can exit, so it exists only inside
/// [`WaitEntry::with`], pinned on that function's stack and lent to a
/// closure.
///
/// # Invariants
///
/// If `queue` is `Some`, `entry` was initialised by `init_wait_entry` and
/// may be on that queue, which outlives the entry (`'q`). Every
/// `WaitEntry` is a local of [`WaitEntry::with`], so its `Drop` runs
/// before that function returns.
pub struct WaitEntry<'q> {
    entry: Opaque<bindings::wait_queue_entry>,
    queue: Option<&'q WaitQueue>,
    _pin: PhantomPinned,
    _not_send: PhantomData<*mut ()>,
}
// ANCHOR_END: wait_entry

impl<'q> WaitEntry<'q> {
    // ANCHOR: with
    /// Runs `f` with an entry for the current task, on no queue yet, and
    /// takes the entry off its queue (`finish_wait`, which also sets the
    /// task running) when `f` returns:
    ///
    /// ```rust
    /// # use kernel::new_wait_queue;
    /// # use kernel::sync::{Sleep, WaitEntry};
    /// # let queue = KBox::pin_init(new_wait_queue!(), GFP_KERNEL)?;
    /// # let done = true;
    /// WaitEntry::with(|entry| {
    ///     queue.prepare_to_wait(entry, Sleep::Interruptible);
    ///     if !done {
    ///         kernel::task::schedule();
    ///     }
    /// });
    /// ```
    ///
    /// The entry is borrowed, never owned: it cannot leave the closure,
    /// so no program can leave it on a queue after its task is gone.
    ///
    /// # Context
    ///
    /// `f` is where the task sleeps (`schedule`): call this only where
    /// sleeping is allowed once `f` has released any spinlock it holds.
    pub fn with<R>(f: impl FnOnce(Pin<&mut WaitEntry<'q>>) -> R) -> R {
        // INVARIANT: `queue` is `None`; the entry is a local of this
        // function, dropped before it returns.
        let mut entry = pin!(WaitEntry {
            entry: Opaque::uninit(),
            queue: None,
            _pin: PhantomPinned,
            _not_send: PhantomData,
        });
        f(entry.as_mut())
    }
    // ANCHOR_END: with
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
