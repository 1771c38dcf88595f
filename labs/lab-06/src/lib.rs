//! Lab 06: a condition variable. Your work is in
//! `src/condvar.rs`.
//!
//! Loading the module runs producers and consumers through a small buffer,
//! and a gate that several threads wait at; it leaves two threads waiting,
//! one that a signal can wake and one that only the module's unloading
//! wakes.
//!
//! The module that uses it, `src/module.rs`, is complete.

#![no_std]

mod condvar;

include!("module.rs");
