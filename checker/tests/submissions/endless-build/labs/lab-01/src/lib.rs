// SPDX-License-Identifier: GPL-2.0
//! A lab 01 whose build never ends (checker/tests/sandbox.rs): a constant
//! evaluated at compile time loops for 2^64 steps, and the lint that would
//! stop rustc is allowed. The sandbox kills the build at the lab's limit:
//! "build timed out".
#![no_std]
#![allow(long_running_const_eval)]

use kernel::prelude::*;

module! {
    type: Hello,
    name: "hello",
    license: "GPL",
}

/// Never computed: the loop ends when `i` wraps back to 0, which `* 3`
/// never does.
const fn spin() -> u64 {
    let mut i = 1u64;
    while i != 0 {
        i = i.wrapping_mul(3);
    }
    i
}

const NEVER: u64 = spin();

struct Hello;

impl kernel::Module for Hello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("{}\n", NEVER);
        Ok(Hello)
    }
}
