//! What a module's exit stops: the registry of the module's live kernel
//! threads and registrations.
//!
//! C header: [`include/linux/module.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/module.h)
//! (what `rmmod` frees: the module's text and data).
//!
//! A [`KThread`](crate::kthread::KThread) runs code of the module, and a
//! registration (a misc device, a char device region, a shrinker, an
//! interrupt handler, a PCI driver) lets C call it. Dropping one stops the
//! thread or unregisters the callbacks; but leaking is safe Rust:
//! `mem::forget`, `KBox::leak` or an `Arc` cycle keep a value alive, never
//! dropped, past the module's exit. Then `rmmod` frees the module's text
//! while a thread still runs it, or while C still holds a pointer to a
//! callback in it: the next instruction fetch or callback faults.
//!
//! So each of them enrols an `Entry` here when it starts (after it is
//! registered, so the sweep never sees one half made), and its `Drop`
//! takes the entry out before it stops or unregisters. The module's exit
//! ([`ModuleSlot::exit`](crate::module::ModuleSlot::exit), and a failed
//! init) calls `sweep` after the module's own value is dropped: whatever
//! is still enrolled was leaked. For each, it `WARN`s naming the type
//! (`a kernel::kthread::KThread was leaked: stopping it before unload`)
//! and stops or unregisters it. The leaked memory is not freed (a pinned
//! value that was never dropped must stay valid: something may still point
//! into it); only what this crate alone points to is (a thread's start
//! block). A registration made by its `new_pinned` is a heap block of its
//! own: the exit tells kmemleak it is kept on purpose (the warning has
//! reported it). One initialised in place inside a larger value cannot be
//! told apart from it, and kmemleak reports that value as the leak it is.
//! The registry is a list through the entries themselves, under a mutex
//! (`helpers/unload.c`): enrolling never allocates and cannot fail. Every
//! caller may sleep anyway: it registers or unregisters, spawns or stops.
//!
//! Races the states below settle:
//! - a value dropped while the sweep stops it (by a thread the sweep is
//!   stopping, whose closure held the last `Arc` of it): its `Drop` sees
//!   the entry taken by the sweep, waits until the sweep is done with it,
//!   then neither stops nor unregisters again, and drops the rest;
//! - a kernel thread that owns the last `Arc` of a cycle that holds its own
//!   [`KThread`](crate::kthread::KThread): the `Drop` runs on that very
//!   thread, which cannot wait for itself to end. The thread is detached
//!   instead, and stays enrolled; the sweep stops it without a warning;
//! - a registration whose callbacks are running: unregistering waits for
//!   them, as the `Drop` does;
//! - the workqueue: work items may drop or make threads and registrations,
//!   and threads may queue work, so the exit sweeps and drains
//!   ([`crate::workqueue`]) until neither has anything left.
//!
//! A thread that never returns (its closure ignores
//! [`should_stop`](crate::kthread::should_stop)) cannot be stopped:
//! `kthread_stop` waits for it, so `rmmod` waits forever (in `D` state; the
//! hung-task detector reports it after two minutes). The module is never
//! freed, so nothing faults; the same wait happens when a `KThread` is
//! dropped.
//!
//! Mainline Rust for Linux has the same hole for most of these: its
//! `miscdevice::MiscDeviceRegistration` and the like unregister in `Drop`
//! only, and a leaked one outlives the module. Its `ThisModule` owner on
//! `file_operations` only pins the module while a file is open; its
//! `Devres`/`Revocable` revoke a device's resources when the device is
//! unbound, which covers what a bus driver maps, not what a module
//! registers or spawns. This crate closes it at module exit, where the
//! leak becomes a fault, at the cost of one list link per thread and
//! registration and a `WARN` that names the module's bug.

use core::cell::UnsafeCell;
use core::ffi::{c_char, c_void, CStr};
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use crate::alloc::{flags::GFP_KERNEL, AllocError, KBox};
use crate::bindings;
use crate::init::PinInit;
use crate::sync::lock::mutex::mutex_lock;

/// Where an entry is; changed only under the registry's lock.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not enrolled (yet, or any more).
    Out,
    /// On the live list: its owner may still drop it.
    Live,
    /// Taken by the sweep, which is stopping it now.
    Sweeping,
    /// Stopped by the sweep, on the swept list.
    Swept,
}

