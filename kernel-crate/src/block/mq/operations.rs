//! [`Operations`]: what a blk-mq driver does, and its `struct blk_mq_ops`.
//!
//! C header: [`include/linux/blk-mq.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blk-mq.h)

use core::ffi::{c_int, c_uint, c_void};
use core::marker::PhantomData;

use super::request::{Busy, Pdu, Queued, Request, TimedOut};
use super::tag_set::TagSet;
use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{code::EINVAL, code::ENOTTY, from_result, Result};
use crate::file::IoctlCommand;

/// What the timeout handler decided ([`Operations::timeout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutAction {
    /// The driver has given the request back (ended or completed it), or
    /// will soon (`BLK_EH_DONE`).
    Done,
    /// The request is still the device's: wait another timeout
    /// (`BLK_EH_RESET_TIMER`).
    ResetTimer,
}

// ANCHOR: operations
/// A blk-mq driver's callbacks. Implemented by a type of the driver's, with
/// `#[vtable]` on the trait's implementation: the C table gets only the
/// optional callbacks it defines.
///
/// The data types are where the driver keeps its state: one
/// [`SetData`](Self::SetData) per [`TagSet`], one
/// [`HwData`](Self::HwData) per hardware queue, one
/// [`QueueData`](Self::QueueData) per disk and one
/// [`RequestData`](Self::RequestData) per request (allocated with the
/// request, once, when the tag set is made: the I/O path allocates
/// nothing).
#[crate::vtable]
pub trait Operations: Sized + 'static {
    /// Per request: what the driver needs while the request is its own
    /// (a command buffer, a status, a scatterlist).
    type RequestData: Send;
    /// Per disk, given to [`GenDiskBuilder::build`](super::GenDiskBuilder::build).
    type QueueData: Send + Sync;
    /// Per tag set, given to [`TagSet::new`]: the device, shared by its
    /// disks and hardware queues.
    type SetData: Send + Sync;
    /// Per hardware queue, made by [`init_hctx`](Self::init_hctx).
    type HwData: Send + Sync;

    /// Makes the data of one request of hardware queue `hctx_idx`
    /// (`init_request`), on NUMA node `numa_node`.
    fn init_request(
        set: &Self::SetData,
        hctx_idx: u32,
        numa_node: i32,
    ) -> Result<Self::RequestData>;

    /// Makes the data of hardware queue `hctx_idx` (`init_hctx`).
    fn init_hctx(set: &Self::SetData, hctx_idx: u32) -> Result<Self::HwData>;

    /// Hardware queue `hctx_idx` goes away (`exit_hctx`); by default its
    /// data is dropped.
    fn exit_hctx(hw: Self::HwData, _hctx_idx: u32) {
        drop(hw);
    }

    /// A request for the device (`queue_rq`), started (its timeout runs).
    /// `is_last` is false when more requests follow at once: the driver
    /// may then wait for [`commit_rqs`](Self::commit_rqs) or the last
    /// request before it tells the device (rings a doorbell).
    ///
    /// `Ok` means the driver took the request (see the module's
    /// documentation for the ways to give it back); `Err(rq.busy())` that
    /// the device cannot take it now, and blk-mq retries later. `'q` ties
    /// the [`Busy`] to this call's request ([`Queued`]): no other request
    /// can be answered busy.
    ///
    /// Atomic context: blk-mq calls this under `rcu_read_lock` (the tag
    /// set is not `BLK_MQ_F_BLOCKING`), so it must not sleep (see the
    /// module's documentation).
    fn queue_rq<'q>(
        hw: &Self::HwData,
        queue: &Self::QueueData,
        rq: Queued<'q, Self>,
        is_last: bool,
    ) -> Result<(), Busy<'q, Self>>;

    /// Requests queued with `is_last` false will get no last one: tell the
    /// device now (`commit_rqs`).
    fn commit_rqs(_hw: &Self::HwData, _queue: &Self::QueueData) {}

    /// A request given back with [`Request::complete`] (`complete`),
    /// usually on the CPU that issued it: end it.
    ///
    /// Atomic context: blk-mq calls this from the block softirq or an
    /// inter-processor interrupt, or from the caller of
    /// [`Request::complete`] (an interrupt handler): it must not sleep.
    fn complete(queue: &Self::QueueData, rq: Request<Self>);

    /// A request that the device has held for longer than the tag set's
    /// timeout (`timeout`). Without this callback, blk-mq waits another
    /// timeout, as for [`TimeoutAction::ResetTimer`].
    ///
    /// Process context (blk-mq's timeout work): this may sleep.
    fn timeout(_queue: &Self::QueueData, _rq: &TimedOut<'_, Self>) -> TimeoutAction {
        TimeoutAction::ResetTimer
    }

    /// Looks for completions on hardware queue `hw` (`poll`, for polled
    /// I/O); returns how many it found.
    fn poll(_hw: &Self::HwData, _queue: &Self::QueueData) -> usize {
        0
    }

    // ANCHOR: ioctl
    /// An `ioctl(2)` on the disk (or one of its partitions) that the block
    /// layer does not handle itself (`block_device_operations.ioctl`):
    /// `ENOTTY` for a command the driver does not know. What it returns is
    /// the call's result.
    ///
    /// The argument is user space's: a number, or an address to reach only
    /// through [`IoctlCommand::user_slice`] or [`crate::user::UserSlice`].
    /// Calls may come from any process that has the disk open, also while
    /// or after the driver removes it: dropping the [`GenDisk`] waits for
    /// the calls under way (so a call should not wait long, and must not
    /// wait for the disk's removal), and later ones fail with `ENXIO`
    /// without reaching the driver. Only 64-bit processes reach it
    /// (there is no `compat_ioctl`).
    ///
    /// Process context: this may sleep.
    ///
    /// [`GenDisk`]: super::GenDisk
    fn ioctl(_queue: &Self::QueueData, _cmd: IoctlCommand) -> Result<i32> {
        Err(ENOTTY)
    }
    // ANCHOR_END: ioctl

    /// Chooses the hardware queue of each CPU (`map_queues`), when the tag
    /// set is made. Without this callback blk-mq spreads the CPUs over the
    /// queues by topology ([`QueueMap::map_default`]).
    fn map_queues(_set: &Self::SetData, _map: &mut QueueMap<'_>) {}
}
// ANCHOR_END: operations

