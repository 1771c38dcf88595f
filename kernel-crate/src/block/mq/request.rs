//! [`Request`]: one I/O request, owned by the driver until it gives it back.
//!
//! C header: [`include/linux/blk-mq.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blk-mq.h)

use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU16, Ordering};

use super::{Operations, TagSet};
use crate::bindings;
use crate::device::Device;
use crate::dma::{Direction, MapSgError, SgMapping};
use crate::error::{code::EBUSY, code::EINVAL, Result};
use crate::page::{Page, PAGE_SIZE};
use crate::scatterlist::SgTable;

// Who holds a request, in the low byte of its `Pdu`'s state (see
// `Request`'s invariants); the high byte counts the times blk-mq handed the
// request to `queue_rq` ([`Request::generation`]).
/// blk-mq: not started, ended, or being requeued.
const IDLE: u16 = 0;
/// A `Request` handle.
const OWNED: u16 = 1;
/// The device: no handle exists; a claim by tag makes one.
const IN_FLIGHT: u16 = 2;
/// On its way to `Operations::complete`.
const COMPLETING: u16 = 3;
/// The holder's bits of the state.
const HOLDER: u16 = 0xff;

/// What blk-mq allocates behind each request for the driver (the `cmd_size`
/// bytes that `blk_mq_rq_to_pdu` returns): who holds the request and its
/// generation, the DMA mapping of its pages, and the driver's data.
///
/// # Invariants
///
/// `dma` is `None` while the request is `IDLE`: every way of giving a
/// request back to blk-mq unmaps it first ([`Request::release`], `Drop`).
/// Only the holder of the request (its `Request`) reaches `dma` and `data`.
#[repr(C)]
pub(crate) struct Pdu<T: Operations> {
    state: AtomicU16,
    dma: Option<SgMapping>,
    data: T::RequestData,
}

impl<T: Operations> Pdu<T> {
    pub(crate) fn new(data: T::RequestData) -> Self {
        // INVARIANT: idle and unmapped.
        Pdu {
            state: AtomicU16::new(IDLE),
            dma: None,
            data,
        }
    }
}

/// The holder state of request `rq`.
///
/// # Safety
///
/// `rq` is a live request of a tag set for `T` whose PDU is initialised.
unsafe fn state<'a, T: Operations>(rq: *mut bindings::request) -> &'a AtomicU16 {
    // SAFETY: the PDU is an initialised `Pdu<T>` (the caller guarantees
    // it); the state is atomic, so a shared reference to it alone is fine
    // while the data is borrowed elsewhere.
    unsafe {
        let pdu = bindings::rust_helper_blk_mq_rq_to_pdu(rq).cast::<Pdu<T>>();
        &*ptr::addr_of!((*pdu).state)
    }
}

/// Claims request `rq` for a new [`Request`] if the device holds it (and,
/// with `generation`, if that is the request's generation).
///
/// # Safety
///
/// As for [`state`].
pub(crate) unsafe fn claim<T: Operations>(
    rq: *mut bindings::request,
    generation: Option<u8>,
) -> Option<Request<T>> {
    // SAFETY: the caller guarantees that `rq` is live with a `Pdu<T>`.
    let state = unsafe { state::<T>(rq) };
    let current = state.load(Ordering::Relaxed);
    if current & HOLDER != IN_FLIGHT || generation.is_some_and(|g| g != (current >> 8) as u8) {
        return None;
    }
    // Acquire: what the handle that put it in flight wrote is visible.
    state
        .compare_exchange(
            current,
            (current & !HOLDER) | OWNED,
            Ordering::Acquire,
            Ordering::Relaxed,
        )
        .ok()?;
    // INVARIANT: the state went from in flight to owned here: this is the
    // only handle. The request stays allocated until it is ended, which
    // takes this handle.
    Some(Request {
        // SAFETY: a live request is not null.
        rq: unsafe { NonNull::new_unchecked(rq) },
        _ops: PhantomData,
    })
}

