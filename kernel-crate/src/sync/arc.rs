//! [`Arc`]: a reference-counted pointer over `refcount_t`.
//!
//! C header: [`include/linux/refcount.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/refcount.h)

use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr::{self, NonNull};

use crate::alloc::{AllocError, Flags, KBox};
use crate::bindings;
use crate::init::{Opaque, PinInit};

/// The heap block of an [`Arc`]: the count and the value.
#[repr(C)]
struct ArcInner<T> {
    refcount: Opaque<bindings::refcount_t>,
    data: T,
}

// ANCHOR: arc
/// A value on the heap shared by several owners; the last one to drop its
/// `Arc` drops the value. The count is a C `refcount_t`, which saturates
/// (and warns) instead of overflowing.
///
/// The value never moves, so an `Arc` may hold a value that must not move:
/// a lock made by [`Arc::pin_init`].
///
/// # Invariants
///
/// `ptr` points to a live `ArcInner<T>` from a [`KBox`], whose count
/// includes this `Arc`.
pub struct Arc<T> {
    ptr: NonNull<ArcInner<T>>,
    _owns: PhantomData<ArcInner<T>>,
}
// ANCHOR_END: arc

// SAFETY: an `Arc<T>` in another thread gives `&T` there (`T: Sync`) and
// may drop the value there (`T: Send`); the count is atomic.
unsafe impl<T: Send + Sync> Send for Arc<T> {}
// SAFETY: as above: `&Arc<T>` can be cloned into an `Arc<T>`.
unsafe impl<T: Send + Sync> Sync for Arc<T> {}

impl<T> Arc<T> {
    /// Moves `value` to the heap, with a count of one.
    pub fn new(value: T, flags: Flags) -> Result<Self, AllocError> {
        Self::pin_init(value, flags)
    }

    /// Initialises a value in place on the heap, with a count of one.
    pub fn pin_init<E: From<AllocError>>(
        init: impl PinInit<T, E>,
        flags: Flags,
    ) -> Result<Self, E> {
        let inner = KBox::<ArcInner<T>>::new_uninit(flags)?;
        let slot: *mut ArcInner<T> = KBox::into_raw(inner).cast();
        // SAFETY: `slot` is a fresh block for an `ArcInner<T>`; the value
        // will not move (it stays in this block until it is dropped).
        if let Err(e) = unsafe { init.__pinned_init(ptr::addr_of_mut!((*slot).data)) } {
            // SAFETY: the block came from `KBox::into_raw` above, and holds
            // nothing to drop.
            drop(unsafe { KBox::from_raw(slot.cast::<core::mem::MaybeUninit<ArcInner<T>>>()) });
            return Err(e);
        }
        // SAFETY: the count is in the block and not yet shared.
        unsafe {
            bindings::rust_helper_refcount_set(
                Opaque::raw_get(ptr::addr_of_mut!((*slot).refcount)),
                1,
            )
        };
        // INVARIANT: the block is initialised with a count of one, this `Arc`.
        Ok(Arc {
            // SAFETY: `into_raw` never returns null.
            ptr: unsafe { NonNull::new_unchecked(slot) },
            _owns: PhantomData,
        })
    }

    /// Whether two `Arc`s share one value.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        a.ptr == b.ptr
    }
}

impl<T> Clone for Arc<T> {
    fn clone(&self) -> Self {
        // SAFETY: the block is live (type invariant).
        unsafe { bindings::rust_helper_refcount_inc(self.ptr.as_ref().refcount.as_raw()) };
        // INVARIANT: the count now includes the new `Arc`.
        Arc {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T> Deref for Arc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the block is live (type invariant) and only shared.
        unsafe { &self.ptr.as_ref().data }
    }
}

impl<T> Drop for Arc<T> {
    fn drop(&mut self) {
        // SAFETY: the block is live (type invariant) while this `Arc` counts.
        let last = unsafe {
            bindings::rust_helper_refcount_dec_and_test(self.ptr.as_ref().refcount.as_raw())
        } != 0;
        if last {
            // SAFETY: the count reached zero: no other `Arc` exists; the
            // block came from a `KBox` and holds an initialised value.
            drop(unsafe { KBox::from_raw(self.ptr.as_ptr()) });
        }
    }
}
