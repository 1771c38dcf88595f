//! `make` for a module folder: the one way the checker calls Kbuild, with
//! the kernel tree (`KDIR`) and the cargo target folder (`RUST_TARGET_DIR`)
//! of a [`Toolchain`]. Lab builds, compile-fail steps, `checker clippy`
//! ([`crate::commands::clippy`]), the API
//! reference and the size table all build through [`make`], so with
//! `--kernel debug` every one of them builds against the debug tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::tools::discovery;
use crate::tools::setup::Toolchain;

/// `make -C <dir> KDIR=<tree> [RUST_TARGET_DIR=<dir>] [SOLUTION=1]` for
/// `tc`: the module folder's exercise, or with `solution` its reference
/// solution.
pub fn make(dir: &Path, tc: &Toolchain, solution: bool) -> Command {
    make_in(dir, &tc.kdir, tc.rust_target_dir.as_deref(), solution)
}

/// Has `cmd`, a [`make`] in the workspace `root`, answer Kbuild's compiler
/// probes from the answers of earlier builds for `tc`, kept in its cargo
/// target folder (`kernel-crate/kbuild/probes.mk`): `checker lab` and
/// `watch` only, never grading, where a submission's build could write
/// answers for the next.
pub fn cache_probes(cmd: &mut Command, root: &Path, tc: &Toolchain) {
    let dir = cargo_target_dir(root, tc).join("kbuild-probes");
    cmd.arg(format!("KBUILD_PROBE_CACHE={}", dir.display()));
}

/// The cargo target folder of the modules `tc` builds in the workspace
/// `root`: its `RUST_TARGET_DIR` (relative to `root`), else `root/target`.
pub fn cargo_target_dir(root: &Path, tc: &Toolchain) -> PathBuf {
    match &tc.rust_target_dir {
        Some(t) => root.join(t),
        None => root.join("target"),
    }
}

/// Where those modules' Rust objects and dep-info go: the `kernel`
/// profile's folder for the bare-metal target in [`cargo_target_dir`].
pub fn kernel_profile_dir(root: &Path, tc: &Toolchain) -> PathBuf {
    cargo_target_dir(root, tc)
        .join(crate::tools::probe::RUST_TARGET)
        .join("kernel")
}

/// [`make`] with the tree and target folder given one by one.
pub fn make_in(dir: &Path, kdir: &Path, rust_target_dir: Option<&Path>, solution: bool) -> Command {
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(dir)
        .arg(format!("KDIR={}", kdir.display()));
    // The debug kernel's modules get their own cargo target folder.
    if let Some(target) = rust_target_dir {
        cmd.arg(format!("RUST_TARGET_DIR={}", target.display()));
    }
    if solution {
        cmd.arg("SOLUTION=1");
    }
    cmd
}

/// Builds the module in `dir` for `tc`'s kernel, output discarded; an
/// error says how to see why it failed.
pub fn build_quietly(dir: &Path, tc: &Toolchain) -> Result<()> {
    let status = make(dir, tc, false)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("cannot run make")?;
    if !status.success() {
        bail!(
            "building {} failed: run `make -C {}` to see why",
            dir.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Every Kbuild folder of the workbook, and whether its reference
/// solution is the one to build: each lab (its solution), each sample
/// driver, each Rust fixture (`make kernel-clippy`, `make clean`).
pub fn module_folders(root: &Path) -> Result<Vec<(PathBuf, bool)>> {
    let mut v: Vec<(PathBuf, bool)> = discovery::all_labs(root)?
        .into_iter()
        .map(|d| (d, true))
        .collect();
    v.extend(
        discovery::all_samples(root)?
            .into_iter()
            .map(|d| (d, false)),
    );
    v.extend(
        discovery::all_fixtures(root)?
            .into_iter()
            .filter(|d| d.join("Cargo.toml").is_file())
            .map(|d| (d, false)),
    );
    Ok(v)
}

/// Runs the binutils program `tool` with `args` and returns what it
/// printed; an error names the command and what it wrote to stderr.
pub fn binutils(tool: &str, args: &[&std::ffi::OsStr]) -> Result<String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {tool}: install binutils (`make setup`)"))?;
    if !out.status.success() {
        let shown: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
        bail!(
            "{tool} {} failed: {}",
            shown.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `checker clean`: `make clean` in every folder of [`module_folders`],
/// against Debian's headers (what `make clean` needs of the tree is the
/// same for both kernels).
pub fn clean(root: &Path) -> Result<()> {
    let kdir = crate::tools::guest::host_kdir()?;
    for (dir, _) in module_folders(root)? {
        let status = make_in(&dir, &kdir, None, false)
            .args(["--no-print-directory", "-s", "clean"])
            .stdin(Stdio::null())
            .status()
            .context("cannot run make")?;
        if !status.success() {
            bail!("make clean failed in {}", dir.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_passes_the_tree_and_target_folder() {
        let args = |c: &Command| -> Vec<String> {
            c.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let debug = make_in(
            Path::new("labs/lab-04"),
            Path::new("/cache/debug/src"),
            Some(Path::new("target/kernel-debug")),
            true,
        );
        assert_eq!(
            args(&debug),
            [
                "-C",
                "labs/lab-04",
                "KDIR=/cache/debug/src",
                "RUST_TARGET_DIR=target/kernel-debug",
                "SOLUTION=1"
            ]
        );
        let debian = make_in(Path::new("d"), Path::new("/usr/src/h"), None, false);
        assert_eq!(args(&debian), ["-C", "d", "KDIR=/usr/src/h"]);
    }

    #[test]
    fn every_module_folder() {
        let root = crate::tools::workspace::root().unwrap();
        let folders: Vec<String> = module_folders(&root)
            .unwrap()
            .iter()
            .map(|(d, s)| format!("{} {s}", d.strip_prefix(&root).unwrap().display()))
            .collect();
        for want in [
            "labs/lab-01 true",
            "drivers/chardev false",
            "checker/fixtures/rust-use-after-free false",
        ] {
            assert!(folders.iter().any(|f| f == want), "{want} in {folders:?}");
        }
        // C fixtures have no clippy to run; the template is no driver yet.
        assert!(!folders
            .iter()
            .any(|f| f.starts_with("checker/fixtures/oops-init")));
        assert!(!folders.iter().any(|f| f.starts_with("drivers/template")));
    }
}
