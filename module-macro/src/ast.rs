//! The syntax tree of a `module!` input, as written.
//!
//! This pass only checks the shape `key: value, key: value, ...`: any value
//! that *looks* like a value (a literal, a list, a path or a block) is
//! accepted here, whatever its key. Whether `name: 5` makes sense is decided
//! by [`crate::valid`], which can then report every mistake at once instead
//! of stopping at the first. Every node keeps its tokens, so errors point at
//! what the user wrote.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{braced, bracketed, token, Ident, Lit, Path, Token, Type};

/// The whole input: `key: value` fields separated by commas, with an
/// optional trailing comma.
pub(crate) struct Input {
    pub(crate) fields: Punctuated<Field, Token![,]>,
}

/// One `key: value` field.
pub(crate) struct Field {
    /// The key, e.g. `name`. Parsed with `parse_any`, so `type` is allowed.
    pub(crate) key: Ident,
    pub(crate) value: Value,
}

/// The value of a field, or an item of a list.
pub(crate) enum Value {
    /// A literal: `"hello"`, `b"hello"`, and also `5` or `'c'`, which
    /// validation rejects with a precise message.
    Lit(Lit),
    /// `[value, value, ...]`.
    List(List),
    /// A path: `Hello`, `crate::hello::Hello`.
    Path(Path),
    /// `{ ... }`, kept as raw tokens. The `params` field parses its
    /// contents into [`Params`] during validation.
    Block(Block),
    /// A negative number, `-5`: a `-` and a literal.
    Neg(Token![-], Lit),
}

/// `[value, value, ...]`.
pub(crate) struct List {
    pub(crate) bracket: token::Bracket,
    pub(crate) items: Punctuated<Value, Token![,]>,
}

/// `{ ... }`.
pub(crate) struct Block {
    pub(crate) brace: token::Brace,
    pub(crate) tokens: TokenStream,
}

/// The contents of `params: { ... }`: parameters separated by commas.
pub(crate) struct Params {
    pub(crate) params: Punctuated<Param, Token![,]>,
}

/// One parameter: `name: type { key: value, ... }`.
pub(crate) struct Param {
    pub(crate) name: Ident,
    pub(crate) ty: Type,
    pub(crate) brace: token::Brace,
    /// `default`, `permissions` and `description`, checked by validation.
    pub(crate) fields: Punctuated<Field, Token![,]>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut fields = Punctuated::new();
        while !input.is_empty() {
            fields.push_value(input.parse()?);
            if input.is_empty() {
                break;
            }
            fields.push_punct(input.parse()?);
        }
        Ok(Input { fields })
    }
}

impl Parse for Field {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if !input.peek(Ident::peek_any) {
            return Err(input.error("expected a field name such as `name`"));
        }
        let key = Ident::parse_any(input)?;
        input.parse::<Token![:]>()?;
        let value = input.parse()?;
        Ok(Field { key, value })
    }
}

impl Parse for Value {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let lookahead = input.lookahead1();
        if lookahead.peek(Lit) {
            input.parse().map(Value::Lit)
        } else if lookahead.peek(token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let items = content.parse_terminated(Value::parse, Token![,])?;
            Ok(Value::List(List { bracket, items }))
        } else if lookahead.peek(Ident::peek_any) || lookahead.peek(Token![::]) {
            input.parse().map(Value::Path)
        } else if lookahead.peek(Token![-]) {
            let minus = input.parse()?;
            let lit = input.parse()?;
            Ok(Value::Neg(minus, lit))
        } else if lookahead.peek(token::Brace) {
            let content;
            let brace = braced!(content in input);
            let tokens = content.parse()?;
            Ok(Value::Block(Block { brace, tokens }))
        } else {
            Err(input.error("expected a value: a string literal such as `\"hello\"`, a list `[...]` or a type such as `Hello`"))
        }
    }
}

impl Value {
    /// The span of the whole value (its first token on stable Rust).
    pub(crate) fn span(&self) -> Span {
        match self {
            Value::Lit(lit) => lit.span(),
            Value::List(list) => list.bracket.span.join(),
            Value::Path(path) => path.span(),
            Value::Block(block) => block.brace.span.join(),
            Value::Neg(minus, _) => minus.span,
        }
    }
}

impl Parse for Params {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let params = input.parse_terminated(Param::parse, Token![,])?;
        Ok(Params { params })
    }
}

impl Parse for Param {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if !input.peek(Ident::peek_any) {
            return Err(input.error(
                "expected a parameter such as `count: u32 { default: 1, permissions: 0o444, description: \"...\" }`",
            ));
        }
        let name = Ident::parse_any(input)?;
        input.parse::<Token![:]>()?;
        let ty = input.parse()?;
        if !input.peek(token::Brace) {
            return Err(input.error(
                "expected `{ default: ..., permissions: ..., description: ... }` after the parameter type",
            ));
        }
        let content;
        let brace = braced!(content in input);
        let fields = content.parse_terminated(Field::parse, Token![,])?;
        Ok(Param {
            name,
            ty,
            brace,
            fields,
        })
    }
}
