//! NVMe in Rust: the PCI driver `rnvme`, for QEMU's NVMe controller
//! (`1b36:0010`) and any function of the NVMe class, with one disk
//! `rnvmeXnY` per namespace.
//!
//! Debian's C `nvme` driver matches the same functions: a function is
//! bound to one of them at a time, chosen with sysfs `driver_override`,
//! `unbind` and `bind`.
//!
//! Probe brings the controller up: disable it, put the admin queue pair in
//! coherent memory, enable it and wait for it to be ready (both with the
//! time-out CAP.TO gives), identify the controller and its namespaces, ask
//! for one I/O queue pair per CPU, create the pairs it grants, each with
//! an MSI-X vector of its own, and add the disks (see `blk.rs` for the
//! I/O path). Admin commands are polled: they are few, and all made from
//! probe, remove and the timeout path. Remove deletes the disks (which
//! waits for their requests), then the I/O queues, and shuts the
//! controller down (CC.SHN) before anything is freed.
//!
//! The I/O queues use shadow doorbells when the controller offers them
//! (QEMU's does), as the C driver does, and ring the doorbell once per
//! batch of requests.
//!
//! A request that times out is looked for on its queue first, then
//! aborted, then the controller is reset: disabled, its requests failed
//! (the one that timed out) or requeued (the others), and brought back
//! with the same queues.
//!
//! The disks' queues are quiesced for the length of a reset, so no new
//! request reaches a queue that is being rebuilt.
//!
//! Beyond reads, writes and flushes: discard (Dataset Management) and
//! write zeroes when the controller has them (ONCS), the optimal I/O size
//! (NOWS), `NVME_IOCTL_ID`, and Identify from user space through
//! `NVME_IOCTL_ADMIN_CMD` (no other admin command).
//!
//! Not done: polled queues, I/O passthrough.

#![no_std]

mod blk;
mod cmd;
mod ctrl;
mod prp;
mod queue;
mod regs;

use kernel::prelude::*;

use ctrl::{reset, Admin, RNvme, IO_DEPTH};

module! {
    type: RNvme,
    name: "rnvme",
    author: "Rust kernel workbook",
    description: "NVMe driver in Rust",
    license: "GPL",
}
