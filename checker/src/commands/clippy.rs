//! `checker clippy`: every module folder of the workbook built with
//! clippy, and what each built module imports checked.

use std::path::Path;
use std::process::Stdio;

use anyhow::{bail, Context, Result};

use crate::tools::exec::{make, module_folders};
use crate::tools::imports;
use crate::tools::setup::Toolchain;

/// `checker clippy`: builds every folder of [`module_folders`] with
/// clippy, warnings denied (`CLIPPY=1`), and checks that each module
/// built imports only what it uses ([`crate::tools::imports`]); stops at
/// the first that fails.
pub fn run(root: &Path, tc: &Toolchain) -> Result<()> {
    for (dir, solution) in module_folders(root)? {
        let shown = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        println!(
            "clippy: {shown}{}",
            if solution { " (solution)" } else { "" }
        );
        let status = make(&dir, tc, solution)
            .args(["--no-print-directory", "-s", "CLIPPY=1"])
            .stdin(Stdio::null())
            .status()
            .context("cannot run make")?;
        if !status.success() {
            bail!("clippy: {shown} failed");
        }
        // The modules just built import only what their Rust code uses.
        for m in imports::check_dir(&dir)? {
            println!("imports: {shown}/{} {}", m.name, m.imports);
        }
    }
    Ok(())
}