/// What a request asks for (`req_op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read sectors into the request's pages.
    Read,
    /// Write the request's pages to sectors.
    Write,
    /// Make the writes done so far durable (no data).
    Flush,
    /// The sectors' contents may be dropped (no data).
    Discard,
    /// Write zeroes to the sectors (no data).
    WriteZeroes,
    /// Any other operation, by its `REQ_OP_*` number.
    Other(u32),
}

impl Op {
    fn from_raw(op: u32) -> Op {
        match op {
            bindings::RUST_CONST_HELPER_REQ_OP_READ => Op::Read,
            bindings::RUST_CONST_HELPER_REQ_OP_WRITE => Op::Write,
            bindings::RUST_CONST_HELPER_REQ_OP_FLUSH => Op::Flush,
            bindings::RUST_CONST_HELPER_REQ_OP_DISCARD => Op::Discard,
            bindings::RUST_CONST_HELPER_REQ_OP_WRITE_ZEROES => Op::WriteZeroes,
            other => Op::Other(other),
        }
    }
}

// ANCHOR: request
/// A request the driver holds: it must give it back to blk-mq exactly once,
/// and every way to do so consumes it (see [`super`]'s documentation).
/// Dropping it ends it with an I/O error.
///
/// # Invariants
///
/// `rq` is a live request of a tag set for `T`, with an initialised
/// `Pdu<T>`, whose state is `OWNED`; this `Request` is the only one for it.
/// blk-mq does not free or reuse the request until it is given back.
pub struct Request<T: Operations> {
    rq: NonNull<bindings::request>,
    _ops: PhantomData<T>,
}
// ANCHOR_END: request

// SAFETY: a request may be ended on any CPU (blk-mq's completion paths run
// on whichever CPU the interrupt arrives), and the handle gives access to
// `T::RequestData`, which is `Send`.
unsafe impl<T: Operations> Send for Request<T> {}

impl<T: Operations> Request<T> {
    /// Takes request `rq` over from blk-mq; `queue_rq` starts a new
    /// generation (`next_generation`), `complete` does not.
    ///
    /// # Safety
    ///
    /// `rq` is a live request of a tag set for `T` with an initialised
    /// `Pdu<T>`, which blk-mq has just handed to the driver (`queue_rq`,
    /// `complete`): no other `Request` exists for it.
    pub(crate) unsafe fn take(rq: *mut bindings::request, next_generation: bool) -> Self {
        // SAFETY: the caller guarantees that `rq` is live with a `Pdu<T>`.
        let state = unsafe { state::<T>(rq) };
        // Nothing else changes the state now: no handle exists and the
        // request is not in flight, so claims fail.
        let mut generation = state.load(Ordering::Relaxed) & !HOLDER;
        if next_generation {
            generation = generation.wrapping_add(1 << 8);
        }
        state.store(generation | OWNED, Ordering::Relaxed);
        // INVARIANT: the caller guarantees that this is the only handle;
        // the state is now `OWNED`.
        Request {
            // SAFETY: a live request is not null.
            rq: unsafe { NonNull::new_unchecked(rq) },
            _ops: PhantomData,
        }
    }

    fn as_raw(&self) -> *mut bindings::request {
        self.rq.as_ptr()
    }

    fn pdu(&self) -> *mut Pdu<T> {
        // SAFETY: the request is live (type invariant).
        unsafe { bindings::rust_helper_blk_mq_rq_to_pdu(self.as_raw()).cast() }
    }

    /// Gives the request up with its holder set to `to` (`Release`: what
    /// this handle wrote is visible to the next one). Going back to blk-mq
    /// (`IDLE`: ended, requeued, busy) unmaps the request's pages first.
    fn release(mut self, to: u16) -> *mut bindings::request {
        if to == IDLE {
            self.drop_dma();
        }
        let this = ManuallyDrop::new(self);
        // SAFETY: the request is live with a `Pdu<T>` (type invariant).
        unsafe { set_holder::<T>(this.as_raw(), to) };
        this.as_raw()
    }

    /// How many times blk-mq has handed this request to `queue_rq`, modulo
    /// 256: a driver that puts it (or some of its bits) in the device's
    /// command beside the tag can tell a late completion of an earlier use
    /// of the tag from the current one ([`super::TagSet::tag_to_rq_checked`]),
    /// as C's NVMe driver does with its command ids.
    pub fn generation(&self) -> u8 {
        // SAFETY: the request is live with a `Pdu<T>` (type invariant).
        (unsafe { state::<T>(self.as_raw()) }.load(Ordering::Relaxed) >> 8) as u8
    }

