//! Validation: turns the syntax tree into a checked [`Module`].
//!
//! Each rule that fails adds one spanned [`syn::Error`]; they are combined
//! with [`syn::Error::combine`], so the user sees every independent mistake
//! in one build, each pointing at the token at fault.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Error, GenericArgument, Ident, Lit, Path, PathArguments, Type};

use crate::ast::{self, Input, Value};

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
    pub(crate) params: Vec<Param>,
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
    Params,
}

impl Key {
    const ALL: [Key; 7] = [
        Key::Type,
        Key::Name,
        Key::Author,
        Key::Description,
        Key::License,
        Key::Alias,
        Key::Params,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Key::Type => "type",
            Key::Name => "name",
            Key::Author => "author",
            Key::Description => "description",
            Key::License => "license",
            Key::Alias => "alias",
            Key::Params => "params",
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
            Key::Params => {
                "params: { count: u32 { default: 1, permissions: 0o444, description: \"...\" } }"
            }
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
    let mut params = Vec::new();

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
            Key::Params => params = module_params(&mut errors, value),
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
            params,
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
    string_for(key.as_str(), value)
}

/// One string for the field `key`: `"..."` or `b"..."`, not empty.
fn string_for(key: &str, value: &Value) -> syn::Result<Str> {
    let (value, span) = string_value(key, value)?;
    if value.is_empty() {
        return Err(Error::new(
            span,
            format!("`{key}` must not be an empty string"),
        ));
    }
    Ok(Str { value, span })
}

/// One string, possibly empty: `"..."` or `b"..."`, without NUL bytes.
fn string_value(key: &str, value: &Value) -> syn::Result<(String, Span)> {
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
    if let Some(at) = value.find('\0') {
        let msg = format!(
            "string for `{key}` contains a NUL byte (at byte {at}), which would cut the kernel's C string short"
        );
        return Err(Error::new(span, msg));
    }
    Ok((value, span))
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
        Value::Neg(..) => "a negative number",
    }
}

/// The capacity of a `str` parameter, in bytes: the longest string C's
/// `charp` parameters accept. `StrParam<N>` gives another.
pub(crate) const DEFAULT_STR_CAPACITY: usize = 1024;

/// A checked parameter.
pub(crate) struct Param {
    /// The name, as written (it may be a raw identifier).
    pub(crate) ident: Ident,
    /// The name without `r#`: the name on the command line and in sysfs.
    pub(crate) name: String,
    pub(crate) ty: ParamType,
    pub(crate) default: DefaultValue,
    /// `0..=0o777`, never world-writable.
    pub(crate) permissions: u16,
    pub(crate) description: Str,
}

impl Param {
    /// Whether sysfs lets anyone write the parameter after load.
    pub(crate) fn is_writable(&self) -> bool {
        self.permissions & 0o222 != 0
    }
}

/// A parameter type: one value or an array of them.
#[derive(Clone, Copy)]
pub(crate) enum ParamType {
    Scalar(Scalar),
    /// `ArrayParam<T, N>`: up to `N` elements.
    Array(Scalar, usize),
}

/// A type of one value.
#[derive(Clone, Copy)]
pub(crate) enum Scalar {
    Bool,
    Int(Int),
    /// `str` or `StrParam<N>`, with its capacity in bytes.
    Str(usize),
}

/// An integer type, with its range.
#[derive(Clone, Copy)]
pub(crate) struct Int {
    pub(crate) name: &'static str,
    /// The name of the type in `modinfo`'s `parmtype`: C's parameter type
    /// where there is one.
    pub(crate) c_name: &'static str,
    min: i128,
    max: i128,
}

