// TODO-BEGIN
//! Lab 01, reference solution: a module that greets on load and says
//! goodbye on unload.
// TODO-ELSE
// //! Lab 01: your first module.
// //!
// //! Complete this module so that `make lab-01` passes. The book's chapter
// //! "Your first module" walks through each step; the expected output is in
// //! `expected/`.
// TODO-END

#![no_std]

use kernel::prelude::*;

// ANCHOR: module
module! {
    type: Hello,
    name: "hello",
    // TODO-BEGIN
    author: "Rust kernel workbook",
    description: "Greets the kernel log on load and unload",
    // TODO-ELSE
    // // TODO: add an `author` and a `description` (see `expected/01-modinfo.txt`).
    // TODO-END
    license: "GPL",
    // Who `init` greets, in this order: `insmod hello.ko names=Ada,Linus`
    // gives others (chapter 3 is about parameters).
    params: {
        names: ArrayParam<StrParam<16>, 8> {
            default: ["kernel", "Rust", "reader"],
            permissions: 0o444,
            description: "Who to greet, in order (up to 8 names of up to 16 bytes)",
        },
    },
}
// ANCHOR_END: module

// ANCHOR: state
/// What the module keeps while it is loaded.
struct Hello {
    /// How many greetings were printed at load time.
    greetings: usize,
}
// ANCHOR_END: state

// ANCHOR: init
impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // The names `insmod` was given (the default three without any);
        // `who[i].as_str()` is one of them.
        let who = names.read();
        // TODO-BEGIN
        pr_info!("Hello from Rust!\n");
        let mut bytes = 0;
        for (i, name) in who.iter().enumerate() {
            let name = name.as_str();
            pr_info!("Hello, {name}! ({} of {})\n", i + 1, who.len());
            bytes += name.len();
        }
        // Rust formatting, not printk's: the `%` is printed as it is.
        pr_info!("{} names, {bytes} bytes, 100% greeted\n", who.len());
        Ok(Hello {
            greetings: 1 + who.len(),
        })
        // TODO-ELSE
        // // TODO: greet the kernel log with `pr_info!`: "Hello from Rust!", then
        // // each name of `who` with its place in the list, then a line with
        // // the number of names and the bytes they have in all. The lines for
        // // the default names are in `expected/02-load.txt`; the checker also
        // // loads the module with names of its own, drawn anew on every run,
        // // and the lines must follow. Count every greeting in `greetings`:
        // // the opening line and each name's line (not the summary).
        // let _ = who;
        // Ok(Hello { greetings: 0 })
        // TODO-END
    }
}
// ANCHOR_END: init

// ANCHOR: drop
// TODO-BEGIN
impl Drop for Hello {
    fn drop(&mut self) {
        pr_info!("Goodbye after {} greetings\n", self.greetings);
    }
}
// TODO-ELSE
// // TODO: implement `Drop` for `Hello` to say goodbye when the module is
// // unloaded (see `expected/04-unload.txt`).
// TODO-END
// ANCHOR_END: drop
