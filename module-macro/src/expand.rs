//! Code generation.
//!
//! Every path in the output is fully qualified (`::kernel::...`,
//! `::core::...`), so the expansion works whatever the user has imported.
//! Identifiers the user's code refers to (`THIS_MODULE`, `__LOG_PREFIX`) get
//! the call-site span, so they are visible to the code around `module!`.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::ast::Input;
use crate::valid::{self, Module, Str};

/// Expands `module! { ... }`. Never fails: on bad input, the output is the
/// errors as `compile_error!`s plus [`fallback`] items.
pub(crate) fn module(input: TokenStream) -> TokenStream {
    match try_module(input) {
        Ok(output) => output,
        Err(errors) => {
            let errors = errors.to_compile_error();
            let fallback = fallback();
            quote! {
                #errors
                #fallback
            }
        }
    }
}

/// Parses, validates and expands; returns every error found.
pub(crate) fn try_module(input: TokenStream) -> syn::Result<TokenStream> {
    let ast: Input = syn::parse2(input.clone())?;
    let module = valid::validate(&ast, &input)?;
    Ok(generate(&module))
}

/// The items that code around a failed `module!` may refer to, with dummy
/// values, so that the user sees the errors in `module!` and not a cascade
/// of "cannot find value `THIS_MODULE`".
fn fallback() -> TokenStream {
    quote! {
        const __LOG_PREFIX: &[u8] = b"module\0";

        static THIS_MODULE: ::kernel::ThisModule =
            unsafe { ::kernel::ThisModule::from_ptr(::core::ptr::null_mut()) };
    }
}

fn generate(module: &Module) -> TokenStream {
    let mut modinfo = Vec::new();
    for (i, author) in module.authors.iter().enumerate() {
        modinfo.push(modinfo_static(&format!("AUTHOR_{i}"), "author", author));
    }
    if let Some(description) = &module.description {
        modinfo.push(modinfo_static("DESCRIPTION", "description", description));
    }
    modinfo.push(modinfo_static("LICENSE", "license", &module.license));
    for (i, alias) in module.aliases.iter().enumerate() {
        modinfo.push(modinfo_static(&format!("ALIAS_{i}"), "alias", alias));
    }

    let log_prefix = c_bytes(&module.name.value);
    let ty = &module.ty;

    // The `// SAFETY:` comments of the contract cannot be emitted (comments
    // are not tokens); the reasoning is kept here:
    // - `from_ptr`: `__this_module` is defined by modpost for every loadable
    //   module and lives as long as the module.
    // - `init`: the kernel calls `init_module` once, before `cleanup_module`,
    //   never concurrently with it.
    // - `exit`: the kernel calls `cleanup_module` once, after `init_module`
    //   returned 0.
    quote! {
        #(#modinfo)*

        /// The module name, used by the `pr_*!` macros as the log prefix.
        const __LOG_PREFIX: &[u8] = #log_prefix;

        unsafe extern "C" {
            /// Defined in the module's `.mod.c`, which modpost generates.
            static __this_module: ::kernel::bindings::module;
        }

        /// This module, as the kernel knows it.
        static THIS_MODULE: ::kernel::ThisModule = unsafe {
            ::kernel::ThisModule::from_ptr(
                &raw const __this_module as *mut ::kernel::bindings::module,
            )
        };

        static __MODULE: ::kernel::module::ModuleSlot<#ty> =
            ::kernel::module::ModuleSlot::new();

        /// The entry points the kernel calls. They are private to this
        /// module so that safe code in the crate cannot call them (calling
        /// `cleanup_module` twice would drop the module value twice); the
        /// symbols are exported all the same, by `no_mangle`.
        mod __module_entry {
            /// Called by the kernel when the module is loaded.
            #[unsafe(no_mangle)]
            extern "C" fn init_module() -> ::core::ffi::c_int {
                unsafe { super::__MODULE.init(&super::THIS_MODULE) }
            }

            /// Called by the kernel when the module is unloaded.
            #[unsafe(no_mangle)]
            extern "C" fn cleanup_module() {
                unsafe { super::__MODULE.exit() }
            }
        }
    }
}

/// `static __MODINFO_<SUFFIX>: [u8; N] = *b"key=value\0";` in `.modinfo`,
/// the section where C's `MODULE_INFO(key, value)` puts its strings.
fn modinfo_static(suffix: &str, key: &str, value: &Str) -> TokenStream {
    let ident = format_ident!("__MODINFO_{}", suffix);
    let entry = format!("{key}={}", value.value);
    let len = Literal::usize_unsuffixed(entry.len() + 1);
    let bytes = c_bytes(&entry);
    quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static #ident: [u8; #len] = *#bytes;
    }
}

/// `b"s\0"`. Validation has checked that `s` has no NUL byte.
fn c_bytes(s: &str) -> Literal {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    Literal::byte_string(&bytes)
}
