// TODO-BEGIN
//! The value of `author` and `alias`, and the `.modinfo` static for one
//! string (reference solution).
// TODO-ELSE
// //! Your part of the macro: the value of `author` and `alias`, and the
// //! `.modinfo` static for one string. The tests in `tests.rs` say what is
// //! expected; run them with `cargo test -p lab-02-macro`.
// TODO-END

// TODO-BEGIN
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
// TODO-ELSE
// use proc_macro2::TokenStream;
// TODO-END
use syn::parse::ParseStream;
// TODO-BEGIN
use syn::{bracketed, token, Error, Ident, LitStr, Token};
// TODO-ELSE
// use syn::{Ident, LitStr};
// TODO-END

// TODO-BEGIN
// TODO-ELSE
// #[allow(unused_imports, reason = "you will need it")]
// TODO-END
use crate::parse::string;

// ANCHOR: parse_strings
/// Parses the value of `key` (`author` or `alias`): one string literal,
/// `"Ada"`, or a list of them, `["Ada", "Grace"]`, with an optional
/// trailing comma. Each string is checked by [`string`]. An empty list is
/// an error: "empty list for `author`: give at least one string, or leave
/// the field out", pointing at the brackets.
pub(crate) fn parse_strings(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
    // TODO-BEGIN
    if !input.peek(token::Bracket) {
        return Ok(vec![string(key, input)?]);
    }
    let content;
    let bracket = bracketed!(content in input);
    let mut items = Vec::new();
    while !content.is_empty() {
        items.push(string(key, &content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    if items.is_empty() {
        let msg =
            format!("empty list for `{key}`: give at least one string, or leave the field out");
        return Err(Error::new(bracket.span.join(), msg));
    }
    Ok(items)
    // TODO-ELSE
    // // TODO: parse one string or a list of strings. Hints: `input.peek`,
    // // `syn::token::Bracket`, `syn::bracketed!`, a loop like the one in `parse.rs`.
    // // For now the value is skipped, so that the module still builds.
    // let _ = key;
    // let _skipped: proc_macro2::TokenTree = input.parse()?;
    // Ok(Vec::new())
    // TODO-END
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
    // TODO-BEGIN
    let ident = format_ident!("__MODINFO_{}_{index}", key.to_uppercase());
    let mut entry = format!("{key}={}", value.value()).into_bytes();
    entry.push(0);
    let len = Literal::usize_unsuffixed(entry.len());
    let bytes = Literal::byte_string(&entry);
    quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static #ident: [u8; #len] = *#bytes;
    }
    // TODO-ELSE
    // // TODO: generate the static. Hints: `quote::format_ident!`,
    // // `proc_macro2::Literal::byte_string`, `Literal::usize_unsuffixed`.
    // let _ = (key, index, value);
    // TokenStream::new()
    // TODO-END
}
// ANCHOR_END: modinfo_static