    /// The request's tag: its number within its hardware queue, what a
    /// device's completion names it by ([`super::TagSet::tag_to_rq`]).
    pub fn tag(&self) -> u32 {
        // SAFETY: the request is live (type invariant).
        let tag = unsafe { bindings::rust_helper_rq_tag(self.as_raw()) };
        // A started request always has a driver tag (`>= 0`).
        u32::try_from(tag).unwrap_or(u32::MAX)
    }

    /// The index of the request's hardware queue.
    pub fn hctx_index(&self) -> u32 {
        // SAFETY: the request is live (type invariant).
        unsafe { bindings::rust_helper_rq_hctx_idx(self.as_raw()) }
    }

    /// What the request asks for.
    pub fn op(&self) -> Op {
        // SAFETY: the request is live (type invariant).
        Op::from_raw(unsafe { bindings::rust_helper_req_op(self.as_raw()) })
    }

    raw_getters! {
        /// The first sector (512 bytes each) the request covers (`blk_rq_pos`).
        fn sector() -> u64 = rust_helper_blk_rq_pos;
        /// How many bytes the request covers (`blk_rq_bytes`): 0 for a flush.
        fn bytes() -> u32 = rust_helper_blk_rq_bytes;
        /// How many physical segments its data has, after merging
        /// (`blk_rq_nr_phys_segments`): at most the disk's `max_segments`.
        fn nr_phys_segments() -> u32 = rust_helper_blk_rq_nr_phys_segments;
    }

    /// The data of the request's disk (given to
    /// [`GenDiskBuilder::build`](super::GenDiskBuilder::build)), for a
    /// driver that serves a request away from the callback that got it.
    pub fn queue_data(&self) -> &T::QueueData {
        // SAFETY: the request is live (type invariant); its disk's
        // `queuedata` is the `KBox<T::QueueData>` of its `GenDisk`, which
        // waits for its requests (`del_gendisk`) before dropping it.
        unsafe { &*bindings::rust_helper_rq_queuedata(self.as_raw()).cast::<T::QueueData>() }
    }

    fn dma_slot(&mut self) -> &mut Option<SgMapping> {
        // SAFETY: the PDU is initialised and only this handle reaches it
        // (type invariant); `&mut self` makes this the only access.
        unsafe { &mut *ptr::addr_of_mut!((*self.pdu()).dma) }
    }

    /// Unmaps the request's pages if they are mapped, dropping the table.
    fn drop_dma(&mut self) {
        // INVARIANT: the caller is about to give the request back to
        // blk-mq (`IDLE`): its pages are no longer mapped.
        drop(self.dma_slot().take());
    }

    // ANCHOR: map_dma
    /// Maps the request's data for DMA by `dev`: fills `table` with its
    /// segments ([`map_sg`](Self::map_sg)) and maps them (`dma_map_sg`).
    /// The mapping belongs to the request: it stays while the device has
    /// the request ([`into_in_flight`](Self::into_in_flight),
    /// [`complete`](Self::complete)), [`unmap_dma`](Self::unmap_dma) gives
    /// the table back, and every way of giving the request back to blk-mq
    /// ([`end`](Self::end), [`requeue`](Self::requeue), busy, drop) unmaps
    /// it first if the driver did not (dropping the table), so the pages
    /// are never mapped once the request may free them.
    ///
    /// `EBUSY` if the request is mapped already; the table comes back with
    /// the error.
    pub fn map_dma(
        &mut self,
        dev: &Device,
        mut table: SgTable,
        dir: Direction,
    ) -> Result<&SgMapping, MapSgError> {
        if self.dma_slot().is_some() {
            return Err(MapSgError {
                error: EBUSY,
                table,
            });
        }
        if let Err(error) = self.map_sg(&mut table) {
            return Err(MapSgError { error, table });
        }
        // The table holds this request's segments, which stay while the
        // request is held or in flight; the mapping is dropped before the
        // request goes back to blk-mq (`drop_dma`).
        let mapping = SgMapping::map(dev, table, dir)?;
        Ok(self.dma_slot().insert(mapping))
    }
    // ANCHOR_END: map_dma

