//! A correct lab 02, written independently of the reference solution: the
//! value of `author` and `alias`, and the `.modinfo` static for one string.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::parse::ParseStream;
use syn::{bracketed, token, Error, Ident, LitStr, Token};

use crate::parse::string;

/// One string literal, or a non-empty bracketed list of them with an
/// optional trailing comma.
pub(crate) fn parse_strings(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
    if !input.peek(token::Bracket) {
        return string(key, input).map(|s| vec![s]);
    }
    let content;
    let brackets = bracketed!(content in input);
    let mut list = Vec::new();
    loop {
        if content.is_empty() {
            break;
        }
        list.push(string(key, &content)?);
        if content.is_empty() {
            break;
        }
        let _comma: Token![,] = content.parse()?;
    }
    if list.is_empty() {
        return Err(Error::new(
            brackets.span.join(),
            format!("empty list for `{key}`: give at least one string, or leave the field out"),
        ));
    }
    Ok(list)
}

/// `#[link_section = ".modinfo"] #[used] static __MODINFO_KEY_N: [u8; LEN] = *b"key=value\0";`
pub(crate) fn modinfo_static(key: &str, index: usize, value: &LitStr) -> TokenStream {
    let name = format_ident!("__MODINFO_{}_{}", key.to_uppercase(), index);
    let bytes: Vec<u8> = format!("{key}={}\0", value.value()).into_bytes();
    let len = Literal::usize_unsuffixed(bytes.len());
    let literal = Literal::byte_string(&bytes);
    quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static #name: [u8; #len] = *#literal;
    }
}
