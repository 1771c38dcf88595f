//! Lab 11: NVMe PRP lists.
//!
//! Your module is the Rust NVMe driver of `drivers/nvme` with one file of
//! your own: `src/prp.rs`, whose `build` and `lists_for` you write. The
//! other files are the driver's, compiled in from there, and the
//! `module!` below is the one of the driver's `src/lib.rs`.

#![no_std]

use kernel::prelude::*;

#[path = "../../../drivers/nvme/src/blk.rs"]
mod blk;
#[path = "../../../drivers/nvme/src/cmd.rs"]
mod cmd;
#[path = "../../../drivers/nvme/src/ctrl.rs"]
mod ctrl;
mod prp;
#[path = "../../../drivers/nvme/src/queue.rs"]
mod queue;
#[path = "../../../drivers/nvme/src/regs.rs"]
mod regs;

use ctrl::{reset, Admin, RNvme, IO_DEPTH};

module! {
    type: RNvme,
    name: "rnvme",
    author: "Rust kernel workbook",
    description: "NVMe driver in Rust",
    license: "GPL",
}