const INTS: [Int; 10] = [
    Int {
        name: "i8",
        c_name: "i8",
        min: i8::MIN as i128,
        max: i8::MAX as i128,
    },
    Int {
        name: "u8",
        c_name: "byte",
        min: 0,
        max: u8::MAX as i128,
    },
    Int {
        name: "i16",
        c_name: "short",
        min: i16::MIN as i128,
        max: i16::MAX as i128,
    },
    Int {
        name: "u16",
        c_name: "ushort",
        min: 0,
        max: u16::MAX as i128,
    },
    Int {
        name: "i32",
        c_name: "int",
        min: i32::MIN as i128,
        max: i32::MAX as i128,
    },
    Int {
        name: "u32",
        c_name: "uint",
        min: 0,
        max: u32::MAX as i128,
    },
    Int {
        name: "i64",
        c_name: "i64",
        min: i64::MIN as i128,
        max: i64::MAX as i128,
    },
    Int {
        name: "u64",
        c_name: "ullong",
        min: 0,
        max: u64::MAX as i128,
    },
    // The kernel is 64-bit: C's `long` and `unsigned long`.
    Int {
        name: "isize",
        c_name: "long",
        min: i64::MIN as i128,
        max: i64::MAX as i128,
    },
    Int {
        name: "usize",
        c_name: "ulong",
        min: 0,
        max: u64::MAX as i128,
    },
];

/// The parameter types, for messages.
const PARAM_TYPES: &str =
    "bool, i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, str, StrParam<N>, ArrayParam<T, N>";

impl Scalar {
    /// The type in `modinfo`'s `parmtype`.
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int(int) => int.c_name,
            Scalar::Str(_) => "string",
        }
    }
}

/// A checked default value.
pub(crate) enum DefaultValue {
    Bool(bool),
    Int(i128),
    Str(String),
    Array(Vec<DefaultValue>),
}

/// The keys of a parameter.
const PARAM_KEYS: [&str; 3] = ["default", "permissions", "description"];

/// `params: { ... }`.
fn module_params(errors: &mut Errors, value: &Value) -> Vec<Param> {
    let Value::Block(block) = value else {
        let msg = format!(
            "expected a block for `params`, such as `{}`, found {}",
            Key::Params.example(),
            describe(value)
        );
        errors.push(Error::new(value.span(), msg));
        return Vec::new();
    };
    let Some(parsed) = errors.ok(syn::parse2::<ast::Params>(block.tokens.clone())) else {
        return Vec::new();
    };
    let mut params: Vec<Param> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for param in &parsed.params {
        let name = param.name.unraw().to_string();
        if names.contains(&name) {
            let msg = format!("duplicate parameter `{name}`: each parameter may appear only once");
            errors.push(Error::new(param.name.span(), msg));
            continue;
        }
        names.push(name.clone());
        if let Some(param) = module_param(errors, param, name) {
            params.push(param);
        }
    }
    params
}

/// One parameter; `None` after recording its errors.
fn module_param(errors: &mut Errors, param: &ast::Param, name: String) -> Option<Param> {
    let ty = errors.ok(param_type(&param.ty));
    let mut default = None;
    let mut permissions = None;
    let mut description = None;
    let mut seen: Vec<String> = Vec::new();
    for field in &param.fields {
        let key = field.key.unraw().to_string();
        if !PARAM_KEYS.contains(&key.as_str()) {
            let msg = format!(
                "unknown key `{key}` in parameter `{name}`, expected one of: {}",
                PARAM_KEYS.join(", ")
            );
            errors.push(Error::new(field.key.span(), msg));
            continue;
        }
        if seen.contains(&key) {
            let msg = format!("duplicate key `{key}` in parameter `{name}`");
            errors.push(Error::new(field.key.span(), msg));
            continue;
        }
        seen.push(key.clone());
        match key.as_str() {
            "default" => {
                // Without a valid type there is nothing to check it against.
                if let Some(ty) = ty {
                    default = errors.ok(default_value(ty, &field.value));
                }
            }
            "permissions" => permissions = errors.ok(param_permissions(&name, &field.value)),
            _ => description = errors.ok(string_for("description", &field.value)),
        }
    }
    for (key, example) in [
        ("default", "default: 0"),
        ("permissions", "permissions: 0o444"),
        ("description", "description: \"...\""),
    ] {
        if !seen.iter().any(|seen| seen == key) {
            let msg = format!("missing `{key}` in parameter `{name}`, e.g. `{example}`");
            errors.push(Error::new(param.brace.span.join(), msg));
        }
    }
    Some(Param {
        ident: param.name.clone(),
        name,
        ty: ty?,
        default: default?,
        permissions: permissions?,
        description: description?,
    })
}

