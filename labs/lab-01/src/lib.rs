//! Lab 01: your first module.
//!
//! Complete this module so that `make lab-01` passes. The book's chapter
//! "Your first module" walks through each step; the expected output is in
//! `expected/`.

#![no_std]

use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    // TODO: add an `author` and a `description` (see `expected/01-modinfo.txt`).
    license: "GPL",
}

/// What the module keeps while it is loaded.
struct Hello {
    /// How many greetings were printed at load time.
    greetings: u32,
}

impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // TODO: greet the kernel log with `pr_info!` (see `expected/02-load.txt`).
        Ok(Hello { greetings: 0 })
    }
}

// TODO: implement `Drop` for `Hello` to say goodbye when the module is
// unloaded (see `expected/04-unload.txt`).
