//! The panic handler: a panic in a module is a kernel bug.
//!
//! It logs where the panic happened and calls `BUG()`, which oopses the
//! current task; the kernel decides whether that brings the system down
//! (`panic_on_oops`).

use core::panic::PanicInfo;

use crate::bindings;
use crate::print::{call_printk, Level};

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    call_printk(Level::Emerg, b"rust\0", format_args!("{info}\n"));
    // SAFETY: `BUG()` may be called from any context; it does not return.
    unsafe { bindings::rust_helper_BUG() }
}
