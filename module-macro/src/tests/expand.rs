//! Snapshots of whole expansions, formatted with `prettyplease`. They live in
//! `module-macro/tests/expand/` as plain `.rs` files, which the book includes.

use expect_test::{expect_file, ExpectFile};
use proc_macro2::TokenStream;

use crate::expand;

/// Expands `input` and compares it with the snapshot file, whose first lines
/// repeat the input as a comment.
#[track_caller]
fn check(input: &str, expect: ExpectFile) {
    let tokens: TokenStream = input.parse().expect("the test input is not valid tokens");
    let output = expand::module(tokens);
    let file: syn::File = syn::parse2(output).expect("the expansion is not a valid file");
    let mut actual = String::from("// module! {\n");
    for line in input.trim().lines() {
        actual.push_str(&format!("//     {}\n", line.trim_end()));
    }
    actual.push_str("// }\n\n");
    // One item at a time, with a blank line between them, for readability.
    let items: Vec<String> = file
        .items
        .into_iter()
        .map(|item| {
            prettyplease::unparse(&syn::File {
                shebang: None,
                attrs: Vec::new(),
                items: vec![item],
            })
        })
        .collect();
    actual.push_str(&items.join("\n"));
    expect.assert_eq(&actual);
}

#[test]
fn minimal() {
    check(
        r#"
type: Hello,
name: "hello",
license: "GPL",
"#,
        expect_file!["../../tests/expand/minimal.rs"],
    );
}

#[test]
fn full() {
    check(
        r#"
type: crate::Hello,
name: "hello",
author: ["Ada Lovelace", "Grace Hopper"],
description: "Says hello",
license: "GPL",
alias: ["hi", "hey"],
"#,
        expect_file!["../../tests/expand/full.rs"],
    );
}

/// The 2021 RFC wrote every string as a byte string.
#[test]
fn rfc_byte_strings() {
    check(
        r#"
type: RustMinimal,
name: b"rust_minimal",
author: b"Rust for Linux Contributors",
description: b"Rust minimal sample",
license: b"GPL"
"#,
        expect_file!["../../tests/expand/rfc_byte_strings.rs"],
    );
}

/// Parameters, as the 2021 RFC wrote them (byte strings, `ArrayParam`), and
/// one of each kind: a read-only and a writable number, a string, an array.
#[test]
fn params() {
    check(
        r#"
type: RustParams,
name: b"rust_params",
license: b"GPL",
params: {
    my_i32: i32 {
        default: 42,
        permissions: 0o000,
        description: b"Example of i32",
    },
    writeable_i32: i32 {
        default: 42,
        permissions: 0o644,
        description: b"Example of i32",
    },
    my_str: str {
        default: b"hello",
        permissions: 0o444,
        description: b"Example of a string",
    },
    my_array: ArrayParam<i32, 3> {
        default: [0, -1],
        permissions: 0o444,
        description: b"Example of array",
    },
},
"#,
        expect_file!["../../tests/expand/params.rs"],
    );
}

/// Mistakes in parameters: each is a `compile_error!` at the token at
/// fault.
#[test]
fn params_errors() {
    check(
        r#"
type: Greeter,
name: "greeter",
license: "GPL",
params: {
    count: u8 { default: 300, permissions: 0o644, description: "Greetings" },
    ratio: f32 { default: 1, permissions: 0o444, description: "Ratio" },
    secret: bool { default: false, permissions: 0o666, description: "Secret" },
    list: ArrayParam<i32, 2> { default: [1, 2, 3], permissions: 0o444, description: "List" },
    name: StrParam<4> { default: "hello", permissions: 0o444 },
},
"#,
        expect_file!["../../tests/expand/params_errors.rs"],
    );
}

/// On errors: the `compile_error!`s, and dummy `__LOG_PREFIX` and
/// `THIS_MODULE` so that code using them still compiles.
#[test]
fn errors() {
    check(
        r#"
type: Hello,
name: "hello-world",
autor: "Ada",
"#,
        expect_file!["../../tests/expand/errors.rs"],
    );
}
