//! The block side: one disk per namespace on a blk-mq tag set whose
//! hardware queues are the I/O queue pairs. `queue_rq` maps a request's
//! pages for DMA, points the command at them with PRPs and rings the
//! doorbell; the queue's interrupt finds the request by its tag (the
//! command identifier) and completes it; `complete` unmaps and ends it.

use kernel::block::mq::{self, Busy, Op, Queued, Request, TagSet, TimedOut, TimeoutAction};
use kernel::dma::{self, DmaAddress, PoolBlock};
use kernel::file::IoctlCommand;
use kernel::irq;
use kernel::prelude::*;
use kernel::scatterlist::SgTable;
use kernel::sync::{Arc, Mutex};
use kernel::uapi::nvme;

use core::sync::atomic::{AtomicU8, Ordering};

use crate::cmd::{self, io, Command, Completion};
use crate::prp;
use crate::queue::Queue;
use crate::Admin;

/// What the I/O path shares: the queues, by hardware queue index, the PRP
/// list pool and the admin side (for the timeout path).
pub(crate) struct IoShared {
    pub(crate) queues: KVec<Arc<Queue>>,
    /// The MSI-X vectors: queue `i` fires on vector `i + 1`.
    pub(crate) vectors: Arc<irq::Vectors>,
    pub(crate) pool: Arc<dma::Pool<u64>>,
    pub(crate) admin: Arc<Admin>,
    /// The most segments of a request, and the list pages its PRPs need.
    pub(crate) max_segments: usize,
    pub(crate) max_lists: usize,
    /// [`LIVE`], [`RESETTING`] or [`DEAD`].
    pub(crate) state: AtomicU8,
    /// One reset at a time.
    pub(crate) reset_lock: Mutex<()>,
}

/// The controller takes commands.
pub(crate) const LIVE: u8 = 0;
/// A reset is under way: requests wait (`Busy`).
pub(crate) const RESETTING: u8 = 1;
/// A reset failed: requests fail.
pub(crate) const DEAD: u8 = 2;

/// One namespace's disk.
pub(crate) struct NsData {
    pub(crate) nsid: u32,
    pub(crate) block_shift: u32,
    pub(crate) shared: Arc<IoShared>,
}

// ANCHOR: request_data
/// Per request: its scatterlist (`None` while the request holds it,
/// mapped, see `Request::map_dma`), its PRP list pages and the status the
/// controller gave it.
pub(crate) struct IoRequest {
    table: Option<SgTable>,
    lists: KVec<PoolBlock<u64>>,
    status: u16,
    /// The timeout path has sent an Abort for it already.
    pub(crate) aborted: bool,
}
// ANCHOR_END: request_data

/// Gives a request's DMA resources back: unmaps its pages (keeping the
/// table for its next use) and frees its list pages.
pub(crate) fn release(rq: &mut Request<NvmeOps>) {
    if let Some(table) = rq.unmap_dma() {
        rq.data_mut().table = Some(table);
    }
    rq.data_mut().lists.clear();
}

/// The blk-mq operations.
pub(crate) struct NvmeOps;

// ANCHOR: operations
#[vtable]
impl mq::Operations for NvmeOps {
    type RequestData = IoRequest;
    type QueueData = NsData;
    type SetData = Arc<IoShared>;
    type HwData = Arc<Queue>;

    fn init_request(shared: &Arc<IoShared>, _hctx: u32, _node: i32) -> Result<IoRequest> {
        Ok(IoRequest {
            table: Some(SgTable::new(shared.max_segments, GFP_KERNEL)?),
            lists: KVec::with_capacity(shared.max_lists.max(1), GFP_KERNEL)?,
            status: 0,
            aborted: false,
        })
    }

    fn init_hctx(shared: &Arc<IoShared>, hctx: u32) -> Result<Arc<Queue>> {
        Ok(shared.queues.get(hctx as usize).ok_or(EINVAL)?.clone())
    }

