//! What a student file may hold, checked before anything is built.
//!
//! A lab's grade should measure what the student's code does, so the files
//! a student edits (a lab's `student` key, see [`crate::spec::lab`]) may not reach
//! past themselves: not into the kernel's raw C interface, not into other
//! files of the tree (the snapshots in `expected/` above all), not into the
//! build's environment, the linker or the module's metadata. Every student
//! file is parsed with `syn` and each [`Rule`] broken is reported with its
//! file, line and column and a one-line reason. The tokens of every macro
//! call (`pr_info!(...)`, a `macro_rules!` of the student's, a `quote!`)
//! are read too, so the rules also hold inside them.
//!
//! Strings and comments are never read: `"unsafe"` in a message, or
//! `// no unsafe here`, is fine, and so is a raw identifier such as
//! `r#unsafe`, which is a name, not the keyword.
//!
//! A lab may lift rules with `allow` in its `lab.toml`: lab 02's macro
//! generates the `#[link_section = ".modinfo"]` and `#[used]` statics the
//! lab is about, so it allows `link-sections`. Lab 09, which teaches how
//! to build a safe abstraction over the C API, allows `unsafe` and
//! `bindings`.
//!
//! `checker lab` runs the check before the host steps and the build (the
//! student learns the rules at the keyboard; `crate::run::gate` reports
//! it), and so does every run of `checker grade`, which reports the same
//! lines. This module holds the rules; the run acts on what they find.

use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use proc_macro2::{Delimiter, Ident, Spacing, Span, TokenStream, TokenTree};
use syn::visit::{self, Visit};

use crate::spec::lab::Lab;

pub use crate::spec::rules::Rule;

/// A broken rule: where, which, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// The file as shown (relative to the workspace root when possible).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The rule; `None` when the file cannot be read as Rust tokens at
    /// all, so that none of the rules could be checked.
    pub rule: Option<Rule>,
    /// One line for the student.
    pub reason: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.reason
        )?;
        match self.rule {
            Some(rule) => write!(f, " [{rule}]"),
            None => Ok(()),
        }
    }
}

/// The macros each rule forbids, by the last segment of their path.
fn forbidden_macro(name: &str) -> Option<(Rule, &'static str)> {
    Some(match name {
        "include" | "include_str" | "include_bytes" => (
            Rule::Include,
            "reads another file at build time; a student file may not reach past itself",
        ),
        "env" | "option_env" => (Rule::Env, "reads the build's environment"),
        "asm" | "global_asm" | "naked_asm" => (
            Rule::Asm,
            "inline assembly: student code uses the kernel crate's safe API only",
        ),
        _ => return None,
    })
}

/// The attributes each rule forbids, by name.
fn forbidden_attribute(name: &str) -> Option<(Rule, &'static str)> {
    Some(match name {
        "path" => (
            Rule::PathAttribute,
            "makes a module of another file; a student file may not reach past itself",
        ),
        "no_mangle" | "export_name" => (
            Rule::SymbolNames,
            "names a symbol of the module, which could replace one of the kernel's",
        ),
        "link_section" | "used" => (
            Rule::LinkSections,
            "places data in the module's sections, such as the .modinfo the kernel reads",
        ),
        "feature" => (
            Rule::Features,
            "turns on unstable compiler features; student code uses stable Rust",
        ),
        _ => return None,
    })
}

const BINDINGS_WHY: &str = "the kernel crate's raw C bindings; student code uses its safe API only";
const STD_WHY: &str =
    "kernel code has no std, and a macro must not reach files, processes or the environment";
const UNSAFE_WHY: &str = "student code uses the kernel crate's safe API only";

const FRAGMENT_CALL_WHY: &str = "calls a macro named by a fragment (it could be `include_str` \
     or `global_asm`); call macros by their names";
const FRAGMENT_ATTRIBUTE_WHY: &str = "builds an attribute from a fragment (it could be `path` or \
     `no_mangle`); write attributes out";
const ARCH_GLOB_WHY: &str =
    "a glob import from `arch` brings in `asm!` and `global_asm!` without naming them";

/// Where a fragment starting at `i` ends (the index after it): `$name`,
/// or a repetition `$( ... ) sep? op`. `$crate` is a path, not a fragment.
fn fragment_end(tokens: &[TokenTree], i: usize) -> Option<usize> {
    let TokenTree::Punct(p) = &tokens[i] else {
        return None;
    };
    if p.as_char() != '$' {
        return None;
    }
    match tokens.get(i + 1)? {
        TokenTree::Ident(name) if name != "crate" => Some(i + 2),
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
            let op = |j: usize| matches!(tokens.get(j), Some(TokenTree::Punct(p)) if matches!(p.as_char(), '*' | '+' | '?'));
            if op(i + 2) {
                Some(i + 3)
            } else if op(i + 3) {
                Some(i + 4)
            } else {
                Some(i + 2)
            }
        }
        _ => None,
    }
}

/// Whether the tokens of an attribute hold a fragment anywhere but as the
/// whole value of `doc = $x`, the one form a macro needs.
fn attribute_from_fragment(tokens: TokenStream) -> bool {
    fn has_dollar(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            TokenTree::Punct(p) => p.as_char() == '$',
            TokenTree::Group(g) => has_dollar(g.stream()),
            _ => false,
        })
    }
    let list: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let doc_value = list.len() == 4
        && matches!(&list[0], TokenTree::Ident(i) if i == "doc")
        && matches!(&list[1], TokenTree::Punct(p) if p.as_char() == '=')
        && matches!(&list[2], TokenTree::Punct(p) if p.as_char() == '$')
        && matches!(&list[3], TokenTree::Ident(i) if i != "crate");
    !doc_value && has_dollar(tokens)
}

/// An identifier as the language sees it: `r#std` is `std`. Keywords are
/// compared without this: `r#unsafe` is a name, not the keyword.
fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    match s.strip_prefix("r#") {
        Some(name) => name.to_owned(),
        None => s,
    }
}

