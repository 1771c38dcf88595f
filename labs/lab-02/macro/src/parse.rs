//! Reads the fields of a `module!` input. Given: you do not need to change
//! this file.
//!
//! The input is `key: value` fields separated by commas, in any order, with
//! an optional trailing comma. Parsing stops at the first mistake, which
//! becomes a compile error pointing at the token at fault.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, LitStr, Path, Token};

use crate::strings::parse_strings;

/// The fields `module!` knows, in the order the documentation gives them.
const FIELDS: [&str; 6] = ["type", "name", "author", "description", "license", "alias"];

/// A parsed `module!` input.
pub(crate) struct Module {
    /// The type that implements `kernel::Module`.
    pub(crate) ty: Path,
    pub(crate) name: LitStr,
    pub(crate) authors: Vec<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) license: LitStr,
    pub(crate) aliases: Vec<LitStr>,
}

impl Parse for Module {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut ty = None;
        let mut name = None;
        let mut authors = None;
        let mut description = None;
        let mut license = None;
        let mut aliases = None;

        while !input.is_empty() {
            if !input.peek(Ident::peek_any) {
                return Err(input.error("expected a field name such as `name`"));
            }
            // `parse_any`, because `type` is a keyword.
            let key = Ident::parse_any(input)?;
            input.parse::<Token![:]>()?;
            match key.unraw().to_string().as_str() {
                "type" => set(&mut ty, &key, input.parse()?)?,
                "name" => set(&mut name, &key, string(&key, input)?)?,
                "author" => set(&mut authors, &key, parse_strings(&key, input)?)?,
                "description" => set(&mut description, &key, string(&key, input)?)?,
                "license" => set(&mut license, &key, string(&key, input)?)?,
                "alias" => set(&mut aliases, &key, parse_strings(&key, input)?)?,
                other => {
                    let msg = format!(
                        "unknown field `{other}`, expected one of: {}",
                        FIELDS.join(", ")
                    );
                    return Err(Error::new(key.span(), msg));
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }

        Ok(Module {
            ty: required(ty, "type")?,
            name: required(name, "name")?,
            authors: authors.unwrap_or_default(),
            description,
            license: required(license, "license")?,
            aliases: aliases.unwrap_or_default(),
        })
    }
}

/// Stores the value of a field, unless the field was given before.
fn set<T>(slot: &mut Option<T>, key: &Ident, value: T) -> syn::Result<()> {
    if slot.is_some() {
        let msg = format!(
            "duplicate field `{}`: each field may appear only once",
            key.unraw()
        );
        return Err(Error::new(key.span(), msg));
    }
    *slot = Some(value);
    Ok(())
}

fn required<T>(value: Option<T>, key: &str) -> syn::Result<T> {
    value.ok_or_else(|| Error::new(Span::call_site(), format!("missing required field `{key}`")))
}

/// One string literal, the value of `key`: not empty, without NUL bytes
/// (the kernel reads each `.modinfo` string up to its first NUL).
pub(crate) fn string(key: &Ident, input: ParseStream<'_>) -> syn::Result<LitStr> {
    let key = key.unraw();
    if !input.peek(LitStr) {
        let msg = format!("expected a string literal for `{key}`, such as `\"hello\"`");
        return Err(input.error(msg));
    }
    let lit: LitStr = input.parse()?;
    let value = lit.value();
    if value.is_empty() {
        let msg = format!("`{key}` must not be an empty string");
        return Err(Error::new(lit.span(), msg));
    }
    if value.contains('\0') {
        let msg = format!("the string for `{key}` contains a NUL byte");
        return Err(Error::new(lit.span(), msg));
    }
    Ok(lit)
}
