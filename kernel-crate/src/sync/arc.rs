//! [`Arc`]: a reference-counted pointer over `refcount_t`, and
//! [`ArcBorrow`], its borrowed form.
//!
//! C header: [`include/linux/refcount.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/refcount.h)
//!
//! An `Arc` can become a raw pointer and back ([`Arc::into_raw`],
//! [`Arc::from_raw`]): the pointer carries the count with it, as a C
//! pointer stored in a structure does. Intrusive lists ([`crate::list`])
//! keep their items that way.

use core::ffi::c_int;
use core::marker::PhantomData;
use core::mem::{offset_of, ManuallyDrop};
use core::ops::Deref;
use core::ptr::{self, NonNull};

use crate::alloc::{AllocError, Flags, KBox};
use crate::bindings;
use crate::init::{Opaque, PinInit};

// A `refcount_t` is `struct { atomic_t refs; }` and an `atomic_t` is
// `struct { int counter; }`: `Arc::pin_init` sets the count with a write
// of an `int`.
const _: () = assert!(
    core::mem::size_of::<bindings::refcount_t>() == core::mem::size_of::<c_int>()
        && core::mem::align_of::<bindings::refcount_t>() == core::mem::align_of::<c_int>()
);

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
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn new(value: T, flags: Flags) -> Result<Self, AllocError> {
        Self::pin_init(value, flags)
    }

    /// Initialises a value in place on the heap, with a count of one.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
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
        // SAFETY: the count is in the block and not yet shared, so a plain
        // write initialises it: a `refcount_t` is an `atomic_t`, an `int`
        // (checked below), and this is C's `REFCOUNT_INIT(1)`.
        unsafe {
            Opaque::raw_get(ptr::addr_of_mut!((*slot).refcount))
                .cast::<c_int>()
                .write(1)
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

    // ANCHOR: raw
    /// Gives up this `Arc` for a pointer to its value, which keeps the
    /// count: the value lives at least until [`Arc::from_raw`] takes the
    /// pointer back.
    pub fn into_raw(this: Self) -> *const T {
        let this = ManuallyDrop::new(this);
        // SAFETY: the block is live (type invariant); nothing is read.
        unsafe { ptr::addr_of!((*this.ptr.as_ptr()).data) }
    }

    /// Takes back an `Arc` given up by [`Arc::into_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` came from [`Arc::into_raw`] on an `Arc<T>`, and the count
    /// that call kept has not been taken back already: each `into_raw` is
    /// matched by at most one `from_raw`.
    pub unsafe fn from_raw(ptr: *const T) -> Self {
        // INVARIANT: the caller passes the value of a live `ArcInner<T>`
        // whose count includes the one `into_raw` kept, now this `Arc`'s.
        Arc {
            // SAFETY: the caller passes a pointer from `into_raw`.
            ptr: unsafe { Self::inner_of(ptr) },
            _owns: PhantomData,
        }
    }

    /// A borrowed form of this `Arc`, for as long as it lives.
    pub fn as_arc_borrow(&self) -> ArcBorrow<'_, T> {
        // INVARIANT: `self` keeps the block alive while the borrow lasts.
        ArcBorrow {
            inner: self.ptr,
            _borrow: PhantomData,
        }
    }
    // ANCHOR_END: raw

    /// The block whose value `ptr` points at.
    ///
    /// # Safety
    ///
    /// `ptr` came from [`Arc::into_raw`].
    unsafe fn inner_of(ptr: *const T) -> NonNull<ArcInner<T>> {
        let inner = ptr
            .cast::<u8>()
            .wrapping_sub(offset_of!(ArcInner<T>, data))
            .cast::<ArcInner<T>>();
        // SAFETY: the caller passes the value of an `ArcInner<T>`, whose
        // address (a `KBox`'s) is not null.
        unsafe { NonNull::new_unchecked(inner.cast_mut()) }
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
            // SAFETY: the count reached zero: no other `Arc` exists.
            unsafe { Self::drop_last(self.ptr) };
        }
    }
}

