//! Kernel threads: [`KThread`] runs a closure in a thread of its own, and
//! the calls a kernel thread makes about itself (stopping, signals).
//!
//! C headers: [`include/linux/kthread.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/kthread.h),
//! [`include/linux/sched/signal.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/sched/signal.h)
//!
//! The tasks themselves (the current one, counted references) are in
//! [`crate::task`].
//!
//! A thread runs the module's code, so it must end before the module goes.
//! Dropping its [`KThread`] stops it; a leaked one (`mem::forget`, an `Arc`
//! cycle) is stopped by the module's exit, with a warning: every
//! `KThread` is enrolled in the module's registry ([`crate::unload`]).
//! A `KThread` dropped on its own thread (its closure held the last `Arc`
//! of a cycle) cannot wait for itself: the thread holds the module until
//! its closure returns, then ends by itself.
//!
//! Mainline Rust for Linux has no safe kernel-thread type: C's
//! `kthread_run` and `kthread_stop` are called from `unsafe` code, which
//! answers for the thread's end. The out-of-tree `rust` branch's
//! `Task::spawn` ran a closure in a thread that could be detached, with
//! nothing to stop it at module exit.

use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void, CStr};
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{code::EPERM, from_err_ptr, Result};
use crate::module::ThisModule;
use crate::unload::{Entry, Ops};

/// What a thread's start block holds whatever its closure: the thread
/// function ([`trampoline`]) is one for every closure type, so that
/// [`allow_kill`] can tell this module's threads from the others.
#[repr(C)]
struct Head {
    /// Its place in the module's registry ([`crate::unload`]).
    entry: Entry,
    /// The thread, once created.
    task: AtomicPtr<bindings::task_struct>,
    /// Whether the thread took its closure.
    taken: AtomicBool,
    /// Whether the `KThread` was dropped on its own thread, which cannot
    /// wait for itself: [`ATTACHED`], [`DETACHED_EXIT`] or
    /// [`DETACHED_IDLE`].
    detached: AtomicU8,
    /// Takes and runs the closure: `run::<F>`.
    run: unsafe fn(*const Head),
    /// Frees the start block, and the closure if no thread took it:
    /// `drop_start::<F>`.
    free: unsafe fn(*mut Head),
}

/// What a thread starts with: its closure, until the thread takes it.
#[repr(C)]
struct Start<F> {
    head: Head,
    f: UnsafeCell<ManuallyDrop<F>>,
}

/// The `KThread` is alive, or was dropped on another thread.
const ATTACHED: u8 = 0;
/// The `KThread` was dropped on its own thread, which took a reference on
/// the module: after the closure, the thread leaves the registry, frees its
/// start block and exits through `__module_put_and_kthread_exit`, in core
/// kernel code, so `rmmod` cannot free the module's text under it.
const DETACHED_EXIT: u8 = 1;
/// As [`DETACHED_EXIT`], but the module was already going (no reference):
/// the thread idles after the closure until the module's exit stops it,
/// quietly.
const DETACHED_IDLE: u8 = 2;

/// How the module's exit stops a leaked thread.
static OPS: Ops = Ops {
    name: core::any::type_name::<KThread>,
    stop: stop_leaked,
    reclaim: Some(reclaim_leaked),
    kthread: true,
};

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
/// `head` is the head of a `KBox<Start<F>>` released by `into_raw`, whose
/// `free` is `drop_start::<F>`, whose entry is enrolled in the module's
/// registry, and whose `task` is a kthread created by
/// `kthread_create_on_node` that runs `trampoline` on it, has taken the
/// closure, and does not exit before `kthread_stop`.
///
/// Leaking a `KThread` (`mem::forget`, an `Arc` cycle) is safe: the
/// module's exit stops the thread, with a warning ([`crate::unload`]).
pub struct KThread {
    head: NonNull<Head>,
}
// ANCHOR_END: kthread

// SAFETY: `kthread_stop` may be called from any thread; the closure the
// `KThread` may drop is `Send`.
unsafe impl Send for KThread {}
// SAFETY: `&KThread` gives no access at all.
unsafe impl Sync for KThread {}