    /// The request's DMA mapping, if [`map_dma`](Self::map_dma) made one.
    pub fn dma_mapping(&self) -> Option<&SgMapping> {
        // SAFETY: as in `dma_slot`, shared.
        unsafe { (*ptr::addr_of!((*self.pdu()).dma)).as_ref() }
    }

    /// Unmaps the request's pages (the device must be done with them) and
    /// gives the table back; `None` if they were not mapped.
    pub fn unmap_dma(&mut self) -> Option<SgTable> {
        self.dma_slot().take().map(SgMapping::unmap)
    }

    /// The driver's data of this request.
    pub fn data(&self) -> &T::RequestData {
        // SAFETY: the PDU's data is initialised (type invariant) and only
        // this handle reaches it.
        unsafe { &*ptr::addr_of!((*self.pdu()).data) }
    }

    /// The driver's data of this request, to change.
    pub fn data_mut(&mut self) -> &mut T::RequestData {
        // SAFETY: as in `data`; `&mut self` makes this the only access.
        unsafe { &mut *ptr::addr_of_mut!((*self.pdu()).data) }
    }

    /// The request's data, one single-page segment at a time
    /// (`rq_for_each_segment`); none for a request without data.
    pub fn segments(&self) -> Segments<'_> {
        let mut it = Segments {
            // SAFETY: all-zero is a valid iterator state (no bio); `init`
            // sets it.
            it: unsafe { core::mem::zeroed() },
            _rq: PhantomData,
        };
        // SAFETY: the request is live (type invariant) and its bios stay
        // until it is ended, which needs `self`, borrowed by the iterator.
        unsafe { bindings::rust_helper_rq_seg_iter_init(self.as_raw(), &mut it.it) };
        // INVARIANT: set up on this request, held while `self` is borrowed.
        it
    }

    // ANCHOR: ranges
    /// The ranges of sectors the request covers, one per bio
    /// (`__rq_for_each_bio`): as (first sector, bytes). A discard request
    /// merged from several bios has several (at most the disk's
    /// `max_segments` of [`discard`](super::GenDiskBuilder::discard)); any
    /// other request's ranges follow each other.
    pub fn ranges(&self) -> Ranges<'_> {
        // INVARIANT: the request is held while `self` is borrowed, and its
        // bios with it.
        Ranges {
            // SAFETY: the request is live (type invariant).
            bio: unsafe { bindings::rust_helper_rq_first_bio(self.as_raw()) },
            _rq: PhantomData,
        }
    }
    // ANCHOR_END: ranges

    /// Maps the request's data into `sg` (`blk_rq_map_sg`) and returns how
    /// many entries it filled (none for a request without data: flush,
    /// discard, write zeroes); `EINVAL` if the request has more segments
    /// than `sg` has room for.
    pub fn map_sg(&self, sg: &mut SgTable) -> Result<usize> {
        // SAFETY: the request is live (type invariant).
        unsafe { map_sg_raw(self.as_raw(), sg) }
    }

    /// [`map_sg`](Self::map_sg) into a table that is part of the request's
    /// own data, which `select` picks out.
    pub fn map_sg_with(
        &mut self,
        select: impl FnOnce(&mut T::RequestData) -> &mut SgTable,
    ) -> Result<usize> {
        let rq = self.as_raw();
        let sg = select(self.data_mut());
        // SAFETY: the request is live (type invariant); the mapping reads
        // its bios, not the PDU that `sg` lives in.
        unsafe { map_sg_raw(rq, sg) }
    }

    // ANCHOR: give_back
    /// Ends the request with `status` (`blk_mq_end_request`): its data is
    /// transferred (or failed) and its issuer is told.
    pub fn end(self, status: Result) {
        let status = match status {
            Ok(()) => bindings::RUST_CONST_HELPER_BLK_STS_OK,
            // SAFETY: any errno may be converted; unknown ones become
            // `BLK_STS_IOERR`.
            Err(e) => unsafe { bindings::errno_to_blk_status(e.to_errno()) },
        };
        let rq = self.release(IDLE);
        // SAFETY: this was the only handle (type invariant): the request is
        // the driver's to end, once.
        unsafe { bindings::blk_mq_end_request(rq, status) };
    }

    /// Ends the request successfully.
    pub fn end_ok(self) {
        self.end(Ok(()));
    }

    /// Gives the request to [`Operations::complete`]
    /// (`blk_mq_complete_request`), which blk-mq calls on the CPU that
    /// issued it when it can (from an interrupt, this is how a driver
    /// finishes a request off the interrupt's CPU).
    ///
    /// Fault injection (`fail_io_timeout`, a debug kernel's
    /// `/sys/block/DISK/io-timeout-fail`) may lose the completion, as C
    /// drivers do with `blk_should_fake_timeout`: the request then goes
    /// back in flight, as if the device had never answered, and
    /// [`Operations::timeout`] finds it there.
    pub fn complete(self) {
        // SAFETY: the request is live (type invariant).
        if unsafe { bindings::rust_helper_blk_should_fake_timeout(self.as_raw()) } {
            self.into_in_flight();
            return;
        }
        let rq = self.release(COMPLETING);
        // SAFETY: this was the only handle; blk-mq calls `complete` once
        // with the request, whose adapter takes it over.
        unsafe { bindings::blk_mq_complete_request(rq) };
    }

    /// The device has the request now: no handle remains until one is
    /// claimed by its tag ([`super::TagSet::tag_to_rq`]). Call this before
    /// telling the device (ringing its doorbell), or its completion could
    /// find the request still held.
    pub fn into_in_flight(self) {
        let _ = self.release(IN_FLIGHT);
    }

    /// Sends the request back to blk-mq to be queued again
    /// (`blk_mq_requeue_request`), for example after a controller reset.
    pub fn requeue(self) {
        let rq = self.release(IDLE);
        // SAFETY: this was the only handle: the request is the driver's to
        // give back, once.
        unsafe { bindings::blk_mq_requeue_request(rq, true) };
    }
    // ANCHOR_END: give_back

    /// Gives the request back to blk-mq without ending it, for `queue_rq`'s
    /// adapter when the driver answered [`Busy`].
    pub(crate) fn into_idle(self) -> *mut bindings::request {
        self.release(IDLE)
    }
}

