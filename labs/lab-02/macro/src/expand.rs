//! Writes the output of `module!`. Given: you do not need to change this
//! file.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::quote;

use crate::parse::Module;
use crate::strings::modinfo_static;

/// Expands `module! { ... }`. Never fails: a mistake in the input becomes a
/// `compile_error!` pointing at it.
pub(crate) fn module(input: TokenStream) -> TokenStream {
    match try_module(input) {
        Ok(output) => output,
        Err(error) => error.to_compile_error(),
    }
}

/// Parses and expands.
pub(crate) fn try_module(input: TokenStream) -> syn::Result<TokenStream> {
    let module: Module = syn::parse2(input)?;
    Ok(generate(&module))
}

// ANCHOR: generate
fn generate(module: &Module) -> TokenStream {
    let authors = (module.authors.iter().enumerate())
        .map(|(index, author)| only_modinfo(modinfo_static("author", index, author)));
    let aliases = (module.aliases.iter().enumerate())
        .map(|(index, alias)| only_modinfo(modinfo_static("alias", index, alias)));
    let Module {
        ty, name, license, ..
    } = module;
    let description = module.description.iter();
    // The kernel crate's `module!` does the rest: the entry points,
    // `THIS_MODULE`, `__LOG_PREFIX` and the other `.modinfo` strings.
    quote! {
        #(#authors)*
        #(#aliases)*
        ::kernel::module! {
            type: #ty,
            name: #name,
            #(description: #description,)*
            license: #license,
        }
    }
}
// ANCHOR_END: generate

/// What `modinfo_static` returned, if it is nothing or one `.modinfo`
/// static of the shape the tests expect; anything else becomes a
/// `compile_error!`. The module is kernel code, built with what the macro
/// writes: whatever the macro's own code does, the module gets no more
/// from it than the strings this lab is about (no `unsafe`, no call into
/// the kernel), as the grading policy requires of every student file.
pub(crate) fn only_modinfo(tokens: TokenStream) -> TokenStream {
    if tokens.is_empty() || is_modinfo_static(&tokens) {
        return tokens;
    }
    quote! {
        ::core::compile_error!(
            "modinfo_static must return one `.modinfo` static and nothing else: \
             #[unsafe(link_section = \".modinfo\")] #[used] static NAME: [u8; N] = *b\"key=value\\0\";"
        );
    }
}

/// `#[unsafe(link_section = ".modinfo")] #[used] static NAME: [u8; N] =
/// *b"...";`, token for token, with a plain name, an integer length and a
/// byte string.
fn is_modinfo_static(tokens: &TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let [_, _, _, _, _, TokenTree::Ident(name), _, TokenTree::Group(ty), _, _, TokenTree::Literal(bytes), _] =
        trees.as_slice()
    else {
        return false;
    };
    let ty_ok = ty.delimiter() == Delimiter::Bracket && is_byte_array(ty.stream());
    let bytes_ok = bytes.to_string().starts_with("b\"");
    let expected = quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static #name: #ty = *#bytes;
    };
    ty_ok && bytes_ok && tokens.to_string() == expected.to_string()
}

/// `u8; N`, with `N` an integer literal with no suffix.
fn is_byte_array(ty: TokenStream) -> bool {
    let inner: Vec<String> = ty.into_iter().map(|t| t.to_string()).collect();
    matches!(inner.as_slice(), [u8_, semi, len]
        if u8_ == "u8" && semi == ";" && !len.is_empty() && len.bytes().all(|b| b.is_ascii_digit()))
}
