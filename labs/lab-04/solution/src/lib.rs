//! Lab 04, reference solution: a module that grows a vector to thousands of
//! values, survives an allocation that cannot succeed, and frees everything.

#![no_std]

mod vec;

include!("../../src/module.rs");
