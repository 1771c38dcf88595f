//! Programs the checker itself puts into the guest, next to the lab's own:
//! `failnth` (`vm/failnth.c`), which runs a step's `failslab` sweep. The
//! source is compiled into the checker, so a submission cannot change it,
//! and built with the host's `gcc -static` once per version of the source.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The source of `failnth`.
const FAILNTH_SOURCE: &str = include_str!("../../vm/failnth.c");

/// The name `failnth` has in the guest: `/lab/failnth`.
pub const FAILNTH: &str = "failnth";

/// Where the checker's guest tools are built.
fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/checker/guest-tools")
}

/// The static `failnth` binary, built first if this version of the source
/// has not been built yet. Safe to call from parallel runs: each builds
/// under a name of its own and renames the result into place.
pub fn failnth() -> Result<PathBuf> {
    let mut hasher = DefaultHasher::new();
    FAILNTH_SOURCE.hash(&mut hasher);
    let dir = tools_dir();
    let binary = dir.join(format!("failnth-{:016x}", hasher.finish()));
    if binary.is_file() {
        return Ok(binary);
    }
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let unique = format!("{}.{}", binary.display(), std::process::id());
    let source = PathBuf::from(format!("{unique}.c"));
    fs::write(&source, FAILNTH_SOURCE)?;
    let out = Command::new("gcc")
        .args(["-static", "-O2", "-Wall", "-o"])
        .arg(&unique)
        .arg(&source)
        .output()
        .context("cannot run gcc (make setup installs it)")?;
    let _ = fs::remove_file(&source);
    if !out.status.success() {
        bail!(
            "gcc could not build the guest tool failnth (vm/failnth.c):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    fs::rename(&unique, &binary)?;
    Ok(binary)
}
