//! Validation: turns the syntax tree into a checked [`Module`].
//!
//! Each rule that fails adds one spanned [`syn::Error`]; they are combined
//! with [`syn::Error::combine`], so the user sees every independent mistake
//! in one build, each pointing at the token at fault.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Error, Ident, Lit, Path};

use crate::ast::{Input, Value};

/// The longest module name: the kernel's `MODULE_NAME_LEN` (64 minus the
/// size of a pointer, on a 64-bit kernel) minus the terminating NUL.
pub(crate) const MAX_NAME_LEN: usize = 64 - 8 - 1;

/// A checked `module!` input.
pub(crate) struct Module {
    /// The type that implements `kernel::Module`.
    pub(crate) ty: Path,
    /// A valid module name.
    pub(crate) name: Str,
    pub(crate) authors: Vec<Str>,
    pub(crate) description: Option<Str>,
    pub(crate) license: Str,
    pub(crate) aliases: Vec<Str>,
}

/// A checked string: valid UTF-8, not empty, without NUL bytes.
pub(crate) struct Str {
    pub(crate) value: String,
    pub(crate) span: Span,
}

/// The fields `module!` knows, in the order the documentation gives them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Type,
    Name,
    Author,
    Description,
    License,
    Alias,
}

impl Key {
    const ALL: [Key; 6] = [
        Key::Type,
        Key::Name,
        Key::Author,
        Key::Description,
        Key::License,
        Key::Alias,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Key::Type => "type",
            Key::Name => "name",
            Key::Author => "author",
            Key::Description => "description",
            Key::License => "license",
            Key::Alias => "alias",
        }
    }

    fn from_ident(ident: &Ident) -> Option<Key> {
        let ident = ident.unraw().to_string();
        Key::ALL.into_iter().find(|key| key.as_str() == ident)
    }

    /// An example of the field, for "missing field" messages.
    fn example(self) -> &'static str {
        match self {
            Key::Type => "type: MyModule",
            Key::Name => "name: \"my_module\"",
            Key::Author => "author: \"Ada Lovelace\"",
            Key::Description => "description: \"Says hello\"",
            Key::License => "license: \"GPL\"",
            Key::Alias => "alias: \"my-alias\"",
        }
    }
}

/// Collects errors; combines them into one [`syn::Error`] at the end.
#[derive(Default)]
struct Errors(Option<Error>);

impl Errors {
    fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Records the error, if any, and returns the value, if any.
    fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }
}

/// Checks `input`. `tokens` is the whole macro input, which "missing field"
/// errors point at.
pub(crate) fn validate(input: &Input, tokens: &TokenStream) -> syn::Result<Module> {
    let mut errors = Errors::default();
    let mut seen = Vec::new();

    let mut ty = None;
    let mut name = None;
    let mut authors = Vec::new();
    let mut description = None;
    let mut license = None;
    let mut aliases = Vec::new();

    for field in &input.fields {
        let Some(key) = Key::from_ident(&field.key) else {
            errors.push(unknown_field(&field.key));
            continue;
        };
        if seen.contains(&key) {
            let msg = format!(
                "duplicate field `{}`: each field may appear only once",
                key.as_str()
            );
            errors.push(Error::new(field.key.span(), msg));
            continue;
        }
        seen.push(key);

        let value = &field.value;
        match key {
            Key::Type => ty = errors.ok(type_path(value)),
            Key::Name => name = errors.ok(module_name(value)),
            Key::Author => authors = strings(&mut errors, key, value),
            Key::Description => description = errors.ok(string(key, value)),
            Key::License => license = errors.ok(string(key, value)),
            Key::Alias => aliases = strings(&mut errors, key, value),
        }
    }

    for key in [Key::Type, Key::Name, Key::License] {
        if !seen.contains(&key) {
            let msg = format!(
                "missing required field `{}`, e.g. `{}`",
                key.as_str(),
                key.example()
            );
            errors.push(Error::new_spanned(tokens, msg));
        }
    }

    if let Some(error) = errors.0 {
        return Err(error);
    }
    match (ty, name, license) {
        (Some(ty), Some(name), Some(license)) => Ok(Module {
            ty,
            name,
            authors,
            description,
            license,
            aliases,
        }),
        // Every field that is `None` here was either missing or invalid, and
        // both added an error above.
        _ => Err(Error::new(
            Span::call_site(),
            "module!: internal error: a field is missing but no error was reported",
        )),
    }
}

fn unknown_field(key: &Ident) -> Error {
    let known: Vec<&str> = Key::ALL.iter().map(|key| key.as_str()).collect();
    let msg = format!(
        "unknown field `{}`, expected one of: {}",
        key.unraw(),
        known.join(", ")
    );
    Error::new(key.span(), msg)
}

/// `type: Hello`.
fn type_path(value: &Value) -> syn::Result<Path> {
    match value {
        Value::Path(path) => Ok(path.clone()),
        Value::Lit(Lit::Str(lit)) => Err(Error::new(
            lit.span(),
            format!(
                "expected a type for `type`, found a string literal; write the type without quotes: `{}`",
                lit.value()
            ),
        )),
        other => Err(Error::new(
            other.span(),
            format!(
                "expected a type for `type`, such as `MyModule`, found {}",
                describe(other)
            ),
        )),
    }
}

