//! A lab's steps, `[[step]]` in `lab.toml`: a command in the guest, a
//! host command, a compile-fail case or a disk check; the debug kernel's
//! steps (`kernel`, `failslab`). Checked against the rest of the lab
//! (order, placeholders) in [`crate::spec::lab`].

use serde::Deserialize;

/// One `[[step]]`: a command run in the guest or on the host, then graded.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "RawStep")]
pub struct LabStep {
    /// Short name, `[a-z0-9_-]+`.
    pub name: String,
    /// Where and what to run.
    pub kind: StepKind,
    /// Weight in the lab's score (`points`, default 1).
    pub points: u32,
    /// An earlier step this one needs (`depends`): if that one did not
    /// pass, this one is skipped.
    pub depends: Option<String>,
    /// Shown to the student when the step fails (`hint`).
    pub hint: Option<String>,
    /// `kernel = "debug"` or `failslab`: the step runs only on the debug
    /// kernel (see [`DebugStep`]).
    pub debug: Option<DebugStep>,
    /// `differential = true`: graded against the reference solution's run
    /// of the same command in the same boot, not a snapshot file.
    pub differential: bool,
    /// `warns = "text"`: the step must make the kernel `WARN` with a
    /// message that contains `text` (a soundness test of an API that warns
    /// about a misuse). Such a warning is no crash, and the step's
    /// snapshot keeps only its message line
    /// ([`vm::console::without_expected_warnings`]).
    pub warns: Option<String>,
    /// `per_kernel = "why"`: the step's output depends on the guest
    /// kernel's series for a reason `why` gives (the kernel behaves
    /// differently, not noise), so it has one snapshot per series,
    /// `NN-name.<series>.txt` (`01-c-limits.6.12.txt`), and no
    /// `NN-name.txt` (see [`crate::spec::lab::Lab::expected_path`]).
    pub per_kernel: Option<String>,
    /// `per_qemu = "why"`: the step's output depends on the host's QEMU
    /// (what its emulated device reports, e.g. NVMe Identify data), for a
    /// reason `why` gives, so it has one snapshot per QEMU major version,
    /// `NN-name.qemu<major>.txt` (`NN-name.<series>.qemu<major>.txt` when
    /// also `per_kernel`), and no `NN-name.txt`.
    pub per_qemu: Option<String>,
    /// Not a `lab.toml` key: one of an instructor's extra steps
    /// ([`crate::spec::lab::Lab::add_extra`]), numbered within its own file.
    pub extra: bool,
}

/// A step that only the debug kernel runs (`checker lab --kernel debug`,
/// see `book/src/debug-kernel.md`):
///
/// ```toml
/// [[step]]
/// name = "enomem"
/// run = "insmod /lab/growvec.ko"
/// kernel = "debug"                      # only on the debug kernel; or:
/// failslab = { first = 64, every = 25 }
/// ```
///
/// Debian's kernel has no failslab, KASAN or kmemleak: there, these steps
/// are left out of the run (and of the score). They come after every other
/// step (differential steps excepted: they have no snapshot file), so the
/// snapshot numbers of the others do not depend on the kernel.
///
/// With `failslab`, `run` must be `insmod /lab/NAME.ko [PARAMS]`. The
/// checker's guest tool `failnth` (`vm/guest/failnth.c`) loads the module once
/// without failures, then once for each allocation call of the module, that
/// call failing: the kernel crate's allocator is a fault-injection site of
/// `/proc/thread-self/fail-nth`, and none of the kernel's own allocations
/// count (`vm/guest/failslab.sh`), so call `n` is the same call in every
/// load. Calls 1 to `first` one by one, then every `every`-th to the end of
/// the load. After each load that succeeds it unloads the module. The
/// step's output: the distinct outcomes of the loads (`ENOMEM`, `loaded`)
/// and the distinct kernel log lines of the module that the load without
/// failures did not print (what the error paths said).
#[derive(Debug, Clone, PartialEq)]
pub struct DebugStep {
    /// `failslab`: which allocation calls to fail, one load each.
    pub failslab: Option<FailslabStep>,
}

/// A `failslab` step: its table and the module its `run` loads.
#[derive(Debug, Clone, PartialEq)]
pub struct FailslabStep {
    /// The `failslab` table.
    pub table: Failslab,
    /// What `run` loads.
    pub target: FailslabTarget,
}

/// The module a failslab step's `run` (`insmod /lab/NAME.ko [PARAMS]`)
/// loads.
#[derive(Debug, Clone, PartialEq)]
pub struct FailslabTarget {
    /// `NAME`.
    pub module: String,
    /// `/lab/NAME.ko`.
    pub path: String,
    /// The parameters, space-separated (may be empty).
    pub params: String,
}

/// A step's `failslab` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failslab {
    /// How many calls from the start of init fail one by one (default 64).
    #[serde(default = "Failslab::default_first")]
    pub first: u32,
    /// After those, one call in `every` fails (default 1: every call).
    #[serde(default = "Failslab::default_every")]
    pub every: u32,
}

