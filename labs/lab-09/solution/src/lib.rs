//! Lab 09, reference solution: the exercise's module
//! (`../src/module.rs`) built with the reference `completion.rs`.

#![no_std]

mod completion;

include!("../../src/module.rs");
