//! The `module!` macro: declares a loadable kernel module written in Rust.
//!
//! ```ignore
//! use kernel::prelude::*;
//!
//! module! {
//!     type: Hello,                      // the type that implements `kernel::Module`
//!     name: "hello",                    // the module name, also the log prefix
//!     author: ["Ada", "Grace"],         // optional: one string or a list
//!     description: "Says hello",        // optional
//!     license: "GPL",                   // required
//!     alias: "hi",                      // optional: one string or a list
//! }
//! ```
//!
//! Fields may come in any order and the trailing comma is optional. `type`,
//! `name` and `license` are required. Wherever a string is expected, a byte
//! string such as `b"hello"` works too; it must be valid UTF-8. No string may
//! be empty or contain a NUL byte. `name` must be a valid module name: ASCII
//! letters, digits and `_`, not starting with a digit, at most 55 bytes.
//!
//! The macro expands to:
//!
//! - one `static` in the `.modinfo` section per `author`, `description`,
//!   `license` and `alias` string, as C's `MODULE_INFO` does;
//! - `__LOG_PREFIX`, the module name as a NUL-terminated byte string, which
//!   the `pr_*!` macros use;
//! - `THIS_MODULE`, a `kernel::ThisModule` for `__this_module`;
//! - `init_module` and `cleanup_module`, which the kernel calls on load and
//!   unload, and which create and drop the `type` through a
//!   `kernel::module::ModuleSlot`.
//!
//! Bad input does not panic: every mistake becomes a compile error pointing
//! at the token at fault, all of them in one build, and `THIS_MODULE` and
//! `__LOG_PREFIX` are still defined so that the rest of the crate compiles.
//!
//! The code is in three passes: `ast` parses, `valid` checks and
//! `expand` generates.

mod ast;
mod expand;
mod valid;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a kernel module. See the [crate documentation](crate) for the
/// syntax.
#[proc_macro]
pub fn module(input: TokenStream) -> TokenStream {
    expand::module(input.into()).into()
}
