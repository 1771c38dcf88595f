//! The plan of a run: which of a lab's steps run where, and in what order.
//!
//! A lab's steps are named by [`StepId`] (their position in `lab.toml`,
//! once the run's kernel has chosen them). Host and compile-fail steps run
//! first, on the host (`check_disk` steps last, after the guest powered
//! off); the guest's step runner then runs the guest steps
//! and, after them, the reference solution's runs of the differential
//! steps, numbering all of these from 0: [`Slot`] says what each of
//! those numbers is, so no code adds or subtracts offsets.

use serde::{Deserialize, Serialize};

use crate::spec::lab::{Lab, Step};

/// A step of a lab: its 0-based position among the lab's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepId(pub usize);

impl StepId {
    /// The 1-based number the reports show.
    pub fn number(self) -> usize {
        self.0 + 1
    }
}

/// One of the guest's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A guest step of the lab.
    Step(StepId),
    /// The reference solution's run of a differential step.
    Reference(StepId),
}

/// Where and in what order a lab's steps run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Host and compile-fail steps, run before the build, in order.
    pub host: Vec<StepId>,
    /// `check_disk` steps, run on the host after the guest powered off.
    pub after: Vec<StepId>,
    /// The guest's runs, in its runner's order (the runner's number is
    /// the index here).
    pub guest: Vec<Slot>,
    /// What the guest's runner runs, one entry per entry of `guest`.
    pub scripts: Vec<Step>,
}

impl Plan {
    /// The plan of `lab`.
    pub fn of(lab: &Lab) -> Plan {
        let steps = &lab.config.steps;
        let ids = || (0..steps.len()).map(StepId);
        let is_guest = |id: &StepId| steps[id.0].guest().is_some();
        let is_after = |id: &StepId| steps[id.0].check_disk().is_some();
        let mut guest: Vec<Slot> = ids().filter(is_guest).map(Slot::Step).collect();
        guest.extend(
            ids()
                .filter(|id| steps[id.0].differential)
                .map(Slot::Reference),
        );
        Plan {
            host: ids().filter(|id| !is_guest(id) && !is_after(id)).collect(),
            after: ids().filter(is_after).collect(),
            guest,
            scripts: lab.guest_steps(),
        }
    }

    /// What the guest's run `n` (0-based) is.
    pub fn guest_run(&self, n: usize) -> Option<Slot> {
        self.guest.get(n).copied()
    }

    /// The guest's number of `run`.
    pub fn number_of(&self, run: Slot) -> Option<usize> {
        self.guest.iter().position(|r| *r == run)
    }

    /// The lab's position of the guest's run `n` as the console names it:
    /// a guest step's own; a reference run's counts on after the lab's
    /// steps, so no step of the lab is taken for it.
    pub fn console_position(&self, n: usize) -> usize {
        match self.guest_run(n) {
            Some(Slot::Step(id)) => id.0,
            _ => self.host.len() + n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_steps_then_guest_steps_then_reference_runs() {
        let (_dir, lab) = crate::testutil::lab_on_disk(
            "title='t'\nchapter='c.md'\nmodules=['m']\n[random]\nn = { int = [1, 3] }\n\
             [[step]]\nname='h'\nhost='true'\n\
             [[step]]\nname='a'\nrun='insmod {ko} n={n}'\ndifferential=true\n\
             [[step]]\nname='b'\nrun='rmmod m'\n",
        );
        let lab = lab.with_inputs(1);
        let plan = Plan::of(&lab);
        assert_eq!(plan.host, [StepId(0)]);
        assert_eq!(
            plan.guest,
            [
                Slot::Step(StepId(1)),
                Slot::Step(StepId(2)),
                Slot::Reference(StepId(1))
            ]
        );
        assert_eq!(plan.scripts.len(), 3);
        assert_eq!(plan.number_of(Slot::Reference(StepId(1))), Some(2));
        assert_eq!(
            (0..4).map(|n| plan.console_position(n)).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
    }
}