impl<T> Arc<T> {
    /// Drops the value and frees the block, once the count has reached
    /// zero. Out of line: every `Arc<T>` that may be the last shares one
    /// copy of the value's drop.
    ///
    /// # Safety
    ///
    /// `ptr` is the block of an `Arc<T>` whose count has reached zero: no
    /// `Arc` or `ArcBorrow` of it is used again.
    #[inline(never)]
    unsafe fn drop_last(ptr: NonNull<ArcInner<T>>) {
        // SAFETY: the block came from a `KBox` and holds an initialised
        // value (type invariants), which no one else uses (caller).
        drop(unsafe { KBox::from_raw(ptr.as_ptr()) });
    }
}

/// An [`Arc`] borrowed for `'a`: it derefs to the value and clones into
/// an `Arc`, like `&Arc<T>`, but is one pointer that can be made from a
/// raw pointer ([`ArcBorrow::from_raw`]), the way an intrusive list
/// hands out the items it keeps.
///
/// ```rust
/// use kernel::sync::{Arc, ArcBorrow};
///
/// // A function that may keep what it is lent: it clones the borrow.
/// fn keep(b: ArcBorrow<'_, u32>) -> Arc<u32> {
///     b.into()
/// }
///
/// let a = Arc::new(7u32, GFP_KERNEL)?;
/// let b = a.as_arc_borrow();
/// let c = keep(b);
/// pr_info!("{} {} same: {}\n", *b, *c, Arc::ptr_eq(&a, &c));
/// if *c != 7 || !Arc::ptr_eq(&a, &c) {
///     return Err(EINVAL);
/// }
/// ```
///
// ANCHOR: arc_borrow
/// # Invariants
///
/// `inner` points to a live `ArcInner<T>` whose count is held, for all
/// of `'a`, by an `Arc` or a pointer from [`Arc::into_raw`] that this
/// borrow does not own.
pub struct ArcBorrow<'a, T> {
    inner: NonNull<ArcInner<T>>,
    _borrow: PhantomData<&'a ArcInner<T>>,
}
// ANCHOR_END: arc_borrow

// SAFETY: an `ArcBorrow` gives `&T` and can make an `Arc<T>` in the thread
// it is sent to, which is what `Arc<T>: Send` needs.
unsafe impl<T: Send + Sync> Send for ArcBorrow<'_, T> {}
// SAFETY: `&ArcBorrow` gives no more than an `ArcBorrow` does (it is
// `Copy`), hence the same bounds as `Arc<T>: Sync`.
unsafe impl<T: Send + Sync> Sync for ArcBorrow<'_, T> {}

impl<T> ArcBorrow<'_, T> {
    /// A borrow of the `Arc` that `ptr` stands for.
    ///
    /// # Safety
    ///
    /// `ptr` came from [`Arc::into_raw`], and the count that call kept is
    /// not taken back ([`Arc::from_raw`]) while the borrow lives.
    pub unsafe fn from_raw(ptr: *const T) -> Self {
        // INVARIANT: the caller's count keeps the block alive for `'a`.
        ArcBorrow {
            // SAFETY: the caller passes a pointer from `into_raw`.
            inner: unsafe { Arc::inner_of(ptr) },
            _borrow: PhantomData,
        }
    }
}

impl<T> Clone for ArcBorrow<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ArcBorrow<'_, T> {}

impl<T> Deref for ArcBorrow<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the block is live for `'a` (type invariant) and only
        // shared.
        unsafe { &self.inner.as_ref().data }
    }
}

impl<T> From<ArcBorrow<'_, T>> for Arc<T> {
    fn from(b: ArcBorrow<'_, T>) -> Self {
        // INVARIANT: a temporary `Arc` on the borrowed count, never
        // dropped; its clone takes a count of its own.
        let borrowed = ManuallyDrop::new(Arc {
            ptr: b.inner,
            _owns: PhantomData,
        });
        Arc::clone(&borrowed)
    }
}
