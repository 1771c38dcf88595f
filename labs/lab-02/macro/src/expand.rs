//! Writes the output of `module!`. Given: you do not need to change this
//! file.

use proc_macro2::TokenStream;
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
        .map(|(index, author)| modinfo_static("author", index, author));
    let aliases = (module.aliases.iter().enumerate())
        .map(|(index, alias)| modinfo_static("alias", index, alias));
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
