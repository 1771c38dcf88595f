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

#![no_std]

use kernel::block::mq::{
    Busy, GenDisk, GenDiskBuilder, Op, Operations, Request, TagSet, TagSetOptions,
};
use kernel::block::SECTOR_SHIFT;
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;

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

/// The driver's blk-mq callbacks.
struct RamDisk;

// ANCHOR: operations
#[vtable]
impl Operations for RamDisk {
    /// What `queue_rq` found, for `complete` to end the request with.
    type RequestData = Result;
    type QueueData = Storage;
    type SetData = ();
    type HwData = ();

    fn init_request(_set: &(), _hctx_idx: u32, _numa_node: i32) -> Result<Result> {
        Ok(Ok(()))
    }

    fn init_hctx(_set: &(), _hctx_idx: u32) -> Result {
        Ok(())
    }

    fn queue_rq(
        _hw: &(),
        storage: &Storage,
        mut rq: Request<Self>,
        _is_last: bool,
    ) -> Result<(), Busy<Self>> {
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
}
// ANCHOR_END: operations

/// The module: its disks, removed when it unloads.
struct RustRamdisk {
    disks: KVec<GenDisk<RamDisk>>,
}

impl kernel::Module for RustRamdisk {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let (count, mib, queues) = (*disks.read(), *capacity_mib.read(), *hw_queues.read());
        if !(1..=8).contains(&count) || !(1..=256).contains(&mib) || !(1..=64).contains(&queues) {
            pr_err!("disks={count} capacity_mib={mib} hw_queues={queues}: out of range\n");
            return Err(EINVAL);
        }
        let options = TagSetOptions {
            nr_hw_queues: queues,
            queue_depth: QUEUE_DEPTH,
            ..TagSetOptions::default()
        };
        let tag_set = TagSet::<RamDisk>::new(options, ())?;
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
        Ok(RustRamdisk { disks: all })
    }
}

impl Drop for RustRamdisk {
    fn drop(&mut self) {
        let count = self.disks.len();
        // Each disk waits for its requests, then goes.
        self.disks.clear();
        pr_info!("removed disks: {count}\n");
    }
}
