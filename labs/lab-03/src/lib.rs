//! Lab 03: module parameters.
//!
//! Complete this module so that `make lab-03` passes. The book's chapter
//! "Module parameters" walks through each step; the expected output is in
//! `expected/`.

#![no_std]

use kernel::prelude::*;

// ANCHOR: module
module! {
    type: Greeter,
    name: "greeter",
    author: "Rust kernel workbook",
    description: "Greets as its parameters say",
    license: "GPL",
    params: {
        // TODO: declare the parameters `count`, `name` and `list`. What
        // sysfs must show (`expected/02-permissions.txt`, `03-values.txt`)
        // gives their permissions and defaults; the steps that must fail
        // (`08-bad-count.txt` to `11-long-name.txt`) give their types:
        // `count` goes up to 255, `list` holds up to 4 numbers that may be
        // negative, `name` up to 16 bytes.
    },
}
// ANCHOR_END: module

/// What the module keeps while it is loaded.
struct Greeter;

// ANCHOR: init
impl kernel::Module for Greeter {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // TODO: print the parameters, refuse a `name` that is not all ASCII
        // letters (an error from init makes insmod fail), greet `name`
        // `count` times, and add up `list` and find its largest number, as
        // `expected/01-load.txt`, `07-load-params.txt` and `12-bad-name.txt`
        // show. `count` is writable, so read it under the lock.
        Ok(Greeter)
    }
}
// ANCHOR_END: init

// ANCHOR: drop
// TODO: implement `Drop` for `Greeter`: say goodbye to `name`, with the
// current value of `count` (see `expected/06-unload.txt`).
// ANCHOR_END: drop
