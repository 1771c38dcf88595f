//! In-place initialisation: values that must not move once initialised.
//!
//! A C `struct mutex`, `spinlock_t` or `wait_queue_head` may hold pointers
//! to itself (a wait list is a circular list whose empty head points at
//! itself), and the kernel may keep pointers to it (a waiter on the list).
//! Moving one after `mutex_init()` — a plain Rust move, a `memcpy` — leaves
//! those pointers dangling. Such a type is therefore never returned by
//! value: its constructor returns an *initialiser*, a [`PinInit<T>`], and
//! whoever owns the memory runs it on the final address:
//!
//! ```rust
//! let counter: Pin<KBox<Mutex<u64>>> = KBox::pin_init(new_mutex!(0), GFP_KERNEL)?;
//! let shared: Arc<Mutex<u64>> = Arc::pin_init(new_mutex!(0), GFP_KERNEL)?;
//! ```
//!
//! The types that need this are `!Unpin` (they hold a
//! [`PhantomPinned`]), and the only ways to own
//! one are pinned: `Pin<KBox<T>>`, `Arc<T>` or a `static`. Safe code can
//! then never get a `&mut T` to move out of: `Pin::get_mut`,
//! `Pin::into_inner` and `DerefMut` for `Pin` all require `T: Unpin`.
//!
//! This is a small subset of mainline's `pin-init` crate
//! (`rust/kernel/init.rs`): the trait, a closure-based constructor and the
//! pinned owners. C header: none; this is Rust-side machinery.

use core::cell::UnsafeCell;
use core::marker::{PhantomData, PhantomPinned};
use core::mem::MaybeUninit;

use crate::error::{Error, Result};

// ANCHOR: pin_init
/// An initialiser of a `T` in place, at an address that will not change.
///
/// # Safety
///
/// An implementation's [`__pinned_init`](PinInit::__pinned_init) must
/// either initialise `*slot` completely and return `Ok`, or return `Err`
/// and leave `*slot` uninitialised (dropping anything it had already
/// written).
pub unsafe trait PinInit<T, E = Error>: Sized {
    /// Initialises `*slot`.
    ///
    /// # Safety
    ///
    /// `slot` is valid for writes of a `T` and not used by anything else;
    /// if this returns `Ok`, the caller treats `*slot` as pinned: it is
    /// never moved and is dropped in place before its memory is reused.
    unsafe fn __pinned_init(self, slot: *mut T) -> Result<(), E>;
}
// ANCHOR_END: pin_init

/// The signature of an initialiser closure, for [`ClosureInit`]'s marker.
type InitFn<T, E> = fn(*mut T) -> Result<(), E>;

/// The initialiser made by [`pin_init_from_closure`].
struct ClosureInit<F, T, E>(F, PhantomData<InitFn<T, E>>);

// SAFETY: `pin_init_from_closure`'s caller guarantees that the closure
// keeps the contract of `PinInit`.
unsafe impl<T, E, F> PinInit<T, E> for ClosureInit<F, T, E>
where
    F: FnOnce(*mut T) -> Result<(), E>,
{
    unsafe fn __pinned_init(self, slot: *mut T) -> Result<(), E> {
        (self.0)(slot)
    }
}

// ANCHOR: pin_init_from_closure
/// Makes an initialiser from a closure that writes the value at the
/// address it is given.
///
/// # Safety
///
/// `f` must keep the contract of [`PinInit::__pinned_init`]: on `Ok` the
/// slot is completely initialised, on `Err` it holds nothing that needs
/// dropping.
pub unsafe fn pin_init_from_closure<T, E>(
    f: impl FnOnce(*mut T) -> Result<(), E>,
) -> impl PinInit<T, E> {
    ClosureInit(f, PhantomData)
}
// ANCHOR_END: pin_init_from_closure

/// Every value is its own initialiser: it is moved into the slot.
// SAFETY: `write` initialises the slot completely and never fails.
unsafe impl<T, E> PinInit<T, E> for T {
    unsafe fn __pinned_init(self, slot: *mut T) -> Result<(), E> {
        // SAFETY: the caller guarantees that `slot` is valid for writes.
        unsafe { slot.write(self) };
        Ok(())
    }
}

/// Storage for a C value that C code initialises and mutates: Rust never
/// reads or writes it directly, only passes its address to C.
///
/// An `Opaque<T>` may be uninitialised, and it may change behind a shared
/// reference (it is an [`UnsafeCell`]); it is `!Unpin`, because C may keep
/// pointers to it.
#[repr(transparent)]
pub struct Opaque<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    _pin: PhantomPinned,
}