struct Checker<'a> {
    allow: &'a [Rule],
    found: Vec<(Span, Rule, String)>,
}

impl Checker<'_> {
    fn report(&mut self, span: Span, rule: Rule, reason: String) {
        if !self.allow.contains(&rule) {
            self.found.push((span, rule, reason));
        }
    }

    fn unsafe_keyword(&mut self, span: Span, what: &str) {
        self.report(span, Rule::Unsafe, format!("{what}: {UNSAFE_WHY}"));
    }

    /// A name used in a path, a `use` or a macro's tokens.
    fn name(&mut self, ident: &Ident) {
        match unraw(ident).as_str() {
            "bindings" => self.report(
                ident.span(),
                Rule::Bindings,
                format!("`bindings`: {BINDINGS_WHY}"),
            ),
            "std" => self.report(ident.span(), Rule::Std, format!("`std`: {STD_WHY}")),
            _ => {}
        }
    }

    /// A forbidden macro named outside a call (`use core::include_str as
    /// i;`): renaming it would hide the call.
    fn macro_name(&mut self, ident: &Ident) {
        let name = unraw(ident);
        if let Some((rule, why)) = forbidden_macro(&name) {
            self.report(ident.span(), rule, format!("`{name}!`: {why}"));
        }
    }

    /// The name of an attribute (one path segment).
    fn attribute_name(&mut self, ident: &Ident) {
        let name = unraw(ident);
        if let Some((rule, why)) = forbidden_attribute(&name) {
            self.report(ident.span(), rule, format!("`#[{name}]`: {why}"));
        }
    }

    /// The tokens of an attribute, between `#[` and `]`: its name (also
    /// inside `unsafe(...)` and `cfg_attr(..., ...)`), then its arguments
    /// as any tokens.
    fn attribute_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let Some(TokenTree::Ident(first)) = tokens.first() else {
            self.tokens(tokens.into_iter().collect());
            return;
        };
        let args = match tokens.get(1) {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => Some(g),
            _ => None,
        };
        let name = first.to_string();
        match (name.as_str(), args) {
            ("unsafe", Some(inner)) => {
                let known = match inner.stream().into_iter().next() {
                    Some(TokenTree::Ident(i)) => forbidden_attribute(&unraw(&i)).is_some(),
                    _ => false,
                };
                if !known {
                    self.unsafe_keyword(first.span(), "`#[unsafe(...)]` attribute");
                }
                self.attribute_tokens(inner.stream());
            }
            ("cfg_attr", Some(inner)) => {
                // `cfg_attr(predicate, attr, attr...)`: each attribute after
                // the predicate is checked as if written alone.
                let mut chunks: Vec<Vec<TokenTree>> = vec![Vec::new()];
                for t in inner.stream() {
                    match &t {
                        TokenTree::Punct(p) if p.as_char() == ',' => chunks.push(Vec::new()),
                        _ => chunks.last_mut().expect("one chunk at least").push(t),
                    }
                }
                for chunk in chunks.into_iter().skip(1) {
                    self.attribute_tokens(chunk.into_iter().collect());
                }
            }
            _ => {
                // `rustfmt::skip` is not `skip`.
                let single =
                    !matches!(tokens.get(1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if single {
                    self.attribute_name(first);
                }
                self.tokens(tokens.into_iter().skip(1).collect());
            }
        }
    }

    /// Any tokens: a macro's input, an attribute's arguments, or what
    /// `syn` keeps unparsed. Every rule is checked on the tokens alone.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let punct = |i: usize, c: char| matches!(tokens.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
        let mut i = 0;
        while i < tokens.len() {
            // `$m!(...)`, `$($m)*!(...)`: a macro named by a fragment.
            if let Some(end) = fragment_end(&tokens, i) {
                // `!`, not the `!=` of `$a != $b`.
                let bang = matches!(tokens.get(end), Some(TokenTree::Punct(p)) if p.as_char() == '!' && p.spacing() == Spacing::Alone);
                if bang {
                    self.report(
                        tokens[i].span(),
                        Rule::OpaqueMacros,
                        format!("`$...!`: {FRAGMENT_CALL_WHY}"),
                    );
                }
            }
            match &tokens[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Punct(p) if p.as_char() == '#' => {
                    let bracket = if punct(i + 1, '!') { i + 2 } else { i + 1 };
                    if punct(bracket, '$') {
                        self.report(
                            p.span(),
                            Rule::OpaqueMacros,
                            format!("`#$...`: {FRAGMENT_ATTRIBUTE_WHY}"),
                        );
                    }
                    if let Some(TokenTree::Group(g)) = tokens.get(bracket) {
                        if g.delimiter() == Delimiter::Bracket {
                            if attribute_from_fragment(g.stream()) {
                                self.report(
                                    g.span_open(),
                                    Rule::OpaqueMacros,
                                    format!("`#[$...]`: {FRAGMENT_ATTRIBUTE_WHY}"),
                                );
                            }
                            self.attribute_tokens(g.stream());
                            i = bracket + 1;
                            continue;
                        }
                    }
                }
                TokenTree::Ident(ident) => {
                    let word = ident.to_string();
                    let next = tokens.get(i + 1);
                    if word == "unsafe" {
                        self.unsafe_keyword(ident.span(), "`unsafe`");
                    } else if word == "extern" {
                        match next {
                            Some(TokenTree::Ident(c)) if c == "crate" => self.report(
                                ident.span(),
                                Rule::ExternCrate,
                                "`extern crate`: brings in a crate the lab does not depend on"
                                    .into(),
                            ),
                            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                                self.unsafe_keyword(ident.span(), "`extern` block")
                            }
                            Some(TokenTree::Literal(_)) => {
                                if matches!(tokens.get(i + 2), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
                                {
                                    self.unsafe_keyword(ident.span(), "`extern` block");
                                }
                            }
                            _ => {}
                        }
                    } else {
                        self.name(ident);
                        // `include_str!(...)`, `core::include_str`, `include_str as i`.
                        let called = punct(i + 1, '!');
                        let in_path = i > 0 && punct(i - 1, ':');
                        let renamed = matches!(next, Some(TokenTree::Ident(a)) if a == "as");
                        if called || in_path || renamed {
                            self.macro_name(ident);
                        } else if forbidden_macro(&unraw(ident)).is_some() {
                            // A plain word here is a macro's input, which a
                            // macro may call by it (`$m!`).
                            let name = unraw(ident);
                            self.report(
                                ident.span(),
                                Rule::OpaqueMacros,
                                format!(
                                    "`{name}` passed to a macro, which could call `{name}!` by it"
                                ),
                            );
                        }
                        // `use core::arch::*` in a macro's tokens.
                        if unraw(ident) == "arch" && punct(i + 1, ':') && punct(i + 2, ':') {
                            let glob = match tokens.get(i + 3) {
                                Some(TokenTree::Punct(p)) => p.as_char() == '*',
                                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                                    g.stream().into_iter().any(
                                        |t| matches!(t, TokenTree::Punct(p) if p.as_char() == '*'),
                                    )
                                }
                                _ => false,
                            };
                            if glob {
                                self.report(
                                    ident.span(),
                                    Rule::Asm,
                                    format!("`arch::*`: {ARCH_GLOB_WHY}"),
                                );
                            }
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// Visitor methods that read a node's `Verbatim` tokens (what syn could not
/// parse) as tokens, and walk every other node as usual: `visit_item(syn::Item)`.
macro_rules! verbatim_tokens {
    ($($visit:ident($node:ident::$ty:ident)),* $(,)?) => {
        $(
            fn $visit(&mut self, node: &'ast $node::$ty) {
                match node {
                    $node::$ty::Verbatim(tokens) => self.tokens(tokens.clone()),
                    _ => visit::$visit(self, node),
                }
            }
        )*
    };
}

/// Visitor methods that report the `unsafe` of a node that may carry one
/// (its `unsafety` field), named `$what`, then walk the node as usual.
macro_rules! optionally_unsafe {
    ($($visit:ident($node:ident::$ty:ident, $what:literal)),* $(,)?) => {
        $(
            fn $visit(&mut self, node: &'ast $node::$ty) {
                if let Some(u) = &node.unsafety {
                    self.unsafe_keyword(u.span, $what);
                }
                visit::$visit(self, node);
            }
        )*
    };
}

/// The `*` of a glob anywhere in `tree`.
fn use_glob(tree: &syn::UseTree) -> Option<Span> {
    match tree {
        syn::UseTree::Glob(g) => Some(g.star_token.spans[0]),
        syn::UseTree::Path(p) => use_glob(&p.tree),
        syn::UseTree::Group(g) => g.items.iter().find_map(use_glob),
        syn::UseTree::Name(_) | syn::UseTree::Rename(_) => None,
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        match &attr.meta {
            syn::Meta::Path(path) => {
                if let Some(ident) = path.get_ident() {
                    self.attribute_name(ident);
                }
            }
            syn::Meta::List(list) => {
                let mut tokens: TokenStream = list
                    .path
                    .segments
                    .iter()
                    .map(|s| TokenTree::Ident(s.ident.clone()))
                    .collect();
                if list.path.segments.len() == 1 {
                    let group =
                        proc_macro2::Group::new(Delimiter::Parenthesis, list.tokens.clone());
                    tokens.extend([TokenTree::Group(group)]);
                    self.attribute_tokens(tokens);
                } else {
                    self.tokens(list.tokens.clone());
                }
            }
            syn::Meta::NameValue(nv) => {
                if let Some(ident) = nv.path.get_ident() {
                    self.attribute_name(ident);
                }
                self.visit_expr(&nv.value);
            }
        }
    }

    fn visit_expr_unsafe(&mut self, e: &'ast syn::ExprUnsafe) {
        self.unsafe_keyword(e.unsafe_token.span, "`unsafe` block");
        visit::visit_expr_unsafe(self, e);
    }

    fn visit_item_foreign_mod(&mut self, item: &'ast syn::ItemForeignMod) {
        match &item.unsafety {
            Some(u) => self.unsafe_keyword(u.span, "`unsafe extern` block"),
            None => self.unsafe_keyword(item.abi.extern_token.span, "`extern` block"),
        }
        visit::visit_item_foreign_mod(self, item);
    }

    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        self.report(
            item.extern_token.span,
            Rule::ExternCrate,
            "`extern crate`: brings in a crate the lab does not depend on".into(),
        );
        visit::visit_item_extern_crate(self, item);
    }

    fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
        self.name(&segment.ident);
        visit::visit_path_segment(self, segment);
    }

    fn visit_use_path(&mut self, u: &'ast syn::UsePath) {
        self.name(&u.ident);
        self.macro_name(&u.ident);
        if unraw(&u.ident) == "arch" {
            if let Some(star) = use_glob(&u.tree) {
                self.report(star, Rule::Asm, format!("`arch::*`: {ARCH_GLOB_WHY}"));
            }
        }
        visit::visit_use_path(self, u);
    }

    fn visit_use_name(&mut self, u: &'ast syn::UseName) {
        self.name(&u.ident);
        self.macro_name(&u.ident);
    }

    fn visit_use_rename(&mut self, u: &'ast syn::UseRename) {
        self.name(&u.ident);
        self.macro_name(&u.ident);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Some(last) = mac.path.segments.last() {
            let name = unraw(&last.ident);
            if let Some((rule, why)) = forbidden_macro(&name) {
                self.report(last.ident.span(), rule, format!("`{name}!`: {why}"));
            }
        }
        visit::visit_macro(self, mac);
        self.tokens(mac.tokens.clone());
    }

    optionally_unsafe! {
        visit_signature(syn::Signature, "`unsafe fn`"),
        visit_item_impl(syn::ItemImpl, "`unsafe impl`"),
        visit_item_trait(syn::ItemTrait, "`unsafe trait`"),
        visit_type_bare_fn(syn::TypeBareFn, "`unsafe fn` pointer"),
    }

    verbatim_tokens! {
        visit_item(syn::Item),
        visit_expr(syn::Expr),
        visit_type(syn::Type),
        visit_pat(syn::Pat),
        visit_impl_item(syn::ImplItem),
        visit_trait_item(syn::TraitItem),
        visit_foreign_item(syn::ForeignItem),
    }
}

/// Checks the text of one student file, shown as `file`, with the rules
/// in `allow` lifted. A file `syn` cannot parse (new syntax, or a plain
/// mistake the compiler will name better) is checked on its tokens alone;
/// one that is not even Rust tokens is refused, as nothing could be
/// checked.
pub fn check_source(file: &str, text: &str, allow: &[Rule]) -> Vec<Violation> {
    let mut checker = Checker {
        allow,
        found: Vec::new(),
    };
    match syn::parse_file(text) {
        Ok(ast) => checker.visit_file(&ast),
        Err(_) => match text.parse::<TokenStream>() {
            Ok(tokens) => checker.tokens(tokens),
            Err(e) => {
                let at = e.span().start();
                return vec![Violation {
                    file: file.to_owned(),
                    line: at.line,
                    column: at.column + 1,
                    rule: None,
                    reason: format!("cannot be read as Rust tokens ({e}), so it cannot be checked"),
                }];
            }
        },
    }
    let mut found: Vec<Violation> = checker
        .found
        .into_iter()
        .map(|(span, rule, reason)| {
            let at = span.start();
            Violation {
                file: file.to_owned(),
                line: at.line,
                column: at.column + 1,
                rule: Some(rule),
                reason,
            }
        })
        .collect();
    found.sort_by_key(|a| (a.line, a.column, a.rule));
    found.dedup();
    found
}

/// `path` with `.` and `..` resolved by name (not through the file
/// system: a workspace's folders may be symbolic links).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The student files a run builds: the exercise's, or with `solution`
/// the solution's copies. Absolute paths.
pub fn files_of_run(lab: &Lab, solution: bool) -> Result<Vec<PathBuf>> {
    let (dir, files) = if solution {
        (lexical(&lab.solution_dir()), lab.solution_files()?)
    } else {
        (lab.dir.clone(), lab.student_files()?)
    };
    Ok(files.iter().map(|f| dir.join(f)).collect())
}

/// A path as a student reads it: relative to the workspace root (the lab
/// folder's grandparent) when it is inside.
pub fn shown(lab: &Lab, path: &Path) -> String {
    let path = lexical(path);
    let root = lexical(&lab.dir);
    let root = root.parent().and_then(Path::parent).unwrap_or(&root);
    path.strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// Checks `files` (absolute paths) with the lab's `allow`.
pub fn check_files(lab: &Lab, files: &[PathBuf]) -> Result<Vec<Violation>> {
    let mut found = Vec::new();
    for path in files {
        let text = fs::read_to_string(path)
            .with_context(|| format!("cannot read the student file {}", path.display()))?;
        found.extend(check_source(&shown(lab, path), &text, &lab.config.allow));
    }
    Ok(found)
}

/// What [`check_run`] found.
#[derive(Debug)]
pub struct Checked {
    /// The files checked, as shown.
    pub files: Vec<String>,
    /// The rules they break.
    pub violations: Vec<Violation>,
    /// How long reading and checking took.
    pub time: Duration,
}

/// Checks the student files of a run of `lab` (see [`files_of_run`]).
pub fn check_run(lab: &Lab, solution: bool) -> Result<Checked> {
    let started = Instant::now();
    let files = files_of_run(lab, solution)?;
    let violations = check_files(lab, &files)?;
    Ok(Checked {
        files: files.iter().map(|f| shown(lab, f)).collect(),
        violations,
        time: started.elapsed(),
    })
}

/// The first lines of a rejection, for the terminal and the build log.
pub const REJECTED: &str = "a student file may not reach past itself: no unsafe, no bindings, \
     no include!/env!, no #[path], no extern crate, no std, no #![feature], no symbol or section \
     attributes, no asm! (book: For instructors, \"What a submission may change, and what it may not\")";

/// The paths of a Make-style dep-info file (`target: dep dep ...`, spaces
/// in a path escaped as `\ `), every target and dependency.
pub fn dep_info_paths(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut word = String::new();
        let mut chars = line.chars().peekable();
        let mut push = |word: &mut String| {
            let w = word.trim_end_matches(':');
            if !w.is_empty() {
                out.push(PathBuf::from(w));
            }
            word.clear();
        };
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    word.push(' ');
                    chars.next();
                }
                ' ' | '\t' => push(&mut word),
                _ => word.push(c),
            }
        }
        push(&mut word);
    }
    out.sort();
    out.dedup();
    out
}