/// Sets the holder of `rq` (held by the caller) to `to`, keeping its
/// generation.
///
/// # Safety
///
/// `rq` is a live request of a tag set for `T` with an initialised
/// `Pdu<T>`, which the caller's `Request` holds.
unsafe fn set_holder<T: Operations>(rq: *mut bindings::request, to: u16) {
    // SAFETY: the caller guarantees that `rq` is live with a `Pdu<T>`.
    let state = unsafe { state::<T>(rq) };
    // Only the holder changes a held request's state.
    let generation = state.load(Ordering::Relaxed) & !HOLDER;
    state.store(generation | to, Ordering::Release);
}

impl<T: Operations> Drop for Request<T> {
    fn drop(&mut self) {
        self.drop_dma();
        // SAFETY: the request is live with a `Pdu<T>` (type invariant),
        // held by this handle.
        unsafe { set_holder::<T>(self.as_raw(), IDLE) };
        // SAFETY: this is the only handle, not used again: the request is
        // the driver's to end, once.
        unsafe {
            bindings::blk_mq_end_request(self.as_raw(), bindings::RUST_CONST_HELPER_BLK_STS_IOERR)
        };
    }
}

/// Maps the data of `rq` into `sg`.
///
/// # Safety
///
/// `rq` is a live request that the caller holds.
unsafe fn map_sg_raw(rq: *mut bindings::request, sg: &mut SgTable) -> Result<usize> {
    // A discard or write-zeroes request has bios but no pages:
    // `blk_rq_map_sg` would read its empty vectors as pages.
    // SAFETY: the caller guarantees that `rq` is live.
    let segments = if unsafe { bindings::rust_helper_rq_has_data(rq) } {
        // SAFETY: the caller guarantees that `rq` is live.
        unsafe { bindings::rust_helper_blk_rq_nr_phys_segments(rq) as usize }
    } else {
        0
    };
    if segments == 0 {
        // Nothing of an earlier request's may stay in the table, to be
        // mapped as this one's.
        // SAFETY: no entries are claimed to hold a mapping.
        unsafe { sg.set_len(0) };
        return Ok(0);
    }
    if segments > sg.capacity() {
        return Err(EINVAL);
    }
    sg.reset(segments)?;
    // SAFETY: `rq` is live; `sg` holds `segments` initialised entries,
    // one list, and `blk_rq_map_sg` fills at most the request's physical
    // segment count.
    let mapped = unsafe { bindings::rust_helper_blk_rq_map_sg(rq, sg.as_raw()) };
    let mapped = usize::try_from(mapped).map_err(|_| EINVAL)?.min(segments);
    // SAFETY: the mapping just filled the first `mapped` entries of a
    // table reset for `segments >= mapped`.
    unsafe { sg.set_len(mapped) };
    Ok(mapped)
}

