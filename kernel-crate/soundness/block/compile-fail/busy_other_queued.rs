// Issue 22, item 7: the brand. Even a `Queued` of another call (were one
// at hand) cannot answer for this one: `Busy<'q>` is made only from
// `Queued<'q>`, and the brand is invariant.
// ANCHOR: case
use kernel::block::mq::{Busy, Queued};
use kernel::prelude::*;

use super::Ops;

fn swap<'q, 'r>(given: Queued<'q, Ops>, other: Queued<'r, Ops>) -> Result<(), Busy<'q, Ops>> {
    given.accept().end_ok();
    Err(other.busy())
}
// ANCHOR_END: case
