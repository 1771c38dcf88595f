//! A hostile lab 02 (checker/tests/sandbox.rs): the macro does the lab,
//! and while it expands, in rustc and in the host step's test binary, on
//! the grading machine, it tries to read the snapshots grading moved out
//! of the workspace, the course's reference solution, the other students'
//! workspaces and /etc/passwd, and to run a shell that leaves a marker
//! outside the workspace. In the sandbox each attempt fails, and the macro
//! reports what it met as a compile error.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::parse::ParseStream;
use syn::{bracketed, token, Error, Ident, LitStr, Token};

use crate::parse::string;

/// Tries every attack; `Err` names what each one met (all failed), `Ok`
/// holds what leaked.
fn attack() -> Result<String, String> {
    use std::fs;
    use std::path::PathBuf;
    let mut leaked = Vec::new();
    let mut met = Vec::new();
    let mut try_read = |what: &str, path: PathBuf| match fs::read_to_string(&path) {
        Ok(text) => leaked.push(format!("{what}: {} bytes", text.len())),
        Err(e) => met.push(format!("{what}: {e}")),
    };
    // The workspace is `<course>/target/checker/grade/work/<student>/workspace`,
    // and rustc runs in it.
    try_read("expected", "../expected/lab-02/02-modinfo.txt".into());
    let course = PathBuf::from("../../../../../..");
    try_read(
        "solution",
        course.join("labs/lab-02/solution/macro/src/strings.rs"),
    );
    try_read("passwd", "/etc/passwd".into());
    let others: Vec<String> = fs::read_dir("../..")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "hostile-macro-lab-02")
                .collect()
        })
        .unwrap_or_default();
    if others.is_empty() {
        met.push("other students: none seen".into());
    } else {
        leaked.push(format!("other students: {others:?}"));
    }
    let sh = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "echo pwned > ../pwned; echo pwned > {}/pwned-lab-02",
            course.display()
        ))
        .status();
    met.push(format!("sh: {sh:?}"));
    if leaked.is_empty() {
        Err(met.join("; "))
    } else {
        Ok(leaked.join("; "))
    }
}

/// Parses the value of `key` (`author` or `alias`): one string literal
/// or a list of them.
pub(crate) fn parse_strings(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
    if let Err(met) = attack() {
        return Err(Error::new(key.span(), format!("sandbox probe: {met}")));
    }
    if !input.peek(token::Bracket) {
        return Ok(vec![string(key, input)?]);
    }
    let content;
    let bracket = bracketed!(content in input);
    let mut items = Vec::new();
    while !content.is_empty() {
        items.push(string(key, &content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    if items.is_empty() {
        let msg =
            format!("empty list for `{key}`: give at least one string, or leave the field out");
        return Err(Error::new(bracket.span.join(), msg));
    }
    Ok(items)
}

/// The `.modinfo` entry `key=value` for the `index`th string of `key`.
pub(crate) fn modinfo_static(key: &str, index: usize, value: &LitStr) -> TokenStream {
    let ident = format_ident!("__MODINFO_{}_{index}", key.to_uppercase());
    let mut entry = format!("{key}={}", value.value()).into_bytes();
    entry.push(0);
    let len = Literal::usize_unsuffixed(entry.len());
    let bytes = Literal::byte_string(&entry);
    quote! {
        #[unsafe(link_section = ".modinfo")]
        #[used]
        static #ident: [u8; #len] = *#bytes;
    }
}
