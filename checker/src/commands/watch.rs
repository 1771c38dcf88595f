//! `checker watch lab-NN`: grades the lab, then again every time one of
//! its sources is saved, like rustlings' `watch`.
//!
//! Every 500 ms it looks at the modification times of the lab folder's
//! files (build output left out); when one changed and the file has been
//! quiet for a poll, it grades the lab again, in this process, as
//! `checker lab` does. Ctrl-C stops it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Result};

use crate::report::terminal::Terminal;
use crate::run::{self, LabRequest};
use crate::tools::discovery::is_build_output;
use crate::tools::workspace;

/// How often the sources are looked at.
pub const POLL: Duration = Duration::from_millis(500);

/// `checker watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// Lab name, e.g. lab-01.
    pub lab: String,
    /// Watch the reference solution instead.
    #[arg(long)]
    pub solution: bool,
}

/// Modification times of every source file under `dir`.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, SystemTime> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_build_output(&name) || name.starts_with('.') || name == "expected" {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(e.path());
            } else if let Ok(t) = meta.modified() {
                out.insert(e.path(), t);
            }
        }
    }
    out
}

/// The files that differ between two snapshots.
pub fn changed(
    a: &BTreeMap<PathBuf, SystemTime>,
    b: &BTreeMap<PathBuf, SystemTime>,
) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = a
        .iter()
        .filter(|(p, t)| b.get(*p) != Some(t))
        .map(|(p, _)| p.clone())
        .chain(b.keys().filter(|p| !a.contains_key(*p)).cloned())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// `checker watch`.
pub fn run(args: &WatchArgs) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    let dir = root.join("labs").join(&args.lab);
    if !dir.join("lab.toml").is_file() {
        bail!("no lab {:?} ({} has no lab.toml)", args.lab, dir.display());
    }
    let request = LabRequest {
        name: args.lab.clone(),
        solution: args.solution,
        saved_guest: true,
        ..LabRequest::default()
    };
    // A run that fails to start (say, the set-up) is reported as
    // `checker lab` reports it, and the next save is graded again.
    let grade = || match run::run_request(&request, &mut Terminal::stdout()) {
        Err(e) if !crate::outcome::is_interrupted(&e) => eprintln!("checker: error: {e:#}"),
        _ => {}
    };
    let mut seen = snapshot(&dir);
    grade();
    loop {
        println!(
            "\nwatching {} for changes (Ctrl-C to stop)",
            dir.strip_prefix(&root).unwrap_or(&dir).display()
        );
        loop {
            std::thread::sleep(POLL);
            if vm::interrupted() {
                return Ok(true);
            }
            let now = snapshot(&dir);
            let files = changed(&seen, &now);
            if files.is_empty() {
                continue;
            }
            // Let an editor finish writing.
            std::thread::sleep(POLL);
            seen = snapshot(&dir);
            let names: Vec<String> = files
                .iter()
                .map(|p| p.strip_prefix(&dir).unwrap_or(p).display().to_string())
                .collect();
            println!("\nchanged: {}", names.join(", "));
            break;
        }
        grade();
        if vm::interrupted() {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_edits_and_new_files_not_build_output() {
        let d = crate::testutil::tree(&[("src/lib.rs", "a")]);
        let a = snapshot(d.path());
        crate::testutil::write(d.path(), &[("hello.o", "x"), (".hello.o.cmd", "x")]);
        assert!(changed(&a, &snapshot(d.path())).is_empty());
        fs::write(d.path().join("src/new.rs"), "b").unwrap();
        let b = snapshot(d.path());
        assert_eq!(changed(&a, &b), [d.path().join("src/new.rs")]);
        let f = fs::File::options()
            .write(true)
            .open(d.path().join("src/lib.rs"))
            .unwrap();
        f.set_modified(SystemTime::now() + Duration::from_secs(5))
            .unwrap();
        assert_eq!(
            changed(&b, &snapshot(d.path())),
            [d.path().join("src/lib.rs")]
        );
    }
}
