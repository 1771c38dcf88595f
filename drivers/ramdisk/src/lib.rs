//! A RAM disk on blk-mq: `/dev/rram0`, `/dev/rram1`, ... (`disks=`), each
//! `capacity_mib=` MiB of zeroed pages allocated at load, served by
//! `hw_queues=` hardware queues of one shared tag set.
//!
//! Every read and write is copied between the request's segments and the
//! disk's pages in `queue_rq`, and finished through
//! [`Request::complete`], so that blk-mq's completion path
//! ([`Operations::complete`]) runs as it does for a device with
//! interrupts. The disk says it has a write cache, so flushes arrive too
//! (there is nothing to flush). It is the test vehicle of the kernel
//! crate's `block::mq` module: no `unsafe` here.
//!
//! With `deferred=1` the disk behaves like a device with a queue:
//! `queue_rq` hands each request over ([`Request::into_in_flight`]) and
//! posts its tag to a kernel thread, which finds the request again by tag
//! and generation ([`TagSet::tag_to_rq_checked`]), as an interrupt handler
//! does, and serves it there. `lose_sector=S` makes the disk never answer a
//! request that covers sector `S`: its timeout (one second) takes it back
//! ([`TimedOut::claim`]) and fails it with `ETIMEDOUT`, and then, as a
//! driver resets a device that stopped answering, fails every other request
//! the disk holds ([`TagSet::claim_in_flight`]). `rotate_queues=R`
//! maps CPU `c` to hardware queue `(c + R) % hw_queues`
//! ([`Operations::map_queues`]) instead of blk-mq's default map.

#![no_std]

use kernel::block::mq::{
    Busy, GenDisk, GenDiskBuilder, Op, Operations, QueueMap, Queued, Request, TagSet,
    TagSetOptions, TimedOut, TimeoutAction,
};
use kernel::block::SECTOR_SHIFT;
use kernel::kthread::KThread;
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, SpinLock};
use kernel::{c_str, new_condvar, new_spinlock, pin_init};

module! {
    type: RustRamdisk,
    name: "rust_ramdisk",
    author: "Rust kernel workbook",
    description: "A RAM disk on blk-mq",
    license: "GPL",
    params: {
        disks: u32 {
            default: 1,
            permissions: 0o444,
            description: "How many disks (rram0, rram1, ...), 1 to 8",
        },
        capacity_mib: u32 {
            default: 16,
            permissions: 0o444,
            description: "The size of each disk in MiB, 1 to 256",
        },
        hw_queues: u32 {
            default: 2,
            permissions: 0o444,
            description: "Hardware queues (blk-mq uses at most one per CPU), 1 to 64",
        },
        deferred: bool {
            default: false,
            permissions: 0o444,
            description: "Serve requests in a kernel thread that finds them by tag",
        },
        lose_sector: i64 {
            default: -1,
            permissions: 0o444,
            description: "Never answer a request covering this sector (-1: none)",
        },
        rotate_queues: u32 {
            default: 0,
            permissions: 0o444,
            description: "Map CPU c to hardware queue (c + this) % hw_queues (0: blk-mq's map)",
        },
    },
}

/// How many requests each hardware queue holds at once.
const QUEUE_DEPTH: u32 = 64;

/// One disk's memory, page by page.
struct Storage {
    pages: KVec<Page>,
}

impl Storage {
    /// `mib` MiB of zeroed pages: a new disk reads as zeroes, never as
    /// what the memory held before.
    fn new(mib: u32) -> Result<Self> {
        let count = mib as usize * (1 << 20) / PAGE_SIZE;
        let mut pages = KVec::with_capacity(count, GFP_KERNEL)?;
        for _ in 0..count {
            pages.push(Page::alloc(GFP_KERNEL | __GFP_ZERO)?, GFP_KERNEL)?;
        }
        Ok(Storage { pages })
    }