/// A file's contents hashed for a grading workspace's list of course
/// files: `checker grade` writes it and its child runs (the same binary)
/// compare, so a build that rewrote a course file in its workspace is
/// caught. Not a cryptographic hash: the student's code cannot write files
/// (no `std`, and the sandbox), this is a second line.
pub fn file_hash(path: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fs::read(path).ok().hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Where a build may read files outside the course's tree: the Rust
/// toolchains (`core` from `rust-src`), Cargo's registry, the kernel's
/// build tree and the checker's cache.
pub fn toolchain_dirs(tc: &crate::tools::setup::Toolchain) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let env_or = |var: &str, sub: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(sub)))
    };
    let mut dirs: Vec<PathBuf> = [
        env_or("RUSTUP_HOME", ".rustup"),
        env_or("CARGO_HOME", ".cargo"),
    ]
    .into_iter()
    .flatten()
    .collect();
    dirs.extend([tc.kdir.clone(), tc.cache.clone()]);
    dirs
}

/// The sources the compiler read for a lab's build, as cargo's dep-info
/// of the lab's package lists them (`<target>/x86_64-unknown-none/kernel/
/// lib<package>.d`, see kernel-crate/kbuild/rust-module.mk): each must be
/// a student file of this run (checked by the rules above), a file the
/// build wrote (under `target`), a file of the toolchain (`outside`), or a
/// course file: never a snapshot, a solution, another lab's student file
/// (not checked for this lab), and in a grading workspace, never a file
/// missing from the list of course files it was made with. What a token
/// scan cannot see (a path built by a macro, a file left next to the
/// student's) is caught here, after the fact, on what was compiled.
pub fn check_sources(
    lab: &Lab,
    solution: bool,
    dep_info: &[PathBuf],
    target: &Path,
    outside: &[PathBuf],
) -> Result<Vec<Violation>> {
    let dir = lexical(&lab.dir);
    let root = dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(&dir)
        .to_path_buf();
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.clone());
    let target = lexical(target);
    let checked: Vec<PathBuf> = files_of_run(lab, solution)?
        .iter()
        .map(|f| lexical(f))
        .collect();
    let course = crate::spec::lab::course_labs(&root).unwrap_or_default();
    let mut forbidden: Vec<(PathBuf, &str)> = Vec::new();
    for l in course.values().filter(|l| !l.config.student.is_empty()) {
        let own = l.name == lab.name;
        let sol = lexical(&l.solution_dir());
        if sol.starts_with(lexical(&l.dir)) {
            if !(own && solution) {
                forbidden.push((sol.clone(), "a reference solution"));
            }
        } else if !(own && solution) {
            for f in l.config.student.iter().filter(|p| !p.contains('*')) {
                forbidden.push((sol.join(f), "a reference solution"));
            }
        }
        if !own {
            for f in l.student_files().unwrap_or_default() {
                forbidden.push((
                    lexical(&l.dir.join(f)),
                    "another lab's student file, not checked for this one",
                ));
            }
        }
    }
    // `path<TAB>hash` lines (a file listed without a hash is taken as is).
    let listed: Option<Vec<(String, Option<String>)>> =
        fs::read_to_string(root.join(crate::spec::lab::GRADING_WORKSPACE))
            .ok()
            .map(|t| {
                t.lines()
                    .filter(|l| !l.starts_with('#'))
                    .map(|l| match l.split_once('\t') {
                        Some((p, h)) => (p.to_owned(), Some(h.to_owned())),
                        None => (l.to_owned(), None),
                    })
                    .collect()
            });
    let mut found = Vec::new();
    for path in dep_info {
        let path = lexical(path);
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        let rel = path
            .strip_prefix(&root)
            .ok()
            .or_else(|| real.strip_prefix(&canonical_root).ok());
        let why = match rel {
            _ if path.starts_with(&target) || checked.contains(&path) => None,
            None if outside
                .iter()
                .any(|d| path.starts_with(d) || real.starts_with(d)) =>
            {
                None
            }
            None => Some("outside the course and the toolchain"),
            Some(rel) if rel.starts_with("target") => None,
            Some(rel) if rel.components().any(|c| c.as_os_str() == "expected") => {
                Some("a snapshot")
            }
            Some(rel) => {
                let abs = root.join(rel);
                match forbidden.iter().find(|(f, _)| abs.starts_with(f)) {
                    Some((_, why)) => Some(*why),
                    None => match &listed {
                        Some(list) => match list.iter().find(|(l, _)| Path::new(l) == rel) {
                            None => Some("not a course file"),
                            Some((_, Some(hash))) if *hash != file_hash(&abs) => {
                                Some("a course file changed since the workspace was made")
                            }
                            Some(_) => None,
                        },
                        None => None,
                    },
                }
            }
        };
        if let Some(why) = why {
            found.push(Violation {
                file: shown(lab, &path),
                line: 1,
                column: 1,
                rule: Some(Rule::Sources),
                reason: format!(
                    "read by the compiler, but {why}: a build reads the course's files and the \
                     student files the policy checked, nothing else"
                ),
            });
        }
    }
    if lab.config.allow.contains(&Rule::Sources) {
        found.clear();
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    #[track_caller]
    fn check_with(allow: &[Rule], text: &str, expect: Expect) {
        let found: Vec<String> = check_source("lib.rs", text, allow)
            .iter()
            .map(|v| v.to_string())
            .collect();
        expect.assert_eq(&found.join("\n"));
    }

    #[track_caller]
    fn check(text: &str, expect: Expect) {
        check_with(&[], text, expect);
    }

    #[test]
    fn safe_code_passes() {
        check(
            r#"
//! A module. It has no unsafe code; `unsafe` in a comment is fine.
#![no_std]
use kernel::prelude::*;
/// Says "unsafe" and prints it: a string is not code.
fn say() { pr_info!("unsafe {} include_str!(x) std::fs bindings\n", 1); }
#[allow(unsafe_code, unused)]
#[derive(Debug, Clone)]
#[cfg_attr(test, derive(PartialEq))]
struct S { used: bool, path: u8 }
fn f(s: S) -> bool { let env = 1; let r#unsafe = env; s.used && r#unsafe == 1 }
fn g(r#unsafe: u8) { pr_info!("{} {}\n", r#unsafe, "unsafe { bindings }"); }
/* unsafe { kernel::bindings::x() } in a block comment */
"#,
            expect![""],
        );
    }

    #[test]
    fn unsafe_block() {
        check(
            "fn f() -> u32 {\n    unsafe { g() }\n}\n",
            expect!["lib.rs:2:5: `unsafe` block: student code uses the kernel crate's safe API only [unsafe]"],
        );
    }

    #[test]
    fn unsafe_fn_impl_trait_extern() {
        check(
            "unsafe fn a() {}\nstruct S;\nunsafe impl Send for S {}\nunsafe trait T {}\n\
             impl S { unsafe fn m(&self) {} }\nunsafe extern \"C\" { fn g(); }\nextern \"C\" { fn h(); }\n\
             type F = unsafe fn();\n#[unsafe(naked)]\nfn n() {}\n",
            expect![[r#"
                lib.rs:1:1: `unsafe fn`: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:3:1: `unsafe impl`: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:4:1: `unsafe trait`: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:5:10: `unsafe fn`: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:6:1: `unsafe extern` block: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:7:1: `extern` block: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:8:10: `unsafe fn` pointer: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:9:3: `#[unsafe(...)]` attribute: student code uses the kernel crate's safe API only [unsafe]"#]],
        );
    }

    #[test]
    fn unsafe_inside_a_closure_inside_a_macro_call() {
        check(
            "fn f() {\n    pr_info!(\"{}\\n\", (|| unsafe { g() })());\n    m!{ x => { unsafe impl Send for X {} } }\n}\n",
            expect![[r#"
                lib.rs:2:26: `unsafe`: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:3:16: `unsafe`: student code uses the kernel crate's safe API only [unsafe]"#]],
        );
    }

    #[test]
    fn unsafe_in_a_macro_rules_of_the_students() {
        check(
            "macro_rules! sneak { ($e:expr) => { unsafe { $e } }; }\nfn f() { sneak!(g()); }\n",
            expect!["lib.rs:1:37: `unsafe`: student code uses the kernel crate's safe API only [unsafe]"],
        );
    }

    #[test]
    fn include_macros() {
        // Called, called by path, and renamed by `use`.
        check(
            "const A: &str = include_str!(\"../expected/02-load.txt\");\n\
             const B: &[u8] = core::include_bytes!(\"x\");\n\
             include!(\"other.rs\");\n\
             fn f() { pr_info!(\"{}\", ::std::include_str!(\"y\")); }\n\
             use core::include_str as read;\n",
            expect![[r#"
                lib.rs:1:17: `include_str!`: reads another file at build time; a student file may not reach past itself [include]
                lib.rs:2:24: `include_bytes!`: reads another file at build time; a student file may not reach past itself [include]
                lib.rs:3:1: `include!`: reads another file at build time; a student file may not reach past itself [include]
                lib.rs:4:27: `std`: kernel code has no std, and a macro must not reach files, processes or the environment [std]
                lib.rs:4:32: `include_str!`: reads another file at build time; a student file may not reach past itself [include]
                lib.rs:5:11: `include_str!`: reads another file at build time; a student file may not reach past itself [include]"#]],
        );
    }

    #[test]
    fn env_macros() {
        // Called, called by path, and renamed by `use` (in a macro too).
        check(
            "const A: &str = env!(\"HOME\");\n\
             const B: Option<&str> = option_env!(\"X\");\n\
             use core::{env as e};\n\
             macro_rules! m { () => { use core::option_env as o; }; }\n",
            expect![[r#"
                lib.rs:1:17: `env!`: reads the build's environment [env]
                lib.rs:2:25: `option_env!`: reads the build's environment [env]
                lib.rs:3:12: `env!`: reads the build's environment [env]
                lib.rs:4:36: `option_env!`: reads the build's environment [env]"#]],
        );
    }

    #[test]
    fn path_attribute() {
        check(
            "#[path = \"../expected/x.rs\"]\nmod x;\n#[cfg_attr(all(), path = \"y.rs\")]\nmod y;\n",
            expect![[r#"
                lib.rs:1:3: `#[path]`: makes a module of another file; a student file may not reach past itself [path-attribute]
                lib.rs:3:19: `#[path]`: makes a module of another file; a student file may not reach past itself [path-attribute]"#]],
        );
    }

    #[test]
    fn extern_crate() {
        check(
            "extern crate kernel as k;\nm! { extern crate alloc; }\n",
            expect![[r#"
                lib.rs:1:1: `extern crate`: brings in a crate the lab does not depend on [extern-crate]
                lib.rs:2:6: `extern crate`: brings in a crate the lab does not depend on [extern-crate]"#]],
        );
    }

    #[test]
    fn bindings_however_named() {
        check(
            "fn a() { kernel::bindings::printk(); }\nuse kernel::bindings;\nuse kernel::{bindings as b, prelude::*};\n\
             use kernel as k;\nfn c() { k::bindings::x(); }\nfn d() { pr_info!(\"{}\", k::r#bindings::X); }\n",
            expect![[r#"
                lib.rs:1:18: `bindings`: the kernel crate's raw C bindings; student code uses its safe API only [bindings]
                lib.rs:2:13: `bindings`: the kernel crate's raw C bindings; student code uses its safe API only [bindings]
                lib.rs:3:14: `bindings`: the kernel crate's raw C bindings; student code uses its safe API only [bindings]
                lib.rs:5:13: `bindings`: the kernel crate's raw C bindings; student code uses its safe API only [bindings]
                lib.rs:6:28: `bindings`: the kernel crate's raw C bindings; student code uses its safe API only [bindings]"#]],
        );
    }

    #[test]
    fn std() {
        check(
            "use std::fs;\nfn f() -> String { ::std::fs::read_to_string(\"x\").unwrap_or_default() }\nuse r#std as s;\n",
            expect![[r#"
                lib.rs:1:5: `std`: kernel code has no std, and a macro must not reach files, processes or the environment [std]
                lib.rs:2:22: `std`: kernel code has no std, and a macro must not reach files, processes or the environment [std]
                lib.rs:3:5: `std`: kernel code has no std, and a macro must not reach files, processes or the environment [std]"#]],
        );
    }

    #[test]
    fn symbol_and_section_attributes() {
        check(
            "#[no_mangle]\nfn init_module() {}\n#[export_name = \"cleanup_module\"]\nfn x() {}\n\
             #[link_section = \".modinfo\"]\n#[used]\nstatic L: [u8; 12] = *b\"license=GPL\\0\";\n\
             #[unsafe(no_mangle)]\nfn y() {}\n",
            expect![[r#"
                lib.rs:1:3: `#[no_mangle]`: names a symbol of the module, which could replace one of the kernel's [symbol-names]
                lib.rs:3:3: `#[export_name]`: names a symbol of the module, which could replace one of the kernel's [symbol-names]
                lib.rs:5:3: `#[link_section]`: places data in the module's sections, such as the .modinfo the kernel reads [link-sections]
                lib.rs:6:3: `#[used]`: places data in the module's sections, such as the .modinfo the kernel reads [link-sections]
                lib.rs:8:10: `#[no_mangle]`: names a symbol of the module, which could replace one of the kernel's [symbol-names]"#]],
        );
    }

    #[test]
    fn features() {
        check(
            "#![no_std]\n#![feature(core_intrinsics)]\n",
            expect!["lib.rs:2:4: `#[feature]`: turns on unstable compiler features; student code uses stable Rust [features]"],
        );
    }

    #[test]
    fn asm() {
        check(
            "fn f() { core::arch::asm!(\"nop\"); }\ncore::arch::global_asm!(\"\");\n",
            expect![[r#"
                lib.rs:1:22: `asm!`: inline assembly: student code uses the kernel crate's safe API only [asm]
                lib.rs:2:13: `global_asm!`: inline assembly: student code uses the kernel crate's safe API only [asm]"#]],
        );
    }

    /// What a token scan cannot see through: a forbidden macro named by
    /// a fragment, an attribute built from one, a forbidden name handed to
    /// a macro as a word, and `asm!` brought in by a glob. Each of these
    /// passed with no violation before the `opaque-macros` rule.
    #[test]
    fn macros_that_hide_what_they_expand_to() {
        check(
            "macro_rules! m { ($f:ident, $p:literal) => { $f!($p) }; }\n\
             const A: &str = m!(include_str, \"../expected/02-load.txt\");\n\
             macro_rules! a { ($m:meta) => { #[$m] mod x; }; }\n\
             a!(path = \"../solution/src/lib.rs\");\n\
             macro_rules! r { ($($m:ident)*) => { $($m)*!(\"\"); #![$($m)*] #$m }; }\n\
             use core::arch::*;\n\
             global_asm!(\"\");\n\
             use ::core::{arch::{*}};\n\
             macro_rules! u { () => { use core::arch::*; use core::arch::{x86_64::*}; }; }\n",
            expect![[r#"
                lib.rs:1:46: `$...!`: calls a macro named by a fragment (it could be `include_str` or `global_asm`); call macros by their names [opaque-macros]
                lib.rs:2:20: `include_str` passed to a macro, which could call `include_str!` by it [opaque-macros]
                lib.rs:3:34: `#[$...]`: builds an attribute from a fragment (it could be `path` or `no_mangle`); write attributes out [opaque-macros]
                lib.rs:5:38: `$...!`: calls a macro named by a fragment (it could be `include_str` or `global_asm`); call macros by their names [opaque-macros]
                lib.rs:5:53: `#[$...]`: builds an attribute from a fragment (it could be `path` or `no_mangle`); write attributes out [opaque-macros]
                lib.rs:5:62: `#$...`: builds an attribute from a fragment (it could be `path` or `no_mangle`); write attributes out [opaque-macros]
                lib.rs:6:17: `arch::*`: a glob import from `arch` brings in `asm!` and `global_asm!` without naming them [asm]
                lib.rs:7:1: `global_asm!`: inline assembly: student code uses the kernel crate's safe API only [asm]
                lib.rs:8:21: `arch::*`: a glob import from `arch` brings in `asm!` and `global_asm!` without naming them [asm]
                lib.rs:9:36: `arch::*`: a glob import from `arch` brings in `asm!` and `global_asm!` without naming them [asm]
                lib.rs:9:55: `arch::*`: a glob import from `arch` brings in `asm!` and `global_asm!` without naming them [asm]"#]],
        );
        // What macros need stays allowed: fragments as values, `$crate`
        // paths, `#[doc = $d]`, forbidden names inside strings.
        check(
            "macro_rules! m { ($d:expr, $n:ident, $e:expr) => { #[doc = $d] fn $n() -> u32 { $crate::f($e) + g!($e) } }; }\n\
             macro_rules! ne { ($a:expr, $b:expr) => { $a != $b && $($a)* != 0 }; }\n\
             m!(\"include_str env\", f, 1);\n",
            expect![""],
        );
    }

    #[test]
    fn attributes_inside_macro_tokens() {
        check(
            "fn f() -> TokenStream {\n    quote! {\n        #[unsafe(link_section = \".modinfo\")]\n        #[used]\n        static X: u8 = 0;\n    }\n}\n",
            expect![[r#"
                lib.rs:3:18: `#[link_section]`: places data in the module's sections, such as the .modinfo the kernel reads [link-sections]
                lib.rs:4:11: `#[used]`: places data in the module's sections, such as the .modinfo the kernel reads [link-sections]"#]],
        );
    }

    #[test]
    fn a_lab_may_lift_rules() {
        let text = "fn f() -> TokenStream {\n    quote! {\n        #[unsafe(link_section = \".modinfo\")]\n        #[used]\n        static X: u8 = 0;\n        unsafe { x() }\n    }\n}\n";
        check_with(
            &[Rule::LinkSections],
            text,
            expect![
                "lib.rs:6:9: `unsafe`: student code uses the kernel crate's safe API only [unsafe]"
            ],
        );
        check_with(
            &[Rule::Unsafe, Rule::Bindings],
            "fn f() { unsafe { kernel::bindings::x() } }\n",
            expect![""],
        );
    }

    #[test]
    fn include_in_a_doc_attribute() {
        check(
            "#[doc = include_str!(\"../expected/02-load.txt\")]\nfn f() {}\n",
            expect!["lib.rs:1:9: `include_str!`: reads another file at build time; a student file may not reach past itself [include]"],
        );
    }

    #[test]
    fn unparsable_files_are_checked_on_their_tokens() {
        // Not an item syn knows, but Rust tokens all the same.
        check(
            "fn f() -> { }\nunsafe { kernel::bindings::x() }\n",
            expect![[r#"
                lib.rs:2:1: `unsafe`: student code uses the kernel crate's safe API only [unsafe]
                lib.rs:2:18: `bindings`: the kernel crate's raw C bindings; student code uses its safe API only [bindings]"#]],
        );
        check("fn f() -> { }\n", expect![""]);
        check(
            "fn f() { \"never closed }\n",
            expect!["lib.rs:1:10: cannot be read as Rust tokens (cannot parse string into token stream), so it cannot be checked"],
        );
    }

    #[test]
    fn dep_info_is_read_as_make_writes_it() {
        let text = "/w/target/libx.a: /w/labs/a\\ b.rs /w/x.rs\n\n/w/x.rs:\n";
        let paths: Vec<String> = dep_info_paths(text)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(paths, ["/w/labs/a b.rs", "/w/target/libx.a", "/w/x.rs"]);
    }

    /// What the compiler read is checked against what the policy checked:
    /// a snapshot, a solution (the lab's own folder, or a driver that is a
    /// lab's solution), another lab's student file, a host file and, in a
    /// grading workspace, a file the course did not put there each fail.
    #[test]
    fn the_compiler_reads_only_course_and_checked_files() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("w");
        let toml = |extra: &str| {
            format!("title='t'\nchapter='c.md'\nmodules=['m']\nstudent=['src/lib.rs']\n{extra}[[step]]\nname='a'\nrun='true'\n")
        };
        crate::testutil::write(
            &root,
            &[
                ("labs/lab-01/lab.toml", &toml("")),
                ("labs/lab-01/src/lib.rs", "// TODO\n"),
                ("labs/lab-01/src/module.rs", "// harness\n"),
                ("labs/lab-01/src/left.rs", "// left in the folder\n"),
                ("labs/lab-01/solution/src/lib.rs", "// solution\n"),
                ("labs/lab-01/expected/01-a.txt", "a\n"),
                (
                    "labs/lab-02/lab.toml",
                    &toml("solution_dir='../../drivers/d'\n"),
                ),
                ("labs/lab-02/src/lib.rs", "// TODO\n"),
                ("drivers/d/src/lib.rs", "// driver\n"),
                ("drivers/d/src/defs.rs", "// harness\n"),
            ],
        );
        let lab = Lab::load(&root.join("labs/lab-01")).unwrap();
        let read: Vec<PathBuf> = [
            "w/labs/lab-01/src/lib.rs",
            "w/labs/lab-01/src/module.rs",
            "w/labs/lab-01/src/left.rs",
            "w/drivers/d/src/defs.rs",
            "w/target/x86_64-unknown-none/kernel/build/out/bindings.rs",
            "rustup/toolchains/x/lib/rustlib/src/rust/library/core/src/lib.rs",
            "w/labs/lab-01/src/../expected/01-a.txt",
            "w/labs/lab-01/solution/src/lib.rs",
            "w/drivers/d/src/lib.rs",
            "w/labs/lab-02/src/lib.rs",
            "etc/passwd",
        ]
        .iter()
        .map(|p| d.path().join(p))
        .collect();
        let check = |solution: bool| -> Vec<String> {
            check_sources(
                &lab,
                solution,
                &read,
                &root.join("target"),
                &[d.path().join("rustup")],
            )
            .unwrap()
            .iter()
            .map(|v| v.to_string().replace(&d.path().display().to_string(), ""))
            .collect()
        };
        expect![[r#"
            labs/lab-01/expected/01-a.txt:1:1: read by the compiler, but a snapshot: a build reads the course's files and the student files the policy checked, nothing else [sources]
            labs/lab-01/solution/src/lib.rs:1:1: read by the compiler, but a reference solution: a build reads the course's files and the student files the policy checked, nothing else [sources]
            drivers/d/src/lib.rs:1:1: read by the compiler, but a reference solution: a build reads the course's files and the student files the policy checked, nothing else [sources]
            labs/lab-02/src/lib.rs:1:1: read by the compiler, but another lab's student file, not checked for this one: a build reads the course's files and the student files the policy checked, nothing else [sources]
            /etc/passwd:1:1: read by the compiler, but outside the course and the toolchain: a build reads the course's files and the student files the policy checked, nothing else [sources]"#]]
        .assert_eq(&check(false).join("\n"));
        // The reference solution's own run reads its solution.
        assert!(!check(true)
            .iter()
            .any(|v| v.starts_with("labs/lab-01/solution")));
        // In a grading workspace, only the files it was made with.
        fs::write(
            root.join(crate::spec::lab::GRADING_WORKSPACE),
            format!(
                "# list\nlabs/lab-01/src/module.rs\t{}\ndrivers/d/src/defs.rs\t{}\n",
                file_hash(&root.join("labs/lab-01/src/module.rs")),
                file_hash(&root.join("labs/lab-01/lab.toml")),
            ),
        )
        .unwrap();
        let found = check(false);
        assert_eq!(found.len(), 7, "{found:#?}");
        assert!(
            found[1].starts_with(
                "drivers/d/src/defs.rs:1:1: read by the compiler, but a course file changed"
            ),
            "{found:#?}"
        );
        assert!(
            found[0].starts_with(
                "labs/lab-01/src/left.rs:1:1: read by the compiler, but not a course file"
            ),
            "{found:#?}"
        );
    }

    #[test]
    fn paths_are_shown_from_the_workspace_root() {
        let lab = crate::testutil::lab(
            "/w/labs/lab-08",
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\n",
        );
        assert_eq!(
            shown(
                &lab,
                Path::new("/w/labs/lab-08/../../drivers/semaphore/src/lib.rs")
            ),
            "drivers/semaphore/src/lib.rs"
        );
        assert_eq!(
            shown(&lab, Path::new("/w/labs/lab-08/src/lib.rs")),
            "labs/lab-08/src/lib.rs"
        );
        assert_eq!(shown(&lab, Path::new("/elsewhere/x.rs")), "/elsewhere/x.rs");
    }
}