    fn queue_rq<'q>(
        queue: &Arc<Queue>,
        ns: &NsData,
        mut rq: Queued<'q, Self>,
        is_last: bool,
    ) -> Result<(), Busy<'q, Self>> {
        match ns.shared.state.load(Ordering::Acquire) {
            RESETTING => return Err(rq.busy()),
            DEAD => {
                rq.accept().end(Err(EIO));
                return Ok(());
            }
            _ => {}
        }
        let cmd = match rq.op() {
            Op::Read => read_write(io::READ, ns, &mut rq, dma::Direction::FromDevice),
            Op::Write => read_write(io::WRITE, ns, &mut rq, dma::Direction::ToDevice),
            Op::Flush => Ok(Command::new(io::FLUSH).nsid(ns.nsid)),
            Op::Discard => discard(ns, &mut rq),
            Op::WriteZeroes => write_zeroes(ns, &rq),
            _ => Err(EOPNOTSUPP),
        };
        let cmd = match cmd {
            Ok(cmd) => cmd,
            // Out of DMA resources for now: blk-mq tries again later.
            Err(e) if e == ENOMEM => {
                release(&mut rq);
                return Err(rq.busy());
            }
            Err(e) => {
                release(&mut rq);
                rq.accept().end(Err(e));
                return Ok(());
            }
        };
        let mut rq = rq.accept();
        rq.data_mut().status = 0;
        rq.data_mut().aborted = false;
        // The tag set's depth is below the queue's, so each tag has a free
        // slot.
        let cmd = cmd.with_cid(command_id(rq.tag(), rq.generation()));
        rq.into_in_flight();
        // The doorbell is rung for the last request of a batch only (or by
        // `commit_rqs`).
        if queue.submit(&cmd, is_last).is_err() {
            // Cannot happen (see above); the timeout path gets it back.
            pr_err!("{}: queue {} full\n", ns.shared.admin.name(), queue.qid);
        }
        Ok(())
    }

    // ANCHOR: map_queues
    /// Each CPU is served by the queue whose vector fires on it, as C's
    /// `blk_mq_pci_map_queues`; blk-mq's own spread if a vector has no
    /// CPUs.
    fn map_queues(shared: &Arc<IoShared>, map: &mut mq::QueueMap<'_>) {
        for (index, queue) in shared.queues.iter().enumerate() {
            let spread = shared.vectors.for_each_cpu(queue.qid.into(), |cpu| {
                let _ = map.set(cpu, index as u32);
            });
            if !spread {
                map.map_default();
                return;
            }
        }
    }
    // ANCHOR_END: map_queues

    // ANCHOR: ioctl
    /// The namespace's id (`NVME_IOCTL_ID`) and Identify from user space
    /// (`NVME_IOCTL_ADMIN_CMD`, see `Admin::user_identify`).
    fn ioctl(ns: &NsData, cmd: IoctlCommand) -> Result<i32> {
        match cmd.cmd {
            nvme::IOCTL_ID => i32::try_from(ns.nsid).map_err(|_| EOVERFLOW),
            nvme::IOCTL_ADMIN_CMD => ns.shared.admin.user_identify(cmd.arg),
            _ => Err(ENOTTY),
        }
    }
    // ANCHOR_END: ioctl

    fn commit_rqs(queue: &Arc<Queue>, _ns: &NsData) {
        queue.ring();
    }

    fn complete(ns: &NsData, mut rq: Request<Self>) {
        release(&mut rq);
        let status = rq.data().status;
        if status != 0 {
            // What the controller refused, as C's nvme_log_error says it
            // (a request `queue_rq` failed itself never gets here).
            pr_warn!(
                "{}: {:?} of sector {}: status {:#x}\n",
                ns.shared.admin.name(),
                rq.op(),
                rq.sector(),
                status
            );
        }
        rq.end(if status == 0 { Ok(()) } else { Err(EIO) });
    }

    // ANCHOR: timeout
    /// A request the controller has held too long: first look for its
    /// completion (an interrupt may have been lost), then ask the
    /// controller to abort it, and if that does not help either, reset the
    /// controller (which fails this request and requeues the others).
    fn timeout(ns: &NsData, rq: &TimedOut<'_, Self>) -> TimeoutAction {
        let shared = &ns.shared;
        let hctx = rq.hctx_index();
        let Some(queue) = shared.queues.get(hctx as usize) else {
            return TimeoutAction::ResetTimer;
        };
        complete_all(queue, rq.tag_set(), hctx);
        let Some(mut claimed) = rq.claim() else {
            // Completed by the poll above, or by the interrupt.
            pr_warn!(
                "{}: tag {} on queue {}: completion found by polling\n",
                shared.admin.name(),
                rq.tag(),
                queue.qid
            );
            return TimeoutAction::Done;
        };
        // Named by what it asks for, not by its tag: blk-mq draws tags
        // from a randomly started bitmap, the sector is the reader's.
        let (op, sector) = (claimed.op(), claimed.sector());
        if !claimed.data().aborted {
            claimed.data_mut().aborted = true;
            let cid = command_id(claimed.tag(), claimed.generation());
            pr_warn!(
                "{}: {:?} of sector {} on queue {} timed out: aborting it\n",
                shared.admin.name(),
                op,
                sector,
                queue.qid
            );
            // Back to the device: its abort completes it (with an error).
            claimed.into_in_flight();
            let _ = shared.admin.abort(queue.qid, cid);
            return TimeoutAction::ResetTimer;
        }
        pr_err!(
            "{}: {:?} of sector {} on queue {} timed out after an abort: resetting the controller\n",
            shared.admin.name(),
            op,
            sector,
            queue.qid
        );
        // Back to the device: the reset takes every request it holds.
        claimed.into_in_flight();
        crate::reset(shared, rq.tag_set());
        TimeoutAction::Done
    }
    // ANCHOR_END: timeout
}
// ANCHOR_END: operations