    // ANCHOR: serve
    /// Copies a read's or write's data between the request and the pages.
    fn serve(&self, rq: &Request<RamDisk>) -> Result {
        let write = match rq.op() {
            Op::Read => false,
            Op::Write => true,
            Op::Flush => return Ok(()),
            _ => return Err(EOPNOTSUPP),
        };
        let start = rq.sector().checked_mul(1 << SECTOR_SHIFT).ok_or(EIO)?;
        let end = start.checked_add(u64::from(rq.bytes())).ok_or(EIO)?;
        if end > (self.pages.len() * PAGE_SIZE) as u64 {
            return Err(EIO);
        }
        // Below the capacity (checked above), which is a `usize`.
        let mut pos = start as usize;
        for segment in rq.segments() {
            // A segment is within one of its pages, but may straddle two
            // of ours when the request does not start on a page boundary.
            let mut done = 0;
            while done < segment.len() {
                let page = self.pages.get(pos / PAGE_SIZE).ok_or(EIO)?;
                let offset = pos % PAGE_SIZE;
                let len = (PAGE_SIZE - offset).min(segment.len() - done);
                if write {
                    segment.copy_to_page(done, page, offset, len)?;
                } else {
                    segment.copy_from_page(done, page, offset, len)?;
                }
                done += len;
                pos += len;
            }
        }
        Ok(())
    }
    // ANCHOR_END: serve
}

/// What the tag set's queues share: the mode, and the tags waiting for the
/// completion thread.
struct Shared {
    deferred: bool,
    lose_sector: Option<u64>,
    rotate_queues: u32,
    pending: SpinLock<Pending>,
    posted: CondVar,
}

/// The completion thread's queue: `(hardware queue, tag, generation)` of
/// each request handed over, with room for every tag of the set.
struct Pending {
    tags: KVec<(u32, u32, u8)>,
    stopping: bool,
}

/// The completion thread: serves the requests posted to it until it is
/// dropped.
struct Completer {
    shared: Arc<Shared>,
    _task: KThread,
}

impl Completer {
    fn start(tag_set: Arc<TagSet<RamDisk>>) -> Result<Self> {
        let shared = tag_set.data().clone();
        let task = KThread::spawn(c_str!("rram-completer"), move || {
            while let Some((hctx, tag, generation)) = next_posted(tag_set.data()) {
                // A tag the thread has served already, or of an earlier use
                // of the request, finds nothing.
                if let Some(mut rq) = tag_set.tag_to_rq_checked(hctx, tag, generation) {
                    let status = rq.queue_data().serve(&rq);
                    *rq.data_mut() = status;
                    rq.complete();
                }
            }
        })?;
        Ok(Completer {
            shared,
            _task: task,
        })
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        // The thread returns when it sees this; then the `KThread` is stopped.
        self.shared.pending.lock().stopping = true;
        self.shared.posted.notify_all();
    }
}

/// The next posted request, or `None` once the thread must stop.
fn next_posted(shared: &Shared) -> Option<(u32, u32, u8)> {
    let mut pending = shared.pending.lock();
    loop {
        if pending.stopping {
            return None;
        }
        if let Some(posted) = pending.tags.pop() {
            return Some(posted);
        }
        shared.posted.wait(&mut pending);
    }
}

/// The driver's blk-mq callbacks.
struct RamDisk;

impl RamDisk {
    /// Whether `rq` covers the sector the disk never answers.
    fn is_lost(shared: &Shared, rq: &Request<Self>) -> bool {
        shared.lose_sector.is_some_and(|lost| {
            let sectors = u64::from(rq.bytes() >> SECTOR_SHIFT);
            (rq.sector()..rq.sector().saturating_add(sectors)).contains(&lost)
        })
    }

    /// Hands `rq` over to the completion thread.
    fn post(shared: &Shared, rq: Request<Self>) {
        let posted = (rq.hctx_index(), rq.tag(), rq.generation());
        // Under the lock: the thread cannot look the tag up before the
        // request is in flight.
        let mut pending = shared.pending.lock();
        if pending.tags.len() == pending.tags.capacity() {
            // Cannot happen (there is room for every tag), but never wait.
            drop(pending);
            rq.end(Err(EIO));
            return;
        }
        rq.into_in_flight();
        // Within the capacity (checked above): no allocation.
        let _ = pending.tags.push_within_capacity(posted);
        drop(pending);
        shared.posted.notify_one();
    }
}

// ANCHOR: operations
#[vtable]
impl Operations for RamDisk {
    /// What `queue_rq` found, for `complete` to end the request with.
    type RequestData = Result;
    type QueueData = Storage;
    type SetData = Arc<Shared>;
    /// Each hardware queue reaches the shared state directly.
    type HwData = Arc<Shared>;

    fn init_request(_set: &Arc<Shared>, _hctx_idx: u32, _numa_node: i32) -> Result<Result> {
        Ok(Ok(()))
    }

    fn init_hctx(set: &Arc<Shared>, _hctx_idx: u32) -> Result<Arc<Shared>> {
        Ok(set.clone())
    }

