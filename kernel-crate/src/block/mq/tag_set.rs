//! [`TagSet`]: a driver's hardware queues and the requests they can hold.
//!
//! C header: [`include/linux/blk-mq.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blk-mq.h)

use core::ffi::c_void;
use core::mem::{align_of, size_of};
use core::ptr::addr_of_mut;

use super::operations::OperationsVTable;
use super::request::{claim, Pdu};
use super::{Operations, Request};
use crate::alloc::flags::GFP_KERNEL;
use crate::bindings;
use crate::error::{code::EINVAL, to_result, Result};
use crate::init::{pin_init_from_closure, Opaque};
use crate::sync::Arc;

/// The shape of a [`TagSet`].
#[derive(Clone, Copy, Debug)]
pub struct TagSetOptions {
    /// How many hardware queues (blk-mq uses at most one per CPU).
    pub nr_hw_queues: u32,
    /// How many requests each hardware queue holds at once.
    pub queue_depth: u32,
    /// The NUMA node of the requests' memory, or `None` for any.
    pub numa_node: Option<i32>,
    /// Let blk-mq merge adjacent bios into one request
    /// (`BLK_MQ_F_SHOULD_MERGE`).
    pub should_merge: bool,
    /// How long the device may hold a request before
    /// [`Operations::timeout`], in milliseconds; 0 for blk-mq's default (30
    /// seconds).
    pub timeout_ms: u32,
}

impl Default for TagSetOptions {
    fn default() -> Self {
        TagSetOptions {
            nr_hw_queues: 1,
            queue_depth: 64,
            numa_node: None,
            should_merge: true,
            timeout_ms: 0,
        }
    }
}

// ANCHOR: tag_set
/// A `struct blk_mq_tag_set`: hardware queues, each with `queue_depth`
/// requests (and their [`Operations::RequestData`]), shared by the disks
/// built on it. It lives in an [`Arc`]: each [`GenDisk`](super::GenDisk)
/// keeps its tag set alive.
///
/// # Invariants
///
/// `set` was set up by `blk_mq_alloc_tag_set` with `T`'s operations, a
/// `cmd_size` of `Pdu<T>` and `driver_data` pointing at `data`; it is
/// freed when the `TagSet` is dropped, and never moves before.
pub struct TagSet<T: Operations> {
    set: Opaque<bindings::blk_mq_tag_set>,
    data: T::SetData,
}
// ANCHOR_END: tag_set

// SAFETY: blk-mq synchronises its own use of the tag set; the Rust side
// only reads `data` (`T::SetData: Send + Sync`) and claims requests with
// atomics.
unsafe impl<T: Operations> Send for TagSet<T> {}
// SAFETY: as above: every `&self` method may run on several CPUs at once.
unsafe impl<T: Operations> Sync for TagSet<T> {}

impl<T: Operations> TagSet<T> {
    /// Allocates the tag set and every request of its queues
    /// (`blk_mq_alloc_tag_set`, which calls [`Operations::init_request`]
    /// for each).
    ///
    /// # Context
    ///
    /// May sleep (`blk_mq_alloc_tag_set` allocates with `GFP_KERNEL`): process
    /// context only.
    pub fn new(options: TagSetOptions, data: T::SetData) -> Result<Arc<Self>> {
        // blk-mq places the PDU right after `struct request`, which is
        // 8-byte aligned.
        if align_of::<Pdu<T>>() > align_of::<u64>()
            || options.nr_hw_queues == 0
            || options.queue_depth == 0
        {
            return Err(EINVAL);
        }
        let cmd_size = u32::try_from(size_of::<Pdu<T>>()).map_err(|_| EINVAL)?;
        let timeout = u32::try_from(
            u64::from(options.timeout_ms) * u64::from(bindings::RUST_CONST_HELPER_HZ) / 1000,
        )
        .map_err(|_| EINVAL)?;
        let init = move |slot: *mut Self| -> Result {
            // SAFETY: `slot` is valid for writes and pinned (contract of
            // `PinInit`): the C struct may point at `data`.
            unsafe {
                let data_ptr = addr_of_mut!((*slot).data);
                data_ptr.write(data);
                let set = Opaque::raw_get(addr_of_mut!((*slot).set));
                set.write_bytes(0, 1);
                (*set).ops = OperationsVTable::<T>::build();
                (*set).nr_hw_queues = options.nr_hw_queues;
                (*set).queue_depth = options.queue_depth;
                (*set).cmd_size = cmd_size;
                (*set).numa_node = options
                    .numa_node
                    .unwrap_or(bindings::RUST_CONST_HELPER_NUMA_NO_NODE);
                (*set).timeout = timeout;
                (*set).flags = if options.should_merge {
                    bindings::RUST_CONST_HELPER_BLK_MQ_F_SHOULD_MERGE
                } else {
                    0
                };
                (*set).driver_data = data_ptr.cast();
                if let Err(e) = to_result(bindings::blk_mq_alloc_tag_set(set)) {
                    // Nothing was allocated; `data` is dropped so that the
                    // slot holds nothing (contract of `PinInit`).
                    data_ptr.drop_in_place();
                    return Err(e);
                }
            }
            // INVARIANT: the set is allocated with `T`'s operations and
            // `driver_data` pointing at `data`, in its final place.
            Ok(())
        };
        // SAFETY: the closure initialises the whole `TagSet` or, on error,
        // leaves nothing to drop.
        Arc::pin_init(unsafe { pin_init_from_closure(init) }, GFP_KERNEL)
    }