/// `name: "hello"`: one string that is also a valid module name.
fn module_name(value: &Value) -> syn::Result<Str> {
    let name = string(Key::Name, value)?;
    let mut errors = Errors::default();
    let bad_char = name
        .value
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || c == '_'));
    if let Some(c) = bad_char {
        let msg = format!(
            "invalid module name `{}`: {c:?} is not allowed; \
             a module name has only ASCII letters, digits and `_`",
            name.value.escape_debug()
        );
        errors.push(Error::new(name.span, msg));
    } else if name.value.starts_with(|c: char| c.is_ascii_digit()) {
        let msg = format!(
            "invalid module name `{}`: a module name must not start with a digit",
            name.value
        );
        errors.push(Error::new(name.span, msg));
    }
    if name.value.len() > MAX_NAME_LEN {
        let msg = format!(
            "module name is {} bytes long, the kernel allows at most {MAX_NAME_LEN}",
            name.value.len()
        );
        errors.push(Error::new(name.span, msg));
    }
    match errors.0 {
        Some(error) => Err(error),
        None => Ok(name),
    }
}

/// `author: "Ada"` or `author: ["Ada", "Grace"]`.
fn strings(errors: &mut Errors, key: Key, value: &Value) -> Vec<Str> {
    match value {
        Value::List(list) => {
            if list.items.is_empty() {
                let msg = format!(
                    "empty list for `{}`: give at least one string, or leave the field out",
                    key.as_str()
                );
                errors.push(Error::new(list.bracket.span.join(), msg));
            }
            list.items
                .iter()
                .filter_map(|item| match item {
                    Value::List(inner) => {
                        let msg = format!(
                            "expected a string literal in the list for `{}`, found a list; lists do not nest",
                            key.as_str()
                        );
                        errors.push(Error::new(inner.bracket.span.join(), msg));
                        None
                    }
                    item => errors.ok(string(key, item)),
                })
                .collect()
        }
        value => errors.ok(string(key, value)).into_iter().collect(),
    }
}

/// One string: `"..."` or `b"..."`.
fn string(key: Key, value: &Value) -> syn::Result<Str> {
    let key = key.as_str();
    let (value, span) = match value {
        Value::Lit(Lit::Str(lit)) => {
            no_suffix(lit.suffix(), lit.span())?;
            (lit.value(), lit.span())
        }
        Value::Lit(Lit::ByteStr(lit)) => {
            no_suffix(lit.suffix(), lit.span())?;
            match String::from_utf8(lit.value()) {
                Ok(value) => (value, lit.span()),
                Err(err) => {
                    let msg = format!(
                        "byte string for `{key}` is not valid UTF-8 (at byte {})",
                        err.utf8_error().valid_up_to()
                    );
                    return Err(Error::new(lit.span(), msg));
                }
            }
        }
        Value::List(list) => {
            let msg = format!("expected one string for `{key}`, found a list");
            return Err(Error::new(list.bracket.span.join(), msg));
        }
        Value::Path(path) => {
            let msg = match path.get_ident() {
                Some(ident) => format!(
                    "expected a string literal for `{key}`, found `{ident}`; \
                     strings are quoted: `\"{ident}\"`"
                ),
                None => format!("expected a string literal for `{key}`, found a path"),
            };
            return Err(Error::new(path.span(), msg));
        }
        other => {
            let msg = format!(
                "expected a string literal for `{key}`, such as `\"...\"` or `b\"...\"`, found {}",
                describe(other)
            );
            return Err(Error::new(other.span(), msg));
        }
    };
    if value.is_empty() {
        return Err(Error::new(
            span,
            format!("`{key}` must not be an empty string"),
        ));
    }
    if let Some(at) = value.find('\0') {
        let msg = format!(
            "string for `{key}` contains a NUL byte (at byte {at}), which would cut the kernel's C string short"
        );
        return Err(Error::new(span, msg));
    }
    Ok(Str { value, span })
}

fn no_suffix(suffix: &str, span: Span) -> syn::Result<()> {
    if suffix.is_empty() {
        Ok(())
    } else {
        let msg = format!("unexpected suffix `{suffix}` on a string literal");
        Err(Error::new(span, msg))
    }
}

/// "an integer literal", for messages.
fn describe(value: &Value) -> &'static str {
    match value {
        Value::Lit(lit) => match lit {
            Lit::Str(_) => "a string literal",
            Lit::ByteStr(_) => "a byte string literal",
            Lit::CStr(_) => "a C string literal",
            Lit::Byte(_) => "a byte literal",
            Lit::Char(_) => "a character literal",
            Lit::Int(_) => "an integer literal",
            Lit::Float(_) => "a floating-point literal",
            Lit::Bool(_) => "a boolean",
            _ => "a literal",
        },
        Value::List(_) => "a list",
        Value::Path(_) => "a path",
        Value::Block(_) => "a block",
    }
}
