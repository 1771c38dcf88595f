//! Host tests of the expansion. They call `expand` directly with
//! `proc_macro2` token streams, so they need no compiler plugin.

mod errors;
mod expand;
mod tidy;
mod vtable;
