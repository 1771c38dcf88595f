//! `checker doc` (`make doc`): the API reference of the `kernel` and
//! `module-macro` crates, in `target/api/`, which `make book` publishes
//! as the book's `api/` folder.
//!
//! The kernel crate's bindings come from the kernel headers with the flags
//! Kbuild uses, so a Kbuild build runs first (lab 01's solution, against
//! the set-up's headers): it records those flags in `target/kbuild-flags`,
//! where the crate's build script finds them when rustdoc builds it outside
//! Kbuild (see `kernel-crate/build.rs`). rustdoc runs with warnings denied:
//! a broken intra-doc link fails `make test`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::spec::lab::Lab;
use crate::tools::setup::Toolchain;

/// Builds the reference into `<root>/target/api` and returns that folder.
pub fn build(root: &Path, tc: &Toolchain) -> Result<PathBuf> {
    let started = Instant::now();
    let lab = Lab::load(&root.join("labs/lab-01"))?;
    println!("doc: Kbuild build of lab-01 (records the bindings' flags) ...");
    run(
        crate::tools::exec::make(&lab.dir, tc, true).arg("-s"),
        "make -C labs/lab-01 SOLUTION=1",
    )?;
    println!("doc: rustdoc kernel (x86_64-unknown-none) and module-macro ...");
    let rustdoc = |args: &[&str]| {
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root)
            .args(["doc", "--quiet", "--no-deps"])
            .args(args)
            .env("RUSTDOCFLAGS", "-D warnings");
        run(&mut cmd, &format!("cargo doc {}", args.join(" ")))
    };
    rustdoc(&["--package", "kernel", "--target", "x86_64-unknown-none"])?;
    rustdoc(&["--package", "module-macro"])?;

    // One folder: the kernel target's docs, plus the proc-macro crate's
    // (documented for the host) and the static files both pages use.
    let target = root.join("target");
    let api = target.join("api");
    let _ = fs::remove_dir_all(&api);
    copy_dir(&target.join("x86_64-unknown-none/doc"), &api)?;
    copy_dir(&target.join("doc/module_macro"), &api.join("module_macro"))?;
    copy_dir(&target.join("doc/static.files"), &api.join("static.files"))?;
    if !api.join("kernel/index.html").is_file() || !api.join("module_macro/index.html").is_file() {
        bail!("rustdoc produced no index page in {}", api.display());
    }
    println!(
        "doc: {} ({:.1} s)",
        api.join("kernel/index.html").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(api)
}

/// Copies `from` into `to` recursively; files already in `to` are kept
/// when they exist in both (rustdoc's static files are named by hash).
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else if !dest.exists() {
            fs::copy(entry.path(), &dest)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed:\n{}{}",
            vm::console::tail(&String::from_utf8_lossy(&out.stdout), 20),
            vm::console::tail(&String::from_utf8_lossy(&out.stderr), 40)
        );
    }
    Ok(())
}
