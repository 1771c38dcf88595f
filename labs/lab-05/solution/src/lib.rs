//! Lab 05, reference solution: the exercise's module
//! (`../src/module.rs`) built with the reference `mutex.rs`.

#![no_std]

mod mutex;

include!("../../src/module.rs");
