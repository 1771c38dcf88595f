//! A forgery: the module prints through the kernel's raw C `_printk`,
//! outside the kernel crate's safe API. `unsafe` and `kernel::bindings`
//! (however they are spelt) are refused before the build.

#![no_std]

use kernel as k;
use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    license: "GPL",
}

struct Hello;

impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let text = c"\x016hello: Hello from Rust!\n";
        // SAFETY: none; this is the point.
        unsafe { k::bindings::_printk(text.as_ptr()) };
        Ok(Hello)
    }
}
