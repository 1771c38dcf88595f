// Issue 22, `SgMapping`: a request's pages mapped for DMA, still used (or
// unmapped, which may copy a bounce buffer back into them) after the
// request was ended and blk-mq freed them. The mapping belongs to the
// request: it cannot outlive it.
// ANCHOR: case
use kernel::block::mq::Request;
use kernel::device::Device;
use kernel::dma::{Direction, DmaAddress};
use kernel::prelude::*;
use kernel::scatterlist::SgTable;

use super::Ops;

fn keep(mut rq: Request<Ops>, dev: &Device, table: SgTable) -> Result<DmaAddress> {
    let mapping = rq
        .map_dma(dev, table, Direction::FromDevice)
        .map_err(|e| e.error)?;
    rq.end_ok();
    let first = mapping.iter().next().map_or(0, |(addr, _)| addr);
    Ok(first)
}
// ANCHOR_END: case
