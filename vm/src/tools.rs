//! Programs the checker itself puts into the guest, next to the lab's own:
//! for a `failslab` step, `guest/failslab.sh` and the `failnth` program it
//! runs (`guest/failnth.c`). Both are compiled into the checker, so a
//! submission cannot change them; `failnth` is built with the host's
//! `gcc -static` once per version of its source.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{bail, Context as _, Result};

use crate::channel::shell_quote;
use crate::guest::{Program, Source};

/// The source of `failnth`.
const FAILNTH_SOURCE: &str = include_str!("../guest/failnth.c");

/// The name `failnth` has in the guest: `/lab/failnth`.
pub const FAILNTH: &str = "failnth";

/// The guest script of a `failslab` step, `/lab/failslab.sh`.
pub const FAILSLAB_SCRIPT: &str = include_str!("../guest/failslab.sh");

/// The guest command of a `failslab` step: `failslab.sh` loads `module`
/// from `path` with `params`, once per allocation call of its init from
/// call `first` on, every `every`-th call, that call failing.
pub fn failslab_command(first: u32, every: u32, module: &str, path: &str, params: &str) -> String {
    format!(
        "sh /lab/failslab.sh {first} {every} {module} {} {}",
        shell_quote(path),
        shell_quote(params)
    )
}

/// The programs a `failslab` step needs in the guest (`failnth` built first
/// when this version of its source has not been built yet).
pub fn failslab_programs() -> Result<Vec<Program>> {
    Ok(vec![
        Program {
            name: FAILNTH.into(),
            source: Source::Path(failnth()?),
        },
        Program {
            name: "failslab.sh".into(),
            source: Source::Text(FAILSLAB_SCRIPT),
        },
    ])
}

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
            Guest,
            "gcc could not build the guest tool failnth (vm/guest/failnth.c):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    fs::rename(&unique, &binary)?;
    Ok(binary)
}
