//! Work items on the system workqueue: a function that runs later, in a
//! kernel worker thread (`kworker`), where it may sleep.
//!
//! C header: [`include/linux/workqueue.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/workqueue.h)
//!
//! A type that has work to defer embeds a [`Work`], names it with
//! [`impl_has_work!`](crate::impl_has_work) and implements [`WorkItem`];
//! [`queue`] hands an [`Arc`] of it to `system_wq`, which
//! keeps that `Arc` until [`WorkItem::run`] takes it. An item queued
//! again before it has run is queued once, as in C.
//!
//! Unloading: a queued item's function is code of the module, so the
//! module must not go before its items have run. The `module!` macro's
//! exit (`ModuleSlot::exit`) calls this module's `drain` after the
//! module's value is dropped, between sweeps of the leaked threads and
//! registrations ([`crate::unload`]): it waits until none of the module's
//! items is queued or running. No driver has to remember it.

use core::ffi::CStr;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::bindings;
use crate::init::{pin_init_from_closure, Opaque, PinInit};
use crate::sync::{Arc, LockClassKey};

/// An initialiser for a [`Work`], with a lockdep class of its own:
/// `new_work!()` or `new_work!("name")`.
#[macro_export]
macro_rules! new_work {
    ($($name:literal)? $(,)?) => {
        $crate::new_named!($crate::workqueue::Work::new; $($name)?)
    };
}

/// Where a type keeps its [`Work`].
///
/// Implement it with [`impl_has_work!`](crate::impl_has_work), which checks
/// at compile time that the work is a field of the type.
///
/// # Safety
///
/// [`HasWork::work`] returns a reference to the field of `self` that lies
/// [`HasWork::WORK_OFFSET`] bytes from its start, the same field on every
/// call.
pub unsafe trait HasWork: Sized {
    /// Where the [`Work`] lies in `Self`, in bytes from its start.
    const WORK_OFFSET: usize;

    /// The [`Work`] embedded in `self`.
    fn work(&self) -> &Work<Self>;
}

/// Implements [`HasWork`] for `$item`, whose [`Work`] is the field
/// `$field`: `impl_has_work!(Job, work);`.
#[macro_export]
macro_rules! impl_has_work {
    ($item:ty, $field:ident) => {
        // SAFETY: `offset_of!` compiles only if `$field` is a field of
        // `$item` itself (not one reached through `Deref`), and `work`
        // returns that field on every call.
        unsafe impl $crate::workqueue::HasWork for $item {
            const WORK_OFFSET: usize = ::core::mem::offset_of!($item, $field);

            fn work(&self) -> &$crate::workqueue::Work<Self> {
                &self.$field
            }
        }
    };
}

// ANCHOR: work_item
/// A type whose values can be queued on the system workqueue: it embeds a
/// [`Work<Self>`] ([`HasWork`]) and says what to run.
///
/// ```rust
/// use kernel::{impl_has_work, new_work};
/// use kernel::workqueue::{self, Work, WorkItem};
///
/// struct Job {
///     done: Mutex<bool>,
///     ran: CondVar,
///     work: Work<Job>,
/// }
/// impl_has_work!(Job, work);
///
/// impl WorkItem for Job {
///     fn run(this: Arc<Self>) {
///         *this.done.lock() = true;
///         this.ran.notify_all();
///     }
/// }
///
/// let job = Arc::pin_init(
///     pin_init!(Job { done <- new_mutex!(false), ran <- new_condvar!(), work <- new_work!() }),
///     GFP_KERNEL,
/// )?;
/// // The workqueue holds the clone until `run` has it.
/// workqueue::queue(job.clone()).map_err(|_| EINVAL)?;
/// let mut done = job.done.lock();
/// while !*done {
///     job.ran.wait(&mut done);
/// }
/// pr_info!("the worker ran\n");
/// ```
pub trait WorkItem: HasWork + Send + Sync + 'static {
    /// Runs in a worker thread, which may sleep; gets the `Arc` that
    /// [`queue`] was given.
    fn run(this: Arc<Self>);
}
// ANCHOR_END: work_item

// ANCHOR: work
/// A `struct work_struct`, embedded in the `T` it runs.
///
/// # Invariants
///
/// `work` was initialised by `INIT_WORK` (the helper) with
/// `run_work::<T>` and does not move. While it is pending, the `T` that
/// contains it was turned into a raw pointer by `Arc::into_raw`, and the
/// workqueue owns that `Arc`.
pub struct Work<T> {
    work: Opaque<bindings::work_struct>,
    _item: PhantomData<fn() -> T>,
}
// ANCHOR_END: work