// ANCHOR: read_write
/// A read or write command for `rq`: its pages mapped for DMA, PRPs built.
fn read_write(
    opcode: u8,
    ns: &NsData,
    rq: &mut Request<NvmeOps>,
    dir: dma::Direction,
) -> Result<Command> {
    let shift = ns.block_shift;
    let slba = rq.sector() >> (shift - 9);
    let blocks = rq.bytes() >> shift;
    if blocks == 0 || blocks > 1 << 16 {
        return Err(EIO);
    }
    let table = rq.data_mut().table.take().ok_or(EIO)?;
    // The request keeps the mapping: `release` (or whatever gives the
    // request back) unmaps it.
    if let Err(failed) = rq.map_dma(ns.shared.admin.pdev.as_dev(), table, dir) {
        rq.data_mut().table = Some(failed.table);
        return Err(failed.error);
    }
    let mut lists = core::mem::take(&mut rq.data_mut().lists);
    let prps = match rq.dma_mapping() {
        Some(mapping) => prp::build(mapping.iter(), &ns.shared.pool, &mut lists),
        None => Err(EIO),
    };
    rq.data_mut().lists = lists;
    let (prp1, prp2): (DmaAddress, DmaAddress) = prps?;
    Ok(Command::new(opcode)
        .nsid(ns.nsid)
        .prp(prp1, prp2)
        .cdw(10, slba as u32)
        .cdw(11, (slba >> 32) as u32)
        .cdw(12, blocks - 1))
}
// ANCHOR_END: read_write

