//! Finding the workspace root (the folder with `Cargo.toml` and `labs/`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// Walks up from the current directory to the first folder holding both
/// `Cargo.toml` and `labs/`; falls back to the parent of this crate's
/// manifest directory (as compiled) when run from elsewhere.
pub fn root() -> Result<PathBuf> {
    if let Ok(cwd) = std::env::current_dir() {
        if let Some(found) = cwd.ancestors().find(|d| is_root(d)) {
            return Ok(found.to_path_buf());
        }
    }
    let fallback = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if is_root(&fallback) {
        return Ok(fallback.canonicalize().unwrap_or(fallback));
    }
    bail!("cannot find the project root (a folder with Cargo.toml and labs/); run the checker inside the project")
}

/// The source tree this checker was compiled from (the parent of its
/// crate folder): what the checker's own tests read, wherever they run.
pub fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("checker/ has a parent")
        .to_path_buf()
}

/// The workspace `dir` is in: its nearest ancestor holding `Cargo.toml`
/// and `labs/` (a lab folder's checkout, or a student's graded
/// workspace), else `dir` itself (a driver with a workspace of its own).
pub fn enclosing(dir: &Path) -> PathBuf {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|d| is_root(d))
        .unwrap_or(&dir)
        .to_path_buf()
}

fn is_root(dir: &Path) -> bool {
    dir.join("Cargo.toml").is_file() && dir.join("labs").is_dir()
}
