//! Tasks (`struct task_struct`): the current one, counted references that
//! keep one alive, its ids and credentials; and the current task's
//! scheduling and signals.
//!
//! C headers: [`include/linux/sched.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/sched.h),
//! [`include/linux/sched/task.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/sched/task.h),
//! [`include/linux/sched/signal.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/sched/signal.h),
//! [`include/linux/cred.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/cred.h).
//!
//! Kernel threads that run a closure are [`crate::kthread::KThread`].

use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr::NonNull;

use crate::bindings;
use crate::cred::Credential;
use crate::init::Opaque;

// ANCHOR: task
/// A task: a thread of a user process, or a kernel thread. Only ever
/// borrowed: [`Task::current`] lends the current one, a [`TaskRef`] keeps
/// one alive.
///
/// ```rust
/// # use kernel::task::{Task, TaskRef};
/// let current = Task::current();
/// // A counted reference outlives the guard; `current` only lends.
/// let leader = TaskRef::from(current.group_leader());
/// if leader.pid() != current.tgid() || leader.euid() != current.cred().euid() {
///     return Err(EINVAL);
/// }
/// ```
///
/// # Invariants
///
/// A `&Task` points at a `struct task_struct` that stays allocated (its
/// usage count is held, or it is the running task) for as long as the
/// reference lives.
#[repr(transparent)]
pub struct Task(Opaque<bindings::task_struct>);
// ANCHOR_END: task

// SAFETY: `&Task` only reads ids fixed when the task was made, and its
// credentials under RCU, which any thread may do.
unsafe impl Sync for Task {}

/// Two references are equal when they are the same task (C compares
/// `task_struct` pointers).
impl PartialEq for Task {
    fn eq(&self, other: &Task) -> bool {
        core::ptr::eq(self, other)
    }
}

impl Eq for Task {}

impl Task {
    /// The task that runs this code (C's `current`), lent for as long as
    /// the returned guard lives in this thread.
    pub fn current() -> CurrentTask {
        // SAFETY: `current` is always a valid task.
        let task = unsafe { bindings::rust_helper_get_current() };
        // INVARIANT: the running task is alive while it runs, and the
        // guard cannot leave its thread.
        CurrentTask {
            // SAFETY: `current` is never null.
            task: unsafe { NonNull::new_unchecked(task.cast::<Task>()) },
            _not_send: PhantomData,
        }
    }

    fn as_raw(&self) -> *mut bindings::task_struct {
        self.0.as_raw()
    }

    // The pid and tgid are set at fork and read as one word; the helpers
    // look the namespaced tgid and the credentials up under RCU.
    raw_getters! {
        /// The thread id (`task->pid`, what `gettid(2)` returns in the initial
        /// pid namespace).
        fn pid() -> i32 = rust_helper_task_pid;
        /// The process id (`task->tgid`: the pid of its thread group's leader).
        fn tgid() -> i32 = rust_helper_task_tgid;
        /// The process id as the current task's pid namespace sees it
        /// (`task_tgid_nr_ns(task, task_active_pid_ns(current))`); 0 if the
        /// task is not visible there or has exited.
        fn tgid_in_current_ns() -> i32 = rust_helper_task_tgid_in_current_ns;
        /// The effective user id (`task_euid`: of the task's own credentials),
        /// as the current task's user namespace sees it.
        fn euid() -> u32 = rust_helper_task_euid;
    }

    /// The task's credentials (`get_task_cred`), counted.
    pub fn cred(&self) -> Credential {
        // SAFETY: the task is alive (type invariant); `get_task_cred`
        // returns its credentials with a count taken for the caller.
        let cred = unsafe { bindings::get_task_cred(self.as_raw()) };
        // SAFETY: `cred` is non-null and its count is ours (above).
        unsafe { Credential::from_raw(cred) }
    }
}

