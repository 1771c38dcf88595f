//! Lab 10: Binder's buffer allocator.
//!
//! Your module is the Rust Binder driver of `drivers/binder` with one
//! file of your own: `src/alloc.rs`, whose `alloc` and `free` you write.
//! The other files are the driver's, compiled in from there.

#![no_std]

mod alloc;
#[path = "../../../drivers/binder/src/allocation.rs"]
mod allocation;
#[path = "../../../drivers/binder/src/context.rs"]
mod context;
#[path = "../../../drivers/binder/src/defs.rs"]
mod defs;
#[path = "../../../drivers/binder/src/device.rs"]
mod device;
#[path = "../../../drivers/binder/src/error.rs"]
mod error;
#[path = "../../../drivers/binder/src/node.rs"]
mod node;
#[path = "../../../drivers/binder/src/page_range.rs"]
mod page_range;
#[path = "../../../drivers/binder/src/process.rs"]
mod process;
#[path = "../../../drivers/binder/src/thread.rs"]
mod thread;
#[path = "../../../drivers/binder/src/transaction.rs"]
mod transaction;
#[path = "../../../drivers/binder/src/work.rs"]
mod work;