impl Failslab {
    fn default_first() -> u32 {
        64
    }

    fn default_every() -> u32 {
        1
    }
}

/// The module a failslab step's `run` loads.
pub fn failslab_target(run: &str) -> Result<FailslabTarget, String> {
    let mut words = run.split_whitespace();
    let (Some("insmod"), Some(path)) = (words.next(), words.next()) else {
        return Err(format!(
            "failslab: `run` must be `insmod /lab/NAME.ko [PARAMS]`, not {run:?}"
        ));
    };
    let name = path
        .strip_prefix("/lab/")
        .and_then(|p| p.strip_suffix(".ko"))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .ok_or_else(|| format!("failslab: {path:?} is not a module of the lab (/lab/NAME.ko)"))?;
    let params: Vec<&str> = words.collect();
    Ok(FailslabTarget {
        module: name.to_owned(),
        path: path.to_owned(),
        params: params.join(" "),
    })
}

/// The guest command of a `failslab` step (see [`DebugStep`]): the guest
/// script `vm/guest/failslab.sh`.
fn failslab_command(fs: &FailslabStep) -> String {
    ::vm::tools::failslab_command(
        fs.table.first,
        fs.table.every,
        &fs.target.module,
        &fs.target.path,
        &fs.target.params,
    )
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
    /// `compile_fail`: a case file (relative to the lab folder) that must
    /// not compile, built on the host before the build.
    CompileFail(String),
    /// `check_disk`: a `[[disk]]` id whose backing file the host checks
    /// after the guest powered off.
    CheckDisk(String),
}

/// A `[[step]]` as written, before the checks of [`LabStep`]'s `TryFrom`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: String,
    run: Option<String>,
    host: Option<String>,
    host_solution: Option<String>,
    compile_fail: Option<String>,
    check_disk: Option<String>,
    points: Option<u32>,
    depends: Option<String>,
    hint: Option<String>,
    kernel: Option<String>,
    failslab: Option<Failslab>,
    differential: Option<bool>,
    warns: Option<String>,
    per_kernel: Option<String>,
    per_qemu: Option<String>,
}

impl TryFrom<RawStep> for LabStep {
    type Error = String;

    fn try_from(mut raw: RawStep) -> Result<Self, String> {
        let name = std::mem::take(&mut raw.name);
        let (kind, debug, differential) =
            raw.checked().map_err(|e| format!("step {name:?}: {e}"))?;
        Ok(LabStep {
            name,
            kind,
            points: raw.points.unwrap_or(1),
            depends: raw.depends,
            hint: raw.hint,
            debug,
            differential,
            warns: raw.warns,
            per_kernel: raw.per_kernel,
            per_qemu: raw.per_qemu,
            extra: false,
        })
    }
}

impl RawStep {
    /// The step's kind, its debug kernel part and whether it is
    /// differential, taken out of the keys that give them; the error
    /// without [`LabStep`]'s `step "name": ` prefix.
    fn checked(&mut self) -> Result<(StepKind, Option<DebugStep>, bool), String> {
        let kind = self.kind()?;
        if let Some(other) = self.kernel.as_deref().filter(|k| *k != "debug") {
            return Err(format!(
                "`kernel = {other:?}`: the only choice is \"debug\""
            ));
        }
        let debug = match (&kind, self.kernel.is_some(), self.failslab.take()) {
            (_, false, None) => None,
            (StepKind::Guest(_), _, None) => Some(DebugStep { failslab: None }),
            (StepKind::Guest(run), _, Some(table)) => {
                let target = failslab_target(run)?;
                if table.every == 0 {
                    return Err("failslab `every` must be 1 or more".into());
                }
                Some(DebugStep {
                    failslab: Some(FailslabStep { table, target }),
                })
            }
            _ => return Err("`kernel` and `failslab` are for guest (`run`) steps".into()),
        };
        let differential = self.differential.unwrap_or(false);
        if differential && (!matches!(kind, StepKind::Guest(_)) || debug.is_some()) {
            return Err("`differential` is for guest (`run`) steps on every kernel".into());
        }
        let reasons = [
            (
                "per_kernel",
                self.per_kernel.as_deref(),
                "the kernel",
                "6.12's C driver ...",
            ),
            (
                "per_qemu",
                self.per_qemu.as_deref(),
                "QEMU",
                "QEMU 10 reports ONCS ...",
            ),
        ];
        for (key, reason, what, example) in reasons {
            match reason.map(str::trim) {
                Some("") => {
                    return Err(format!(
                        "`{key}` needs its reason: say what {what} does differently, \
                         e.g. `{key} = \"{example}\"`"
                    ))
                }
                Some(_) if differential => {
                    return Err(format!(
                        "`{key}` is for steps with snapshot files; a `differential` step \
                         has none (the reference solution's run, on the same kernel, is \
                         its expected output)"
                    ))
                }
                _ => {}
            }
        }
        Ok((kind, debug, differential))
    }

