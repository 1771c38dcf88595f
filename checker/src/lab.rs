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
//! A step has exactly one of `run` and `host`. `run` steps are *guest*
//! steps, run in the guest after it boots. A `host` step runs on this
//! machine instead, before the build and the guest, for host-side work such
//! as a proc-macro crate's tests:
//!
//! ```toml
//! [[step]]
//! name = "expansion"
//! host = "cargo test -p lab-02-macro"                    # `sh -c`, in the workspace root
//! host_solution = "cargo test -p lab-02-macro-solution"  # optional: run instead with --solution
//! ```
//!
//! The snapshot of a host step records its exit status and its output
//! reduced to the test harness summary (see [`crate::snapshot::render_host`]);
//! it names the `host` command whichever of the two ran, so the exercise and
//! the reference solution are compared with the same file. The full output
//! is kept next to the build log. `UPDATE_EXPECT` is removed from a host
//! step's environment: it refreshes the lab's snapshots, never the snapshot
//! tests inside the crate under test. Host steps come before every guest
//! step, and a lab needs at least one guest step.
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
    /// The steps, in order: host steps first.
    #[serde(rename = "step")]
    pub steps: Vec<LabStep>,
}

/// One `[[step]]`: a command run in the guest or on the host, then graded.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "RawStep")]
pub struct LabStep {
    /// Short name, `[a-z0-9_-]+`.
    pub name: String,
    /// Where and what to run.
    pub kind: StepKind,
}

/// Where a step runs, and its command.
#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    /// `run`: a shell command line run by busybox `sh -c` in the guest.
    Guest(String),
    /// `host`: a shell command line run by `sh -c` on the host, in the
    /// workspace root, before the build.
    Host {
        /// The command, as the snapshot records it.
        command: String,
        /// `host_solution`: the command run instead for the reference solution.
        solution: Option<String>,
    },
}

/// A `[[step]]` as written, before the checks of [`LabStep`]'s `TryFrom`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: String,
    run: Option<String>,
    host: Option<String>,
    host_solution: Option<String>,
}

impl TryFrom<RawStep> for LabStep {
    type Error = String;

    fn try_from(raw: RawStep) -> Result<Self, String> {
        let name = raw.name;
        let kind = match (raw.run, raw.host, raw.host_solution) {
            (Some(run), None, None) => StepKind::Guest(run),
            (None, Some(command), solution) => StepKind::Host { command, solution },
            (Some(_), _, _) => {
                return Err(format!(
                "step {name:?}: give `run` (a guest command) or `host` (a host command), not both"
            ))
            }
            (None, None, Some(_)) => {
                return Err(format!("step {name:?}: `host_solution` needs `host`"))
            }
            (None, None, None) => {
                return Err(format!(
                    "step {name:?}: give `run` (a guest command) or `host` (a host command)"
                ))
            }
        };
        Ok(LabStep { name, kind })
    }
}

impl LabStep {
    /// The snapshot file name of step `index` (0-based): `NN-name.txt`.
    pub fn expected_file_name(&self, index: usize) -> String {
        format!("{:02}-{}.txt", index + 1, self.name)
    }

    /// The step as the guest runs it, if it is a guest step.
    pub fn guest(&self) -> Option<Step> {
        match &self.kind {
            StepKind::Guest(run) => Some(Step {
                name: self.name.clone(),
                run: run.clone(),
            }),
            StepKind::Host { .. } => None,
        }
    }

    /// The command a host step runs: `host`, or `host_solution` (when
    /// given) for the reference solution.
    pub fn host_command(&self, solution: bool) -> Option<&str> {
        match &self.kind {
            StepKind::Guest(_) => None,
            StepKind::Host {
                solution: Some(alt),
                ..
            } if solution => Some(alt),
            StepKind::Host { command, .. } => Some(command),
        }
    }

    /// The command as the snapshot records it: `run` or `host`.
    pub fn command(&self) -> &str {
        match &self.kind {
            StepKind::Guest(run) => run,
            StepKind::Host { command, .. } => command,
        }
    }
}

