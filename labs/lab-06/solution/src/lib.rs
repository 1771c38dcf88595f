//! Lab 06, reference solution: the exercise's module
//! (`../src/module.rs`) built with the reference `condvar.rs`.

#![no_std]

mod condvar;

include!("../../src/module.rs");
