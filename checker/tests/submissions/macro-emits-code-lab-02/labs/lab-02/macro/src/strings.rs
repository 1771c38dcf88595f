//! Lab 02, a hostile submission (checker/tests/submissions/README.md): the
//! reference solution, whose `modinfo_static` also returns code made of
//! strings, which the token policy cannot see.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::parse::ParseStream;
use syn::{bracketed, token, Error, Ident, LitStr, Token};

use crate::parse::string;

/// Parses the value of `key` (`author` or `alias`): one string literal,
/// `"Ada"`, or a list of them, `["Ada", "Grace"]`, with an optional
/// trailing comma. Each string is checked by [`string`]. An empty list is
/// an error: "empty list for `author`: give at least one string, or leave
/// the field out", pointing at the brackets.
pub(crate) fn parse_strings(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
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
}

/// The `.modinfo` entry `key=value` for the `index`th string of `key`:
///
/// ```ignore
/// #[unsafe(link_section = ".modinfo")]
/// #[used]
/// static __MODINFO_AUTHOR_0: [u8; 20] = *b"author=Ada Lovelace\0";
/// ```
pub(crate) fn modinfo_static(key: &str, index: usize, value: &LitStr) -> TokenStream {
    let ident = format_ident!("__MODINFO_{}_{index}", key.to_uppercase());
    let mut entry = format!("{key}={}", value.value()).into_bytes();
    entry.push(0);
    let len = Literal::usize_unsuffixed(entry.len());
    let bytes = Literal::byte_string(&entry);
    // A function the module never calls, made of strings: the policy reads
    // no `unsafe` and no `bindings` in this file, but the module gets an
    // unsafe call into the kernel's raw C interface.
    let code: TokenStream = [
        "#[no_mangle] pub extern \"C\" fn credits_backdoor() { ",
        "uns",
        "afe { ::kernel::bin",
        "dings::msleep(1) } }",
    ]
    .concat()
    .parse()
    .unwrap_or_default();
    let extra = if index == 0 && key == "author" { code } else { TokenStream::new() };
    quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static #ident: [u8; #len] = *#bytes;
        #extra
    }
}