// SAFETY: the workqueue's own locking protects the `work_struct`.
unsafe impl<T> Send for Work<T> {}
// SAFETY: as above: `&Work` only passes the address to C.
unsafe impl<T> Sync for Work<T> {}

impl<T: WorkItem> Work<T> {
    /// An initialiser of a work item; use [`new_work!`], which gives each
    /// call site its own lockdep class.
    ///
    /// [`new_work!`]: crate::new_work
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        let init = move |slot: *mut Self| {
            // SAFETY: the slot is valid and will not move (contract of
            // `PinInit`); the name and key are `'static`, and
            // `run_work::<T>` takes a `work_struct` inside a `Work<T>`.
            unsafe {
                bindings::rust_helper_init_work_with_key(
                    Opaque::raw_get(ptr::addr_of_mut!((*slot).work)),
                    Some(run_work::<T>),
                    name.as_ptr(),
                    key.as_raw(),
                )
            };
            // INVARIANT: initialised in place with `run_work::<T>`; not
            // pending.
            Ok(())
        };
        // SAFETY: the closure initialises the only field with data and
        // never fails.
        unsafe { pin_init_from_closure(init) }
    }
}

/// Work items of this module that are queued or running (this crate is
/// linked into each module, so each has its own count).
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// Whether this module ever queued one: `drain` has nothing to wait for
/// otherwise.
static USED: AtomicBool = AtomicBool::new(false);

// ANCHOR: queue
/// Queues `this` on the system workqueue (C's `schedule_work`): a worker
/// will call [`WorkItem::run`] with it. If it is already queued and has
/// not started, it is not queued twice and `this` comes back as `Err`.
pub fn queue<T: WorkItem>(this: Arc<T>) -> Result<(), Arc<T>> {
    USED.store(true, Ordering::Relaxed);
    PENDING.fetch_add(1, Ordering::AcqRel);
    // `run_work` finds the `T` from its `Work`: the field at
    // `T::WORK_OFFSET` (`HasWork`'s contract).
    let work = this.work().work.as_raw();
    let raw = Arc::into_raw(this);
    // SAFETY: the `work_struct` is initialised and pinned in `T` (type
    // invariant), which stays alive while the workqueue holds `raw`.
    let queued = unsafe { bindings::rust_helper_schedule_work(work) };
    if queued {
        // INVARIANT: pending, with the `Arc` of its `T` given away.
        Ok(())
    } else {
        PENDING.fetch_sub(1, Ordering::AcqRel);
        // SAFETY: the item was already pending, so the workqueue did not
        // take `raw`; it is still ours, from `Arc::into_raw` above.
        Err(unsafe { Arc::from_raw(raw) })
    }
}
// ANCHOR_END: queue

/// The `work_struct`'s function: gives the `Arc` back to the item's `run`.
///
/// # Safety
///
/// `work` is the `work_struct` of a pending [`Work<T>`] (the workqueue
/// calls this once per time it was queued).
unsafe extern "C" fn run_work<T: WorkItem>(work: *mut bindings::work_struct) {
    let work = crate::container_of!(work.cast::<Opaque<bindings::work_struct>>(), Work<T>, work);
    let item = work.cast::<u8>().wrapping_sub(T::WORK_OFFSET).cast::<T>();
    // SAFETY: `work` is the field at `T::WORK_OFFSET` of a `T` (`HasWork`'s
    // contract) whose `Arc` `queue` gave the workqueue (type invariant), now
    // ours: the workqueue cleared the pending bit before calling us.
    let this = unsafe { Arc::from_raw(item) };
    T::run(this);
    // Last, after `run` dropped what it kept: `drain` waits for this.
    PENDING.fetch_sub(1, Ordering::AcqRel);
}

/// Waits until none of this module's work items is queued or running:
/// called once at module exit, after the module's value was dropped, when
/// only work items can queue more.
pub(crate) fn drain() {
    if !USED.load(Ordering::Relaxed) {
        return;
    }
    loop {
        let pending = PENDING.load(Ordering::Acquire);
        // Waits for every item queued before it, up to its return to the
        // workqueue: a `run_work` that has counted itself out still has a
        // few instructions of the module to execute.
        // SAFETY: no lock is held here that a work item could need.
        unsafe { bindings::rust_helper_flush_system_wq() };
        if pending == 0 {
            break;
        }
    }
}
