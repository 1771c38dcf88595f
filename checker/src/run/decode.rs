//! A crash excerpt's module frames, decoded to source lines.
//!
//! The kernel names a code address in a module as `function+0xOFF/0xLEN
//! [module]`: the function's symbol, the offset into it and its length.
//! The module's `.ko` is a relocatable object: every function sits in a
//! section of its own (`.text.NAME`, Rust's and Kbuild's function sections)
//! at offset 0, so "the address" of a line is an offset into a section.
//! [`annotate`] does what a person does by hand (book/src/debug-kernel.md,
//! "Reading an Oops"): `readelf -s` gives the symbol's section and value,
//! and binutils' `addr2line -j SECTION -f -i` turns `value + OFF` into the
//! file and line, with the functions inlined there. The Rust code's line
//! tables come from the `kernel` profile's `debug = "line-tables-only"`
//! (Cargo.toml); the C helpers' from Debian's `-g`.
//!
//! A frame of the call trace is a return address: the instruction after
//! the call. Its line is looked up at `OFF - 1`, inside the call, as gdb
//! does; the faulting frame (`RIP:`, a KASAN headline) is exact.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A code address in a module, as a console line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The symbol (mangled, as the module's symbol table has it).
    pub function: String,
    /// The offset into it.
    pub offset: u64,
    /// The module (its name as `lsmod` prints it).
    pub module: String,
    /// A return address (a call trace's frame), not the faulting
    /// instruction (`RIP:`, a KASAN headline).
    pub return_address: bool,
}

impl Frame {
    /// The offset whose line is the frame's: inside the call for a
    /// return address.
    fn lookup_offset(&self) -> u64 {
        if self.return_address {
            self.offset.saturating_sub(1)
        } else {
            self.offset
        }
    }
}

/// The module frame a console line names, if any: a call trace's
/// ` fx_init+0x12/0x30 [fx_oops]` (or `? ...`, a stale guess the kernel
/// marks), `RIP: 0010:fx_init+0x12/0x30 [fx_oops]`, or a KASAN headline's
/// `... in fx_init+0x98/0x1000 [fx_uaf]`.
pub fn frame(line: &str) -> Option<Frame> {
    let line = vm::console::strip_prefix(line);
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| is_module_tag(w))?;
    let word = *words.get(at.checked_sub(1)?)?;
    // `RIP: 0010:function+...`: the code segment comes first.
    let (faulting, word) = match word.split_once(':') {
        Some((cs, rest)) if words.first() == Some(&"RIP:") && is_hex(cs) => (true, rest),
        _ => (words.first() == Some(&"BUG:"), word),
    };
    let (function, place) = word.rsplit_once('+')?;
    let (offset, length) = place.split_once('/')?;
    let offset = hex(offset)?;
    hex(length)?;
    if function.is_empty() || !function.chars().all(symbol_char) {
        return None;
    }
    let module = &words[at][1..words[at].len() - 1];
    Some(Frame {
        function: function.to_owned(),
        offset,
        module: module.to_owned(),
        return_address: !faulting,
    })
}

/// `[module]`: a module's name in brackets.
fn is_module_tag(word: &str) -> bool {
    let Some(name) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn symbol_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// `0x1f` as a number.
fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

/// One source line of a decoded frame: innermost inlined function first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// The function (demangled).
    pub function: String,
    /// `file:line`, relative to the workspace when it is in it.
    pub place: String,
}

/// The functions of a `.ko`: symbol name → (section name, value).
pub struct Symbols {
    ko: PathBuf,
    symbols: HashMap<String, (String, u64)>,
}

impl Symbols {
    /// Reads `ko`'s symbol and section tables with `readelf`; `None` when
    /// it cannot be read.
    pub fn read(ko: &Path) -> Option<Symbols> {
        let sections = readelf(ko, "-SW")?;
        let sections: HashMap<&str, &str> = sections
            .lines()
            .filter_map(|l| {
                let (nr, rest) = l.trim_start().strip_prefix('[')?.split_once(']')?;
                Some((nr.trim(), rest.split_whitespace().next()?))
            })
            .collect();
        let table = readelf(ko, "-sW")?;
        let mut symbols = HashMap::new();
        for l in table.lines() {
            // Num: Value Size Type Bind Vis Ndx Name
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 || f[3] != "FUNC" {
                continue;
            }
            let (Ok(value), Some(section)) = (u64::from_str_radix(f[1], 16), sections.get(f[6]))
            else {
                continue;
            };
            symbols.insert(f[7].to_owned(), ((*section).to_owned(), value));
        }
        Some(Symbols {
            ko: ko.to_path_buf(),
            symbols,
        })
    }

