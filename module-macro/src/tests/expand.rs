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
        actual.push_str(&format!("//     {}\n", line.trim()));
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
