// TODO-BEGIN
//! Lab 03, reference solution: a module whose greetings depend on its
//! parameters.
// TODO-ELSE
// //! Lab 03: module parameters.
// //!
// //! Complete this module so that `make lab-03` passes. The book's chapter
// //! "Module parameters" walks through each step; the expected output is in
// //! `expected/`.
// TODO-END

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
        // TODO-BEGIN
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
        // TODO-ELSE
        // // TODO: declare the parameters `count`, `name` and `list`. What
        // // sysfs must show (`expected/02-permissions.txt`, `03-values.txt`)
        // // gives their permissions and defaults; the steps that must fail
        // // (`08-bad-count.txt` to `11-long-name.txt`) give their types:
        // // `count` goes up to 255, `list` holds up to 4 numbers that may be
        // // negative, `name` up to 16 bytes.
        // TODO-END
    },
}
// ANCHOR_END: module

// TODO-BEGIN
/// What the module keeps while it is loaded: nothing, the parameters are
/// read where they are needed.
// TODO-ELSE
// /// What the module keeps while it is loaded.
// TODO-END
struct Greeter;

// ANCHOR: init
impl kernel::Module for Greeter {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // TODO-BEGIN
        // `name` and `list` are read-only: no lock needed. (A `let` cannot
        // reuse a parameter's name: the parameters are statics.)
        let who = name.read();
        let numbers = list.read();
        // `count` can change through sysfs: read it under the lock.
        let times = *count.read(&THIS_MODULE.kernel_param_lock());

        pr_info!("count={times} name={who} list={numbers:?}\n");
        // The parameter's type checks the length; what a name may hold is
        // this module's rule, so init refuses it (insmod fails with EINVAL).
        if !who.bytes().all(|b| b.is_ascii_alphabetic()) {
            pr_err!("a name has letters only, not {who:?}\n");
            return Err(EINVAL);
        }
        for i in 1..=times {
            pr_info!("Hello, {who}! ({i}/{times})\n");
        }
        let sum: i64 = numbers.iter().map(|&n| i64::from(n)).sum();
        match numbers.iter().max() {
            Some(max) => pr_info!("the numbers add up to {sum}, the largest is {max}\n"),
            None => pr_info!("no numbers to add up\n"),
        }
        // TODO-ELSE
        // // TODO: print the parameters, refuse a `name` that is not all ASCII
        // // letters (an error from init makes insmod fail), greet `name`
        // // `count` times, and add up `list` and find its largest number, as
        // // `expected/01-load.txt`, `07-load-params.txt` and `12-bad-name.txt`
        // // show. `count` is writable, so read it under the lock.
        // TODO-END
        Ok(Greeter)
    }
}
// ANCHOR_END: init

// ANCHOR: drop
// TODO-BEGIN
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
// TODO-ELSE
// // TODO: implement `Drop` for `Greeter`: say goodbye to `name`, with the
// // current value of `count` (see `expected/06-unload.txt`).
// TODO-END
// ANCHOR_END: drop
