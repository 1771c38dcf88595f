//! The `kernel` crate: safe abstractions over the C kernel API.
//!
//! Modules use this crate and never the raw [`bindings`]. Every `unsafe`
//! block here carries a comment that says why it is sound, every `unsafe fn`
//! documents what its caller must guarantee, and every type with an
//! invariant documents it under "Invariants". The build enforces this with
//! `unsafe_op_in_unsafe_fn` and clippy's `undocumented_unsafe_blocks` and
//! `missing_safety_doc`.
//!
//! The crate is built for `x86_64-unknown-none` by Kbuild, against the
//! headers of the kernel the module will be loaded into; see
//! `kbuild/rust-module.mk`.

#![no_std]
#![warn(missing_docs)]

pub mod alloc;
pub mod bindings;
pub mod chrdev;
pub mod error;
pub mod file;
pub mod init;
pub mod ioctl;
pub mod miscdev;
pub mod module;
pub mod module_param;
pub mod prelude;
pub mod print;
pub mod sync;
pub mod task;
pub mod user;

mod panic;

pub use module::{Module, ThisModule};
pub use module_macro::module;
