//! Code generation.
//!
//! Every path in the output is fully qualified (`::kernel::...`,
//! `::core::...`), so the expansion works whatever the user has imported.
//! Identifiers the user's code refers to (`THIS_MODULE`, `__LOG_PREFIX`) get
//! the call-site span, so they are visible to the code around `module!`.

use std::ffi::CString;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

use crate::ast::Input;
use crate::valid::{self, DefaultValue, Module, Param, ParamType, Scalar, Str};

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

        static THIS_MODULE: ::kernel::ThisModule = ::kernel::ThisModule::THIS;
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

    let params: Vec<TokenStream> = module.params.iter().map(param).collect();

    let log_prefix = c_bytes(&module.name.value);
    let ty = &module.ty;

    // The `// SAFETY:` comments of the contract cannot be emitted (comments
    // are not tokens); the reasoning is kept here:
    // - `init`: the kernel calls `init_module` once, before `cleanup_module`,
    //   never concurrently with it.
    // - `exit`: the kernel calls `cleanup_module` once, after `init_module`
    //   returned 0.
    quote! {
        #(#modinfo)*

        /// The module name, used by the `pr_*!` macros as the log prefix.
        const __LOG_PREFIX: &[u8] = #log_prefix;

        /// This module, as the kernel knows it.
        static THIS_MODULE: ::kernel::ThisModule = ::kernel::ThisModule::THIS;

        #(#params)*

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

/// One parameter: its `modinfo` strings, its value, its operations and its
/// `struct kernel_param` in the `__param` section, as C's `module_param` and
/// `MODULE_PARM_DESC` make.
///
/// The value is a `static` named after the parameter, so that the module's
/// code reads it as `count.read()`. Its type says whether a lock is needed:
/// a `ReadOnlyParam` when the permissions have no write bit, else a
/// `WritableParam`, whose `read` takes the guard of the parameter lock.
fn param(param: &Param) -> TokenStream {
    let ident = &param.ident;
    let name = &param.name;
    let type_name = match param.ty {
        ParamType::Scalar(scalar) => scalar.c_name().to_owned(),
        ParamType::Array(elem, _) => format!("array of {}", elem.c_name()),
    };
    let parmtype = modinfo_entry(
        &format!("PARMTYPE_{name}"),
        &format!("parmtype={name}:{type_name}"),
    );
    let parm = modinfo_entry(
        &format!("PARM_{name}"),
        &format!("parm={name}:{}", param.description.value),
    );

    let ty = rust_type(param.ty);
    let default = default_expr(param.ty, &param.default);
    let (storage, constructor) = if param.is_writable() {
        (quote!(WritableParam), quote!(writable))
    } else {
        (quote!(ReadOnlyParam), quote!(read_only))
    };
    let doc = format!(" {}", param.description.value);
    // Identifiers have no NUL byte, so the fallback is never taken.
    let c_name = Literal::c_string(&CString::new(name.as_str()).unwrap_or_default());
    // In octal, as written; `0o` and octal digits are a valid literal.
    let permissions = syn::LitInt::new(&format!("0o{:03o}", param.permissions), Span::call_site());
    let ops = format_ident!("__PARAM_OPS_{}", name);
    let kernel_param = format_ident!("__PARAM_{}", name);
    quote! {
        #parmtype
        #parm

        #[doc = #doc]
        #[allow(non_upper_case_globals)]
        static #ident: ::kernel::module_param::#storage<#ty> =
            ::kernel::module_param::#storage::new(#default);

        static #ops: ::kernel::module_param::ParamOps<#ty> =
            ::kernel::module_param::ParamOps::new();

        #[unsafe(link_section = "__param")]
        #[used]
        static #kernel_param: ::kernel::module_param::KernelParam =
            ::kernel::module_param::KernelParam::#constructor(
                #c_name,
                &THIS_MODULE,
                #permissions,
                &#ops,
                &#ident,
            );
    }
}

/// The Rust type that holds a parameter's value.
fn rust_type(ty: ParamType) -> TokenStream {
    match ty {
        ParamType::Scalar(scalar) => scalar_type(scalar),
        ParamType::Array(elem, len) => {
            let elem = scalar_type(elem);
            let len = Literal::usize_unsuffixed(len);
            quote!(::kernel::module_param::ArrayParam<#elem, #len>)
        }
    }
}

fn scalar_type(scalar: Scalar) -> TokenStream {
    match scalar {
        Scalar::Bool => quote!(bool),
        Scalar::Int(int) => {
            let ident = format_ident!("{}", int.name);
            quote!(#ident)
        }
        Scalar::Str(capacity) => {
            let capacity = Literal::usize_unsuffixed(capacity);
            quote!(::kernel::module_param::StrParam<#capacity>)
        }
    }
}

/// The expression of a default value, of the type [`rust_type`] gives.
fn default_expr(ty: ParamType, value: &DefaultValue) -> TokenStream {
    match (ty, value) {
        (ParamType::Array(elem, _), DefaultValue::Array(items)) => {
            let ty = rust_type(ty);
            let items = items.iter().map(|item| scalar_expr(elem, item));
            quote!(<#ty>::new(&[#(#items),*]))
        }
        (ParamType::Scalar(scalar), value) => scalar_expr(scalar, value),
        // Validation builds the default from the type: an array type has an
        // array default. Anything else would not compile, which is harmless.
        (ParamType::Array(..), _) => quote!(::core::compile_error!(
            "module!: internal error: array default"
        )),
    }
}

fn scalar_expr(scalar: Scalar, value: &DefaultValue) -> TokenStream {
    match value {
        DefaultValue::Bool(value) => quote!(#value),
        DefaultValue::Int(value) => {
            let literal = Literal::i128_unsuffixed(*value);
            quote!(#literal)
        }
        DefaultValue::Str(value) => {
            let ty = scalar_type(scalar);
            quote!(<#ty>::new(#value))
        }
        DefaultValue::Array(_) => quote!(::core::compile_error!(
            "module!: internal error: nested array"
        )),
    }
}

/// `static __MODINFO_<SUFFIX>: [u8; N] = *b"key=value\0";` in `.modinfo`,
/// the section where C's `MODULE_INFO(key, value)` puts its strings.
fn modinfo_static(suffix: &str, key: &str, value: &Str) -> TokenStream {
    modinfo_entry(suffix, &format!("{key}={}", value.value))
}

/// `static __MODINFO_<SUFFIX>: [u8; N] = *b"<entry>\0";` in `.modinfo`.
fn modinfo_entry(suffix: &str, entry: &str) -> TokenStream {
    let ident = format_ident!("__MODINFO_{}", suffix);
    let len = Literal::usize_unsuffixed(entry.len() + 1);
    let bytes = c_bytes(entry);
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
