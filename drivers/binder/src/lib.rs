//! Binder IPC in Rust: the misc device `/dev/rust-binder`.
//!
//! The same protocol (version 8) as C's `drivers/android/binder.c` in
//! Linux 6.1, with its observable behaviour: a process opens the device,
//! maps at most 4 MiB of it read-only, and talks through `BINDER_WRITE_READ`,
//! whose write half carries `BC_*` commands and whose read half returns
//! `BR_*` work. See `process.rs` for the state, and the book's chapter
//! "Binder" for the design.
//!
//! Not supported yet (C has them): scatter-gather objects (`PTR`, `FDA`),
//! freezing, security contexts, priority inheritance, extended errors.

#![no_std]

mod alloc;
mod defs;
mod device;
mod process;