impl KThread {
    /// Starts a kernel thread named `name` (as `ps` shows it) that runs `f`.
    ///
    /// # Context
    ///
    /// May sleep (`kthread_create` waits for `kthreadd`): process context only.
    /// Dropping the `KThread` waits for the thread to end (`kthread_stop`), so
    /// it may sleep too.
    pub fn spawn<F: FnOnce() + Send + 'static>(name: &CStr, f: F) -> Result<KThread> {
        let start = KBox::new(
            Start {
                head: Head {
                    entry: Entry::new(&OPS),
                    task: AtomicPtr::new(core::ptr::null_mut()),
                    taken: AtomicBool::new(false),
                    detached: AtomicU8::new(ATTACHED),
                    run: run::<F>,
                    free: drop_start::<F>,
                },
                f: UnsafeCell::new(ManuallyDrop::new(f)),
            },
            GFP_KERNEL,
        )?;
        let head = KBox::into_raw(start).cast::<Head>();
        // SAFETY: `trampoline` takes the `Head` of a `Start<F>` whose `run`
        // is `run::<F>`; the format is "%s" with one string argument.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(trampoline),
                head.cast(),
                bindings::RUST_CONST_HELPER_NUMA_NO_NODE,
                c"%s".as_ptr(),
                name.as_ptr(),
            )
        };
        let task = match from_err_ptr(task) {
            Ok(task) => task,
            Err(e) => {
                // SAFETY: no thread was created: `head` is still ours.
                unsafe { drop_start::<F>(head) };
                return Err(e);
            }
        };
        // SAFETY: `head` is live until `drop_start`, and does not move (in
        // its box) until then, or ever if the `KThread` is leaked.
        let head_ref = unsafe { &*head };
        head_ref.task.store(task, Ordering::Release);
        // From here on the module's exit stops the thread if the `KThread`
        // is leaked; the thread has not run yet.
        // SAFETY: made by `Entry::new`, not enrolled, pinned in the box.
        unsafe { Entry::enrol(&head_ref.entry) };
        // SAFETY: `task` is a new kthread, which waits to be woken.
        unsafe { bindings::wake_up_process(task) };
        // A `kthread_stop` before the thread first runs would skip the
        // closure; waiting until the thread has taken it makes dropping
        // the `KThread` a join. The thread runs within a scheduler tick.
        while !head_ref.taken.load(Ordering::Acquire) {
            // SAFETY: the task is running: `schedule` only lets others run.
            unsafe { bindings::schedule() };
        }
        // INVARIANT: the thread runs `trampoline` on `head`, has taken the
        // closure, and the entry is enrolled.
        Ok(KThread {
            // SAFETY: from `KBox::into_raw`, never null.
            head: unsafe { NonNull::new_unchecked(head) },
        })
    }
}

impl Drop for KThread {
    fn drop(&mut self) {
        let head = self.head.as_ptr();
        // SAFETY: the start block lives until `free` (type invariants).
        let h = unsafe { &*head };
        let task = h.task.load(Ordering::Acquire);
        // SAFETY: `current` is always a valid task.
        if task == unsafe { bindings::rust_helper_get_current() } {
            // Dropped by its own closure (the last `Arc` of a cycle that
            // holds this `KThread`): `kthread_stop` would wait for this
            // very thread. It ends by itself after the closure instead
            // (see the states), holding the module until then.
            // SAFETY: `THIS` is this module, alive while its code runs.
            let held = unsafe { bindings::rust_helper_try_module_get(ThisModule::THIS.as_raw()) };
            let state = if held { DETACHED_EXIT } else { DETACHED_IDLE };
            h.detached.store(state, Ordering::Release);
            return;
        }
        // SAFETY: enrolled by `spawn` (type invariants); left once, here.
        if unsafe { Entry::leave(&h.entry) } {
            // SAFETY: the thread has not exited: it waits for this call
            // (type invariants), which returns once it has.
            unsafe { bindings::kthread_stop(task) };
        }
        // Else the module's exit has stopped it. Either way the thread
        // has ended.
        // SAFETY: the thread has ended and the registry lets go of it, so
        // nothing else uses the start block.
        unsafe { (h.free)(head) };
    }
}

/// The module's exit stops a thread whose `KThread` was leaked.
///
/// # Safety
///
/// `e` is the entry of a live start block's `Head`, taken by the sweep;
/// called once.
unsafe fn stop_leaked(e: *const Entry) {
    let head = crate::container_of!(e, Head, entry);
    // SAFETY: the start block is live while the sweep holds its entry
    // (caller).
    let h = unsafe { &*head };
    if h.detached.load(Ordering::Acquire) == ATTACHED {
        h.entry.warn_leaked(c"stopping it");
    }
    // SAFETY: the thread has not exited: it waits for `kthread_stop`, and
    // no `KThread::drop` calls it now (the sweep holds the entry).
    unsafe { bindings::kthread_stop(h.task.load(Ordering::Acquire)) };
}

/// Frees the start block of a thread that the module's exit stopped and
/// whose `KThread` was never dropped: only this crate points into it.
///
/// # Safety
///
/// As in [`Ops::reclaim`]: stopped, and nothing uses it again.
unsafe fn reclaim_leaked(e: *const Entry) {
    let head = crate::container_of!(e, Head, entry).cast_mut();
    // SAFETY: the thread has ended, the leaked `KThread` is never used again
    // (no code of the module runs any more), and the registry let go of it.
    unsafe { ((*head).free)(head) };
}

/// Takes and runs the closure of a `Start<F>`.
///
/// # Safety
///
/// `head` is the head of a live `Start<F>` whose closure no one took.
unsafe fn run<F: FnOnce()>(head: *const Head) {
    let start = head.cast::<Start<F>>();
    // SAFETY: the caller guarantees the closure is still there, and taking
    // it is ours alone (`taken` was set by the caller).
    let f = unsafe { ManuallyDrop::take(&mut *(*start).f.get()) };
    f();
}