    /// The data given to [`TagSet::new`].
    pub fn data(&self) -> &T::SetData {
        &self.data
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::blk_mq_tag_set {
        self.set.as_raw()
    }

    /// The `TagSet` whose C tag set is `set`.
    ///
    /// # Safety
    ///
    /// `set` is the C tag set of a `TagSet<T>` that lives for `'a`.
    pub(crate) unsafe fn from_raw<'a>(set: *mut bindings::blk_mq_tag_set) -> &'a Self {
        let this = crate::container_of!(set.cast::<Opaque<bindings::blk_mq_tag_set>>(), Self, set);
        // SAFETY: the caller guarantees that `set` is the `set` field of a
        // live `TagSet<T>` (`Opaque` is transparent), which lives for `'a`.
        unsafe { &*this }
    }

    /// The `T::SetData` of the tag set `set`.
    ///
    /// # Safety
    ///
    /// `set` is the C tag set of a live `TagSet<T>`.
    pub(crate) unsafe fn set_data_of(set: *mut bindings::blk_mq_tag_set) -> *const T::SetData {
        // SAFETY: the caller guarantees that `set` is a `TagSet<T>`'s,
        // whose `driver_data` points at its data (type invariant).
        unsafe { (*set).driver_data.cast::<T::SetData>().cast_const() }
    }

    // ANCHOR: tag_to_rq
    /// The request that hardware queue `hctx_idx` knows by `tag`
    /// (`blk_mq_tag_to_rq`), for a device's completion: `Some` only if the
    /// device holds it ([`Request::into_in_flight`]), and then no other
    /// handle exists. A tag out of range, of a request that is not in
    /// flight or already claimed, gives `None`.
    pub fn tag_to_rq(&self, hctx_idx: u32, tag: u32) -> Option<Request<T>> {
        self.lookup(hctx_idx, tag, None)
    }

    fn lookup(&self, hctx_idx: u32, tag: u32, generation: Option<u8>) -> Option<Request<T>> {
        // SAFETY: the set is allocated (type invariant); the helper checks
        // the queue index and the tag against the set's sizes.
        let rq = unsafe { bindings::rust_helper_blk_mq_tag_to_rq(self.as_raw(), hctx_idx, tag) };
        if rq.is_null() {
            return None;
        }
        // SAFETY: a request of this set's tags: live while the set is, and
        // its PDU initialised by `init_request` when it was allocated.
        unsafe { claim::<T>(rq, generation) }
    }
    // ANCHOR_END: tag_to_rq

    /// [`tag_to_rq`](Self::tag_to_rq), but `Some` only if the request is in
    /// its [`generation`](Request::generation): a completion the device
    /// sends late, for an earlier use of the tag (after a timeout ended
    /// that one), does not take the request that now has the tag.
    pub fn tag_to_rq_checked(&self, hctx_idx: u32, tag: u32, generation: u8) -> Option<Request<T>> {
        self.lookup(hctx_idx, tag, Some(generation))
    }

    /// Claims every request that the device holds, on every hardware queue
    /// (`blk_mq_tagset_busy_iter`), and gives each to `f`: to fail or
    /// requeue what was in flight when a controller is reset or removed.
    pub fn claim_in_flight(&self, mut f: impl FnMut(Request<T>)) {
        let mut f: &mut dyn FnMut(Request<T>) = &mut f;
        // SAFETY: the set is allocated (type invariant); `visit` gets
        // `&mut f` back, which lives across the call.
        unsafe {
            bindings::blk_mq_tagset_busy_iter(
                self.as_raw(),
                Some(Self::visit),
                core::ptr::from_mut(&mut f).cast::<c_void>(),
            )
        };
    }

    /// Quiesces every queue of the set (its disks'): none of them calls
    /// [`Operations::queue_rq`] until the guard is dropped, and calls
    /// under way have returned. Requests requeued meanwhile wait. For a
    /// controller reset, as C's `nvme_dev_disable` quiesces its
    /// namespaces' queues. Sleeps.
    pub fn quiesce(&self) -> QuiescedTagSet<'_, T> {
        // SAFETY: the set is allocated (type invariant); the guard
        // unquiesces it once.
        unsafe { bindings::rust_helper_blk_mq_quiesce_tagset(self.as_raw(), true) };
        // INVARIANT: quiesced just now; the guard borrows the set.
        QuiescedTagSet { set: self }
    }

    unsafe extern "C" fn visit(rq: *mut bindings::request, f: *mut c_void) -> bool {
        // SAFETY: `claim_in_flight` passed a `&mut &mut dyn FnMut`, which
        // outlives the iteration.
        let f = unsafe { &mut *f.cast::<&mut dyn FnMut(Request<T>)>() };
        // SAFETY: the iteration holds a reference on a started request of
        // this set, whose PDU `init_request` initialised.
        if let Some(request) = unsafe { claim::<T>(rq, None) } {
            f(request);
        }
        true
    }
}

impl<T: Operations> Drop for TagSet<T> {
    fn drop(&mut self) {
        // SAFETY: the set is allocated (type invariant), and no disk uses
        // it: each `GenDisk` holds an `Arc` of it until its queue is gone.
        unsafe { bindings::blk_mq_free_tag_set(self.as_raw()) };
    }
}

/// Every queue of a [`TagSet`] quiesced ([`TagSet::quiesce`]);
/// unquiesced when dropped (and their hardware queues run again).
///
/// # Invariants
///
/// The queues of `set` were quiesced once by this guard.
pub struct QuiescedTagSet<'a, T: Operations> {
    set: &'a TagSet<T>,
}

impl<T: Operations> Drop for QuiescedTagSet<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the set is allocated while borrowed, and this guard
        // quiesced its queues (type invariants).
        unsafe { bindings::rust_helper_blk_mq_quiesce_tagset(self.set.as_raw(), false) };
    }
}
