//! blk-mq: multi-queue block drivers.
//!
//! C header: [`include/linux/blk-mq.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blk-mq.h)
//!
//! A driver implements [`Operations`] for a type of its own, makes a
//! [`TagSet`] (its hardware queues, their depth and the per-request data)
//! and one [`GenDisk`] per disk with a [`GenDiskBuilder`]. blk-mq then calls
//! [`Operations::queue_rq`] with each [`Request`], on the CPU that issued
//! it, through the hardware queue that CPU maps to.
//!
//! # Who owns a request
//!
//! A [`Request`] is the one handle on a request that the driver holds, and
//! the driver must give it back to the block layer exactly once. The type
//! makes that a rule: every way to give it back consumes it.
//!
//! - [`Request::end`]: done, with a status.
//! - [`Request::complete`]: done; blk-mq calls [`Operations::complete`]
//!   with the request again, possibly on the CPU that issued it (the usual
//!   path from an interrupt handler).
//! - [`Request::into_in_flight`]: the device has it. The driver finds it
//!   again by its tag when the device completes it
//!   ([`TagSet::tag_to_rq`], or [`TagSet::tag_to_rq_checked`] with the
//!   request's [`generation`](Request::generation) so that a late
//!   completion of an earlier use of the tag is ignored), when it times out
//!   ([`TimedOut::claim`]) or
//!   when the driver cancels everything in flight
//!   ([`TagSet::claim_in_flight`]). Each of those hands out a [`Request`]
//!   only if no other handle exists, so a bogus or repeated tag from the
//!   hardware cannot end a request twice.
//! - [`Request::requeue`]: blk-mq sends it again later.
//! - From [`Operations::queue_rq`] only: `Err(`[`Busy`]`)`, the device
//!   cannot take it now; blk-mq retries later.
//!
//! Dropping a `Request` ends it with an I/O error, so a forgotten request
//! fails instead of hanging its caller.
//!
//! `drivers/ramdisk` is a complete driver on this module.

mod gen_disk;
mod operations;
mod request;
mod tag_set;

pub use gen_disk::{GenDisk, GenDiskBuilder, QueueGuard};
pub use operations::{Operations, QueueMap, TimeoutAction};
pub use request::{Busy, Op, Request, Segment, Segments, TimedOut};
pub use tag_set::{QuiescedTagSet, TagSet, TagSetOptions};