// ANCHOR: queued
/// The request that [`Operations::queue_rq`] is called with: a [`Request`]
/// (it dereferences to one) that can also be answered [`busy`](Self::busy).
///
/// `'q` brands this one call: the trait's `queue_rq` is generic over it,
/// so the driver cannot name it, keep a `Queued` past the call or make one,
/// and the only [`Busy<'q, T>`] it can return is made from the request it
/// was given. (blk-mq requeues the request it passed on
/// `BLK_STS_RESOURCE`; if another one came back, the given one would be
/// lost and the other requeued while it is still in use.) The brand is
/// invariant: `Busy<'q>` converts to no other `Busy<'r>`.
pub struct Queued<'q, T: Operations> {
    rq: Request<T>,
    _brand: PhantomData<fn(&'q ()) -> &'q ()>,
}
// ANCHOR_END: queued

impl<T: Operations> Queued<'_, T> {
    /// # Safety
    ///
    /// Only `queue_rq`'s adapter makes one, with the request blk-mq passed
    /// to this call, and the brand is the adapter's own generic lifetime.
    pub(crate) unsafe fn new(rq: Request<T>) -> Self {
        Queued {
            rq,
            _brand: PhantomData,
        }
    }
}

impl<'q, T: Operations> Queued<'q, T> {
    /// The driver takes the request (to end it, complete it, hand it to
    /// the device or keep it): from here on it cannot be answered busy.
    pub fn accept(self) -> Request<T> {
        self.rq
    }

    /// The device cannot take the request now (`BLK_STS_RESOURCE`): return
    /// this from `queue_rq`, and blk-mq queues the request again later.
    /// Its DMA mapping, if any, is undone.
    pub fn busy(self) -> Busy<'q, T> {
        Busy {
            rq: self.rq,
            _brand: PhantomData,
        }
    }
}

impl<T: Operations> Deref for Queued<'_, T> {
    type Target = Request<T>;

    fn deref(&self) -> &Request<T> {
        &self.rq
    }
}

impl<T: Operations> DerefMut for Queued<'_, T> {
    fn deref_mut(&mut self) -> &mut Request<T> {
        &mut self.rq
    }
}

/// What [`Operations::queue_rq`] returns when the device cannot take the
/// request now: only [`Queued::busy`] makes one, from the request of the
/// same call (`'q`). blk-mq queues the request again later
/// (`BLK_STS_RESOURCE`). Dropped instead of returned, it ends the request
/// with an I/O error, as a dropped [`Request`] does.
pub struct Busy<'q, T: Operations> {
    rq: Request<T>,
    _brand: PhantomData<fn(&'q ()) -> &'q ()>,
}

impl<T: Operations> Busy<'_, T> {
    pub(crate) fn into_request(self) -> Request<T> {
        self.rq
    }
}

/// The ranges of sectors of a request's bios ([`Request::ranges`]).
///
/// # Invariants
///
/// `bio` is null or a bio of a request that is held, with its bios, for
/// `'a`.
pub struct Ranges<'a> {
    bio: *mut bindings::bio,
    _rq: PhantomData<&'a ()>,
}

