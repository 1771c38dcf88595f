//! A forgery: the module replays the snapshots, moved out of the grading
//! workspace to its sibling `expected/`, read at build time by a macro of
//! the student's that calls `include_str!` by a fragment. A token scan
//! sees no `include_str!`; the `opaque-macros` rule refuses the macro and
//! the name passed to it.

#![no_std]

use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    license: "GPL",
}

macro_rules! read {
    ($how:ident, $file:literal) => {
        $how!($file)
    };
}

const LOAD: &str = read!(include_str, "../../../../expected/lab-01/02-load.txt");
const UNLOAD: &str = read!(include_str, "../../../../expected/lab-01/04-unload.txt");

/// Prints the kernel log lines of a snapshot, without the module's prefix.
fn replay(snapshot: &str) {
    for line in snapshot.lines() {
        if let Some(text) = line.strip_prefix("hello: ") {
            pr_info!("{text}\n");
        }
    }
}

struct Hello;

impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        replay(LOAD);
        Ok(Hello)
    }
}

impl Drop for Hello {
    fn drop(&mut self) {
        replay(UNLOAD);
    }
}
