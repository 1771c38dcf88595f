//! `checker sizes`: the RFC's size table for the semaphore and its C twin.
//!
//! Builds `drivers/semaphore` (the Rust `rust_semaphore` and the C
//! `rust_semaphore_c`, in one Kbuild run), runs binutils' `size` on the
//! objects before modpost (`.o`) and on the loadable modules (`.ko`), and
//! prints the table in the shape of the RFC's cover letter, plus the ratio
//! of the two `.ko` totals and how many symbols each imports (after
//! checking that the Rust one imports only what it uses,
//! [`crate::tools::imports`]). The same text goes to
//! `book/src/generated/sizes.md` (not in git), which the book's semaphore
//! chapter includes: the table in the book is always measured, never typed.
//! Once `drivers/binder` exists, the Rust Binder module is measured the
//! same way against Debian's `binder_linux.ko` from the guest kernel's
//! image, into `book/src/generated/binder-sizes.md`; once `drivers/nvme`
//! exists, `rnvme.ko` against Debian's `nvme.ko` and `nvme-core.ko`, into
//! `nvme-sizes.md`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::tools::guest::Linux;
use crate::tools::setup::Toolchain;

/// The files measured, in the RFC's order, relative to `drivers/semaphore`.
pub const FILES: [&str; 4] = [
    "rust_semaphore_c.o",
    "rust_semaphore.o",
    "rust_semaphore_c.ko",
    "rust_semaphore.ko",
];

/// One line of `size` (Berkeley format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes {
    /// `text`: code and read-only data.
    pub text: u64,
    /// `data`: initialised writable data.
    pub data: u64,
    /// `bss`: zero-initialised data.
    pub bss: u64,
}

impl Sizes {
    /// `dec`: the sum.
    pub fn dec(&self) -> u64 {
        self.text + self.data + self.bss
    }
}

/// Parses the output of `size FILE` (a header line, then
/// `text data bss dec hex filename`).
pub fn parse_size(output: &str) -> Result<Sizes> {
    let line = output
        .lines()
        .nth(1)
        .context("`size` printed no line after its header")?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 {
        bail!("unexpected `size` line: {line:?}");
    }
    let num = |i: usize| -> Result<u64> {
        fields[i]
            .parse()
            .with_context(|| format!("not a number in `size` output: {line:?}"))
    };
    Ok(Sizes {
        text: num(0)?,
        data: num(1)?,
        bss: num(2)?,
    })
}

/// The column heads of every size table, as `size` prints them.
fn header() -> String {
    format!("{:>8} {:>7} {:>7} {:>8}\n\n", "text", "data", "bss", "dec")
}

/// One row of a size table: the four columns, then what was measured.
fn row(out: &mut String, s: &Sizes, name: impl std::fmt::Display) {
    let _ = writeln!(
        out,
        "{:>8} {:>7} {:>7} {:>8} {name}",
        s.text,
        s.data,
        s.bss,
        s.dec()
    );
}

/// The table: one row per file, as in the RFC, then the ratio of the `.ko`
/// totals (Rust / C).
pub fn render(rows: &[(&str, Sizes)]) -> String {
    let mut out = header();
    for (name, s) in rows {
        row(&mut out, s, format_args!("drivers/semaphore/{name}"));
    }
    let dec = |name: &str| rows.iter().find(|(n, _)| *n == name).map(|(_, s)| s.dec());
    if let (Some(rust), Some(c)) = (dec("rust_semaphore.ko"), dec("rust_semaphore_c.ko")) {
        if c > 0 {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "rust_semaphore.ko / rust_semaphore_c.ko (dec): {:.2}",
                rust as f64 / c as f64
            );
        }
    }
    out
}

/// Builds the two modules for `tc`'s kernel, measures them, prints the
/// table and writes it to `book/src/generated/sizes.md` under `root`
/// (`sizes-<series>.md` for a series other than the host's).
pub fn run(root: &Path, tc: &Toolchain, other: Option<Linux>) -> Result<String> {
    let dir = root.join("drivers").join("semaphore");
    crate::tools::exec::build_quietly(&dir, tc)?;
    let mut rows = Vec::new();
    for name in FILES {
        rows.push((name, measure(&dir.join(name))?));
    }
    let mut table = render(&rows);
    // Each symbol a module imports costs a `__versions` entry (64 bytes),
    // and the check fails if the Rust one imports what it does not use.
    crate::tools::imports::check_dir(&dir)?;
    let count =
        |ko: &str| -> Result<usize> { Ok(crate::tools::imports::undefined(&dir.join(ko))?.len()) };
    let _ = writeln!(
        table,
        "imported symbols: rust_semaphore.ko {}, rust_semaphore_c.ko {}",
        count("rust_semaphore.ko")?,
        count("rust_semaphore_c.ko")?
    );
    write_generated(root, "sizes", other, &table)?;
    Ok(table)
}