impl<T> Opaque<T> {
    /// Uninitialised storage, for C to initialise in place.
    pub const fn uninit() -> Self {
        Self {
            value: UnsafeCell::new(MaybeUninit::uninit()),
            _pin: PhantomPinned,
        }
    }

    /// The address of the C value.
    pub const fn as_raw(&self) -> *mut T {
        UnsafeCell::raw_get(&self.value).cast()
    }

    /// The address of the C value inside the `Opaque` at `this`, which
    /// need not be initialised.
    pub const fn raw_get(this: *const Self) -> *mut T {
        UnsafeCell::raw_get(this.cast::<UnsafeCell<MaybeUninit<T>>>()).cast()
    }
}

/// Drops a field that [`pin_init!`](crate::pin_init) initialised, when a
/// later field's initialiser fails. Not for use outside the macro.
#[doc(hidden)]
pub struct DropGuard<T>(*mut T);

impl<T> DropGuard<T> {
    /// Guards the initialised value at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` points to an initialised, pinned `T` that nothing else drops;
    /// the guard is forgotten once the whole struct is initialised.
    pub unsafe fn new(ptr: *mut T) -> Self {
        Self(ptr)
    }
}

impl<T> Drop for DropGuard<T> {
    fn drop(&mut self) {
        // SAFETY: the value is initialised and nothing else drops it
        // (contract of `new`); it is dropped in place, as `Pin` requires.
        unsafe { self.0.drop_in_place() };
    }
}

// ANCHOR: pin_init_macro
/// An initialiser of a struct, each field initialised in place from its
/// own initialiser (`field <- init`); a plain value is an initialiser too.
///
/// ```rust
/// struct Shared {
///     count: Mutex<u64>,
///     changed: CondVar,
///     name: &'static str,
/// }
/// let shared = Arc::pin_init(
///     pin_init!(Shared { count <- new_mutex!(0), changed <- new_condvar!(), name <- "x" }),
///     GFP_KERNEL,
/// )?;
/// ```
///
/// Every field must be named exactly once, and be aligned: a struct that
/// is `#[repr(packed)]` is refused unless its fields need no alignment
/// (as mainline's `pin_init!` refuses it, by the same reference to each
/// field). If an initialiser fails (with
/// an [`Error`]; `?` works inside the expressions too), the fields already
/// initialised are dropped in place.
#[macro_export]
macro_rules! pin_init {
    ($t:ident { $($field:ident <- $init:expr),* $(,)? }) => {{
        let init = move |slot: *mut $t| -> $crate::error::Result {
            // The guards of the fields initialised so far, dropped (and
            // with them the fields) if a later initialiser fails.
            let guards = ();
            $(
                // SAFETY: `slot` is valid (contract of `PinInit`); this
                // only computes the field's address.
                let ptr = unsafe { ::core::ptr::addr_of_mut!((*slot).$field) };
                // Evaluated outside any `unsafe` block: the caller's
                // expression gets no licence to call unsafe code.
                let field_init = $init;
                // SAFETY: the field is in the caller's slot, valid for
                // writes and pinned (contract of `PinInit`).
                unsafe { $crate::init::PinInit::<_, $crate::error::Error>::__pinned_init(field_init, ptr) }?;
                // SAFETY: the field was just initialised, and only this
                // guard drops it, until the guards are forgotten below.
                let guards = (guards, unsafe { $crate::init::DropGuard::new(ptr) });
            )*
            // Every field initialised: the struct owns them now.
            ::core::mem::forget(guards);
            // Each field is named exactly once (checked, never run).
            #[allow(unreachable_code, clippy::diverging_sub_expression)]
            let _ = || $t { $($field: ::core::unreachable!()),* };
            // Each field is aligned (checked, never run): a reference to a
            // field of a `#[repr(packed)]` struct that may be misaligned is
            // refused (E0793), where `__pinned_init` would write through
            // a misaligned pointer.
            let _ = |value: &$t| { $(let _ = &value.$field;)* };
            Ok(())
        };
        // SAFETY: the closure initialises every field (the never-run struct
        // expression names them all) or, on error, drops those it did.
        unsafe { $crate::init::pin_init_from_closure::<$t, $crate::error::Error>(init) }
    }};
}
// ANCHOR_END: pin_init_macro