/// `u32`, `str`, `StrParam<16>`, `ArrayParam<i32, 4>`.
fn param_type(ty: &Type) -> syn::Result<ParamType> {
    let unknown = || {
        let msg = format!(
            "unknown parameter type `{}`, expected one of: {PARAM_TYPES}",
            type_text(ty)
        );
        Error::new_spanned(ty, msg)
    };
    let Type::Path(path) = ty else {
        return Err(unknown());
    };
    if path.qself.is_some() || path.path.segments.len() != 1 {
        return Err(unknown());
    }
    let Some(segment) = path.path.segments.first() else {
        return Err(unknown());
    };
    let name = segment.ident.to_string();
    match (&segment.arguments, name.as_str()) {
        (PathArguments::None, _) => scalar_type(&segment.ident)
            .map(ParamType::Scalar)
            .ok_or_else(unknown),
        (PathArguments::AngleBracketed(args), "StrParam") => {
            let [GenericArgument::Const(len)] = args.args.iter().collect::<Vec<_>>()[..] else {
                return Err(Error::new_spanned(
                    ty,
                    "expected `StrParam<N>`, with a capacity `N` in bytes",
                ));
            };
            Ok(ParamType::Scalar(Scalar::Str(capacity(len)?)))
        }
        (PathArguments::AngleBracketed(args), "ArrayParam") => {
            let args: Vec<&GenericArgument> = args.args.iter().collect();
            let (elem, len) = match args[..] {
                [GenericArgument::Type(elem), GenericArgument::Const(len)] => (elem, len),
                _ => {
                    let msg =
                        "expected `ArrayParam<T, N>`, with an element type `T` and a capacity `N`";
                    return Err(Error::new_spanned(ty, msg));
                }
            };
            let elem = match param_type(elem)? {
                ParamType::Scalar(elem) => elem,
                ParamType::Array(..) => {
                    return Err(Error::new_spanned(
                        elem,
                        "arrays of arrays are not supported",
                    ));
                }
            };
            Ok(ParamType::Array(elem, capacity(len)?))
        }
        _ => Err(unknown()),
    }
}

fn scalar_type(ident: &Ident) -> Option<Scalar> {
    let name = ident.to_string();
    match name.as_str() {
        "bool" => Some(Scalar::Bool),
        "str" => Some(Scalar::Str(DEFAULT_STR_CAPACITY)),
        _ => INTS
            .into_iter()
            .find(|int| int.name == name)
            .map(Scalar::Int),
    }
}

/// The `N` of `StrParam<N>` or `ArrayParam<T, N>`: an integer literal, at
/// least 1. (Only literals parse as const arguments here.)
fn capacity(expr: &syn::Expr) -> syn::Result<usize> {
    let error = || {
        Error::new_spanned(
            expr,
            "expected a capacity: an integer literal from 1 to 65535",
        )
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: Lit::Int(lit), ..
    }) = expr
    else {
        return Err(error());
    };
    match lit.base10_parse::<usize>() {
        Ok(n) if (1..=65535).contains(&n) => Ok(n),
        _ => Err(error()),
    }
}

/// The type as the user wrote it, for messages.
fn type_text(ty: &Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
}

/// A default value of type `ty`.
fn default_value(ty: ParamType, value: &Value) -> syn::Result<DefaultValue> {
    match ty {
        ParamType::Scalar(scalar) => scalar_default(scalar, value),
        ParamType::Array(elem, len) => {
            let Value::List(list) = value else {
                let msg = format!(
                    "expected a list of at most {len} elements for the default of an array, such as `[1, 2]`, found {}",
                    describe(value)
                );
                return Err(Error::new(value.span(), msg));
            };
            if let Some(extra) = list.items.iter().nth(len) {
                let msg = format!(
                    "too many elements in the default: {} given, the array holds at most {len}",
                    list.items.len()
                );
                return Err(Error::new(extra.span(), msg));
            }
            let mut errors = Errors::default();
            let items: Vec<DefaultValue> = list
                .items
                .iter()
                .filter_map(|item| errors.ok(scalar_default(elem, item)))
                .collect();
            match errors.0 {
                Some(error) => Err(error),
                None => Ok(DefaultValue::Array(items)),
            }
        }
    }
}

