//! Kernel threads: [`KThread`] runs a closure in a thread of its own, and
//! the calls a kernel thread makes about itself (stopping, signals).
//!
//! C headers: [`include/linux/kthread.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/kthread.h),
//! [`include/linux/sched/signal.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/sched/signal.h)
//!
//! The tasks themselves (the current one, counted references) are in
//! [`crate::task`].

use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void, CStr};
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{from_err_ptr, Result};

/// What a thread starts with: its closure, until the thread takes it.
struct Start<F> {
    taken: AtomicBool,
    f: UnsafeCell<ManuallyDrop<F>>,
}

// ANCHOR: kthread
/// A kernel thread running a closure; dropping the `KThread` stops the
/// thread and waits for it to end (`kthread_stop`): the closure has run
/// to its end by then.
///
/// A closure that loops checks [`should_stop`] to know when to return. A
/// thread whose closure has returned sleeps until it is stopped.
///
/// ```rust
/// # use kernel::kthread::KThread;
/// # let counter: Arc<Mutex<u64>> = Arc::pin_init(new_mutex!(0), GFP_KERNEL)?;
/// let counter = counter.clone();
/// let thread = KThread::spawn(c_str!("worker"), move || *counter.lock() += 1)?;
/// drop(thread); // waits for the thread
/// ```
///
/// # Invariants
///
/// `task` is a kthread created by `kthread_create_on_node` that runs
/// `trampoline::<F>` on `start` and does not exit before `kthread_stop`;
/// `start` is a `KBox<Start<F>>` released by `into_raw`, and `drop_start`
/// is `drop_start::<F>`.
pub struct KThread {
    task: NonNull<bindings::task_struct>,
    start: *mut c_void,
    drop_start: unsafe fn(*mut c_void),
}
// ANCHOR_END: kthread

// SAFETY: `kthread_stop` may be called from any thread; the closure the
// `KThread` may drop is `Send`.
unsafe impl Send for KThread {}
// SAFETY: `&KThread` gives no access at all.
unsafe impl Sync for KThread {}

impl KThread {
    /// Starts a kernel thread named `name` (as `ps` shows it) that runs `f`.
    pub fn spawn<F: FnOnce() + Send + 'static>(name: &CStr, f: F) -> Result<KThread> {
        let start = KBox::new(
            Start {
                taken: AtomicBool::new(false),
                f: UnsafeCell::new(ManuallyDrop::new(f)),
            },
            GFP_KERNEL,
        )?;
        let start = KBox::into_raw(start).cast::<c_void>();
        // SAFETY: `trampoline::<F>` takes the `Start<F>` that `start` points
        // to; the format is "%s" with one string argument.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(trampoline::<F>),
                start,
                bindings::RUST_CONST_HELPER_NUMA_NO_NODE,
                c"%s".as_ptr(),
                name.as_ptr(),
            )
        };
        let task = match from_err_ptr(task) {
            Ok(task) => task,
            Err(e) => {
                // SAFETY: no thread was created: `start` is still ours.
                unsafe { drop_start::<F>(start) };
                return Err(e);
            }
        };
        // SAFETY: `task` is a new kthread, which waits to be woken.
        unsafe { bindings::wake_up_process(task) };
        // A `kthread_stop` before the thread first runs would skip the
        // closure; waiting until the thread has taken it makes dropping
        // the `KThread` a join. The thread runs within a scheduler tick.
        // SAFETY: `start` is live until `drop_start`.
        let taken = unsafe { &(*start.cast::<Start<F>>()).taken };
        while !taken.load(Ordering::Acquire) {
            // SAFETY: the task is running: `schedule` only lets others run.
            unsafe { bindings::schedule() };
        }
        // INVARIANT: the thread runs `trampoline::<F>` on `start`.
        Ok(KThread {
            // SAFETY: `from_err_ptr` returned no error, and kthreads are
            // never null.
            task: unsafe { NonNull::new_unchecked(task) },
            start,
            drop_start: drop_start::<F>,
        })
    }
}

impl Drop for KThread {
    fn drop(&mut self) {
        // SAFETY: the thread has not exited: it waits for this call (type
        // invariant), which returns once it has.
        unsafe { bindings::kthread_stop(self.task.as_ptr()) };
        // SAFETY: the thread has ended, so nothing else uses `start`.
        unsafe { (self.drop_start)(self.start) };
    }
}

/// Drops a `Start<F>` and, if no thread took it, its closure.
///
/// # Safety
///
/// `start` comes from `KBox::<Start<F>>::into_raw` and no thread uses it.
unsafe fn drop_start<F>(start: *mut c_void) {
    // SAFETY: the caller guarantees that `start` is an owned `Start<F>`.
    let mut start = unsafe { KBox::from_raw(start.cast::<Start<F>>()) };
    if !*start.taken.get_mut() {
        // SAFETY: no thread took the closure, so it is still there.
        unsafe { ManuallyDrop::drop(start.f.get_mut()) };
    }
}

// ANCHOR: trampoline
/// The thread function: runs the closure once, then sleeps until
/// `kthread_stop`, so that the `task_struct` outlives every `KThread` call.
unsafe extern "C" fn trampoline<F: FnOnce()>(start: *mut c_void) -> c_int {
    // SAFETY: `start` is the `Start<F>` of `KThread::spawn`, which lives until
    // `kthread_stop` has returned, after this function.
    let start = unsafe { &*start.cast::<Start<F>>() };
    // The closure is taken here, exactly once (`KThread::spawn` waits for
    // it), or else dropped by `drop_start`.
    if !start.taken.swap(true, Ordering::AcqRel) {
        // SAFETY: `taken` was false: no one else took the closure.
        let f = unsafe { ManuallyDrop::take(&mut *start.f.get()) };
        f();
    }
    loop {
        // TASK_IDLE: sleeps like TASK_UNINTERRUPTIBLE (a pending signal
        // does not wake it) without counting towards the load average.
        // SAFETY: sets the state of the current task only.
        unsafe { bindings::rust_helper_set_current_state(bindings::RUST_CONST_HELPER_TASK_IDLE) };
        if should_stop() {
            break;
        }
        // SAFETY: a kthread may sleep; `kthread_stop` wakes it.
        unsafe { bindings::schedule() };
    }
    // SAFETY: sets the state of the current task only.
    unsafe { bindings::rust_helper_set_current_state(bindings::RUST_CONST_HELPER_TASK_RUNNING) };
    0
}
// ANCHOR_END: trampoline

/// In a thread started by [`KThread::spawn`]: whether its `KThread` is
/// being dropped, so the closure should return. Elsewhere, `false`.
pub fn should_stop() -> bool {
    // SAFETY: `kthread_should_stop` only reads the current task's flags
    // (and returns false outside a kthread).
    unsafe { bindings::kthread_should_stop() }
}

/// Lets `SIGKILL` reach the current kernel thread: kthreads ignore every
/// signal unless they ask. A pending `SIGKILL` then wakes an interruptible
/// wait ([`CondVar::wait_interruptible`](crate::sync::CondVar::wait_interruptible)).
pub fn allow_kill() {
    // SAFETY: changes the current task's signal handling only.
    unsafe { bindings::rust_helper_allow_signal(bindings::RUST_CONST_HELPER_SIGKILL) };
}

/// Discards the current task's pending signals (for a kernel thread that
/// has handled them).
pub fn flush_signals() {
    // SAFETY: `current` is always a valid task.
    unsafe { bindings::flush_signals(bindings::rust_helper_get_current()) };
}
