//! The lab description, `labs/<lab>/lab.toml`.
//!
//! ```toml
//! title = "Your first module"
//! chapter = "first-module.md"   # book chapter under book/src, shown by `checker lab`
//! modules = ["hello"]           # hello.ko, built in the lab folder, copied to /lab/ in the guest
//! smp = 1                       # optional: guest CPUs (default 1)
//! timeout = 60                  # optional: seconds for the whole guest run (default 60)
//!
//! [[step]]
//! name = "load"                 # [a-z0-9_-]+, used in the snapshot file name
//! run = "insmod /lab/hello.ko"  # one busybox `sh -c` command line run in the guest
//!
//! [[step]]
//! name = "unload"
//! run = "rmmod hello"
//! ```
//!
//! Unknown keys are errors. Each step `N` (1-based) is compared with
//! `labs/<lab>/expected/NN-<name>.txt` (see [`crate::snapshot`]).
//!
//! The lab folder's `Makefile` builds the modules: the checker runs
//! `make -C labs/<lab> KDIR=/usr/src/linux-headers-<abi>` (plus
//! `SOLUTION=1` for the reference solution) and expects `<module>.ko` in the
//! lab folder afterwards. The kernel log lines kept for comparison are those
//! that start with `<module>:` for one of `modules` (plus crash lines).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

/// Default time limit of a guest run, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// A parsed `lab.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LabConfig {
    /// Human title of the lab.
    pub title: String,
    /// Book chapter file under `book/src`.
    pub chapter: String,
    /// Module names (without `.ko`) the build produces in the lab folder.
    pub modules: Vec<String>,
    /// Guest CPUs.
    #[serde(default)]
    pub smp: Option<u32>,
    /// Time limit of the whole guest run, in seconds.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// The steps, in order.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

/// One step: a command run in the guest, then graded.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Short name, `[a-z0-9_-]+`.
    pub name: String,
    /// Shell command line run by busybox `sh -c` in the guest.
    pub run: String,
}

impl Step {
    /// The snapshot file name of step `index` (0-based): `NN-name.txt`.
    pub fn expected_file_name(&self, index: usize) -> String {
        format!("{:02}-{}.txt", index + 1, self.name)
    }
}

/// A lab: its folder and its parsed description.
#[derive(Debug, Clone)]
pub struct Lab {
    /// Lab name, the folder's name (`lab-01`).
    pub name: String,
    /// The lab folder.
    pub dir: PathBuf,
    /// The parsed `lab.toml`.
    pub config: LabConfig,
}

impl Lab {
    /// Loads `<dir>/lab.toml`.
    pub fn load(dir: &Path) -> Result<Lab> {
        let file = dir.join("lab.toml");
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let config = parse(&text).with_context(|| format!("invalid {}", file.display()))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "lab".into());
        Ok(Lab {
            name,
            dir: dir.to_path_buf(),
            config,
        })
    }

    /// The expected snapshot of step `index` (0-based).
    pub fn expected_path(&self, index: usize) -> PathBuf {
        self.dir
            .join("expected")
            .join(self.config.steps[index].expected_file_name(index))
    }
}

