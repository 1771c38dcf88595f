//! A forgery: `global_asm!` defines a function in ring 0 in a lab that
//! allows no `unsafe`, brought in by `use core::arch::*` and called by a
//! fragment, so that no `global_asm!` is written. Refused: the glob import
//! (`asm`) and the macro (`opaque-macros`).

#![no_std]

use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    license: "GPL",
}

use core::arch::*;

macro_rules! emit {
    ($how:ident) => {
        $how!(".pushsection .text\n.globl lab01_payload\nlab01_payload: ret\n.popsection");
    };
}

emit!(global_asm);

const LOAD: &str = "hello: Hello from Rust\n";
const UNLOAD: &str = "hello: Goodbye\n";

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