/// The links and state of an entry, under the registry's lock.
struct Links {
    prev: *mut Entry,
    next: *mut Entry,
    state: State,
}

/// What the sweep does with an entry of one type.
pub(crate) struct Ops {
    /// The type's name, for the warning (`core::any::type_name`).
    pub(crate) name: fn() -> &'static str,
    /// Stops the thread or unregisters the callbacks, warning first if it
    /// was leaked. Kernel threads are stopped before registrations.
    ///
    /// # Safety
    ///
    /// The entry is enrolled in a live value of the type, taken by the
    /// sweep; called once.
    pub(crate) stop: unsafe fn(*const Entry),
    /// Frees what only this crate points to, once the exit is over; `None`
    /// for values whose memory is not this crate's to free.
    ///
    /// # Safety
    ///
    /// `stop` has run on the entry and nothing will use the value again.
    pub(crate) reclaim: Option<unsafe fn(*const Entry)>,
    /// Whether it is a kernel thread (stopped first).
    pub(crate) kthread: bool,
}

// ANCHOR: entry
/// A link in the registry, embedded in a pinned value that runs or lets C
/// call the module's code.
///
/// # Invariants
///
/// `links` is read and written only under the registry's lock. While the
/// state is not `Out`, the entry is on the list its state names (`Live`:
/// the live list, `Swept`: the swept list, `Sweeping`: neither, held by
/// the sweep) and does not move.
pub(crate) struct Entry {
    links: UnsafeCell<Links>,
    ops: &'static Ops,
    /// The start of the heap block the value lives in, if this crate
    /// allocated it alone (`new_pinned`), for kmemleak; else null.
    alloc: AtomicPtr<c_void>,
    _pin: PhantomPinned,
}
// ANCHOR_END: entry

// SAFETY: the links are only touched under the registry's lock; the rest is
// immutable or atomic.
unsafe impl Send for Entry {}
// SAFETY: as above.
unsafe impl Sync for Entry {}

/// The heads of the two lists.
struct Lists {
    live: *mut Entry,
    swept: *mut Entry,
}

/// The registry of this module: each module links its own copy of this
/// crate, and of the lock (`helpers/unload.c`).
struct Registry(UnsafeCell<Lists>);

// SAFETY: the lists are only touched under the registry's lock.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry(UnsafeCell::new(Lists {
    live: ptr::null_mut(),
    swept: ptr::null_mut(),
}));

/// The registry's lock, held while it lives; a mutex, held for a few
/// instructions, never across a stop.
struct Guard;

impl Guard {
    fn lock() -> Guard {
        // SAFETY: the mutex is statically initialised
        // (`__MUTEX_INITIALIZER` in `helpers/unload.c`) and never moves;
        // the guard unlocks it. Every caller may sleep (see above).
        unsafe { mutex_lock(&raw mut bindings::rust_unload_mutex) };
        Guard
    }

    /// The lists, borrowed for as long as the lock is held.
    fn lists(&mut self) -> &mut Lists {
        // SAFETY: the lock is held, and `&mut self` makes this the only
        // borrow.
        unsafe { &mut *REGISTRY.0.get() }
    }

