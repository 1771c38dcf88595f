//! The tests that grade the lab: `cargo test -p lab-02-macro`. Given: do not
//! change them (the reference solution, in the instructor's repository,
//! runs the same file).
//!
//! Each test expands one input. The snapshot is the expansion, formatted,
//! or every error with the line and column (both from 1) where it points.

use std::fs;
use std::path::{Path, PathBuf};

use expect_test::{expect, Expect};
use proc_macro2::TokenStream;

use crate::expand;

#[track_caller]
fn check(input: &str, expect: Expect) {
    let tokens: TokenStream = input.parse().expect("the test input is not valid tokens");
    let actual = match expand::try_module(tokens) {
        Ok(output) => {
            let file: syn::File = syn::parse2(output).expect("the expansion is not a valid file");
            prettyplease::unparse(&file)
        }
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
fn no_author_no_alias() {
    check(
        r#"type: Credits, name: "credits", license: "GPL""#,
        expect![[r#"
            ::kernel::module! {
                type : Credits, name : "credits", license : "GPL",
            }
        "#]],
    );
}

#[test]
fn one_author() {
    check(
        r#"type: Credits, name: "credits", author: "Ada Lovelace", license: "GPL""#,
        expect![[r##"
            #[unsafe(link_section = ".modinfo")]
            #[used]
            static __MODINFO_AUTHOR_0: [u8; 20] = *b"author=Ada Lovelace\0";
            ::kernel::module! {
                type : Credits, name : "credits", license : "GPL",
            }
        "##]],
    );
}

#[test]
fn lists_of_authors_and_aliases() {
    check(
        r#"
type: Credits,
name: "credits",
author: ["Ada Lovelace", "Grace Hopper"],
description: "Credits its authors",
license: "GPL",
alias: ["rust-credits", "thanks"],
"#,
        expect![[r##"
            #[unsafe(link_section = ".modinfo")]
            #[used]
            static __MODINFO_AUTHOR_0: [u8; 20] = *b"author=Ada Lovelace\0";
            #[unsafe(link_section = ".modinfo")]
            #[used]
            static __MODINFO_AUTHOR_1: [u8; 20] = *b"author=Grace Hopper\0";
            #[unsafe(link_section = ".modinfo")]
            #[used]
            static __MODINFO_ALIAS_0: [u8; 19] = *b"alias=rust-credits\0";
            #[unsafe(link_section = ".modinfo")]
            #[used]
            static __MODINFO_ALIAS_1: [u8; 13] = *b"alias=thanks\0";
            ::kernel::module! {
                type : Credits, name : "credits", description : "Credits its authors", license :
                "GPL",
            }
        "##]],
    );
}

#[test]
fn trailing_comma_in_list() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", alias: ["thanks",]"#,
        expect![[r##"
            #[unsafe(link_section = ".modinfo")]
            #[used]
            static __MODINFO_ALIAS_0: [u8; 13] = *b"alias=thanks\0";
            ::kernel::module! {
                type : Credits, name : "credits", license : "GPL",
            }
        "##]],
    );
}

#[test]
fn empty_list() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", author: []"#,
        expect![[r#"
            error at 1:57: empty list for `author`: give at least one string, or leave the field out
        "#]],
    );
}

#[test]
fn list_item_not_a_string() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", alias: ["thanks", 5]"#,
        expect![[r#"
            error at 1:67: expected a string literal for `alias`, such as `"hello"`
        "#]],
    );
}

#[test]
fn nested_list() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", author: ["Ada", ["Grace"]]"#,
        expect![[r#"
            error at 1:65: expected a string literal for `author`, such as `"hello"`
        "#]],
    );
}

#[test]
fn list_missing_comma() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", author: ["Ada" "Grace"]"#,
        expect![[r#"
            error at 1:64: expected `,`
        "#]],
    );
}

#[test]
fn empty_string_in_list() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", author: ["Ada", ""]"#,
        expect![[r#"
            error at 1:65: `author` must not be an empty string
        "#]],
    );
}

#[test]
fn author_is_not_a_string() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", author: Ada"#,
        expect![[r#"
            error at 1:57: expected a string literal for `author`, such as `"hello"`
        "#]],
    );
}

#[test]
fn unknown_field() {
    check(
        r#"type: Credits, name: "credits", autor: "Ada", license: "GPL""#,
        expect![[r#"
            error at 1:33: unknown field `autor`, expected one of: type, name, author, description, license, alias
        "#]],
    );
}

#[test]
fn duplicate_field() {
    check(
        r#"type: Credits, name: "credits", license: "GPL", alias: "a", alias: "b""#,
        expect![[r#"
            error at 1:61: duplicate field `alias`: each field may appear only once
        "#]],
    );
}

#[test]
fn missing_field() {
    check(
        r#"type: Credits, name: "credits""#,
        expect![[r#"
            error at 1:1: missing required field `license`
        "#]],
    );
}

/// The source files of this crate, and of the exercise's crate when these
/// tests run for the reference solution (in the instructor's repository),
/// without this file.
fn sources() -> Vec<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab = manifest
        .ancestors()
        .find(|dir| dir.join("lab.toml").is_file())
        .expect("the crate is inside a lab folder");
    let mut files = Vec::new();
    for dir in [manifest.join("src"), lab.join("macro/src")] {
        for entry in fs::read_dir(&dir).expect("cannot read src/") {
            let path = entry.expect("cannot read src/").path();
            let is_rs = path.extension().is_some_and(|ext| ext == "rs");
            let is_tests = path.file_name().is_some_and(|name| name == "tests.rs");
            if is_rs && !is_tests && !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files
}

/// Only a `.modinfo` static of `modinfo_static` reaches the module: any
/// other code it returns becomes a compile error (the given `expand.rs`).
#[test]
fn only_a_modinfo_static_reaches_the_module() {
    use crate::expand::only_modinfo;
    use quote::quote;
    let good = quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static __MODINFO_ALIAS_0: [u8; 13] = *b"alias=thanks\0";
    };
    assert_eq!(only_modinfo(good.clone()).to_string(), good.to_string());
    assert!(only_modinfo(quote! {}).is_empty());
    let refused = [
        quote! { #good fn f() {} },
        quote! { #[unsafe(link_section = ".modinfo")] #[used] static S: [u8; 2] = *b"a\0"; #good },
        quote! { #[unsafe(link_section = ".init_array")] #[used] static S: [u8; 2] = *b"a\0"; },
        quote! { #[unsafe(link_section = ".modinfo")] #[used] static S: [u8; 2] = { unsafe { *b"a\0" } }; },
        quote! { #[unsafe(link_section = ".modinfo")] #[used] static S: [u8; N] = *b"a\0"; },
    ];
    for tokens in refused {
        let out = only_modinfo(tokens).to_string();
        assert!(out.contains("compile_error"), "not refused: {out}");
    }
}

/// A macro must not panic on its input: mistakes are compile errors.
#[test]
fn no_panics() {
    let forbidden = [
        concat!(".unwrap", "("),
        concat!(".expect", "("),
        concat!("panic", "!"),
        concat!("unreachable", "!"),
        concat!("todo", "!"),
        concat!("unimplemented", "!"),
    ];
    let mut found = Vec::new();
    for path in sources() {
        let text = fs::read_to_string(&path).expect("cannot read a source file");
        for (i, line) in text.lines().enumerate() {
            for word in forbidden {
                if line.contains(word) {
                    found.push(format!("{}:{}: {word}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "possible panics:\n{}", found.join("\n"));
}
