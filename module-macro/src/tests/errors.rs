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
            error at 1:29: unknown field `autor`, expected one of: type, name, author, description, license, alias, params
        "#]],
    );
}

/// Wraps `params` in a valid module, for the parameter tests.
#[track_caller]
fn check_params(params: &str, expect: Expect) {
    check(
        &format!("type: M, name: \"m\", license: \"GPL\", params: {{\n{params}\n}}"),
        expect,
    );
}

#[test]
fn params_valid() {
    check_params(
        r#"a: bool { default: true, permissions: 0o644, description: "a" },
b: i8 { default: -128, permissions: 0o444, description: "b" },
c: u64 { default: 0xffff_ffff_ffff_ffff, permissions: 0, description: b"c" },
d: str { default: "", permissions: 0o600, description: "d" },
e: ArrayParam<StrParam<4>, 2> { default: ["abcd"], permissions: 0o660, description: "e" },"#,
        expect![[r#"
            ok
        "#]],
    );
}

#[test]
fn params_not_a_block() {
    check(
        r#"type: M, name: "m", license: "GPL", params: [1]"#,
        expect![[r#"
            error at 1:45: expected a block for `params`, such as `params: { count: u32 { default: 1, permissions: 0o444, description: "..." } }`, found a list
        "#]],
    );
}

#[test]
fn param_unknown_type() {
    check_params(
        r#"x: f32 { default: 1, permissions: 0o444, description: "x" },
y: Vec<u8> { default: 1, permissions: 0o444, description: "y" },
z: &str { default: "", permissions: 0o444, description: "z" },"#,
        expect![[r#"
            error at 2:4: unknown parameter type `f32`, expected one of: bool, i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, str, StrParam<N>, ArrayParam<T, N>
            error at 3:4: unknown parameter type `Vec<u8>`, expected one of: bool, i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, str, StrParam<N>, ArrayParam<T, N>
            error at 4:4: unknown parameter type `&str`, expected one of: bool, i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, str, StrParam<N>, ArrayParam<T, N>
        "#]],
    );
}

#[test]
fn param_bad_generic_types() {
    check_params(
        r#"a: ArrayParam<i32> { default: [], permissions: 0o444, description: "a" },
b: ArrayParam<i32, 0> { default: [], permissions: 0o444, description: "b" },
c: ArrayParam<ArrayParam<i32, 2>, 2> { default: [], permissions: 0o444, description: "c" },
d: StrParam<N> { default: "", permissions: 0o444, description: "d" },
e: ArrayParam<f64, 2> { default: [], permissions: 0o444, description: "e" },"#,
        expect![[r#"
            error at 2:4: expected `ArrayParam<T, N>`, with an element type `T` and a capacity `N`
            error at 3:20: expected a capacity: an integer literal from 1 to 65535
            error at 4:15: arrays of arrays are not supported
            error at 5:4: expected `StrParam<N>`, with a capacity `N` in bytes
            error at 6:15: unknown parameter type `f64`, expected one of: bool, i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, str, StrParam<N>, ArrayParam<T, N>
        "#]],
    );
}

#[test]
fn param_default_out_of_range() {
    check_params(
        r#"a: u8 { default: 300, permissions: 0o444, description: "a" },
b: u8 { default: -1, permissions: 0o444, description: "b" },
c: i8 { default: -129, permissions: 0o444, description: "c" },
d: u64 { default: 18446744073709551616, permissions: 0o444, description: "d" },
e: i16 { default: 1u8, permissions: 0o444, description: "e" },"#,
        expect![[r#"
            error at 2:18: default 300 does not fit in `u8`, whose values are 0..=255
            error at 3:18: default -1 does not fit in `u8`, whose values are 0..=255
            error at 4:18: default -129 does not fit in `i8`, whose values are -128..=127
            error at 5:19: default 18446744073709551616 does not fit in `u64`, whose values are 0..=18446744073709551615
            error at 6:19: unexpected suffix `u8` on a default of type `i16`
        "#]],
    );
}

#[test]
fn param_default_of_wrong_kind() {
    check_params(
        r#"a: bool { default: 1, permissions: 0o444, description: "a" },
b: u32 { default: "1", permissions: 0o444, description: "b" },
c: str { default: 5, permissions: 0o444, description: "c" },
d: ArrayParam<u8, 2> { default: 1, permissions: 0o444, description: "d" },
e: ArrayParam<bool, 2> { default: [true, 0], permissions: 0o444, description: "e" },"#,
        expect![[r#"
            error at 2:20: expected `true` or `false` for a `bool` default, found an integer literal
            error at 3:19: expected an integer for a `u32` default, found a string literal
            error at 4:19: expected a string literal for `default`, such as `"..."` or `b"..."`, found an integer literal
            error at 5:33: expected a list of at most 2 elements for the default of an array, such as `[1, 2]`, found an integer literal
            error at 6:42: expected `true` or `false` for a `bool` default, found an integer literal
        "#]],
    );
}

#[test]
fn param_too_many_default_elements() {
    check_params(
        r#"list: ArrayParam<i32, 2> { default: [1, 2, 3], permissions: 0o444, description: "list" },"#,
        expect![[r#"
            error at 2:44: too many elements in the default: 3 given, the array holds at most 2
        "#]],
    );
}

#[test]
fn param_default_string_too_long() {
    check_params(
        r#"name: StrParam<4> { default: "hello", permissions: 0o444, description: "name" },
nul: str { default: "a\0b", permissions: 0o444, description: "nul" },"#,
        expect![[r#"
            error at 2:30: the default string is 5 bytes long, the parameter holds at most 4
            error at 3:21: string for `default` contains a NUL byte (at byte 1), which would cut the kernel's C string short
        "#]],
    );
}

#[test]
fn param_bad_permissions() {
    check_params(
        r#"a: u8 { default: 1, permissions: 0o666, description: "world-writable" },
b: u8 { default: 1, permissions: 0o1000, description: "too big" },
c: u8 { default: 1, permissions: 0o044, description: "others read more" },
d: u8 { default: 1, permissions: 0o464, description: "group writes, not owner" },
e: u8 { default: 1, permissions: "0o644", description: "string" },"#,
        expect![[r#"
            error at 2:34: permissions 0o666 make parameter `a` world-writable; allow writes to the owner and group only, such as 0o644 or 0o664
            error at 3:34: permissions `0o1000` are not a file mode: at most 0o777
            error at 4:34: permissions 0o044 let others read more than the group, or the group more than the owner
            error at 5:34: permissions 0o464 let the group write but not the owner
            error at 6:34: expected permissions as an octal integer such as `0o444` or `0o644`, found a string literal
        "#]],
    );
}

#[test]
fn param_missing_keys() {
    check_params(
        r#"a: u8 { },
b: u8 { default: 1 },"#,
        expect![[r#"
            error at 2:7: missing `default` in parameter `a`, e.g. `default: 0`
            error at 2:7: missing `permissions` in parameter `a`, e.g. `permissions: 0o444`
            error at 2:7: missing `description` in parameter `a`, e.g. `description: "..."`
            error at 3:7: missing `permissions` in parameter `b`, e.g. `permissions: 0o444`
            error at 3:7: missing `description` in parameter `b`, e.g. `description: "..."`
        "#]],
    );
}

#[test]
fn param_unknown_and_duplicate_keys() {
    check_params(
        r#"a: u8 { default: 1, default: 2, permissions: 0o444, perms: 0o444, description: "a" },"#,
        expect![[r#"
            error at 2:21: duplicate key `default` in parameter `a`
            error at 2:53: unknown key `perms` in parameter `a`, expected one of: default, permissions, description
        "#]],
    );
}

#[test]
fn param_duplicate() {
    check_params(
        r#"a: u8 { default: 1, permissions: 0o444, description: "a" },
r#a: u8 { default: 1, permissions: 0o444, description: "again" },"#,
        expect![[r#"
            error at 3:1: duplicate parameter `a`: each parameter may appear only once
        "#]],
    );
}

#[test]
fn param_empty_description() {
    check_params(
        r#"a: u8 { default: 1, permissions: 0o444, description: "" },"#,
        expect![[r#"
            error at 2:54: `description` must not be an empty string
        "#]],
    );
}

#[test]
fn param_syntax_errors() {
    check_params(
        r#"a u8 { default: 1, permissions: 0o444, description: "a" },"#,
        expect![[r#"
            error at 2:3: expected `:`
        "#]],
    );
    check_params(
        r#"a: u8,"#,
        expect![[r#"
            error at 2:6: expected `{ default: ..., permissions: ..., description: ... }` after the parameter type
        "#]],
    );
    check_params(
        r#"5: u8 { default: 1 },"#,
        expect![[r#"
            error at 2:1: expected a parameter such as `count: u32 { default: 1, permissions: 0o444, description: "..." }`
        "#]],
    );
    check_params(
        r#"a: u8 { default: - },"#,
        expect![[r#"
            error at 2:20: unexpected end of input, expected literal
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
            error at 4:1: unknown field `autor`, expected one of: type, name, author, description, license, alias, params
            error at 5:14: expected a string literal for `description`, such as `"..."` or `b"..."`, found an integer literal
            error at 6:14: expected a string literal for `alias`, such as `"..."` or `b"..."`, found a character literal
            error at 7:1: duplicate field `alias`: each field may appear only once
            error at 2:1: missing required field `license`, e.g. `license: "GPL"`
        "#]],
    );
}
