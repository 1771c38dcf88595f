//! Lab 03, reference solution: a module whose greetings depend on its
//! parameters.

#![no_std]

use kernel::prelude::*;

// ANCHOR: module
module! {
    type: Greeter,
    name: "greeter",
    author: "Rust kernel workbook",
    description: "Greets as its parameters say",
    license: "GPL",
    params: {
        count: u8 {
            default: 1,
            permissions: 0o644,
            description: "How many times to greet",
        },
        name: StrParam<16> {
            default: "world",
            permissions: 0o444,
            description: "Who to greet (at most 16 bytes)",
        },
        list: ArrayParam<i32, 4> {
            default: [],
            permissions: 0o440,
            description: "Up to 4 numbers to add up",
        },
    },
}
// ANCHOR_END: module

/// What the module keeps while it is loaded: nothing, the parameters are
/// read where they are needed.
struct Greeter;

// ANCHOR: init
impl kernel::Module for Greeter {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // `name` and `list` are read-only: no lock needed. (A `let` cannot
        // reuse a parameter's name: the parameters are statics.)
        let who = name.read();
        let numbers = list.read();
        // `count` can change through sysfs: read it under the lock.
        let times = *count.read(&THIS_MODULE.kernel_param_lock());

        pr_info!("count={times} name={who} list={numbers:?}\n");
        for i in 1..=times {
            pr_info!("Hello, {who}! ({i}/{times})\n");
        }
        let sum: i64 = numbers.iter().map(|&n| i64::from(n)).sum();
        pr_info!("the numbers add up to {sum}\n");
        Ok(Greeter)
    }
}
// ANCHOR_END: init

// ANCHOR: drop
impl Drop for Greeter {
    fn drop(&mut self) {
        // Re-read `count`: it may have been written through sysfs since.
        let lock = THIS_MODULE.kernel_param_lock();
        pr_info!(
            "Goodbye, {}: count is now {}\n",
            name.read(),
            count.read(&lock)
        );
    }
}
// ANCHOR_END: drop
