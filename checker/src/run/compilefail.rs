//! Compile-fail steps: code that must *not* compile, and the error that
//! says why.
//!
//! A step `compile_fail = "compile-fail/guard_send.rs"` in `lab.toml`
//! names a case file in the lab folder. The checker builds the lab's crate
//! the way Kbuild always does (same target, flags and kernel headers), with
//! the case compiled in:
//!
//! ```text
//! make -C labs/<lab> KDIR=... [RUST_TARGET_DIR=...] [SOLUTION=1] COMPILE_FAIL=/abs/path/to/case.rs
//! ```
//!
//! `kernel-crate/kbuild/rust-module.mk` turns `COMPILE_FAIL` into the
//! crate's `compile-fail` feature and the `COMPILE_FAIL_CASE` variable, and
//! the lab's `lib.rs` includes the case as a module of its own:
//!
//! ```ignore
//! #[cfg(feature = "compile-fail")]
//! mod compile_fail {
//!     include!(env!("COMPILE_FAIL_CASE"));
//! }
//! ```
//!
//! so a case reaches the lab's own types through `super::`. The snapshot
//! (see [`crate::grade::snapshot::render_compile_fail`]) holds rustc's
//! errors, [normalised](normalise): the step passes when the build fails
//! with exactly those errors, and fails when the case compiles or fails
//! differently.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::run::cfcache;
use crate::spec::lab::Lab;
use crate::tools::sandbox::{Finished, Sandbox};
use crate::tools::setup::Toolchain;

/// The build of a compile-fail case: the lab's own build
/// ([`crate::tools::exec::make`], so the same kernel tree and cargo target
/// folder as its modules) with `COMPILE_FAIL` set to the case's path.
pub fn command(lab: &Lab, tc: &Toolchain, case_path: &Path, solution: bool) -> Command {
    let mut cmd = crate::tools::exec::make(&lab.dir, tc, solution);
    cmd.arg(format!("COMPILE_FAIL={}", case_path.display()));
    cmd
}

/// One compile-fail build: the lab's crate with a case compiled in.
pub struct Build<'a> {
    /// The sandbox of the lab's workspace.
    pub sandbox: &'a Sandbox,
    /// The lab.
    pub lab: &'a Lab,
    /// The kernel tree and toolchain.
    pub tc: &'a Toolchain,
    /// The case, relative to the lab folder.
    pub case: &'a str,
    /// `SOLUTION=1`.
    pub solution: bool,
}

impl Build<'_> {
    /// The case's file, canonical: what the build compiles in and the
    /// cache's key hashes.
    fn case_path(&self) -> Result<PathBuf> {
        let case_path = self.lab.dir.join(self.case);
        case_path
            .canonicalize()
            .with_context(|| format!("compile-fail case {} not found", case_path.display()))
    }

    /// What [`crate::run::cfcache`]'s key of this build covers besides
    /// the run's shared part, with the case at `case_path`.
    fn inputs<'s>(&'s self, case_path: &'s Path) -> cfcache::Inputs<'s> {
        cfcache::Inputs {
            lab_dir: &self.lab.dir,
            case: self.case,
            case_path,
            solution: self.solution,
        }
    }

    /// Builds the lab's crate with the case at `case_path` compiled in, in
    /// the sandbox (which also reads the case, wherever it is); the full
    /// output goes to `log`; with `cache`, Kbuild's compiler probes are
    /// answered from earlier builds. Returns how the build ended and its
    /// output.
    fn build(&self, case_path: &Path, log: &Path, cache: bool) -> Result<(Finished, String)> {
        let mut cmd = command(self.lab, self.tc, case_path, self.solution);
        if cache {
            let root = crate::tools::workspace::enclosing(&self.lab.dir);
            crate::tools::exec::cache_probes(&mut cmd, &root, self.tc);
        }
        cmd.env("CARGO_TERM_COLOR", "never");
        let mut sandbox = self.sandbox.clone();
        sandbox.readable.push(case_path.to_path_buf());
        let done = sandbox.run(&cmd, log)?;
        let output = fs::read_to_string(log).unwrap_or_default();
        Ok((done, output))
    }

    /// The build, or with `cache` (this run's [`cfcache::Session`]) the
    /// outcome of an earlier build whose inputs were the same (its log
    /// written to `log` again). Returns how it ended, its output and
    /// whether it came from the cache. A build is kept only if its own
    /// inputs did not change while it ran (a save in the middle of it),
    /// and the session keeps it only if the shared ones did not either.
    pub fn run_cached(
        &self,
        cache: Option<&mut cfcache::Session>,
        log: &Path,
    ) -> Result<(Finished, String, bool)> {
        let case_path = self.case_path()?;
        let Some(cache) = cache else {
            let (done, output) = self.build(&case_path, log, false)?;
            return Ok((done, output, false));
        };
        let before = cache.key(&self.inputs(&case_path));
        if let Some(key) = &before {
            if let Some((done, output)) = cache.load(key) {
                fs::write(log, &output)
                    .with_context(|| format!("cannot write {}", log.display()))?;
                return Ok((done, output, true));
            }
        }
        let (done, output) = self.build(&case_path, log, true)?;
        if let Some(before) = before {
            if cache.key(&self.inputs(&case_path)).as_ref() == Some(&before) {
                cache.keep(before, &done, &output);
            }
        }
        Ok((done, output, false))
    }
}