/// Which hardware queue serves each CPU: the tag set's default map
/// (`struct blk_mq_queue_map`), given to [`Operations::map_queues`].
///
/// # Invariants
///
/// `map` is the default map of a tag set being set up: `mq_map` has an
/// entry for each of the `nr_cpu_ids` possible CPUs, and the set has
/// `nr_queues` hardware queues from `queue_offset`.
pub struct QueueMap<'a> {
    map: &'a mut bindings::blk_mq_queue_map,
}

impl QueueMap<'_> {
    /// How many hardware queues the map spreads CPUs over.
    pub fn nr_queues(&self) -> u32 {
        self.map.nr_queues
    }

    /// How many CPUs there may be (`nr_cpu_ids`): the map's length.
    pub fn nr_cpus(&self) -> u32 {
        // SAFETY: reads a variable fixed at boot.
        unsafe { bindings::rust_helper_nr_cpu_ids() }
    }

    /// Sends CPU `cpu`'s requests to hardware queue `queue`; `EINVAL` for a
    /// CPU or queue out of range.
    pub fn set(&mut self, cpu: u32, queue: u32) -> Result {
        if cpu >= self.nr_cpus() || queue >= self.nr_queues() {
            return Err(EINVAL);
        }
        // SAFETY: `mq_map` has `nr_cpu_ids` entries (type invariant) and
        // `cpu` is below that (checked above); `&mut self` makes this the
        // only writer.
        unsafe { *self.map.mq_map.add(cpu as usize) = self.map.queue_offset + queue };
        Ok(())
    }

    /// blk-mq's own map (`blk_mq_map_queues`): CPUs spread by topology,
    /// siblings of a core together.
    pub fn map_default(&mut self) {
        // SAFETY: the map is a tag set's, being set up (type invariant).
        unsafe { bindings::blk_mq_map_queues(self.map) };
    }
}

/// The `struct blk_mq_ops` of `T`.
pub(crate) struct OperationsVTable<T>(PhantomData<T>);

impl<T: Operations> OperationsVTable<T> {
    const VTABLE: bindings::blk_mq_ops = bindings::blk_mq_ops {
        queue_rq: Some(Self::queue_rq),
        commit_rqs: vtable_slot!(T::HAS_COMMIT_RQS, Self::commit_rqs),
        timeout: vtable_slot!(T::HAS_TIMEOUT, Self::timeout),
        poll: vtable_slot!(T::HAS_POLL, Self::poll),
        complete: Some(Self::complete),
        init_hctx: Some(Self::init_hctx),
        exit_hctx: Some(Self::exit_hctx),
        init_request: Some(Self::init_request),
        exit_request: Some(Self::exit_request),
        map_queues: vtable_slot!(T::HAS_MAP_QUEUES, Self::map_queues),
        // SAFETY: all-zero is a valid `blk_mq_ops`: every other field is an
        // optional function pointer.
        ..unsafe { core::mem::zeroed() }
    };

