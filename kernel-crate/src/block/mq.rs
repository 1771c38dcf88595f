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
//!   cannot take it now; blk-mq retries later. `queue_rq` gets a
//!   [`Queued`] (a `Request` that can also be answered busy) whose
//!   lifetime brands that one call: only the request it was given can be
//!   returned as busy, because blk-mq requeues the request it passed
//!   whatever comes back. (Mainline's `queue_rq` takes an
//!   `ARef<Request>` and returns only an error, so it has no busy answer to
//!   get wrong; this crate keeps "busy", which the NVMe driver needs when
//!   its PRP pool is empty or a reset is under way, and makes it safe by
//!   the brand.)
//!
//! Dropping a `Request` ends it with an I/O error, so a forgotten request
//! fails instead of hanging its caller.
//!
//! A request's pages mapped for DMA ([`Request::map_dma`]) stay mapped
//! while the driver or the device has the request, and are unmapped before
//! any of the ways above gives it back to blk-mq, which may then free them.
//!
//! # Context
//!
//! The callbacks run in different contexts, and the types do not carry
//! them: [`Operations::queue_rq`] runs under `rcu_read_lock` (tag sets here
//! are never `BLK_MQ_F_BLOCKING`), [`Operations::complete`] in the block
//! softirq, an inter-processor interrupt or the interrupt handler that
//! completed the request, a [`crate::irq::Handler`] in hard interrupt
//! context; none of them may sleep. [`Operations::timeout`],
//! `init_request`, `init_hctx` and `map_queues` run in process context.
//!
//! This crate's rule is the kernel's: a function that may sleep says so in
//! its documentation ("may sleep") and calls `might_sleep()` on entry, so
//! the debug kernel (`CONFIG_DEBUG_ATOMIC_SLEEP`) reports a sleeping call
//! from one of these callbacks with its backtrace, on the first try, even
//! when it would not have slept. A context token (`&Atomic` passed to the
//! callbacks, required by nothing, or a `&Process` token required by every
//! sleeping function) was weighed and rejected: sleeping functions are
//! reached through shared state (a `Mutex` in `QueueData`, an allocation
//! inside a library type), so a token would have to be threaded through
//! every API that might allocate or lock, and a token for atomic context
//! cannot forbid anything by itself. Mainline makes the same choice
//! (`might_sleep()` in `Mutex::lock`, `# Context` notes, `GFP_ATOMIC` by
//! hand). Sleeping in atomic context is a bug the debug kernel reports, not
//! memory corruption by itself; what would corrupt memory (an RCU grace
//! period ending under `queue_rq`) needs the sleep to happen, which
//! `might_sleep()` reports before.
//!
//! `drivers/ramdisk` is a complete driver on this module.

mod gen_disk;
mod operations;
mod request;
mod tag_set;

pub use gen_disk::{GenDisk, GenDiskBuilder, QueueGuard};
pub use operations::{Operations, QueueMap, TimeoutAction};
pub use request::{Busy, Op, Queued, Ranges, Request, Segment, Segments, TimedOut};
pub use tag_set::{QuiescedTagSet, TagSet, TagSetOptions};
