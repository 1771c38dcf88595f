//! What a run gives back: how the build went ([`BuildOutcome`]) and the
//! graded run ([`RunResult`]) that the events carry and every reporter
//! reads.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::grade::{Crash, Score, StepGrade};
use crate::tools::sandbox::Limit;

/// How the build went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildOutcome {
    /// The build succeeded and produced every module.
    pub ok: bool,
    /// Wall time.
    pub time: Duration,
    /// The build log.
    pub log: PathBuf,
    /// The sandbox's limit the build hit (it was killed, or a process
    /// ran out of CPU time or memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
}

/// The result of one lab run: what every reporter reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Lab name.
    pub lab: String,
    /// Whether the reference solution was built.
    pub solution: bool,
    /// The build.
    pub build: BuildOutcome,
    /// One entry per step.
    pub steps: Vec<StepGrade>,
    /// A crash seen on the console.
    pub crash: Option<Crash>,
    /// The guest hit its time limit.
    pub timed_out: bool,
    /// Accelerator used (when the guest ran).
    pub accel: Option<String>,
    /// Boot time (QEMU start to the first step).
    pub boot_time: Option<Duration>,
    /// Total wall time of the run (build included).
    pub wall: Duration,
    /// The guest's whole console (`ttyS0`), kept next to the build log.
    pub console_log: Option<PathBuf>,
    /// The seed of the run's `[random]` inputs, when the lab has
    /// differential steps (`--seed` reproduces the run).
    pub seed: Option<u64>,
}

impl RunResult {
    /// Steps that passed.
    pub fn passed_steps(&self) -> usize {
        self.steps.iter().filter(|s| s.passed()).count()
    }

    /// Points earned of the points the lab gives.
    pub fn score(&self) -> Score {
        self.steps.iter().map(StepGrade::score).sum()
    }

    /// Every step passed and no crash was seen.
    pub fn passed(&self) -> bool {
        self.build.ok && self.crash.is_none() && self.passed_steps() == self.steps.len()
    }
}