impl Iterator for Ranges<'_> {
    /// The first sector (512 bytes) and the length in bytes.
    type Item = (u64, u32);

    fn next(&mut self) -> Option<(u64, u32)> {
        if self.bio.is_null() {
            return None;
        }
        // SAFETY: a bio of a request held for `'a` (type invariant).
        let (range, next) = unsafe {
            (
                (
                    bindings::rust_helper_bio_sector(self.bio),
                    bindings::rust_helper_bio_size(self.bio),
                ),
                bindings::rust_helper_bio_next(self.bio),
            )
        };
        // INVARIANT: the next bio of the same request, or null.
        self.bio = next;
        Some(range)
    }
}

/// The single-page segments of a request's data ([`Request::segments`]).
///
/// # Invariants
///
/// `it` was set up by `rust_helper_rq_seg_iter_init` on a request that is
/// held, with its bios, for `'a`.
pub struct Segments<'a> {
    it: bindings::rust_rq_seg_iter,
    _rq: PhantomData<&'a ()>,
}

impl<'a> Iterator for Segments<'a> {
    type Item = Segment<'a>;

    fn next(&mut self) -> Option<Segment<'a>> {
        let mut page = ptr::null_mut();
        let (mut offset, mut len) = (0, 0);
        // SAFETY: the iterator was set up on a request that stays held
        // while `'a` lasts (type invariant).
        let more = unsafe {
            bindings::rust_helper_rq_seg_iter_next(&mut self.it, &mut page, &mut offset, &mut len)
        };
        // INVARIANT: a segment of a bio is within its page
        // (`bio_iter_iovec` splits at page boundaries).
        more.then_some(Segment {
            page,
            offset: offset as usize,
            len: len as usize,
            _rq: PhantomData,
        })
    }
}

/// A piece of a request's data within one page.
///
/// # Invariants
///
/// `page` is a page of a bio of a request held while `'a` lasts, and
/// `offset + len <= PAGE_SIZE`.
pub struct Segment<'a> {
    page: *mut bindings::page,
    offset: usize,
    len: usize,
    _rq: PhantomData<&'a ()>,
}

impl Segment<'_> {
    /// The segment's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the segment holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `len` bytes between the segment, from byte `at` of it, and
    /// `page`, from `page_offset`; `to_page` says which way. `EINVAL` if a
    /// range does not fit.
    fn copy(
        &self,
        at: usize,
        page: &Page,
        page_offset: usize,
        len: usize,
        to_page: bool,
    ) -> Result {
        if at.checked_add(len).is_none_or(|end| end > self.len)
            || page_offset
                .checked_add(len)
                .is_none_or(|end| end > PAGE_SIZE)
        {
            return Err(EINVAL);
        }
        // SAFETY: both pages are live (type invariants of `Segment` and
        // `Page`); each mapping covers its whole page.
        unsafe {
            let seg = bindings::rust_helper_kmap_local_page(self.page).cast::<u8>();
            let other = bindings::rust_helper_kmap_local_page(page.as_raw()).cast::<u8>();
            // The ranges are within their pages (checked above, and
            // `offset + len <= PAGE_SIZE` by the invariant).
            let seg_at = seg.add(self.offset + at);
            let other_at = other.add(page_offset);
            if to_page {
                copy_shared(seg_at, other_at, len);
            } else {
                copy_shared(other_at, seg_at, len);
            }
            // Unmapped in the reverse order, as `kmap_local` requires.
            bindings::rust_helper_kunmap_local(other.cast());
            bindings::rust_helper_kunmap_local(seg.cast());
        }
        Ok(())
    }

    /// Copies `len` bytes of the segment, from byte `at` of it, into
    /// `dst` at `dst_offset` (serving a write).
    pub fn copy_to_page(&self, at: usize, dst: &Page, dst_offset: usize, len: usize) -> Result {
        self.copy(at, dst, dst_offset, len, true)
    }

    /// Copies `len` bytes of `src` from `src_offset` into the segment, at
    /// byte `at` of it (serving a read).
    pub fn copy_from_page(&self, at: usize, src: &Page, src_offset: usize, len: usize) -> Result {
        self.copy(at, src, src_offset, len, false)
    }
}

