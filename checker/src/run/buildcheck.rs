//! The allocation build check: no module may contain a path that turns an
//! allocation failure into a panic.
//!
//! The kernel crate allocates only through fallible calls that return
//! `ENOMEM` (see `kernel-crate/src/alloc/`), and modules are built without
//! Rust's `alloc` crate. This check makes sure it stays that way: after a
//! successful build, [`check_modules`] lists every symbol of each `.ko`
//! with `nm` (defined and undefined, local ones too, since LTO makes most
//! symbols local) and fails the build if one of them belongs to an
//! allocation-failure path ([`RULES`]): `handle_alloc_error`, the global
//! allocator's entry points and error handler, `capacity_overflow`, or
//! anything else of the `alloc` crate. `nm -C` gives the demangled name for
//! the message.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

/// One symbol of a module: its raw (mangled) name and its demangled name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// The name in the symbol table.
    pub raw: String,
    /// The name as `nm -C` prints it (the raw name if it is not mangled).
    pub demangled: String,
}

/// A forbidden symbol and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForbiddenSymbol {
    /// The symbol, demangled.
    pub symbol: String,
    /// Why it is forbidden.
    pub why: &'static str,
}

/// What a rule looks for in a symbol name.
#[derive(Debug, Clone, Copy)]
pub enum Pattern {
    /// The raw or the demangled name contains this text.
    Contains(&'static str),
    /// The demangled name has a path in this crate: `name::` (or `name[`,
    /// a crate hash) at the start of a path, not after another `::`.
    Crate(&'static str),
}

/// A forbidden-symbol rule.
#[derive(Debug, Clone, Copy)]
pub struct SymbolRule {
    /// What to look for.
    pub pattern: Pattern,
    /// Why a module must not contain it.
    pub why: &'static str,
}

/// The rules, most specific first: a symbol is reported with the first rule
/// it matches.
pub const RULES: &[SymbolRule] = &[
    SymbolRule {
        pattern: Pattern::Contains("handle_alloc_error"),
        why: "the `alloc` crate's reaction to a failed allocation: it panics \
              instead of returning ENOMEM",
    },
    SymbolRule {
        pattern: Pattern::Contains("alloc_error_handler"),
        why: "the global allocation-failure handler: it panics instead of \
              returning ENOMEM",
    },
    SymbolRule {
        pattern: Pattern::Contains("__rdl_oom"),
        why: "the default allocation-failure handler: it panics instead of \
              returning ENOMEM",
    },
    SymbolRule {
        pattern: Pattern::Contains("__rg_oom"),
        why: "an `#[alloc_error_handler]`: allocation failures end in it \
              instead of returning ENOMEM",
    },
    SymbolRule {
        pattern: Pattern::Contains("capacity_overflow"),
        why: "panics when a collection's size overflows, instead of \
              returning ENOMEM",
    },
    SymbolRule {
        pattern: Pattern::Contains("__rust_alloc"),
        why: "the global allocator's entry point: the `alloc` crate's \
              infallible API (Box::new, Vec::push, format!) allocates \
              through it and panics when it fails",
    },
    SymbolRule {
        pattern: Pattern::Contains("__rust_realloc"),
        why: "the global allocator's entry point: the `alloc` crate's \
              infallible API allocates through it and panics when it fails",
    },
    SymbolRule {
        pattern: Pattern::Contains("__rust_dealloc"),
        why: "the global allocator's entry point: a sign that the `alloc` \
              crate, whose API allocates infallibly, is linked in",
    },
    SymbolRule {
        pattern: Pattern::Contains("__rdl_"),
        why: "the default global allocator of the `alloc` crate, whose API \
              allocates infallibly",
    },
    SymbolRule {
        pattern: Pattern::Crate("alloc"),
        why: "code of Rust's `alloc` crate, whose collections allocate \
              infallibly (a failure panics); use kernel::alloc (KBox, KVec, \
              KString), which returns ENOMEM",
    },
];

impl Pattern {
    fn matches(self, symbol: &Symbol) -> bool {
        match self {
            Pattern::Contains(text) => symbol.raw.contains(text) || symbol.demangled.contains(text),
            Pattern::Crate(name) => has_crate_path(&symbol.demangled, name),
        }
    }
}

/// Whether `name` appears in `demangled` as the first segment of a path:
/// `alloc::vec::Vec` or `<alloc::…` or `alloc[1234abcd]::…`, but not
/// `kernel::alloc::KVec` or `my_alloc::x`.
fn has_crate_path(demangled: &str, name: &str) -> bool {
    let bytes = demangled.as_bytes();
    demangled.match_indices(name).any(|(at, _)| {
        let before_ok = at == 0 || {
            let b = bytes[at - 1];
            !(b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        };
        let rest = &demangled[at + name.len()..];
        before_ok && (rest.starts_with("::") || rest.starts_with('['))
    })
}

/// The forbidden symbols among `symbols`, each reported once.
pub fn check_symbols(symbols: &[Symbol]) -> Vec<ForbiddenSymbol> {
    let mut found: Vec<ForbiddenSymbol> = Vec::new();
    // Section symbols (`.text.unlikely.<name>`) repeat a function's name.
    for symbol in symbols.iter().filter(|s| !s.raw.starts_with('.')) {
        if let Some(rule) = RULES.iter().find(|r| r.pattern.matches(symbol)) {
            if !found.iter().any(|v| v.symbol == symbol.demangled) {
                found.push(ForbiddenSymbol {
                    symbol: symbol.demangled.clone(),
                    why: rule.why,
                });
            }
        }
    }
    found
}

/// The symbol names of one line of `nm` output: `ADDRESS TYPE NAME`, with
/// blanks for the address of an undefined symbol. Names may contain spaces
/// once demangled.
fn nm_name(line: &str) -> Option<&str> {
    let (_, rest) = line.split_at_checked(17)?;
    let (_kind, name) = rest.split_at_checked(2)?;
    (!name.is_empty()).then_some(name)
}

/// Parses the output of `nm -p -a` and `nm -p -a -C` on the same file
/// (same order) into symbols. If the two do not line up, the raw names are
/// used as demangled ones too.
pub fn parse_nm(raw: &str, demangled: &str) -> Vec<Symbol> {
    let raw: Vec<&str> = raw.lines().filter_map(nm_name).collect();
    let demangled: Vec<&str> = demangled.lines().filter_map(nm_name).collect();
    if raw.len() == demangled.len() {
        raw.iter()
            .zip(&demangled)
            .map(|(r, d)| Symbol {
                raw: (*r).to_owned(),
                demangled: (*d).to_owned(),
            })
            .collect()
    } else {
        raw.iter()
            .map(|r| Symbol {
                raw: (*r).to_owned(),
                demangled: (*r).to_owned(),
            })
            .collect()
    }
}

fn run_nm(ko: &Path, demangle: bool) -> Result<String> {
    // `-p`: symbol-table order, so that both listings line up.
    let mut args = vec![OsStr::new("-p"), OsStr::new("-a")];
    if demangle {
        args.push(OsStr::new("-C"));
    }
    args.push(ko.as_os_str());
    crate::tools::exec::binutils("nm", &args)
}

/// The forbidden symbols of one module file.
pub fn check_module(ko: &Path) -> Result<Vec<ForbiddenSymbol>> {
    let raw = run_nm(ko, false)?;
    let demangled = run_nm(ko, true)?;
    Ok(check_symbols(&parse_nm(&raw, &demangled)))
}

/// The report for a module with forbidden symbols.
pub fn report(ko: &str, violations: &[ForbiddenSymbol]) -> String {
    let mut s = format!(
        "error: {ko} contains an allocation-failure panic path \
         (allocations must fail with ENOMEM, never panic):\n"
    );
    for v in violations {
        let _ = writeln!(s, "  {}\n      {}", v.symbol, v.why);
    }
    s
}

/// Checks `<dir>/<module>.ko` for every module; appends a report for each
/// offending module to `log`. Returns whether every module is clean.
pub fn check_modules(dir: &Path, modules: &[String], log: &Path) -> Result<bool> {
    let mut clean = true;
    let mut text = String::new();
    let missing = missing_endbr(&fs::read_to_string(log).unwrap_or_default());
    if missing > 0 {
        clean = false;
        let _ = writeln!(
            text,
            "checker: objtool found {missing} address-taken functions without ENDBR64: \
             the kernel has indirect branch tracking (CONFIG_X86_KERNEL_IBT), and an \
             indirect call to one of them faults on a CPU with IBT; the Rust code must be \
             built with -Zcf-protection=branch (kernel-crate/kbuild/rust-module.mk)"
        );
    }
    for m in modules {
        let name = format!("{m}.ko");
        let violations = check_module(&dir.join(&name))?;
        if !violations.is_empty() {
            clean = false;
            text.push_str(&report(&name, &violations));
        }
    }
    if !clean {
        let mut old = fs::read_to_string(log).unwrap_or_default();
        old.push_str(&text);
        fs::write(log, old).with_context(|| format!("cannot write {}", log.display()))?;
    }
    Ok(clean)
}

/// How many of objtool's warnings in a build log say that code takes the
/// address of a function that does not start with ENDBR64 (built without
/// `-Zcf-protection=branch` for a kernel with IBT).
pub fn missing_endbr(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("objtool:") && l.contains("relocation to !ENDBR"))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect_file;

    fn symbols(names: &[(&str, &str)]) -> Vec<Symbol> {
        names
            .iter()
            .map(|(raw, demangled)| Symbol {
                raw: (*raw).to_owned(),
                demangled: (*demangled).to_owned(),
            })
            .collect()
    }

    fn rendered(symbols: &[Symbol]) -> String {
        report("m.ko", &check_symbols(symbols))
    }

    #[test]
    fn objtool_warnings_of_missing_endbr_are_counted() {
        let log = "  RUSTC   rust_semaphore.o\n\
            rust_semaphore.o: warning: objtool: .rodata..Lanon.1+0x0: data relocation to !ENDBR: read+0x0\n\
            rust_semaphore.o: warning: objtool: .rodata..Lanon.1+0x8: data relocation to !ENDBR: write+0x0\n\
            m.o: warning: objtool: f()+0x1c: unreachable instruction\n";
        assert_eq!(missing_endbr(log), 2);
        assert_eq!(missing_endbr("  LD [M]  m.ko\n"), 0);
    }

    #[test]
    fn clean_module() {
        let clean = symbols(&[
            ("krealloc", "krealloc"),
            ("kfree", "kfree"),
            ("init_module", "init_module"),
            (
                "_RNvMNtNtCs1_6kernel5alloc4kvecINtB2_4KVecmE4push",
                "<kernel::alloc::kvec::KVec<u64>>::push",
            ),
            (
                "_RNvNtCs1_6kernel5alloc16live_allocations",
                "kernel::alloc::live_allocations",
            ),
            ("_RNvCs1_9my_alloc3foo", "my_alloc::foo"),
            ("__rust_probestack", "__rust_probestack"),
            ("realloc_helper", "realloc_helper"),
        ]);
        assert_eq!(check_symbols(&clean), vec![]);
    }

    #[test]
    fn alloc_crate_module() {
        // What a module that uses `alloc::vec::Vec` links (v0 and legacy
        // mangling), local and undefined symbols alike.
        let bad = symbols(&[
            ("krealloc", "krealloc"),
            (
                "_RNvNtCs8_5alloc5alloc18handle_alloc_error",
                "alloc::alloc::handle_alloc_error",
            ),
            (
                "_ZN5alloc7raw_vec17capacity_overflow17h0123456789abcdefE",
                "alloc::raw_vec::capacity_overflow",
            ),
            ("__rust_alloc", "__rust_alloc"),
            ("__rust_alloc_zeroed", "__rust_alloc_zeroed"),
            ("__rust_alloc_error_handler", "__rust_alloc_error_handler"),
            ("__rdl_oom", "__rdl_oom"),
            (
                "_RNvCsf_7___rustc26___rust_alloc_error_handler",
                "__rustc::__rust_alloc_error_handler",
            ),
            (
                ".text.unlikely._RNvNtCs8_5alloc5alloc18handle_alloc_error",
                ".text.unlikely._RNvNtCs8_5alloc5alloc18handle_alloc_error",
            ),
            (
                "_RNvMs_NtCs8_5alloc7raw_vecINtB4_6RawVecpE4grow",
                "<alloc::raw_vec::RawVec<u64>>::grow",
            ),
            (
                "_RNvNtCs8_5alloc7raw_vec12handle_error",
                "alloc[9a8b7c6d5e4f3a2b]::raw_vec::handle_error",
            ),
            (
                "_RINvNtCs1_4core3ptr13drop_in_placeINtNtCs8_5alloc3vec3VecmEEB4_",
                "core::ptr::drop_in_place::<alloc::vec::Vec<u64>>",
            ),
        ]);
        // The book's allocator chapter includes this snapshot.
        expect_file!["../../tests/snapshots/buildcheck-alloc.txt"].assert_eq(&rendered(&bad));
    }

    #[test]
    fn crate_paths() {
        assert!(has_crate_path("alloc::vec::Vec", "alloc"));
        assert!(has_crate_path("<alloc::string::String as x>::f", "alloc"));
        assert!(has_crate_path("f::<&alloc::vec::Vec<u8>>", "alloc"));
        assert!(has_crate_path("alloc[abc]::x", "alloc"));
        assert!(!has_crate_path("kernel::alloc::KBox", "alloc"));
        assert!(!has_crate_path("<kernel::alloc::KVec<u8>>::push", "alloc"));
        assert!(!has_crate_path("my_alloc::x", "alloc"));
        assert!(!has_crate_path("alloc", "alloc"));
        assert!(!has_crate_path("allocate::x", "alloc"));
    }

    #[test]
    fn nm_parsing() {
        let raw = "\
0000000000000000 t _RNvNtCs8_5alloc5alloc18handle_alloc_error
                 U krealloc
0000000000000010 T init_module
0000000000000000 a growvec.mod.c
";
        let demangled = "\
0000000000000000 t alloc::alloc::handle_alloc_error
                 U krealloc
0000000000000010 T init_module
0000000000000000 a growvec.mod.c
";
        let symbols = parse_nm(raw, demangled);
        assert_eq!(symbols.len(), 4);
        assert_eq!(symbols[0].demangled, "alloc::alloc::handle_alloc_error");
        assert_eq!(symbols[1].raw, "krealloc");
        // Listings that do not line up: raw names only.
        let fallback = parse_nm(raw, "");
        assert_eq!(fallback[0].demangled, fallback[0].raw);
        assert_eq!(check_symbols(&fallback).len(), 1);
    }
}
