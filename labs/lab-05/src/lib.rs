//! Lab 05: a mutex and its guard. Your work is in
//! `src/mutex.rs`.
//!
//! Loading the module starts kernel threads that all increment one shared
//! counter, through your `Mutex` and through each lock of the kernel crate,
//! and checks that no increment was lost.
//!
//! The module that uses it, `src/module.rs`, is complete.

#![no_std]

mod mutex;

include!("module.rs");
