//! Binder IPC in Rust: the misc device `/dev/rust-binder`.
//!
//! The same protocol (version 8) as C's `drivers/android/binder.c` in
//! Linux 6.1, with its observable behaviour: a process opens the device,
//! maps at most 4 MiB of it read-only, and talks through `BINDER_WRITE_READ`,
//! whose write half carries `BC_*` commands and whose read half returns
//! `BR_*` work. The book's chapter "Binder" describes the design.
//!
//! One file per object, as mainline's `drivers/android/binder`:
//!
//! - `device.rs`: the module and the misc device's file operations;
//! - `context.rs`: the context manager;
//! - `process.rs`: a process (one open), its ioctls and `BC_*` commands;
//! - `thread.rs`: a thread, its reads of `BR_*` work, its exit;
//! - `node.rs`: nodes, references to them, death notifications;
//! - `transaction.rs`: sending a transaction and returning it;
//! - `work.rs`: the items of the work lists;
//! - `error.rs`: why a transaction failed, and the errno behind it;
//! - `alloc.rs`: the range allocator, which knows no process;
//! - `page_range.rs`: a mapping's pages and the shrinker; its top holds
//!   the lock order of the whole driver;
//! - `allocation.rs`: a process's mapping (allocator over pages) and a
//!   transaction's buffer seen through it;
//! - `defs.rs`: the user-space structures' layouts.
//!
//! Not supported yet (C has them): scatter-gather objects (`PTR`, `FDA`),
//! freezing, security contexts, priority inheritance, extended errors.

#![no_std]

mod alloc;
mod allocation;
mod context;
mod defs;
mod device;
mod error;
mod node;
mod page_range;
mod process;
mod thread;
mod transaction;
mod work;