/// A guest step, as the guest's step runner gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Short name, `[a-z0-9_-]+`.
    pub name: String,
    /// Shell command line run by busybox `sh -c` in the guest.
    pub run: String,
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

    /// The guest steps, in order: the guest numbers them from 0.
    pub fn guest_steps(&self) -> Vec<Step> {
        self.config
            .steps
            .iter()
            .filter_map(LabStep::guest)
            .collect()
    }

    /// The lab index of the first guest step (the number of host steps).
    pub fn first_guest_step(&self) -> usize {
        let steps = &self.config.steps;
        steps
            .iter()
            .position(|s| s.guest().is_some())
            .unwrap_or(steps.len())
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
        let commands: Vec<(&str, &str)> = match &s.kind {
            StepKind::Guest(run) => vec![("run", run)],
            StepKind::Host { command, solution } => std::iter::once(("host", command.as_str()))
                .chain(solution.as_deref().map(|c| ("host_solution", c)))
                .collect(),
        };
        for (key, command) in commands {
            if command.trim().is_empty() {
                bail!("step {} ({}): `{key}` is empty", i + 1, s.name);
            }
            if command.contains('\n') {
                bail!(
                    "step {} ({}): `{key}` must be one line (use ; or && to chain)",
                    i + 1,
                    s.name
                );
            }
        }
        let after_guest = c.steps[..i].iter().any(|s| s.guest().is_some());
        if after_guest && s.guest().is_none() {
            bail!(
                "step {} ({}): host steps must come before every guest step",
                i + 1,
                s.name
            );
        }
    }
    if c.steps.iter().all(|s| s.guest().is_none()) {
        bail!("a lab needs at least one guest step (`run`)");
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
                        LabStep {
                            name: "load",
                            kind: Guest(
                                "insmod /lab/hello.ko",
                            ),
                        },
                        LabStep {
                            name: "unload",
                            kind: Guest(
                                "rmmod hello",
                            ),
                        },
                    ],
                }"#]],
        );
    }

    #[test]
    fn host_steps() {
        let c = parse(
            r#"
title = "t"
chapter = "c.md"
modules = ["m"]

[[step]]
name = "tests"
host = "cargo test -p m-macro"
host_solution = "cargo test -p m-macro-solution"

[[step]]
name = "lint"
host = "cargo clippy -p m-macro"

[[step]]
name = "load"
run = "insmod /lab/m.ko"
"#,
        )
        .unwrap();
        expect![[r#"
            [
                LabStep {
                    name: "tests",
                    kind: Host {
                        command: "cargo test -p m-macro",
                        solution: Some(
                            "cargo test -p m-macro-solution",
                        ),
                    },
                },
                LabStep {
                    name: "lint",
                    kind: Host {
                        command: "cargo clippy -p m-macro",
                        solution: None,
                    },
                },
                LabStep {
                    name: "load",
                    kind: Guest(
                        "insmod /lab/m.ko",
                    ),
                },
            ]"#]]
        .assert_eq(&format!("{:#?}", c.steps));
        let commands: Vec<_> = c
            .steps
            .iter()
            .map(|s| (s.host_command(false), s.host_command(true), s.command()))
            .collect();
        assert_eq!(
            commands,
            [
                (
                    Some("cargo test -p m-macro"),
                    Some("cargo test -p m-macro-solution"),
                    "cargo test -p m-macro"
                ),
                (
                    Some("cargo clippy -p m-macro"),
                    Some("cargo clippy -p m-macro"),
                    "cargo clippy -p m-macro"
                ),
                (None, None, "insmod /lab/m.ko"),
            ]
        );
        let lab = Lab {
            name: "lab".into(),
            dir: PathBuf::from("lab"),
            config: c,
        };
        assert_eq!(lab.first_guest_step(), 2);
        assert_eq!(
            lab.guest_steps(),
            [Step {
                name: "load".into(),
                run: "insmod /lab/m.ko".into()
            }]
        );
    }

    #[test]
    fn invalid_host_steps() {
        let head = "title='t'\nchapter='c.md'\nmodules=['m']\n";
        let guest = "[[step]]\nname='g'\nrun='true'\n";
        let check = |steps: &str, expect: Expect| {
            let actual = match parse(&format!("{head}{steps}")) {
                Ok(_) => "ok".to_owned(),
                Err(e) => format!("error: {e:#}"),
            };
            expect.assert_eq(&actual);
        };
        check(
            &format!("[[step]]\nname='h'\nhost='true'\n{guest}"),
            expect!["ok"],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\nhost='true'\n",
            expect![[r#"
                error: TOML parse error at line 4, column 1
                  |
                4 | [[step]]
                  | ^^^^^^^^
                step "a": give `run` (a guest command) or `host` (a host command), not both
            "#]],
        );
        check(
            "[[step]]\nname='a'\n",
            expect![[r#"
                error: TOML parse error at line 4, column 1
                  |
                4 | [[step]]
                  | ^^^^^^^^
                step "a": give `run` (a guest command) or `host` (a host command)
            "#]],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\nhost_solution='true'\n",
            expect![[r#"
                error: TOML parse error at line 4, column 1
                  |
                4 | [[step]]
                  | ^^^^^^^^
                step "a": give `run` (a guest command) or `host` (a host command), not both
            "#]],
        );
        check(
            "[[step]]\nname='a'\nhost_solution='true'\n",
            expect![[r#"
                error: TOML parse error at line 4, column 1
                  |
                4 | [[step]]
                  | ^^^^^^^^
                step "a": `host_solution` needs `host`
            "#]],
        );
        check(
            &format!("{guest}[[step]]\nname='h'\nhost='true'\n"),
            expect!["error: step 2 (h): host steps must come before every guest step"],
        );
        check(
            "[[step]]\nname='h'\nhost='true'\n",
            expect!["error: a lab needs at least one guest step (`run`)"],
        );
        check(
            &format!("[[step]]\nname='h'\nhost='true'\nhost_solution=' '\n{guest}"),
            expect!["error: step 1 (h): `host_solution` is empty"],
        );
        check(
            &format!("[[step]]\nname='h'\nhost='a\\nb'\n{guest}"),
            expect!["ok"],
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
                unknown field `expect`, expected one of `name`, `run`, `host`, `host_solution`
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
