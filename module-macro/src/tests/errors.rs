//! One test per validation rule: the snapshot is every error reported, with
//! the line and column (both from 1) where its span starts.

use expect_test::{expect, Expect};
use proc_macro2::TokenStream;

use crate::expand;

#[track_caller]
fn check(input: &str, expect: Expect) {
    let tokens: TokenStream = input.parse().expect("the test input is not valid tokens");
    let actual = match expand::try_module(tokens) {
        Ok(_) => "ok\n".to_owned(),
        Err(errors) => errors
            .into_iter()
            .map(|error| {
                let start = error.span().start();
                format!("error at {}:{}: {error}\n", start.line, start.column + 1)
            })
            .collect(),
    };
    expect.assert_eq(&actual);
}

#[test]
fn valid_any_order_no_trailing_comma() {
    check(
        r#"license: "GPL", name: "hello", type: Hello"#,
        expect![[r#"
            ok
        "#]],
    );
}

#[test]
fn unknown_field() {
    check(
        r#"type: Hello, name: "hello", autor: "Ada", license: "GPL""#,
        expect![[r#"
            error at 1:29: unknown field `autor`, expected one of: type, name, author, description, license, alias
        "#]],
    );
}

#[test]
fn params_is_not_supported_yet() {
    check(
        r#"type: Hello, name: "hello", license: "GPL", params: { x: i32 { default: 1 } }"#,
        expect![[r#"
            error at 1:45: unknown field `params`, expected one of: type, name, author, description, license, alias
        "#]],
    );
}

#[test]
fn duplicate_field() {
    check(
        r#"type: Hello, name: "hello", license: "GPL", name: "again""#,
        expect![[r#"
            error at 1:45: duplicate field `name`: each field may appear only once
        "#]],
    );
}

#[test]
fn missing_required_fields() {
    check(
        r#"author: "Ada""#,
        expect![[r#"
        error at 1:1: missing required field `type`, e.g. `type: MyModule`
        error at 1:1: missing required field `name`, e.g. `name: "my_module"`
        error at 1:1: missing required field `license`, e.g. `license: "GPL"`
    "#]],
    );
}

#[test]
fn empty_input() {
    check(
        "",
        expect![[r#"
        error at 1:1: missing required field `type`, e.g. `type: MyModule`
        error at 1:1: missing required field `name`, e.g. `name: "my_module"`
        error at 1:1: missing required field `license`, e.g. `license: "GPL"`
    "#]],
    );
}

#[test]
fn string_is_integer() {
    check(
        r#"type: Hello, name: 5, license: "GPL""#,
        expect![[r#"
        error at 1:20: expected a string literal for `name`, such as `"..."` or `b"..."`, found an integer literal
    "#]],
    );
}

#[test]
fn string_is_identifier() {
    check(
        r#"type: Hello, name: hello, license: "GPL""#,
        expect![[r#"
        error at 1:20: expected a string literal for `name`, found `hello`; strings are quoted: `"hello"`
    "#]],
    );
}

#[test]
fn string_is_char() {
    check(
        r#"type: Hello, name: "hello", license: 'c'"#,
        expect![[r#"
        error at 1:38: expected a string literal for `license`, such as `"..."` or `b"..."`, found a character literal
    "#]],
    );
}

#[test]
fn string_is_c_string() {
    check(
        r#"type: Hello, name: "hello", license: c"GPL""#,
        expect![[r#"
        error at 1:38: expected a string literal for `license`, such as `"..."` or `b"..."`, found a C string literal
    "#]],
    );
}

#[test]
fn string_has_suffix() {
    check(
        r#"type: Hello, name: "hello", license: "GPL"x"#,
        expect![[r#"
        error at 1:38: unexpected suffix `x` on a string literal
    "#]],
    );
}

#[test]
fn type_is_string() {
    check(
        r#"type: "Hello", name: "hello", license: "GPL""#,
        expect![[r#"
        error at 1:7: expected a type for `type`, found a string literal; write the type without quotes: `Hello`
    "#]],
    );
}

#[test]
fn type_is_integer() {
    check(
        r#"type: 5, name: "hello", license: "GPL""#,
        expect![[r#"
        error at 1:7: expected a type for `type`, such as `MyModule`, found an integer literal
    "#]],
    );
}

#[test]
fn list_where_one_string_expected() {
    check(
        r#"type: Hello, name: ["a", "b"], license: "GPL""#,
        expect![[r#"
            error at 1:20: expected one string for `name`, found a list
        "#]],
    );
}

#[test]
fn nested_list() {
    check(
        r#"type: Hello, name: "hello", license: "GPL", author: ["Ada", ["Grace"]]"#,
        expect![[r#"
            error at 1:61: expected a string literal in the list for `author`, found a list; lists do not nest
        "#]],
    );
}

#[test]
fn empty_list() {
    check(
        r#"type: Hello, name: "hello", license: "GPL", alias: []"#,
        expect![[r#"
            error at 1:52: empty list for `alias`: give at least one string, or leave the field out
        "#]],
    );
}

#[test]
fn empty_strings() {
    check(
        r#"type: Hello, name: "", license: b"""#,
        expect![[r#"
        error at 1:20: `name` must not be an empty string
        error at 1:33: `license` must not be an empty string
    "#]],
    );
}

#[test]
fn name_with_invalid_character() {
    check(
        r#"type: Hello, name: "hello-world", license: "GPL""#,
        expect![[r#"
        error at 1:20: invalid module name `hello-world`: '-' is not allowed; a module name has only ASCII letters, digits and `_`
    "#]],
    );
}

#[test]
fn name_starting_with_digit() {
    check(
        r#"type: Hello, name: "1hello", license: "GPL""#,
        expect![[r#"
        error at 1:20: invalid module name `1hello`: a module name must not start with a digit
    "#]],
    );
}

#[test]
fn name_of_55_bytes_is_accepted() {
    check(
        r#"type: Hello, name: "a234567890123456789012345678901234567890123456789012345", license: "GPL""#,
        expect![[r#"
            ok
        "#]],
    );
}

#[test]
fn name_too_long() {
    check(
        r#"type: Hello, name: "a2345678901234567890123456789012345678901234567890123456", license: "GPL""#,
        expect![[r#"
            error at 1:20: module name is 56 bytes long, the kernel allows at most 55
        "#]],
    );
}

#[test]
fn string_with_nul_byte() {
    check(
        r#"type: Hello, name: "hello", license: "GPL", description: "a\0b""#,
        expect![[r#"
            error at 1:58: string for `description` contains a NUL byte (at byte 1), which would cut the kernel's C string short
        "#]],
    );
}

#[test]
fn byte_string_not_utf8() {
    check(
        r#"type: Hello, name: "hello", license: "GPL", author: b"Ad\xffa""#,
        expect![[r#"
            error at 1:53: byte string for `author` is not valid UTF-8 (at byte 2)
        "#]],
    );
}

#[test]
fn missing_colon() {
    check(
        r#"type Hello, name: "hello", license: "GPL""#,
        expect![[r#"
        error at 1:6: expected `:`
    "#]],
    );
}

#[test]
fn missing_comma() {
    check(
        r#"type: Hello name: "hello", license: "GPL""#,
        expect![[r#"
        error at 1:13: expected `,`
    "#]],
    );
}

#[test]
fn field_name_not_identifier() {
    check(
        r#""type": Hello, name: "hello", license: "GPL""#,
        expect![[r#"
        error at 1:1: expected a field name such as `name`
    "#]],
    );
}

#[test]
fn value_not_a_value() {
    check(
        r#"type: Hello, name: &"hello", license: "GPL""#,
        expect![[r#"
        error at 1:20: expected a value: a string literal such as `"hello"`, a list `[...]` or a type such as `Hello`
    "#]],
    );
}

#[test]
fn missing_value() {
    check(
        r#"type: Hello, name:, license: "GPL""#,
        expect![[r#"
        error at 1:19: expected a value: a string literal such as `"hello"`, a list `[...]` or a type such as `Hello`
    "#]],
    );
}

/// Independent mistakes are all reported in one go.
#[test]
fn several_errors_at_once() {
    check(
        r#"
type: "Hello",
name: "my-module",
autor: "Ada",
description: 42,
alias: ["a", 'b'],
alias: "c",
"#,
        expect![[r#"
            error at 2:7: expected a type for `type`, found a string literal; write the type without quotes: `Hello`
            error at 3:7: invalid module name `my-module`: '-' is not allowed; a module name has only ASCII letters, digits and `_`
            error at 4:1: unknown field `autor`, expected one of: type, name, author, description, license, alias
            error at 5:14: expected a string literal for `description`, such as `"..."` or `b"..."`, found an integer literal
            error at 6:14: expected a string literal for `alias`, such as `"..."` or `b"..."`, found a character literal
            error at 7:1: duplicate field `alias`: each field may appear only once
            error at 2:1: missing required field `license`, e.g. `license: "GPL"`
        "#]],
    );
}