    /// The links of `e`.
    ///
    /// # Safety
    ///
    /// `e` is a live entry; no other reference to its links exists.
    unsafe fn links<'a>(&mut self, e: *const Entry) -> &'a mut Links {
        // SAFETY: the lock is held (type invariants of `Entry`), `e` is
        // live (caller).
        unsafe { &mut *(*e).links.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: locked by `Guard::lock`, on this thread.
        unsafe { bindings::mutex_unlock(&raw mut bindings::rust_unload_mutex) };
    }
}

/// Which list a state is on.
fn head(lists: &mut Lists, state: State) -> &mut *mut Entry {
    match state {
        State::Swept => &mut lists.swept,
        _ => &mut lists.live,
    }
}

/// Unlinks `e` from the list of its state.
///
/// # Safety
///
/// `e` is live and on the list of `state`.
unsafe fn unlink(g: &mut Guard, e: *mut Entry, state: State) {
    // SAFETY: `e` is live (caller); its neighbours are live entries of the
    // same list (type invariants).
    unsafe {
        let l = g.links(e);
        let (prev, next) = (l.prev, l.next);
        if prev.is_null() {
            *head(g.lists(), state) = next;
        } else {
            g.links(prev).next = next;
        }
        if !next.is_null() {
            g.links(next).prev = prev;
        }
        let l = g.links(e);
        l.prev = ptr::null_mut();
        l.next = ptr::null_mut();
    }
}

/// Pushes `e` onto the list of `state` and sets it.
///
/// # Safety
///
/// `e` is live, pinned and on no list.
unsafe fn push(g: &mut Guard, e: *mut Entry, state: State) {
    let first = *head(g.lists(), state);
    // SAFETY: `e` and `first` are live entries (caller, type invariants).
    unsafe {
        if !first.is_null() {
            g.links(first).prev = e;
        }
        let l = g.links(e);
        l.prev = ptr::null_mut();
        l.next = first;
        l.state = state;
    }
    *head(g.lists(), state) = e;
}

impl Entry {
    /// An entry that is not enrolled, for values of the type `ops` is for.
    pub(crate) fn new(ops: &'static Ops) -> Entry {
        Entry {
            links: UnsafeCell::new(Links {
                prev: ptr::null_mut(),
                next: ptr::null_mut(),
                state: State::Out,
            }),
            ops,
            alloc: AtomicPtr::new(ptr::null_mut()),
            _pin: PhantomPinned,
        }
    }

    /// Enrols the entry: from now on the module's exit stops its value if
    /// it is still alive then.
    ///
    /// # Safety
    ///
    /// `this` was made by [`Entry::new`] and is not enrolled; it stays
    /// where it is until [`Entry::leave`] returns, or forever.
    pub(crate) unsafe fn enrol(this: *const Entry) {
        let mut g = Guard::lock();
        // SAFETY: live, pinned and on no list (caller).
        unsafe { push(&mut g, this.cast_mut(), State::Live) };
    }

    /// Takes the entry out, from its value's `Drop`: `true` if the caller
    /// must stop or unregister the value itself, `false` if the module's
    /// exit already did (waiting for it to finish).
    ///
    /// # Safety
    ///
    /// `this` was made by [`Entry::new`]; called once, from the drop
    /// of its value.
    pub(crate) unsafe fn leave(this: *const Entry) -> bool {
        let e = this.cast_mut();
        loop {
            let mut g = Guard::lock();
            // SAFETY: `e` is live (the caller is dropping its value).
            let state = unsafe { g.links(e) }.state;
            match state {
                State::Out => return true,
                State::Live | State::Swept => {
                    // SAFETY: on the list of its state (type invariants).
                    unsafe {
                        unlink(&mut g, e, state);
                        g.links(e).state = State::Out;
                    }
                    return state == State::Live;
                }
                State::Sweeping => {
                    drop(g);
                    // The sweep is stopping it: wait for the end, after
                    // which the sweep does not touch it again.
                    // SAFETY: no lock is held; sleeps a tick.
                    unsafe { bindings::schedule_timeout_uninterruptible(1) };
                }
            }
        }
    }

    /// Takes the entry out if it is live, without waiting: `false` if the
    /// sweep holds it (it is stopping the value now).
    ///
    /// # Safety
    ///
    /// As for [`Entry::leave`], which is not called after a `true`.
    pub(crate) unsafe fn try_leave(this: *const Entry) -> bool {
        let e = this.cast_mut();
        let mut g = Guard::lock();
        // SAFETY: `e` is live (caller).
        if unsafe { g.links(e) }.state != State::Live {
            return false;
        }
        // SAFETY: on the live list (type invariants).
        unsafe {
            unlink(&mut g, e, State::Live);
            g.links(e).state = State::Out;
        }
        true
    }

    /// Marks the value as living in a heap block that starts at `alloc`
    /// and that only this crate allocated: if it is leaked, the exit tells
    /// kmemleak that the block is kept on purpose (the warning has said
    /// it).
    pub(crate) fn set_alloc(&self, alloc: *const c_void) {
        self.alloc.store(alloc.cast_mut(), Ordering::Relaxed);
    }

