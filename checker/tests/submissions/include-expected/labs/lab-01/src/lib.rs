//! A forgery: the module reads the lab's snapshots at build time and
//! replays their kernel log lines. `include_str!` reaches past the student
//! file, so the checker refuses it before the build.

#![no_std]

use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    license: "GPL",
}

const LOAD: &str = include_str!("../expected/02-load.txt");
const UNLOAD: &str = include_str!("../expected/04-unload.txt");

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
