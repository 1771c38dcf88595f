//! A forgery: the module prints through the kernel's raw C `_printk`,
//! outside the kernel crate's safe API. `unsafe` and `kernel::bindings`
//! (however they are spelt) are refused before the build, so only the
//! offending function is here.

#![no_std]

use kernel as k;

/// Greets the kernel log without `pr_info!`.
pub fn greet() {
    let text = c"\x016hello: Hello from Rust!\n";
    // SAFETY: none; this is the point.
    unsafe { k::bindings::_printk(text.as_ptr()) };
}
