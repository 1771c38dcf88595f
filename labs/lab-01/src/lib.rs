//! Lab 01: your first module.
//!
//! Complete this module so that `make lab-01` passes. The book's chapter
//! "Your first module" walks through each step; the expected output is in
//! `expected/`.

#![no_std]

use kernel::prelude::*;

// ANCHOR: module
module! {
    type: Hello,
    name: "hello",
    // TODO: add an `author` and a `description` (see `expected/01-modinfo.txt`).
    license: "GPL",
}
// ANCHOR_END: module

// ANCHOR: state
/// Who `init` greets, in this order.
const NAMES: [&str; 3] = ["kernel", "Rust", "reader"];

/// What the module keeps while it is loaded.
struct Hello {
    /// How many greetings were printed at load time.
    greetings: usize,
}
// ANCHOR_END: state

// ANCHOR: init
impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // TODO: greet the kernel log with `pr_info!`: "Hello from Rust!", then
        // each of `NAMES` with its place in the list, then a line with the
        // number of names and the bytes they have in all. The lines are in
        // `expected/02-load.txt`. Compute the numbers from `NAMES`, not by
        // hand: with other names the lines must follow. Count every
        // greeting in `greetings`.
        Ok(Hello { greetings: 0 })
    }
}
// ANCHOR_END: init

// ANCHOR: drop
// TODO: implement `Drop` for `Hello` to say goodbye when the module is
// unloaded (see `expected/04-unload.txt`).
// ANCHOR_END: drop
