//! How a command ended, and the exit code that says so: 0 passed, 1 a
//! graded failure, 2 the checker or the set-up failed, 130 interrupted.
//! Scripts and CI tell a wrong answer from a broken machine by the code
//! alone, as nextest's distinct codes do.

use crate::report::{Entry, Kind};

/// How a command ended (the exit code is [`Outcome::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything it graded passed, or it did what it was asked.
    Passed,
    /// It graded something and that failed (a step, a lab, a fixture's
    /// verdict, a skeleton that passes).
    Failed,
    /// The checker or the set-up could not do its job: nothing, or not
    /// everything, was graded.
    Error,
    /// Ctrl-C: every guest and child was stopped.
    Interrupted,
}

/// The exit codes, for `--help` and the tests.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    passed (or done, for a command that grades nothing)
  1    graded and failed: a step, a lab, a submission, a fixture's verdict
  2    the checker or the set-up failed (or the command line is wrong):
       not everything was graded
  130  interrupted (Ctrl-C)";

/// Whether Ctrl-C ended `e`: the checker's own [`vm::Interrupted`], or the
/// `vm` crate's [`vm::Error::Interrupted`], under any context.
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<vm::Interrupted>()
            || c.downcast_ref::<vm::Error>()
                .is_some_and(vm::Error::is_interrupted)
    })
}

impl Outcome {
    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Passed => 0,
            Outcome::Failed => 1,
            Outcome::Error => 2,
            Outcome::Interrupted => 130,
        }
    }

    /// The outcome of a batch of graded runs: an error when the checker
    /// could not run one of them (its verdict is [`Kind::Error`]), else
    /// failed when one did not pass.
    pub fn of_entries(entries: &[Entry]) -> Outcome {
        if entries.iter().any(|e| e.result.verdict.kind == Kind::Error) {
            Outcome::Error
        } else {
            Outcome::graded(entries.iter().all(|e| e.result.passed()))
        }
    }

    /// Passed or failed, as graded.
    pub fn graded(passed: bool) -> Outcome {
        if passed {
            Outcome::Passed
        } else {
            Outcome::Failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::LabResult;

    fn entry(kind: Kind) -> Entry {
        let mut result = LabResult::error("lab-01", "x", None);
        result.verdict.kind = kind;
        Entry {
            student: "alice".into(),
            result,
        }
    }

    /// Ctrl-C is seen whichever crate reported it, under contexts; no
    /// other error is.
    #[test]
    fn interrupted_from_either_crate() {
        use anyhow::Context as _;
        let from_vm: anyhow::Result<()> = Err(vm::Error::Interrupted.into());
        assert!(is_interrupted(&from_vm.context("boot").unwrap_err()));
        let own = anyhow::Error::from(vm::Interrupted).context("build");
        assert!(is_interrupted(&own));
        let qemu = anyhow::Error::from(vm::Error::Qemu("no qemu".into())).context("boot");
        assert!(!is_interrupted(&qemu));
    }

    /// One run the checker could not make outweighs any number of graded
    /// failures: the batch is incomplete.
    #[test]
    fn a_batch_with_an_unrun_lab_is_an_error() {
        let failed = [entry(Kind::Passed), entry(Kind::Crash)];
        assert_eq!(Outcome::of_entries(&failed), Outcome::Failed);
        let broken = [entry(Kind::Crash), entry(Kind::Error), entry(Kind::Passed)];
        assert_eq!(Outcome::of_entries(&broken), Outcome::Error);
        assert_eq!(Outcome::of_entries(&[entry(Kind::Passed)]), Outcome::Passed);
        let codes: Vec<u8> = [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Error,
            Outcome::Interrupted,
        ]
        .map(Outcome::code)
        .into();
        assert_eq!(codes, [0, 1, 2, 130]);
    }
}