// ANCHOR: discard
/// A dataset management command that deallocates `rq`'s ranges (one per
/// bio: blk-mq merges up to `DSM_MAX_RANGES` discards into one request),
/// listed in a page from the PRP pool that the request keeps until it is
/// released. The page is whole, as in the C driver: some controllers read
/// all of it whatever the number of ranges says.
fn discard(ns: &NsData, rq: &mut Request<NvmeOps>) -> Result<Command> {
    let shift = ns.block_shift;
    let list = dma::Pool::alloc(&ns.shared.pool, GFP_ATOMIC)?;
    let mut count = 0;
    for (sector, bytes) in rq.ranges() {
        if count >= usize::from(cmd::DSM_MAX_RANGES) {
            return Err(EIO);
        }
        // A range: context attributes (0) and length in the first
        // quadword, the first block in the second.
        list.write(2 * count, u64::from(bytes >> shift) << 32)?;
        list.write(2 * count + 1, sector >> (shift - 9))?;
        count += 1;
    }
    if count == 0 {
        return Err(EIO);
    }
    let addr = list.dma_handle();
    rq.data_mut()
        .lists
        .push_within_capacity(list)
        .map_err(|_| EIO)?;
    Ok(Command::new(io::DSM)
        .nsid(ns.nsid)
        .prp(addr, 0)
        .cdw(10, count as u32 - 1)
        .cdw(11, cmd::DSM_DEALLOCATE))
}

/// A write zeroes command for `rq`'s blocks (at most the disk's
/// `write_zeroes` limit, which fits the 16-bit count).
fn write_zeroes(ns: &NsData, rq: &Request<NvmeOps>) -> Result<Command> {
    let shift = ns.block_shift;
    let blocks = rq.bytes() >> shift;
    if blocks == 0 || blocks > 1 << 16 {
        return Err(EIO);
    }
    let slba = rq.sector() >> (shift - 9);
    Ok(Command::new(io::WRITE_ZEROES)
        .nsid(ns.nsid)
        .cdw(10, slba as u32)
        .cdw(11, (slba >> 32) as u32)
        .cdw(12, blocks - 1))
}
// ANCHOR_END: discard

// ANCHOR: command_id
/// The command identifier of a request: its tag in the low byte (the
/// queues are at most 256 deep), its generation in the high one, as the C
/// driver does, so that a completion for an earlier use of the tag is told
/// apart.
fn command_id(tag: u32, generation: u8) -> u16 {
    const { assert!(crate::IO_DEPTH <= 256) };
    (u16::from(generation) << 8) | (tag & 0xff) as u16
}
// ANCHOR_END: command_id

// ANCHOR: complete_all
/// Completes every request whose completion entry is on `queue`: the
/// interrupt handler, and the timeout path's poll.
fn complete_all(queue: &Queue, tag_set: &TagSet<NvmeOps>, hctx: u32) -> u32 {
    queue.process(|cqe: Completion| {
        // A tag that is not in flight (a bogus or repeated entry), or a
        // late completion of an earlier use of the tag (its generation is
        // older), gives nothing: nothing is ended twice.
        let (tag, generation) = (u32::from(cqe.cid & 0xff), (cqe.cid >> 8) as u8);
        if let Some(mut rq) = tag_set.tag_to_rq_checked(hctx, tag, generation) {
            rq.data_mut().status = cqe.status;
            rq.complete();
        } else {
            pr_warn!(
                "queue {}: completion for command {:#x} not in flight\n",
                queue.qid,
                cqe.cid
            );
        }
    })
}
// ANCHOR_END: complete_all

// ANCHOR: irq
/// An I/O queue's interrupt handler.
pub(crate) struct IoIrq {
    pub(crate) queue: Arc<Queue>,
    pub(crate) tag_set: Arc<TagSet<NvmeOps>>,
}

impl irq::Handler for IoIrq {
    fn handle_irq(&self) -> irq::Return {
        let hctx = u32::from(self.queue.qid) - 1;
        if complete_all(&self.queue, &self.tag_set, hctx) > 0 {
            irq::Return::Handled
        } else {
            irq::Return::None
        }
    }
}
// ANCHOR_END: irq
