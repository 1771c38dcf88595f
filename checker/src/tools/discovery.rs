//! Where the workbook's module folders are, and which files in them are
//! built: the labs, the sample drivers, the checker's fixtures, the
//! `drivers/template` that only builds once copied. Found by their
//! `lab.toml`, without reading it: the ground floor under `spec` (which
//! reads a lab), `tools::exec` (which builds them all) and `batch`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Lab folders under `<root>/labs` that hold a `lab.toml`, sorted by name.
pub fn all_labs(root: &Path) -> Result<Vec<PathBuf>> {
    let labs = root.join("labs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&labs)
        .with_context(|| format!("cannot read {}", labs.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lab-"))
                && p.join("lab.toml").is_file()
        })
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Sample folders under `<root>/drivers` that hold a `lab.toml`, sorted by
/// name: finished drivers graded like a lab's reference solution, but
/// built with a plain `make` (they have no exercise); then the kernel
/// crate's guest tests under `<root>/kernel-crate/soundness`, which are
/// run the same way. None if neither folder exists.
pub fn all_samples(root: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs = samples_in(&root.join("drivers"))?;
    dirs.extend(samples_in(&root.join("kernel-crate/soundness"))?);
    Ok(dirs)
}

/// The folders of `parent` that hold a `lab.toml`, sorted by name.
fn samples_in(parent: &Path) -> Result<Vec<PathBuf>> {
    if !parent.is_dir() {
        return Ok(Vec::new());
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .with_context(|| format!("cannot read {}", parent.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("lab.toml").is_file() && !is_template(p))
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// What `drivers/template` says where the kernel crate's path goes.
pub const TEMPLATE_PLACEHOLDER: &str = "@KERNEL_CRATE@";

/// `drivers/template` builds only once `checker new-driver` has copied it
/// and filled in the kernel crate's path in place of
/// [`TEMPLATE_PLACEHOLDER`].
pub fn is_template(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|t| t.contains(TEMPLATE_PLACEHOLDER))
}

/// The fixture that runs last and must pass.
pub const HEALTHY: &str = "healthy";

/// Fixture folders under `<root>/checker/fixtures`, sorted, `healthy` last.
pub fn all_fixtures(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join("checker/fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("lab.toml").is_file())
        .collect();
    v.sort_by_key(|p| (p.ends_with(HEALTHY), p.clone()));
    Ok(v)
}

/// The regular files under `dir`, relative to it, `/`-separated and
/// sorted; symbolic links are neither followed nor listed. An entry whose
/// name `skip(folder, name)` refuses (`folder` relative to `dir`, empty at
/// the top) is left out, a folder with everything below it.
pub fn regular_files(dir: &Path, skip: impl Fn(&Path, &str) -> bool) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let here = dir.join(&rel);
        let entries =
            std::fs::read_dir(&here).with_context(|| format!("cannot read {}", here.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", here.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if skip(&rel, &name) {
                continue;
            }
            let path = rel.join(&name);
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                files.push(path.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Whether a file in a lab folder is Kbuild's or Cargo's output.
pub fn is_build_output(name: &str) -> bool {
    name == "target"
        || name == "modules.order"
        || name == "Module.symvers"
        || name == "kernel_helpers.c"
        || name.starts_with(".kernel-")
        || name.ends_with(".cmd")
        || [".o", ".ko", ".mod", ".mod.c", ".a", ".tmp", ".d"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_output_is_not_copied() {
        for name in [
            "hello.o",
            "hello.ko",
            ".hello.o.cmd",
            "hello.mod.c",
            "modules.order",
            ".hello.o.d",
            "target",
        ] {
            assert!(is_build_output(name), "{name}");
        }
        for name in [
            "lib.rs",
            "Kbuild",
            "Makefile",
            "lab.toml",
            "01-load.txt",
            "Cargo.toml",
        ] {
            assert!(!is_build_output(name), "{name}");
        }
    }
}