/// `book/src/generated/<stem>.md` under `root`, or `<stem>-<series>.md`
/// for a table measured on a guest series other than the host's.
pub fn generated_path(root: &Path, stem: &str, other: Option<Linux>) -> PathBuf {
    let file = match other {
        Some(series) => format!("{stem}-{}.md", series.arg()),
        None => format!("{stem}.md"),
    };
    root.join("book/src/generated").join(file)
}

/// Writes `table` to [`generated_path`], for the book to include. The
/// host's tables are made again whenever the book is built (`make book`
/// depends on `make sizes`) and are not in git; another series' tables
/// are committed, so the header says how to make them again.
fn write_generated(root: &Path, stem: &str, other: Option<Linux>, table: &str) -> Result<()> {
    let path = generated_path(root, stem, other);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let origin = match other {
        Some(series) => format!(
            "Generated by `make sizes GUEST={}` (checker/src/commands/sizes.rs); committed: run it again after a change",
            series.arg()
        ),
        None => "Generated by `make sizes` (checker/src/commands/sizes.rs); not in git".into(),
    };
    fs::write(&path, format!("<!-- {origin}. -->\n```text\n{table}```\n"))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Runs binutils' `size` on `path`.
fn measure(path: &Path) -> Result<Sizes> {
    parse_size(&crate::tools::exec::binutils("size", &[path.as_os_str()])?)
}

/// The Binder table: the Rust module against Debian's C `binder_linux.ko`
/// (`c_name` says which), then the Rust/C ratios of text and of the total.
pub fn render_binder(rust: &Sizes, c: &Sizes, c_name: &str) -> String {
    render_against(
        (rust, "drivers/binder/rust_binder.ko"),
        &[(c, c_name)],
        "rust_binder.ko / binder_linux.ko",
    )
}

/// A Rust driver's module against the C modules that do its job: one row
/// each (and their total when there are several), then the Rust/C ratios
/// of text and of the total, labelled `ratio`.
pub fn render_against(rust: (&Sizes, &str), c: &[(&Sizes, &str)], ratio: &str) -> String {
    let mut out = header();
    let total = Sizes {
        text: c.iter().map(|(s, _)| s.text).sum(),
        data: c.iter().map(|(s, _)| s.data).sum(),
        bss: c.iter().map(|(s, _)| s.bss).sum(),
    };
    let mut rows = vec![rust];
    rows.extend(c.iter().copied());
    if c.len() > 1 {
        rows.push((&total, "C total"));
    }
    for (s, name) in rows {
        row(&mut out, s, name);
    }
    if total.text > 0 && total.dec() > 0 {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{ratio}: text {:.2}, dec {:.2}",
            rust.0.text as f64 / total.text as f64,
            rust.0.dec() as f64 / total.dec() as f64
        );
    }
    out
}

