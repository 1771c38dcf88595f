//! Soundness tests of `kernel::block::mq` and `kernel::dma` (issue 22):
//! what a safe blk-mq driver must not be able to write. Each case in
//! `compile-fail/` is built into this crate and must be refused; the module
//! itself is the [`Ops`] the cases implement, and loads and unloads.

#![no_std]
#![forbid(unsafe_code)]

use kernel::block::mq::{Busy, Operations, Queued, Request};
use kernel::prelude::*;

module! {
    type: SoundnessBlock,
    name: "soundness_block",
    author: "Rust kernel workbook",
    description: "Soundness tests of block::mq and dma",
    license: "GPL",
}

/// A driver that serves every request at once, with an error: the cases
/// need an `Operations` to name requests of.
pub struct Ops;

#[vtable]
impl Operations for Ops {
    type RequestData = ();
    type QueueData = ();
    type SetData = ();
    type HwData = ();

    fn init_request(_set: &(), _hctx_idx: u32, _numa_node: i32) -> Result<()> {
        Ok(())
    }

    fn init_hctx(_set: &(), _hctx_idx: u32) -> Result<()> {
        Ok(())
    }

    fn queue_rq<'q>(
        _hw: &(),
        _queue: &(),
        rq: Queued<'q, Self>,
        _is_last: bool,
    ) -> Result<(), Busy<'q, Self>> {
        rq.accept().end(Err(EIO));
        Ok(())
    }

    fn complete(_queue: &(), rq: Request<Self>) {
        rq.end_ok();
    }
}

struct SoundnessBlock;

impl kernel::Module for SoundnessBlock {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("loaded\n");
        Ok(SoundnessBlock)
    }
}

impl Drop for SoundnessBlock {
    fn drop(&mut self) {
        pr_info!("goodbye\n");
    }
}

#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}
