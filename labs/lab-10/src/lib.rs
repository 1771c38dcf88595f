//! Lab 10: Binder's buffer allocator.
//!
//! Your module is the Rust Binder driver of `drivers/binder` with one
//! file of your own: `src/alloc.rs`, whose `alloc` and `free` you write.
//! The other files are the driver's, compiled in from there.

#![no_std]

mod alloc;
#[path = "../../../drivers/binder/src/defs.rs"]
mod defs;
#[path = "../../../drivers/binder/src/device.rs"]
mod device;
#[path = "../../../drivers/binder/src/process.rs"]
mod process;