/// The ABI folder's name of `tc`'s kernel (`6.1.0-57-amd64`).
fn abi(tc: &Toolchain) -> String {
    (tc.modules_dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// When the Rust NVMe driver is in the tree (`drivers/nvme/Kbuild`):
/// builds it, measures `rnvme.ko` against the guest kernel's `nvme.ko`
/// and `nvme-core.ko` (the PCI driver and the core it needs; the CRC
/// modules they pull in are left out), and writes
/// `book/src/generated/nvme-sizes.md`.
pub fn nvme(root: &Path, tc: &Toolchain, other: Option<Linux>) -> Result<Option<String>> {
    if !root.join("drivers/nvme/Kbuild").is_file() {
        return Ok(None);
    }
    let dir = crate::commands::nvmebench::build(root, tc)?;
    let rust = measure(&dir.join("rnvme.ko"))?;
    let host = tc.modules_dir.join("kernel/drivers/nvme/host");
    let nvme = measure(&host.join("nvme.ko"))?;
    let core = measure(&host.join("nvme-core.ko"))?;
    let abi = abi(tc);
    let table = render_against(
        (&rust, "drivers/nvme/rnvme.ko"),
        &[
            (&nvme, &format!("nvme.ko (Debian {abi})")),
            (&core, &format!("nvme-core.ko (Debian {abi})")),
        ],
        "rnvme.ko / (nvme.ko + nvme-core.ko)",
    );
    write_generated(root, "nvme-sizes", other, &table)?;
    Ok(Some(table))
}

/// When the Rust Binder driver is in the tree (`drivers/binder/Kbuild`):
/// builds it, measures it against the guest kernel's `binder_linux.ko`
/// (under `modules_dir`), and writes `book/src/generated/binder-sizes.md`.
pub fn binder(root: &Path, tc: &Toolchain, other: Option<Linux>) -> Result<Option<String>> {
    if !root.join("drivers/binder/Kbuild").is_file() {
        return Ok(None);
    }
    let dir = crate::commands::binderbench::build(root, tc)?;
    let rust = measure(&dir.join("rust_binder.ko"))?;
    let c_path = tc
        .modules_dir
        .join("kernel/drivers/android/binder_linux.ko");
    let c = measure(&c_path)?;
    let abi = abi(tc);
    let table = render_binder(&rust, &c, &format!("binder_linux.ko (Debian {abi})"));
    write_generated(root, "binder-sizes", other, &table)?;
    Ok(Some(table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn another_series_tables_sit_beside_the_hosts() {
        let root = Path::new("/w");
        assert_eq!(
            generated_path(root, "sizes", None),
            Path::new("/w/book/src/generated/sizes.md")
        );
        assert_eq!(
            generated_path(root, "nvme-sizes", Some(Linux::V6_12)),
            Path::new("/w/book/src/generated/nvme-sizes-6.12.md")
        );
    }

    #[test]
    fn parses_and_renders() {
        let c_o = parse_size("   text\t   data\t    bss\t    dec\t    hex\tfilename\n   2224\t      0\t     16\t   2240\t    8c0\tx.o\n").unwrap();
        let rows = [
            ("rust_semaphore_c.o", c_o),
            (
                "rust_semaphore.o",
                Sizes {
                    text: 3694,
                    data: 0,
                    bss: 10,
                },
            ),
            (
                "rust_semaphore_c.ko",
                Sizes {
                    text: 2367,
                    data: 768,
                    bss: 16,
                },
            ),
            (
                "rust_semaphore.ko",
                Sizes {
                    text: 3829,
                    data: 768,
                    bss: 10,
                },
            ),
        ];
        expect![[r#"
                text    data     bss      dec

                2224       0      16     2240 drivers/semaphore/rust_semaphore_c.o
                3694       0      10     3704 drivers/semaphore/rust_semaphore.o
                2367     768      16     3151 drivers/semaphore/rust_semaphore_c.ko
                3829     768      10     4607 drivers/semaphore/rust_semaphore.ko

            rust_semaphore.ko / rust_semaphore_c.ko (dec): 1.46
        "#]]
        .assert_eq(&render(&rows));
        expect![[r#"
                text    data     bss      dec

               92818       0       0    92818 drivers/binder/rust_binder.ko
               80554   12365       0    92919 binder_linux.ko (C)

            rust_binder.ko / binder_linux.ko: text 1.15, dec 1.00
        "#]]
        .assert_eq(&render_binder(
            &Sizes {
                text: 92818,
                data: 0,
                bss: 0,
            },
            &Sizes {
                text: 80554,
                data: 12365,
                bss: 0,
            },
            "binder_linux.ko (C)",
        ));
        let size = |text, data, bss| Sizes { text, data, bss };
        expect![[r#"
                text    data     bss      dec

               30000     500      40    30540 drivers/nvme/rnvme.ko
               49019    1000       8    50027 nvme.ko
              120721    2000      16   122737 nvme-core.ko
              169740    3000      24   172764 C total

            rnvme.ko / (nvme.ko + nvme-core.ko): text 0.18, dec 0.18
        "#]]
        .assert_eq(&render_against(
            (&size(30000, 500, 40), "drivers/nvme/rnvme.ko"),
            &[
                (&size(49019, 1000, 8), "nvme.ko"),
                (&size(120721, 2000, 16), "nvme-core.ko"),
            ],
            "rnvme.ko / (nvme.ko + nvme-core.ko)",
        ));
        assert!(parse_size("header only\n").is_err());
        assert!(parse_size("h\n1 2\n").is_err());
    }
}