    fn queue_rq<'q>(
        shared: &Arc<Shared>,
        storage: &Storage,
        rq: Queued<'q, Self>,
        _is_last: bool,
    ) -> Result<(), Busy<'q, Self>> {
        // Never busy: the disk serves every request at once.
        let mut rq = rq.accept();
        if Self::is_lost(shared, &rq) {
            // Only the timeout will find it.
            rq.into_in_flight();
            return Ok(());
        }
        if shared.deferred {
            Self::post(shared, rq);
            return Ok(());
        }
        let status = storage.serve(&rq);
        *rq.data_mut() = status;
        // As a device would from its interrupt: blk-mq runs `complete`.
        rq.complete();
        Ok(())
    }

    fn complete(_storage: &Storage, rq: Request<Self>) {
        let status = *rq.data();
        rq.end(status);
    }

    fn map_queues(shared: &Arc<Shared>, map: &mut QueueMap<'_>) {
        if shared.rotate_queues == 0 {
            map.map_default();
            return;
        }
        let queues = map.nr_queues();
        for cpu in 0..map.nr_cpus() {
            // In range: the modulo keeps the queue below `nr_queues`.
            let _ = map.set(cpu, cpu.wrapping_add(shared.rotate_queues) % queues);
        }
    }

    fn timeout(_storage: &Storage, rq: &TimedOut<'_, Self>) -> TimeoutAction {
        // Being completed right now: let that finish.
        let Some(lost) = rq.claim() else {
            return TimeoutAction::ResetTimer;
        };
        let sector = lost.sector();
        lost.end(Err(ETIMEDOUT));
        // What a driver does to a device that stopped answering: reset it,
        // failing every other request it holds.
        let mut others = 0;
        rq.tag_set().claim_in_flight(|other| {
            others += 1;
            other.end(Err(ETIMEDOUT));
        });
        pr_info!("request at sector {sector} timed out; failed {others} more in flight\n");
        TimeoutAction::Done
    }
}
// ANCHOR_END: operations

/// The module: its disks, removed when it unloads, and the completion
/// thread if `deferred`.
struct RustRamdisk {
    disks: KVec<GenDisk<RamDisk>>,
    completer: Option<Completer>,
}

impl kernel::Module for RustRamdisk {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let (count, mib, queues) = (*disks.read(), *capacity_mib.read(), *hw_queues.read());
        if !(1..=8).contains(&count) || !(1..=256).contains(&mib) || !(1..=64).contains(&queues) {
            pr_err!("disks={count} capacity_mib={mib} hw_queues={queues}: out of range\n");
            return Err(EINVAL);
        }
        let lost = u64::try_from(*lose_sector.read()).ok();
        let options = TagSetOptions {
            nr_hw_queues: queues,
            queue_depth: QUEUE_DEPTH,
            // A lost request fails after a second, not blk-mq's 30.
            timeout_ms: if lost.is_some() { 1000 } else { 0 },
            ..TagSetOptions::default()
        };
        let shared = Arc::pin_init(
            pin_init!(Shared {
                deferred <- *deferred.read(),
                lose_sector <- lost,
                rotate_queues <- *rotate_queues.read(),
                pending <- new_spinlock!(Pending {
                    tags: KVec::with_capacity((queues * QUEUE_DEPTH) as usize, GFP_KERNEL)?,
                    stopping: false,
                }),
                posted <- new_condvar!(),
            }),
            GFP_KERNEL,
        )?;
        let tag_set = TagSet::<RamDisk>::new(options, shared.clone())?;
        // Started before the disks: adding a disk reads it.
        let completer = if shared.deferred {
            Some(Completer::start(tag_set.clone())?)
        } else {
            None
        };
        let mut all = KVec::with_capacity(count as usize, GFP_KERNEL)?;
        for i in 0..count {
            let disk = GenDiskBuilder::new()
                .capacity_sectors(u64::from(mib) << (20 - SECTOR_SHIFT))
                .logical_block_size(512)
                .physical_block_size(4096)
                .write_cache(true, false)
                .build(format_args!("rram{i}"), tag_set.clone(), Storage::new(mib)?)?;
            all.push(disk, GFP_KERNEL)?;
            pr_info!("rram{i}: {mib} MiB, hw_queues={queues}\n");
        }
        Ok(RustRamdisk {
            disks: all,
            completer,
        })
    }
}

impl Drop for RustRamdisk {
    fn drop(&mut self) {
        let count = self.disks.len();
        // Each disk waits for its requests, then goes; the completion
        // thread serves them meanwhile, and stops after.
        self.disks.clear();
        self.completer = None;
        pr_info!("removed disks: {count}\n");
    }
}
