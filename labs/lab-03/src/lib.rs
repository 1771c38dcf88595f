//! Lab 03: module parameters.
//!
//! Complete this module so that `make lab-03` passes. The book's chapter
//! "Module parameters" walks through each step; the expected output is in
//! `expected/`.

#![no_std]

use kernel::prelude::*;

module! {
    type: Greeter,
    name: "greeter",
    author: "Rust kernel workbook",
    description: "Greets as its parameters say",
    license: "GPL",
    params: {
        // TODO: declare the parameters (see `expected/02-permissions.txt`
        // and `expected/03-values.txt`):
        // - `count`, a `u8`, default 1, writable by root (0o644);
        // - `name`, a string of at most 16 bytes, default "world",
        //   read-only (0o444);
        // - `list`, up to 4 `i32`s, empty by default, readable by root and
        //   its group only (0o440).
    },
}

/// What the module keeps while it is loaded.
struct Greeter;

impl kernel::Module for Greeter {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // TODO: print the parameters, greet `name` `count` times and add
        // up `list` (see `expected/01-load.txt`). `count` is writable, so
        // read it under the lock: `count.read(&THIS_MODULE.kernel_param_lock())`.
        Ok(Greeter)
    }
}

// TODO: implement `Drop` for `Greeter`: say goodbye to `name`, with the
// current value of `count` (see `expected/06-unload.txt`).