    /// Initialises a value in a heap block of its own (a registration's
    /// `new_pinned`) and marks the block on the value's `entry`
    /// ([`Entry::set_alloc`]).
    pub(crate) fn pin_own_block<T, E: From<AllocError>>(
        init: impl PinInit<T, E>,
        entry: impl FnOnce(&T) -> &Entry,
    ) -> Result<Pin<KBox<T>>, E> {
        let value = KBox::pin_init(init, GFP_KERNEL)?;
        let at: *const T = &*value;
        entry(&value).set_alloc(at.cast());
        Ok(value)
    }

    /// Warns that the value of this entry was leaked, and what is done
    /// about it (`"stopping it"`).
    pub(crate) fn warn_leaked(&self, action: &CStr) {
        let name = (self.ops.name)();
        // SAFETY: the name is valid for `len` bytes; `action` is
        // NUL-terminated. The helper only formats them.
        unsafe {
            bindings::rust_helper_unload_warn(
                name.as_ptr().cast::<c_char>(),
                name.len(),
                action.as_ptr(),
            )
        };
    }
}

/// Takes the next live entry for the sweep, kernel threads first.
fn take_next() -> Option<*mut Entry> {
    let mut g = Guard::lock();
    let mut pick: *mut Entry = ptr::null_mut();
    let mut e = g.lists().live;
    while !e.is_null() {
        // SAFETY: entries on a list are live (type invariants).
        if pick.is_null() || unsafe { (*e).ops.kthread } {
            pick = e;
            // SAFETY: as above.
            if unsafe { (*e).ops.kthread } {
                break;
            }
        }
        // SAFETY: as above.
        e = unsafe { g.links(e) }.next;
    }
    if pick.is_null() {
        return None;
    }
    // SAFETY: on the live list; from now on its `Drop` waits for us.
    unsafe {
        unlink(&mut g, pick, State::Live);
        g.links(pick).state = State::Sweeping;
    }
    Some(pick)
}

/// Stops every live entry once; returns how many.
fn sweep_once() -> usize {
    let mut n = 0;
    while let Some(e) = take_next() {
        // SAFETY: taken by the sweep (state `Sweeping`), so its value stays
        // alive until the state changes: a concurrent `Drop` waits.
        unsafe { ((*e).ops.stop)(e) };
        let mut g = Guard::lock();
        // SAFETY: `e` is still alive (see above) and on no list. After the
        // unlock, its `Drop` may free it: it is not touched again but
        // through the swept list, under the lock.
        unsafe { push(&mut g, e, State::Swept) };
        n += 1;
    }
    n
}

/// Called at module exit, after the module's value was dropped, and when
/// its init failed: stops every kernel thread and unregisters every
/// registration still alive (each leaked: it warns), and waits for the
/// module's work items; then frees what only this crate pointed to.
pub(crate) fn sweep() {
    loop {
        let stopped = sweep_once();
        // Work items may drop or make threads and registrations.
        crate::workqueue::drain();
        let empty = Guard::lock().lists().live.is_null();
        if stopped == 0 && empty {
            break;
        }
    }
    // No code of the module runs any more: what is left on the swept list
    // was leaked for good, and no `Drop` will take it out.
    loop {
        let e = {
            let mut g = Guard::lock();
            let e = g.lists().swept;
            if e.is_null() {
                break;
            }
            // SAFETY: on the swept list (type invariants).
            unsafe {
                unlink(&mut g, e, State::Swept);
                g.links(e).state = State::Out;
            }
            e
        };
        // Without kmemleak (Debian's kernels) the helper does nothing, and
        // the call is left out.
        // SAFETY: stopped, and nothing uses the value again (see above).
        #[cfg(CONFIG_DEBUG_KMEMLEAK)]
        unsafe {
            let alloc = (*e).alloc.load(Ordering::Relaxed);
            if !alloc.is_null() {
                bindings::rust_helper_kmemleak_not_leak(alloc);
            }
        }
        // SAFETY: `e` is live until reclaimed (see above).
        if let Some(reclaim) = unsafe { (*e).ops.reclaim } {
            // SAFETY: as above.
            unsafe { reclaim(e) };
        }
    }
}
