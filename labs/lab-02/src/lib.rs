//! Lab 02: the module `credits`, declared with the `module!` macro that you
//! complete in `macro/src/strings.rs`. Nothing to change in this file: the
//! reference solution (the instructor's repository) builds this same file
//! with the reference macro.

#![no_std]

use kernel::prelude::*;
// Your macro, not the kernel crate's: this import shadows the prelude's.
use lab_02_macro::module;

// ANCHOR: module
module! {
    type: Credits,
    name: "credits",
    author: ["Ada Lovelace", "Grace Hopper"],
    description: "Credits its authors, with a module! of your own",
    license: "GPL",
    alias: ["rust-credits", "thanks"],
}
// ANCHOR_END: module

/// The module: it has nothing to keep.
struct Credits;

impl kernel::Module for Credits {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("loaded\n");
        Ok(Credits)
    }
}

impl Drop for Credits {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