/// The current task, lent by [`Task::current`]: derefs to `&Task` for as
/// long as the guard lives, and cannot be sent to another thread (where
/// "current" is another task) or kept in a `static`.
///
/// # Invariants
///
/// `task` is the task that runs the thread holding this guard.
pub struct CurrentTask {
    task: NonNull<Task>,
    _not_send: PhantomData<*mut ()>,
}

impl Deref for CurrentTask {
    type Target = Task;
    fn deref(&self) -> &Task {
        // SAFETY: the guard is in the thread of the task it names (type
        // invariant), which is alive while it runs.
        unsafe { self.task.as_ref() }
    }
}

impl CurrentTask {
    /// The leader of the current thread group: the task whose pid is the
    /// process id. A group leader changes only in an `exec` by another
    /// thread, which first waits for every other thread (this one) to die,
    /// so it stays the same while the guard lives.
    pub fn group_leader(&self) -> &Task {
        // SAFETY: reads the current task's own `group_leader` (stable while
        // it runs, above).
        let leader = unsafe { bindings::rust_helper_task_group_leader(self.as_raw()) };
        // SAFETY: the leader's `task_struct` lives at least as long as any
        // thread of its group, this one included.
        unsafe { &*leader.cast::<Task>() }
    }
}

// ANCHOR: task_ref
/// A counted reference to a task (`get_task_struct`), which keeps its
/// `task_struct` allocated (not the task running: a task that has exited
/// keeps its ids); dropping it is `put_task_struct`. C's Binder keeps its
/// opener's group leader this way (`proc->tsk`).
///
/// # Invariants
///
/// `task` is a task on which this `TaskRef` holds one usage count.
pub struct TaskRef {
    task: NonNull<Task>,
}
// ANCHOR_END: task_ref

// SAFETY: the count may be put from any thread: `__put_task_struct`
// frees in any context outside PREEMPT_RT, which Debian's kernel is not.
unsafe impl Send for TaskRef {}
// SAFETY: `&TaskRef` gives `&Task`, which is `Sync`.
unsafe impl Sync for TaskRef {}

impl From<&Task> for TaskRef {
    fn from(task: &Task) -> TaskRef {
        // SAFETY: the task is alive while borrowed (type invariant of
        // `Task`); `get_task_struct` takes a count.
        unsafe { bindings::rust_helper_get_task_struct(task.as_raw()) };
        // INVARIANT: the count just taken is ours.
        TaskRef {
            task: NonNull::from(task),
        }
    }
}

impl Clone for TaskRef {
    fn clone(&self) -> TaskRef {
        TaskRef::from(&**self)
    }
}

impl Deref for TaskRef {
    type Target = Task;
    fn deref(&self) -> &Task {
        // SAFETY: our count keeps the task allocated (type invariant).
        unsafe { self.task.as_ref() }
    }
}

impl Drop for TaskRef {
    fn drop(&mut self) {
        let task = (**self).as_raw();
        // SAFETY: gives back the count this `TaskRef` holds (type
        // invariant).
        unsafe { bindings::rust_helper_put_task_struct(task) };
    }
}

/// Gives the CPU to another task. If the current task's state is not
/// running (a [`WaitQueue::prepare_to_wait`](crate::sync::WaitQueue::prepare_to_wait)
/// set it), it sleeps until woken.
///
/// # Context
///
/// This function sleeps: never with a spinlock held, interrupts off, or in
/// an interrupt handler (the kernel reports "scheduling while atomic").
pub fn schedule() {
    // SAFETY: `schedule` may be called from any task context; a module's
    // code outside atomic sections (spinlocks) is such a context. (Called
    // under a spinlock, the kernel reports "scheduling while atomic".)
    unsafe { bindings::schedule() };
}

/// Whether the current task has a signal pending: an interruptible sleep
/// ends at once while one is.
pub fn signal_pending() -> bool {
    // SAFETY: reads the current task's flags only.
    unsafe { bindings::rust_helper_signal_pending() != 0 }
}