/// Drops a `Start<F>` and, if no thread took it, its closure.
///
/// # Safety
///
/// `head` is the head of a `Start<F>` from `KBox::into_raw`, that no thread
/// and no registry list uses.
unsafe fn drop_start<F>(head: *mut Head) {
    // SAFETY: the caller guarantees that `head` is an owned `Start<F>`.
    let mut start = unsafe { KBox::from_raw(head.cast::<Start<F>>()) };
    if !*start.head.taken.get_mut() {
        // SAFETY: no thread took the closure, so it is still there.
        unsafe { ManuallyDrop::drop(start.f.get_mut()) };
    }
}

// ANCHOR: trampoline
/// The thread function of every `KThread` of the module: runs the closure
/// once, then sleeps until `kthread_stop`, so that the `task_struct`
/// outlives every `KThread` call.
unsafe extern "C" fn trampoline(head: *mut c_void) -> c_int {
    let head = head.cast::<Head>().cast_const();
    // SAFETY: `head` is the `Head` of the `Start` of `KThread::spawn`, which
    // lives until `kthread_stop` has returned, after this function.
    let h = unsafe { &*head };
    // The closure is taken here, exactly once (`KThread::spawn` waits for
    // it), or else dropped by `drop_start`.
    if !h.taken.swap(true, Ordering::AcqRel) {
        // SAFETY: `taken` was false: no one else took the closure, and
        // `run` is `run::<F>` of this `Start<F>`.
        unsafe { (h.run)(head) };
    }
    if h.detached.load(Ordering::Acquire) == DETACHED_EXIT {
        // The `KThread` was dropped by the closure, which took a reference
        // on the module: the module's exit cannot have started. Only a
        // failed init sweeps with references held (the kernel then frees
        // the module regardless): the sweep stops this thread.
        // SAFETY: enrolled by `spawn`; its `KThread` is gone, so no one
        // else leaves it.
        if unsafe { Entry::try_leave(&h.entry) } {
            // SAFETY: nothing else uses the start block: its `KThread` is
            // gone and the registry let go of it; `h` is not used after.
            unsafe { (h.free)(head.cast_mut()) };
            // SAFETY: puts the reference the drop took and ends the
            // thread, in core kernel code: no code of the module runs
            // after the reference is gone.
            unsafe { bindings::__module_put_and_kthread_exit(ThisModule::THIS.as_raw(), 0) };
        }
        // The sweep of a failed init holds the entry and waits in
        // `kthread_stop` for this thread, so the module's code stays.
        // SAFETY: puts the reference the drop took.
        unsafe { bindings::module_put(ThisModule::THIS.as_raw()) };
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

/// Whether the current task is a thread of this module's [`KThread`]s;
/// else warns that `what` was called outside one, and fails with `EPERM`.
fn check_own_thread(what: &CStr) -> Result {
    // SAFETY: `current` is always a valid task; `kthread_func` returns
    // NULL for a task that is not a kthread.
    let func = unsafe { bindings::kthread_func(bindings::rust_helper_get_current()) };
    // Compared as addresses: `trampoline` is not generic, so the module has
    // one copy of it, the one every `KThread` of the module runs.
    let ours = trampoline as unsafe extern "C" fn(*mut c_void) -> c_int;
    if func.cast_const() == ours as *const c_void {
        return Ok(());
    }
    // SAFETY: `what` is NUL-terminated; the helper only formats it.
    unsafe { bindings::rust_helper_warn_misuse(what.as_ptr()) };
    Err(EPERM)
}

/// Lets `SIGKILL` reach the current kernel thread: kthreads ignore every
/// signal unless they ask. A pending `SIGKILL` then wakes an interruptible
/// wait ([`CondVar::wait_interruptible`](crate::sync::CondVar::wait_interruptible)).
///
/// Only in a thread started by [`KThread::spawn`]: elsewhere (a system
/// call, where `current` is a user process; a work item, where it is a
/// shared `kworker`) it would change the signals of a task that is not
/// the module's. There it warns and fails with `EPERM`, changing nothing.
/// (Mainline has no wrapper: C's `allow_signal` trusts its caller.)
pub fn allow_kill() -> Result {
    check_own_thread(c"kernel::kthread::allow_kill called outside a KThread")?;
    // SAFETY: changes the current task's signal handling only, and the
    // current task is a thread of this module.
    unsafe { bindings::rust_helper_allow_signal(bindings::RUST_CONST_HELPER_SIGKILL) };
    Ok(())
}

/// Discards the current task's pending signals (for a kernel thread that
/// has handled them).
///
/// Only in a thread started by [`KThread::spawn`], as [`allow_kill`]:
/// elsewhere it warns and fails with `EPERM`.
pub fn flush_signals() -> Result {
    check_own_thread(c"kernel::kthread::flush_signals called outside a KThread")?;
    // SAFETY: `current` is always a valid task, here a thread of this
    // module.
    unsafe { bindings::flush_signals(bindings::rust_helper_get_current()) };
    Ok(())
}
