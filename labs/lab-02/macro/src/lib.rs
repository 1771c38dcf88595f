//! Lab 02: a `module!` macro of your own.
//!
//! ```ignore
//! module! {
//!     type: Credits,                              // required
//!     name: "credits",                            // required
//!     author: ["Ada Lovelace", "Grace Hopper"],   // optional: one string or a list
//!     description: "Credits its authors",         // optional
//!     license: "GPL",                             // required
//!     alias: "thanks",                            // optional: one string or a list
//! }
//! ```
//!
//! It accepts the fields of the kernel crate's `module!` and expands to:
//!
//! - one `static` in the `.modinfo` section per `author` and per `alias`
//!   string, which is your part (`strings.rs`);
//! - a call of `::kernel::module!` with the other fields, which generates
//!   the entry points, `THIS_MODULE` and the remaining `.modinfo` strings.
//!
//! `parse.rs` reads the fields, `expand.rs` writes the output, and
//! `strings.rs`, the file you complete, parses the value of `author` and
//! `alias` and writes one `.modinfo` static. `tests.rs` holds the tests that
//! grade it: `cargo test -p lab-02-macro`.

mod expand;
mod parse;
mod strings;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a kernel module. See the [crate documentation](crate).
#[proc_macro]
pub fn module(input: TokenStream) -> TokenStream {
    expand::module(input.into()).into()
}
