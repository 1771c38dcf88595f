//! Lab 01, reference solution: a module that greets on load and says
//! goodbye on unload.

#![no_std]

use kernel::prelude::*;

// ANCHOR: module
module! {
    type: Hello,
    name: "hello",
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    license: "GPL",
}
// ANCHOR_END: module

// ANCHOR: state
/// What the module keeps while it is loaded.
struct Hello {
    /// How many greetings were printed at load time.
    greetings: u32,
}
// ANCHOR_END: state

// ANCHOR: init
impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Hello from Rust!\n");
        // Rust formatting, not printk's: the `%` is printed as it is.
        pr_info!("{} + {} = {}, 100% of the time\n", 2, 2, 2 + 2);
        Ok(Hello { greetings: 2 })
    }
}
// ANCHOR_END: init

// ANCHOR: drop
impl Drop for Hello {
    fn drop(&mut self) {
        pr_info!("Goodbye after {} greetings\n", self.greetings);
    }
}
// ANCHOR_END: drop
