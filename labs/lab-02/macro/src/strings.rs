//! Your part of the macro: the value of `author` and `alias`, and the
//! `.modinfo` static for one string. The tests in `tests.rs` say what is
//! expected; run them with `cargo test -p lab-02-macro`.

use proc_macro2::TokenStream;
use syn::parse::ParseStream;
use syn::{Ident, LitStr};

#[allow(unused_imports, reason = "you will need it")]
use crate::parse::string;

// ANCHOR: parse_strings
/// Parses the value of `key` (`author` or `alias`): one string literal,
/// `"Ada"`, or a list of them, `["Ada", "Grace"]`, with an optional
/// trailing comma. Each string is checked by [`string`]. An empty list is
/// an error: "empty list for `author`: give at least one string, or leave
/// the field out", pointing at the brackets.
pub(crate) fn parse_strings(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
    // TODO: parse one string or a list of strings. Hints: `input.peek`,
    // `syn::token::Bracket`, `syn::bracketed!`, a loop like the one in `parse.rs`.
    // For now the value is skipped, so that the module still builds.
    let _ = key;
    let _skipped: proc_macro2::TokenTree = input.parse()?;
    Ok(Vec::new())
}
// ANCHOR_END: parse_strings

// ANCHOR: modinfo_static
/// The `.modinfo` entry `key=value` for the `index`th string of `key`:
///
/// ```ignore
/// #[unsafe(link_section = ".modinfo")]
/// #[used]
/// static __MODINFO_AUTHOR_0: [u8; 20] = *b"author=Ada Lovelace\0";
/// ```
pub(crate) fn modinfo_static(key: &str, index: usize, value: &LitStr) -> TokenStream {
    // TODO: generate the static. Hints: `quote::format_ident!`,
    // `proc_macro2::Literal::byte_string`, `Literal::usize_unsuffixed`.
    let _ = (key, index, value);
    TokenStream::new()
}
// ANCHOR_END: modinfo_static
