//! `checker new-driver DIR`: a driver in a repository of its own, from
//! `drivers/template/`: the template is copied to DIR with the path of this
//! workbook's kernel crate filled in (`@KERNEL_CRATE@` in its `Cargo.toml`
//! and `Makefile`), and the workbook's `Cargo.lock`, so the new workspace
//! starts from the crate versions the workbook is tested with. `checker lab
//! DIR` then builds and grades it like a lab.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};

pub use crate::tools::discovery::TEMPLATE_PLACEHOLDER as PLACEHOLDER;

/// The files of the template that name the kernel crate.
const FILLED: &[&str] = &["Cargo.toml", "Makefile"];

/// Copies `<root>/drivers/template` to `dest`, which must not exist or be
/// empty, filling in `<root>/kernel-crate`.
pub fn create(root: &Path, dest: &Path) -> Result<()> {
    if dest.exists()
        && fs::read_dir(dest)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!("{} already exists and is not empty", dest.display());
    }
    let template = root.join("drivers/template");
    let kernel_crate = root.join("kernel-crate");
    let kernel_crate = kernel_crate
        .canonicalize()
        .with_context(|| format!("no kernel crate at {}", kernel_crate.display()))?;
    copy_tree(&template, dest)?;
    for name in FILLED {
        let path = dest.join(name);
        let text =
            fs::read_to_string(&path).with_context(|| format!("the template has no {name}"))?;
        if !text.contains(PLACEHOLDER) {
            bail!("the template's {name} has no {PLACEHOLDER}");
        }
        fs::write(&path, fill(&text, &kernel_crate.display().to_string()))?;
    }
    fs::copy(root.join("Cargo.lock"), dest.join("Cargo.lock")).context("cannot copy Cargo.lock")?;
    Ok(())
}

/// `text` with every placeholder replaced by `kernel_crate`.
pub fn fill(text: &str, kernel_crate: &str) -> String {
    text.replace(PLACEHOLDER, kernel_crate)
}

/// Copies the template's sources: no build products, no `target/`.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let built = name.starts_with('.')
            || name == "target"
            || name == "Cargo.lock"
            || [".o", ".ko", ".mod", ".mod.c", ".cmd", ".order", ".symvers"]
                .iter()
                .any(|ext| name.ends_with(ext))
            || name == "kernel_helpers.c";
        if built {
            continue;
        }
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to.join(&name))?;
        } else {
            fs::copy(entry.path(), to.join(&name))
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_placeholder() {
        assert_eq!(
            fill(
                "a = \"@KERNEL_CRATE@\"\nb ?= @KERNEL_CRATE@\n",
                "/w/kernel-crate"
            ),
            "a = \"/w/kernel-crate\"\nb ?= /w/kernel-crate\n"
        );
    }

    #[test]
    fn copies_the_template_with_the_path_filled_in() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf();
        let tmp = tempfile::tempdir().expect("tempdir");
        let dest = tmp.path().join("my-driver");
        create(&root, &dest).expect("create");
        let cargo = fs::read_to_string(dest.join("Cargo.toml")).expect("Cargo.toml");
        assert!(!cargo.contains(PLACEHOLDER));
        assert!(cargo.contains(&format!(
            "path = \"{}\"",
            root.join("kernel-crate")
                .canonicalize()
                .expect("kernel crate")
                .display()
        )));
        for f in [
            "Kbuild",
            "Makefile",
            "lab.toml",
            "src/lib.rs",
            "Cargo.lock",
            "rust-toolchain.toml",
        ] {
            assert!(dest.join(f).is_file(), "{f} missing");
        }
        // A second time into the same, now non-empty, folder is refused.
        assert!(create(&root, &dest).is_err());
    }
}