fn scalar_default(ty: Scalar, value: &Value) -> syn::Result<DefaultValue> {
    match ty {
        Scalar::Bool => match value {
            Value::Lit(Lit::Bool(lit)) => Ok(DefaultValue::Bool(lit.value)),
            other => Err(Error::new(
                other.span(),
                format!(
                    "expected `true` or `false` for a `bool` default, found {}",
                    describe(other)
                ),
            )),
        },
        Scalar::Int(int) => int_default(int, value).map(DefaultValue::Int),
        Scalar::Str(capacity) => {
            let (text, span) = string_value("default", value)?;
            if text.len() > capacity {
                let msg = format!(
                    "the default string is {} bytes long, the parameter holds at most {capacity}",
                    text.len()
                );
                return Err(Error::new(span, msg));
            }
            Ok(DefaultValue::Str(text))
        }
    }
}

/// An integer default that fits `int`: `5`, `-5`, `0x10`.
fn int_default(int: Int, value: &Value) -> syn::Result<i128> {
    let (negative, lit) = match value {
        Value::Lit(Lit::Int(lit)) => (false, lit),
        Value::Neg(_, Lit::Int(lit)) => (true, lit),
        other => {
            let msg = format!(
                "expected an integer for a `{}` default, found {}",
                int.name,
                describe(other)
            );
            return Err(Error::new(other.span(), msg));
        }
    };
    if !lit.suffix().is_empty() && lit.suffix() != int.name {
        let msg = format!(
            "unexpected suffix `{}` on a default of type `{}`",
            lit.suffix(),
            int.name
        );
        return Err(Error::new(lit.span(), msg));
    }
    let span = value.span();
    let out_of_range = || {
        let sign = if negative { "-" } else { "" };
        let msg = format!(
            "default {sign}{} does not fit in `{}`, whose values are {}..={}",
            lit.base10_digits(),
            int.name,
            int.min,
            int.max
        );
        Error::new(span, msg)
    };
    // The literal itself may be negative when the tokens come from a
    // string rather than from rustc.
    let value = lit.base10_parse::<i128>().map_err(|_| out_of_range())?;
    let value = if negative {
        value.checked_neg()
    } else {
        Some(value)
    };
    let Some(value) = value else {
        return Err(out_of_range());
    };
    if value < int.min || value > int.max {
        return Err(out_of_range());
    }
    Ok(value)
}

/// `permissions: 0o644`: the mode of the sysfs file, with C's rules
/// (`VERIFY_OCTAL_PERMISSIONS` in `include/linux/kernel.h`).
fn param_permissions(name: &str, value: &Value) -> syn::Result<u16> {
    let Value::Lit(Lit::Int(lit)) = value else {
        let msg = format!(
            "expected permissions as an octal integer such as `0o444` or `0o644`, found {}",
            describe(value)
        );
        return Err(Error::new(value.span(), msg));
    };
    let mode = match lit.base10_parse::<u16>() {
        Ok(mode) if mode <= 0o777 => mode,
        _ => {
            let msg = format!(
                "permissions `{lit}` are not a file mode: at most 0o777",
                lit = lit.token()
            );
            return Err(Error::new(lit.span(), msg));
        }
    };
    let mode_text = lit.token().to_string();
    let problem = if mode & 0o002 != 0 {
        Some(format!(
            "permissions {mode_text} make parameter `{name}` world-writable; allow writes to the owner and group only, such as 0o644 or 0o664"
        ))
    } else if mode & 0o040 < (mode & 0o004) << 3 || mode & 0o400 < (mode & 0o040) << 3 {
        Some(format!(
            "permissions {mode_text} let others read more than the group, or the group more than the owner"
        ))
    } else if mode & 0o200 < (mode & 0o020) << 3 {
        Some(format!(
            "permissions {mode_text} let the group write but not the owner"
        ))
    } else {
        None
    };
    match problem {
        Some(msg) => Err(Error::new(lit.span(), msg)),
        None => Ok(mode),
    }
}
