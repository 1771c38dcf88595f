//! `#[vtable]`: tells a C function table which optional methods a Rust
//! implementation defines, so that the table leaves the others null and
//! the kernel's own default runs, exactly as for a C driver.
//!
//! On a trait, it adds `const HAS_<METHOD>: bool = false` for every method,
//! and a required `USE_VTABLE_ATTR` constant, so that an implementation
//! that forgets the attribute does not compile. On an implementation, it
//! adds `HAS_<METHOD> = true` for every method it defines, and
//! `USE_VTABLE_ATTR`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::{Ident, ImplItem, Item, TraitItem};

/// The name of the constant that says whether `method` is defined.
fn has_const(method: &Ident) -> Ident {
    format_ident!(
        "HAS_{}",
        method.to_string().to_uppercase(),
        span = method.span()
    )
}

/// Expands `#[vtable]` (`attr` are its arguments) on `item`.
pub(crate) fn vtable(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = TokenStream::new();
    if !attr.is_empty() {
        errors.extend(
            syn::Error::new_spanned(&attr, "#[vtable] takes no arguments").to_compile_error(),
        );
    }
    let item = match syn::parse2::<Item>(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let item = match item {
        Item::Trait(mut t) => {
            let methods: Vec<Ident> = t
                .items
                .iter()
                .filter_map(|i| match i {
                    TraitItem::Fn(f) => Some(f.sig.ident.clone()),
                    _ => None,
                })
                .collect();
            for method in methods {
                let name = has_const(&method);
                let doc =
                    format!("Whether the implementation defines `{method}` (set by `#[vtable]`).");
                t.items.push(syn::parse_quote! {
                    #[doc = #doc]
                    const #name: bool = false;
                });
            }
            t.items.push(syn::parse_quote! {
                /// Proves that the implementation carries `#[vtable]` too.
                #[doc(hidden)]
                const USE_VTABLE_ATTR: ();
            });
            t.into_token_stream()
        }
        Item::Impl(mut i) if i.trait_.is_some() => {
            let defined: Vec<Ident> = i
                .items
                .iter()
                .filter_map(|item| match item {
                    ImplItem::Const(c) => Some(c.ident.clone()),
                    _ => None,
                })
                .collect();
            let methods: Vec<Ident> = i
                .items
                .iter()
                .filter_map(|item| match item {
                    ImplItem::Fn(f) => Some(f.sig.ident.clone()),
                    _ => None,
                })
                .collect();
            for method in methods {
                let name = has_const(&method);
                if !defined.contains(&name) {
                    i.items.push(syn::parse_quote! {
                        const #name: bool = true;
                    });
                }
            }
            i.items.push(syn::parse_quote! {
                const USE_VTABLE_ATTR: () = ();
            });
            i.into_token_stream()
        }
        other => {
            errors.extend(
                syn::Error::new(
                    Span::call_site(),
                    "#[vtable] goes on a trait or on an implementation of one",
                )
                .to_compile_error(),
            );
            other.into_token_stream()
        }
    };
    quote! { #errors #item }
}
