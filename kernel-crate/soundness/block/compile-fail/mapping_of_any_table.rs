// Issue 22, `SgMapping`: mapping a table that an earlier request filled
// (`Request::map_sg`) after that request was ended: its entries name pages
// blk-mq may have freed. Only `Request::map_dma` maps, and only the
// request's own pages, for as long as it holds them.
// ANCHOR: case
use kernel::block::mq::Request;
use kernel::device::Device;
use kernel::dma::{Direction, SgMapping};
use kernel::prelude::*;
use kernel::scatterlist::SgTable;

use super::Ops;

fn stale(rq: Request<Ops>, dev: &Device, mut table: SgTable) -> Result<SgMapping> {
    rq.map_sg(&mut table)?;
    rq.end_ok();
    SgMapping::new(dev, table, Direction::ToDevice).map_err(|e| e.error)
}
// ANCHOR_END: case