    /// The table, for `blk_mq_tag_set.ops`: a constant, in the module's
    /// read-only data for as long as its code.
    pub(crate) const fn build() -> &'static bindings::blk_mq_ops {
        &Self::VTABLE
    }

    /// The data of the disk whose queue `hctx` belongs to.
    ///
    /// # Safety
    ///
    /// `hctx` is a hardware queue of a disk made by `GenDiskBuilder::build`
    /// for `T`, during a callback (the disk's data outlives its queues'
    /// callbacks).
    unsafe fn queue_data<'a>(hctx: *mut bindings::blk_mq_hw_ctx) -> &'a T::QueueData {
        // SAFETY: `build` stored a `KBox<T::QueueData>` in `queuedata`, which
        // the `GenDisk` frees only after `del_gendisk` (no more callbacks).
        unsafe { &*bindings::rust_helper_hctx_queuedata(hctx).cast::<T::QueueData>() }
    }

    /// The data of hardware queue `hctx`.
    ///
    /// # Safety
    ///
    /// `hctx` is a hardware queue of a tag set for `T` between its
    /// `init_hctx` and `exit_hctx`.
    unsafe fn hw_data<'a>(hctx: *mut bindings::blk_mq_hw_ctx) -> &'a T::HwData {
        // SAFETY: `init_hctx` stored a `KBox<T::HwData>` in `driver_data`,
        // which `exit_hctx` takes back.
        unsafe { &*bindings::rust_helper_hctx_driver_data(hctx).cast::<T::HwData>() }
    }

    unsafe extern "C" fn queue_rq(
        hctx: *mut bindings::blk_mq_hw_ctx,
        bd: *const bindings::blk_mq_queue_data,
    ) -> bindings::blk_status_t {
        // SAFETY: blk-mq passes a valid `bd` naming a request of this
        // hardware queue, which it now hands to the driver.
        let (rq, last) = unsafe { ((*bd).rq, (*bd).last) };
        // SAFETY: the request is the driver's from here on; it is started
        // once, before the driver sees it (`blk_mq_start_request` arms the
        // timeout, which finds the request in flight or owned).
        unsafe { bindings::blk_mq_start_request(rq) };
        // SAFETY: `rq` belongs to a tag set for `T` and nothing else holds
        // a `Request` for it: blk-mq just handed it over.
        let request = unsafe { Request::<T>::take(rq, true) };
        // SAFETY: this call's request; `T::queue_rq` is generic over the
        // brand, which no other `Queued` shares.
        let request = unsafe { Queued::new(request) };
        // SAFETY: the callback runs on a hardware queue of a disk of `T`,
        // between `init_hctx` and `exit_hctx`.
        let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
        match T::queue_rq(hw, queue, request, last) {
            Ok(()) => bindings::RUST_CONST_HELPER_BLK_STS_OK,
            Err(busy) => {
                // blk-mq takes the request back, not ended, and requeues it.
                // It is `rq`: a `Busy<'q>` is made only from this call's
                // `Queued<'q>`.
                let _ = busy.into_request().into_idle();
                bindings::RUST_CONST_HELPER_BLK_STS_RESOURCE
            }
        }
    }

    unsafe extern "C" fn commit_rqs(hctx: *mut bindings::blk_mq_hw_ctx) {
        // SAFETY: as in `queue_rq`.
        let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
        T::commit_rqs(hw, queue);
    }

    unsafe extern "C" fn complete(rq: *mut bindings::request) {
        // SAFETY: blk-mq calls `complete` only for a request that
        // `Request::complete` passed to `blk_mq_complete_request`, which
        // gave up its handle: this is the only one.
        let request = unsafe { Request::<T>::take(rq, false) };
        // SAFETY: the request belongs to a disk of `T`, whose data lives
        // while it has requests.
        let queue = unsafe { &*bindings::rust_helper_rq_queuedata(rq).cast::<T::QueueData>() };
        T::complete(queue, request);
    }

    unsafe extern "C" fn timeout(rq: *mut bindings::request) -> bindings::blk_eh_timer_return {
        // SAFETY: blk-mq holds a reference on the request for the callback;
        // it belongs to a disk of `T`, whose data lives while it has
        // requests.
        let (timed_out, queue) = unsafe {
            (
                TimedOut::<T>::new(rq),
                &*bindings::rust_helper_rq_queuedata(rq).cast::<T::QueueData>(),
            )
        };
        match T::timeout(queue, &timed_out) {
            TimeoutAction::Done => bindings::BLK_EH_DONE,
            TimeoutAction::ResetTimer => bindings::BLK_EH_RESET_TIMER,
        }
    }

    unsafe extern "C" fn poll(
        hctx: *mut bindings::blk_mq_hw_ctx,
        _iob: *mut bindings::io_comp_batch,
    ) -> c_int {
        // SAFETY: as in `queue_rq`.
        let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
        c_int::try_from(T::poll(hw, queue)).unwrap_or(c_int::MAX)
    }

    unsafe extern "C" fn init_hctx(
        hctx: *mut bindings::blk_mq_hw_ctx,
        set_data: *mut c_void,
        hctx_idx: c_uint,
    ) -> c_int {
        from_result(|| {
            // SAFETY: `set_data` is the tag set's `driver_data`, which
            // `TagSet::new` points at its `T::SetData` for the set's life.
            let set = unsafe { &*set_data.cast::<T::SetData>() };
            let data = KBox::new(T::init_hctx(set, hctx_idx)?, GFP_KERNEL)?;
            // SAFETY: blk-mq is setting the queue up: nothing reads
            // `driver_data` yet; `exit_hctx` takes the box back.
            unsafe {
                bindings::rust_helper_hctx_set_driver_data(hctx, KBox::into_raw(data).cast())
            };
            Ok(0)
        })
    }

    unsafe extern "C" fn exit_hctx(hctx: *mut bindings::blk_mq_hw_ctx, hctx_idx: c_uint) {
        // SAFETY: `init_hctx` succeeded for this queue (blk-mq calls
        // `exit_hctx` only then) and stored a `KBox<T::HwData>`; this is
        // its last use.
        let data = unsafe {
            KBox::from_raw(bindings::rust_helper_hctx_driver_data(hctx).cast::<T::HwData>())
        };
        // SAFETY: as above; the pointer must not be used again.
        unsafe { bindings::rust_helper_hctx_set_driver_data(hctx, core::ptr::null_mut()) };
        T::exit_hctx(data.into_inner(), hctx_idx);
    }

    unsafe extern "C" fn init_request(
        set: *mut bindings::blk_mq_tag_set,
        rq: *mut bindings::request,
        hctx_idx: c_uint,
        numa_node: c_uint,
    ) -> c_int {
        from_result(|| {
            // SAFETY: `set` is a tag set made by `TagSet::<T>::new`, whose
            // `driver_data` points at its `T::SetData`.
            let data = unsafe { &*TagSet::<T>::set_data_of(set) };
            // `NUMA_NO_NODE` (-1) arrives as `c_uint::MAX`.
            let node = numa_node as i32;
            let pdu = Pdu::<T>::new(T::init_request(data, hctx_idx, node)?);
            // SAFETY: the set's `cmd_size` is the size of `Pdu<T>`, whose
            // alignment the request's allows (checked in `TagSet::new`):
            // the PDU area is ours to initialise, once, before any use.
            unsafe {
                bindings::rust_helper_blk_mq_rq_to_pdu(rq)
                    .cast::<Pdu<T>>()
                    .write(pdu)
            };
            Ok(0)
        })
    }

    unsafe extern "C" fn map_queues(set: *mut bindings::blk_mq_tag_set) {
        // SAFETY: `set` is a tag set made by `TagSet::<T>::new`, being set
        // up (`blk_mq_alloc_tag_set` calls this): its data is in place, and
        // its default map is allocated for every possible CPU.
        let (data, map) = unsafe {
            (
                &*TagSet::<T>::set_data_of(set),
                &mut (*set).map[bindings::HCTX_TYPE_DEFAULT as usize],
            )
        };
        // INVARIANT: the default map of a tag set being set up.
        T::map_queues(data, &mut QueueMap { map });
    }

    unsafe extern "C" fn exit_request(
        _set: *mut bindings::blk_mq_tag_set,
        rq: *mut bindings::request,
        _hctx_idx: c_uint,
    ) {
        // SAFETY: blk-mq calls `exit_request` only for requests whose
        // `init_request` succeeded, once, when nothing uses them any more.
        unsafe {
            bindings::rust_helper_blk_mq_rq_to_pdu(rq)
                .cast::<Pdu<T>>()
                .drop_in_place()
        };
    }
}