    /// What the step runs: `check_disk` alone, `compile_fail` without
    /// `run` or `host`, else one of `run` and `host` (with its
    /// `host_solution`).
    fn kind(&mut self) -> Result<StepKind, String> {
        let compile_fail = self.compile_fail.take();
        let (run, host, host_solution) =
            (self.run.take(), self.host.take(), self.host_solution.take());
        if let Some(disk) = self.check_disk.take() {
            if compile_fail.is_some()
                || run.is_some()
                || host.is_some()
                || host_solution.is_some()
                || self.kernel.is_some()
                || self.failslab.is_some()
                || self.differential.is_some()
            {
                return Err("`check_disk` is a step of its own: no `run`, `host`, \
                     `compile_fail`, `kernel`, `failslab` or `differential` with it"
                    .into());
            }
            return Ok(StepKind::CheckDisk(disk));
        }
        if compile_fail.is_some() && (run.is_some() || host.is_some() || host_solution.is_some()) {
            return Err("`compile_fail` is a step of its own: no `run` or `host` with it".into());
        }
        Ok(match (run, host, host_solution) {
            (Some(run), None, None) => StepKind::Guest(run),
            (None, Some(command), solution) => StepKind::Host { command, solution },
            (Some(_), _, _) => {
                return Err(
                    "give `run` (a guest command) or `host` (a host command), not both".into(),
                )
            }
            (None, None, Some(_)) => return Err("`host_solution` needs `host`".into()),
            (None, None, None) => match compile_fail {
                Some(case) => StepKind::CompileFail(case),
                None => {
                    return Err("give `run` (a guest command) or `host` (a host command)".into())
                }
            },
        })
    }
}

impl LabStep {
    /// The snapshot file name of step `index` (0-based): `NN-name.txt`.
    pub fn expected_file_name(&self, index: usize) -> String {
        format!("{:02}-{}.txt", index + 1, self.name)
    }

    /// The snapshot file name of step `index` (0-based) on a kernel of
    /// `series` (`6.12`) and a QEMU of major version `qemu`: `NN-name.txt`,
    /// with `.<series>` for a `per_kernel` step and `.qemu<major>` for a
    /// `per_qemu` one (`NN-name.6.12.qemu10.txt`).
    pub fn snapshot_file_name(&self, index: usize, series: &str, qemu: u32) -> String {
        let mut name = format!("{:02}-{}", index + 1, self.name);
        if self.per_kernel.is_some() {
            name = format!("{name}.{series}");
        }
        if self.per_qemu.is_some() {
            name = format!("{name}.qemu{qemu}");
        }
        name + ".txt"
    }

    /// The step as the guest runs it, if it is a guest step.
    pub fn guest(&self) -> Option<Step> {
        match &self.kind {
            StepKind::Guest(run) => Some(Step {
                name: self.name.clone(),
                run: match self.debug.as_ref().and_then(|d| d.failslab.as_ref()) {
                    Some(fs) => failslab_command(fs),
                    None => run.clone(),
                },
            }),
            StepKind::Host { .. } | StepKind::CompileFail(_) | StepKind::CheckDisk(_) => None,
        }
    }

    /// The disk of a `check_disk` step, checked after the guest powered off.
    pub fn check_disk(&self) -> Option<&str> {
        match &self.kind {
            StepKind::CheckDisk(disk) => Some(disk),
            _ => None,
        }
    }

    /// The case file of a compile-fail step.
    pub fn compile_fail(&self) -> Option<&str> {
        match &self.kind {
            StepKind::CompileFail(case) => Some(case),
            _ => None,
        }
    }

    /// The command a host step runs: `host`, or `host_solution` (when
    /// given) for the reference solution.
    pub fn host_command(&self, solution: bool) -> Option<&str> {
        match &self.kind {
            StepKind::Guest(_) | StepKind::CompileFail(_) | StepKind::CheckDisk(_) => None,
            StepKind::Host {
                solution: Some(alt),
                ..
            } if solution => Some(alt),
            StepKind::Host { command, .. } => Some(command),
        }
    }

    /// Whether the step unloads a module (its command is `rmmod ...`): its
    /// failing is a module that refused to unload.
    pub fn unloads(&self) -> bool {
        matches!(&self.kind, StepKind::Guest(run) if run.trim_start().starts_with("rmmod"))
    }

    /// The command as the snapshot records it: `run` or `host`.
    pub fn command(&self) -> &str {
        match &self.kind {
            StepKind::Guest(run) => run,
            StepKind::Host { command, .. } => command,
            StepKind::CompileFail(case) => case,
            StepKind::CheckDisk(disk) => disk,
        }
    }
}

/// A guest step, as the guest's step runner gets it.
pub use ::vm::Step;