/// Parses and validates the text of a `lab.toml`.
pub fn parse(text: &str) -> Result<LabConfig> {
    let config: LabConfig = toml::from_str(text)?;
    validate(&config)?;
    Ok(config)
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn validate(c: &LabConfig) -> Result<()> {
    if c.modules.is_empty() {
        bail!("`modules` must name at least one module");
    }
    for m in &c.modules {
        if !is_name(m) {
            bail!("module name {m:?} must be [a-z0-9_-]+ (no path, no .ko)");
        }
    }
    if c.steps.is_empty() {
        bail!("a lab needs at least one [[step]]");
    }
    for (i, s) in c.steps.iter().enumerate() {
        if !is_name(&s.name) {
            bail!("step {}: name {:?} must be [a-z0-9_-]+", i + 1, s.name);
        }
        if s.run.trim().is_empty() {
            bail!("step {} ({}): `run` is empty", i + 1, s.name);
        }
        if s.run.contains('\n') {
            bail!(
                "step {} ({}): `run` must be one line (use ; or && to chain)",
                i + 1,
                s.name
            );
        }
    }
    if c.smp == Some(0) {
        bail!("`smp` must be at least 1");
    }
    if c.timeout == Some(0) {
        bail!("`timeout` must be at least 1 second");
    }
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(input: &str, expect: Expect) {
        let actual = match parse(input) {
            Ok(c) => format!("{c:#?}"),
            Err(e) => format!("error: {e:#}"),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn full_lab() {
        check(
            r#"
title = "Your first module"
chapter = "first-module.md"
modules = ["hello"]
smp = 2
timeout = 30

[[step]]
name = "load"
run = "insmod /lab/hello.ko"

[[step]]
name = "unload"
run = "rmmod hello"
"#,
            expect![[r#"
                LabConfig {
                    title: "Your first module",
                    chapter: "first-module.md",
                    modules: [
                        "hello",
                    ],
                    smp: Some(
                        2,
                    ),
                    timeout: Some(
                        30,
                    ),
                    steps: [
                        Step {
                            name: "load",
                            run: "insmod /lab/hello.ko",
                        },
                        Step {
                            name: "unload",
                            run: "rmmod hello",
                        },
                    ],
                }"#]],
        );
    }

    #[test]
    fn optional_fields_default() {
        let c = parse("title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\n")
            .unwrap();
        assert_eq!((c.smp, c.timeout), (None, None));
        assert_eq!(c.steps[0].expected_file_name(0), "01-a.txt");
        assert_eq!(c.steps[0].expected_file_name(11), "12-a.txt");
    }

    #[test]
    fn unknown_key() {
        check(
            "title='t'\nchapter='c.md'\nmodules=['m']\nmemory=1\n[[step]]\nname='a'\nrun='true'\n",
            expect![[r#"
                error: TOML parse error at line 4, column 1
                  |
                4 | memory=1
                  | ^^^^^^
                unknown field `memory`, expected one of `title`, `chapter`, `modules`, `smp`, `timeout`, `step`
            "#]],
        );
    }

    #[test]
    fn unknown_step_key() {
        check(
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\nexpect='x'\n",
            expect![[r#"
                error: TOML parse error at line 7, column 1
                  |
                7 | expect='x'
                  | ^^^^^^
                unknown field `expect`, expected `name` or `run`
            "#]],
        );
    }

    #[test]
    fn missing_field() {
        check(
            "title='t'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\n",
            expect![[r#"
                error: TOML parse error at line 1, column 1
                  |
                1 | title='t'
                  | ^^^^^^^^^
                missing field `chapter`
            "#]],
        );
        check(
            "title='t'\nchapter='c.md'\nmodules=['m']\n",
            expect![[r#"
                error: TOML parse error at line 1, column 1
                  |
                1 | title='t'
                  | ^^^^^^^^^
                missing field `step`
            "#]],
        );
    }

    #[test]
    fn invalid_values() {
        check(
            "title='t'\nchapter='c.md'\nmodules=['m.ko']\n[[step]]\nname='a'\nrun='true'\n",
            expect![[r#"error: module name "m.ko" must be [a-z0-9_-]+ (no path, no .ko)"#]],
        );
        check(
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='Load it'\nrun='true'\n",
            expect![[r#"error: step 1: name "Load it" must be [a-z0-9_-]+"#]],
        );
        check(
            "title='t'\nchapter='c.md'\nmodules=['m']\nsmp=0\n[[step]]\nname='a'\nrun='true'\n",
            expect![["error: `smp` must be at least 1"]],
        );
        check(
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='a'\nrun=''\n",
            expect![["error: step 1 (a): `run` is empty"]],
        );
    }
}