    /// `frame`'s source lines (innermost first), shown relative to `root`;
    /// empty when the symbol is not the module's or has no line table.
    pub fn lines(&self, frame: &Frame, root: &Path) -> Vec<SourceLine> {
        let Some((section, value)) = self.symbols.get(&frame.function) else {
            return Vec::new();
        };
        let Ok(out) = Command::new("addr2line")
            .arg("-e")
            .arg(&self.ko)
            .args(["-j", section, "-f", "-i", "-C"])
            .arg(format!("{:#x}", value + frame.lookup_offset()))
            .output()
        else {
            return Vec::new();
        };
        if !out.status.success() {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        lines
            .chunks_exact(2)
            .filter(|p| !p[1].starts_with("??"))
            .map(|p| SourceLine {
                function: p[0].to_owned(),
                place: relative(p[1], root),
            })
            .collect()
    }
}

fn readelf(ko: &Path, what: &str) -> Option<String> {
    let out = Command::new("readelf").arg(what).arg(ko).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `/root/ws/labs/lab-01/src/lib.rs:17 (discriminator 2)` as
/// `labs/lab-01/src/lib.rs:17`, and a file of `core` as
/// `library/core/src/...`.
fn relative(place: &str, root: &Path) -> String {
    let place = place.split(" (discriminator").next().unwrap_or(place);
    // The standard library's sources, wherever rustup keeps them.
    if let Some((_, lib)) = place.split_once("/lib/rustlib/src/rust/") {
        return lib.to_owned();
    }
    let root = format!("{}/", root.display());
    place.strip_prefix(&root).unwrap_or(place).to_owned()
}

/// How many of a frame's source lines [`annotate`] shows.
const INLINED_SHOWN: usize = 4;

/// `excerpt` with, after each line that names a frame in one of
/// `modules` (name, `.ko`), the frame's source lines:
///
/// ```text
/// [    2.6]  init_module+0x1d/0x50 [fx_rust_panic]
///            -> checker/fixtures/rust-panic-init/src/lib.rs:35 (fx_rust_panic::init)
/// ```
///
/// A module whose `.ko` is missing or unreadable is left as it is.
pub fn annotate(excerpt: &str, modules: &[(String, PathBuf)], root: &Path) -> String {
    let mut tables: HashMap<&str, Option<Symbols>> = HashMap::new();
    let mut out = String::new();
    for line in excerpt.lines() {
        out += line;
        out.push('\n');
        let Some(f) = frame(line) else { continue };
        let Some((name, ko)) = modules.iter().find(|(m, _)| *m == f.module) else {
            continue;
        };
        let Some(symbols) = tables.entry(name).or_insert_with(|| Symbols::read(ko)) else {
            continue;
        };
        // Innermost first; each next one is where the one before was
        // inlined. Four say where; a long chain of the kernel crate's
        // generics says little more.
        let lines = symbols.lines(&f, root);
        for (i, s) in lines.iter().take(INLINED_SHOWN).enumerate() {
            let how = if i == 0 { "->" } else { "  inlined at" };
            out += &format!("           {how} {} ({})\n", s.place, s.function);
        }
        if lines.len() > INLINED_SHOWN {
            out += &format!(
                "           ({} more inlined)\n",
                lines.len() - INLINED_SHOWN
            );
        }
    }
    out.truncate(out.trim_end_matches('\n').len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real console: `checker/fixtures/rust-panic-init` on Debian 12's
    /// 6.1 (a Rust panic, then `BUG()`'s oops).
    const PANIC_6_1: &str = include_str!("../../fixtures/rust-panic-init/console-6.1.txt");

    fn frames(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(frame)
            .map(|f| {
                let how = if f.return_address { "ret" } else { "at" };
                format!("{how} {}+{:#x} [{}]", f.function, f.offset, f.module)
            })
            .collect()
    }

    #[test]
    fn the_module_frames_of_a_real_rust_panic() {
        let got = frames(PANIC_6_1);
        expect_test::expect![[r#"
            [
                "at rust_helper_BUG+0x5 [fx_rust_panic]",
                "ret _RNvCsfLfy6EI15iL_7___rustc17rust_begin_unwind+0x3d [fx_rust_panic]",
                "ret _RNvCsfLfy6EI15iL_7___rustc17rust_begin_unwind+0x40 [fx_rust_panic]",
                "ret _RNvNtCskDG87YZkpjZ_4core9panicking9panic_fmt+0x2b [fx_rust_panic]",
                "ret _RNvNtCskDG87YZkpjZ_4core9panicking18panic_bounds_check+0x47 [fx_rust_panic]",
                "ret _RNvNtNtCskDG87YZkpjZ_4core5slice5index16slice_index_fail+0xe0 [fx_rust_panic]",
                "ret _RNvNtNtCskDG87YZkpjZ_4core5slice5index16slice_index_fail+0xe0 [fx_rust_panic]",
                "ret _RNvCs3eIcx30hh40_23fixture_rust_panic_init7letters+0x1d [fx_rust_panic]",
                "ret init_module+0x77 [fx_rust_panic]",
                "at rust_helper_BUG+0x5 [fx_rust_panic]",
            ]
        "#]]
        .assert_debug_eq(&got);
    }

    #[test]
    fn frames_in_other_words() {
        let got = frames(
            "[   9.1] BUG: KASAN: use-after-free in fx_init+0x98/0x1000 [fx_uaf]\n\
             [   9.2] RIP: 0010:fx_init+0x12/0x30 [fx_oops]\n\
             <4>[   9.3]  ? fx_read+0x1/0x2 [fx-dash]\n\
             fx_open+0x10/0x20 [fx]\n\
             do_one_initcall+0x59/0x220\n\
             Modules linked in: fx_oops(OE+) [last unloaded: fx]\n\
             fx: said fx_init+0x12/0x30 [fx] was here\n\
             evil+0xzz/0x30 [fx]\n\
             evil+0x1/0x30 [fx/../x]\n\
             ev il+0x1/0x30 []\n",
        );
        expect_test::expect![[r#"
            [
                "at fx_init+0x98 [fx_uaf]",
                "at fx_init+0x12 [fx_oops]",
                "ret fx_read+0x1 [fx-dash]",
                "ret fx_open+0x10 [fx]",
                "ret fx_init+0x12 [fx]",
            ]
        "#]]
        .assert_debug_eq(&got);
    }

    /// A relocatable object with line tables and function sections, as a
    /// `.ko` is: `fault` at line 3 of `tiny.c`, `caller` calling it at
    /// line 6 and reading `sink` at line 7.
    fn tiny_object(dir: &Path) -> PathBuf {
        let src = dir.join("tiny.c");
        std::fs::write(
            &src,
            "int sink;\n\
             __attribute__((noipa)) int fault(int *p)\n\
             { return *p + 1; }\n\
             int caller(int *p)\n\
             {\n\
             \tfault(p);\n\
             \treturn sink;\n\
             }\n",
        )
        .unwrap();
        let obj = dir.join("tiny.ko");
        let ok = Command::new("cc")
            .args(["-g", "-O1", "-ffunction-sections", "-c", "-o"])
            .arg(&obj)
            .arg(&src)
            .status()
            .unwrap()
            .success();
        assert!(ok, "cc failed");
        obj
    }

    #[test]
    fn annotates_module_frames_with_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let ko = tiny_object(dir.path());
        let excerpt = "[ 1.0] RIP: 0010:fault+0x0/0x10 [tiny]\n\
                       [ 1.1]  other+0x1/0x10 [other]\n\
                       [ 1.2]  nothere+0x1/0x10 [tiny]\n\
                       [ 1.3]  do_one_initcall+0x59/0x220";
        let modules = vec![("tiny".to_owned(), ko)];
        let got = annotate(excerpt, &modules, dir.path());
        expect_test::expect![[r#"
            [ 1.0] RIP: 0010:fault+0x0/0x10 [tiny]
                       -> tiny.c:3 (fault)
            [ 1.1]  other+0x1/0x10 [other]
            [ 1.2]  nothere+0x1/0x10 [tiny]
            [ 1.3]  do_one_initcall+0x59/0x220"#]]
        .assert_eq(&got);
        // No module file: the excerpt as it was.
        let gone = vec![("tiny".to_owned(), dir.path().join("gone.ko"))];
        assert_eq!(annotate(excerpt, &gone, dir.path()), excerpt);
    }

    #[test]
    fn a_return_address_is_looked_up_inside_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let ko = tiny_object(dir.path());
        let symbols = Symbols::read(&ko).unwrap();
        // The instruction after the call (the return address) reads
        // `sink`: line 7 or 8 (gcc says 8). As a return address, it is the
        // call's line 6.
        let disasm = Command::new("objdump")
            .args(["-d", "--section=.text.caller"])
            .arg(&ko)
            .output()
            .unwrap();
        let disasm = String::from_utf8_lossy(&disasm.stdout).into_owned();
        let call = disasm
            .lines()
            .position(|l| l.contains("\tcall"))
            .expect("caller calls fault");
        let after: Vec<&str> = disasm.lines().skip(call + 1).collect();
        let ret = after
            .iter()
            .find_map(|l| u64::from_str_radix(l.trim().split(':').next()?, 16).ok())
            .unwrap_or(0);
        let f = |return_address| Frame {
            function: "caller".into(),
            offset: ret,
            module: "tiny".into(),
            return_address,
        };
        let place = |r| symbols.lines(&f(r), dir.path())[0].place.clone();
        assert_ne!(place(false), "tiny.c:6", "{disasm}");
        assert_eq!(place(true), "tiny.c:6", "{disasm}");
    }
}