/// Keeps rustc's error diagnostics from a build log and makes them stable.
///
/// - Each diagnostic that starts with `error[E…]:` or `error:` is kept:
///   its message, the primary span (location, source lines, labels) and
///   the `= note`/`= help` lines under it, up to its first `note:` or
///   `help:` sub-diagnostic (they point into code around the case: a
///   student's own file, the library); warnings, Kbuild's and make's lines,
///   and the closing `error: could not compile` / `aborting` summaries are
///   dropped.
/// - `root/` (the workspace) is removed from paths; the Rust library's
///   sources (`…/lib/rustlib/src/rust/`) become `$RUST/`.
/// - Lines that name a file where rustc wrote a long type name (its name
///   holds a hash) are dropped, and trailing spaces removed.
pub fn normalise(output: &str, root: &Path) -> String {
    let root = format!("{}/", root.display());
    let mut out = String::new();
    let mut in_error = false;
    for line in output.lines() {
        let line = line.trim_end_matches('\r').trim_end();
        if line.is_empty() {
            if in_error {
                out.push('\n');
            }
            in_error = false;
            continue;
        }
        if line.starts_with("error[E") || line.starts_with("error: ") {
            in_error = !(line.starts_with("error: could not compile")
                || line.starts_with("error: aborting"));
        } else if line.starts_with("note: ") || line.starts_with("help: ") {
            // A sub-diagnostic: it points into the code around the case
            // (a student's own file, the library), which is not stable.
            in_error = false;
        }
        if !in_error || line.contains("long-type-") || line.contains("--verbose") {
            continue;
        }
        let line = line.replace(&root, "");
        let line = match line.find("/lib/rustlib/src/rust/") {
            Some(at) => {
                let start = line[..at].rfind(' ').map_or(0, |space| space + 1);
                format!(
                    "{}$RUST/{}",
                    &line[..start],
                    &line[at + "/lib/rustlib/src/rust/".len()..]
                )
            }
            None => line,
        };
        out.push_str(&line);
        out.push('\n');
    }
    // One blank line between diagnostics, none at the end.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// A compile-fail case is built against the same kernel tree and into
    /// the same cargo target folder as the lab's modules: with the debug
    /// kernel, its tree and `target/kernel-debug`, not Debian's headers.
    #[test]
    fn case_builds_against_the_toolchain_of_the_run() {
        let lab = crate::testutil::lab(
            "/w/labs/lab-05",
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\n",
        );
        let tc = Toolchain {
            abi: "debug-6.1.192-3".into(),
            kdir: "/cache/debug/src".into(),
            vmlinuz: "/cache/debug/src/bzImage".into(),
            boot_kernel: "/cache/debug/src/bzImage".into(),
            modules_dir: "/cache/debug/src".into(),
            cache: "/cache".into(),
            debug: true,
            rust_target_dir: Some("/w/target/kernel-debug".into()),
        };
        let cmd = command(
            &lab,
            &tc,
            Path::new("/w/labs/lab-05/compile-fail/x.rs"),
            true,
        );
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        expect![[r#"make -C /w/labs/lab-05 KDIR=/cache/debug/src RUST_TARGET_DIR=/w/target/kernel-debug SOLUTION=1 COMPILE_FAIL=/w/labs/lab-05/compile-fail/x.rs"#]]
            .assert_eq(&format!("make {}", args.join(" ")));
    }

    #[track_caller]
    fn check(output: &str, expect: Expect) {
        expect.assert_eq(&normalise(output, Path::new("/work/main")));
    }

    #[test]
    fn keeps_errors_drops_the_rest() {
        check(
            r#"  CARGO   /work/main/labs/lab-05/counter_rust.o
warning: unused import: `Pin`
 --> labs/lab-05/src/lib.rs:3:5
  |
3 | use core::pin::Pin;
  |     ^^^^^^^^^^^^^^
  |

error[E0277]: `*mut ()` cannot be sent between threads safely
  --> /work/main/labs/lab-05/compile-fail/guard_send.rs:12:17
   |
12 |     assert_send(counter.lock());
   |     ----------- ^^^^^^^^^^^^^^ `*mut ()` cannot be sent between threads safely
   |
   = help: within `MutexGuard<'_, u64>`, the trait `Send` is not implemented for `*mut ()`
   = note: the full name for the type has been written to '/work/main/target/x86_64-unknown-none/kernel/deps/lab_05-0123abcd.long-type-42.txt'
   = note: consider using `--verbose` to print the full type name to the console
note: required by a bound in `assert_send`
  --> /root/.rustup/toolchains/1.95-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/core/src/marker.rs:10:1

For more information about this error, try `rustc --explain E0277`.
error: could not compile `lab-05` (lib) due to 1 previous error
make[2]: *** [Makefile.build:468: counter_rust.o] Error 1
"#,
            expect![[r#"
                error[E0277]: `*mut ()` cannot be sent between threads safely
                  --> labs/lab-05/compile-fail/guard_send.rs:12:17
                   |
                12 |     assert_send(counter.lock());
                   |     ----------- ^^^^^^^^^^^^^^ `*mut ()` cannot be sent between threads safely
                   |
                   = help: within `MutexGuard<'_, u64>`, the trait `Send` is not implemented for `*mut ()`
            "#]],
        );
    }

    #[test]
    fn two_errors_and_library_paths() {
        check(
            r#"error[E0505]: cannot move out of `m` because it is borrowed
 --> /work/main/labs/lab-05/compile-fail/guard_outlives.rs:5:10
  |
5 |     drop(m);
  |          ^ move out of `m` occurs here
   ::: /root/.rustup/toolchains/x/lib/rustlib/src/rust/library/core/src/mem/mod.rs:9:1

error: aborting due to 1 previous error

error[E0616]: field `data` of struct `Lock` is private
 --> /work/main/labs/lab-05/compile-fail/data_without_guard.rs:3:13
"#,
            expect![[r#"
                error[E0505]: cannot move out of `m` because it is borrowed
                 --> labs/lab-05/compile-fail/guard_outlives.rs:5:10
                  |
                5 |     drop(m);
                  |          ^ move out of `m` occurs here
                   ::: $RUST/library/core/src/mem/mod.rs:9:1

                error[E0616]: field `data` of struct `Lock` is private
                 --> labs/lab-05/compile-fail/data_without_guard.rs:3:13
            "#]],
        );
    }

    #[test]
    fn a_case_that_compiles_has_no_errors() {
        check("  CARGO   x\n  LD [M]  counter.ko\n", expect![[""]]);
    }
}
