// Issue 22, item 7: `queue_rq` answers busy with a request other than the
// one it was given (one it kept from an earlier call). blk-mq requeues the
// request it passed, so the other one would be requeued while still in
// use and the given one lost. `Request` has no `busy` any more: only the
// `Queued` of this call can be answered busy.
// ANCHOR: case
use kernel::block::mq::{Busy, Queued, Request};
use kernel::prelude::*;
use kernel::sync::Mutex;

use super::Ops;

fn queue_rq<'q>(
    kept: &Mutex<Option<Request<Ops>>>,
    rq: Queued<'q, Ops>,
) -> Result<(), Busy<'q, Ops>> {
    let Some(other) = kept.lock().replace(rq.accept()) else {
        return Ok(());
    };
    Err(other.busy())
}
// ANCHOR_END: case