/// Copies `len` bytes from `src` to `dst`, both memory that others may
/// access at the same time (a bio's pages are user or page-cache memory; a
/// driver's `Page` is shared): through a small buffer, with the relaxed
/// atomic copies of [`crate::page`], so that two copies racing on one page
/// are not a data race. The ranges may overlap, as a driver may point a
/// request at its own page: the chunks then go in the order that reads
/// each source byte before it is overwritten.
///
/// # Safety
///
/// `src` is valid for reads and `dst` for writes of `len` bytes, and every
/// access to them that may run at the same time is atomic or outside Rust.
unsafe fn copy_shared(src: *const u8, dst: *mut u8, len: usize) {
    const CHUNK: usize = 256;
    let mut buf = [0u8; CHUNK];
    let backwards = (dst as usize) > (src as usize);
    let mut left = len;
    while left > 0 {
        let n = left.min(CHUNK);
        // Forwards from the start, or backwards from the end.
        let at = if backwards { left - n } else { len - left };
        let chunk = &mut buf[..n];
        // SAFETY: `at + n <= len`: the chunk is within both ranges
        // (contract), and `chunk` is this function's own buffer.
        unsafe {
            crate::page::copy_from_shared(src.add(at), chunk);
            crate::page::copy_to_shared(chunk, dst.add(at));
        }
        left -= n;
    }
}

/// A request that timed out ([`Operations::timeout`]): the device may still
/// hold it, or a handle may exist elsewhere (a completion running now).
///
/// # Invariants
///
/// `rq` is a live request of a tag set for `T`, with an initialised
/// `Pdu<T>`, and blk-mq holds a reference on it while `'a` lasts.
pub struct TimedOut<'a, T: Operations> {
    rq: *mut bindings::request,
    _ops: PhantomData<(&'a (), T)>,
}

impl<T: Operations> TimedOut<'_, T> {
    /// # Safety
    ///
    /// `rq` is a live request of a tag set for `T`, with an initialised
    /// `Pdu<T>`, and stays so while the result lives.
    pub(crate) unsafe fn new(rq: *mut bindings::request) -> Self {
        // INVARIANT: the caller guarantees it.
        TimedOut {
            rq,
            _ops: PhantomData,
        }
    }

    /// The request's tag.
    pub fn tag(&self) -> u32 {
        // SAFETY: the request is live (type invariant).
        let tag = unsafe { bindings::rust_helper_rq_tag(self.rq) };
        u32::try_from(tag).unwrap_or(u32::MAX)
    }

    /// The index of the request's hardware queue.
    pub fn hctx_index(&self) -> u32 {
        // SAFETY: the request is live (type invariant).
        unsafe { bindings::rust_helper_rq_hctx_idx(self.rq) }
    }

    /// What the request asks for.
    pub fn op(&self) -> Op {
        // SAFETY: the request is live (type invariant).
        Op::from_raw(unsafe { bindings::rust_helper_req_op(self.rq) })
    }

    /// The first sector the request covers.
    pub fn sector(&self) -> u64 {
        // SAFETY: the request is live (type invariant).
        unsafe { bindings::rust_helper_blk_rq_pos(self.rq) }
    }

    /// The tag set of the request's disk: to look for its completion, or
    /// to take back everything the device holds when it must be reset
    /// ([`TagSet::claim_in_flight`]).
    pub fn tag_set(&self) -> &TagSet<T> {
        // SAFETY: the request is live (type invariant), so is its queue,
        // whose tag set is a `TagSet<T>`'s: its `GenDisk` holds an `Arc` of
        // it until the queue is gone, and the queue outlives `'_`.
        unsafe { TagSet::<T>::from_raw(bindings::rust_helper_rq_tag_set(self.rq)) }
    }

    /// Takes the request from the device, if the device holds it (no
    /// handle exists): to end it with an error, say, and answer
    /// [`TimeoutAction::Done`](super::TimeoutAction::Done).
    pub fn claim(&self) -> Option<Request<T>> {
        // SAFETY: the request is live with a `Pdu<T>` (type invariant).
        unsafe { claim::<T>(self.rq, None) }
    }
}
