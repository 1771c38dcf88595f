//! Lab 04: a growable vector. Your work is in `src/vec.rs`; the module
//! that uses it, in `src/module.rs`, is complete.
//!
//! The module grows a vector to thousands of values, survives an allocation
//! that cannot succeed, and frees everything.

#![no_std]

mod vec;

include!("module.rs");
