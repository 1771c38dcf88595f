//! What a run gives back: how the build went ([`BuildOutcome`]) and the
//! graded run ([`RunResult`]) that the events carry and every reporter
//! reads.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use vm::accel::Accel;

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
    /// Accelerator used (when the guest ran): `"kvm"` or `"tcg"` in
    /// results.json.
    #[serde(default, with = "accel_name::option")]
    pub accel: Option<Accel>,
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

/// Serde for an accelerator as results.json and the events name it
/// (`"kvm"`, `"tcg"`): `vm` has no serde.
pub(crate) mod accel_name {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};
    use vm::accel::Accel;

    pub(crate) fn serialize<S: Serializer>(accel: &Accel, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(accel)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Accel, D::Error> {
        parse(&String::deserialize(d)?).map_err(D::Error::custom)
    }

    fn parse(name: &str) -> Result<Accel, String> {
        match name {
            "kvm" => Ok(Accel::Kvm),
            "tcg" => Ok(Accel::Tcg),
            other => Err(format!("unknown accelerator {other:?}")),
        }
    }

    /// The same for an `Option` (`null` when the guest did not run).
    pub(crate) mod option {
        use serde::de::Error as _;
        use serde::{Deserialize, Deserializer, Serialize, Serializer};
        use vm::accel::Accel;

        pub(crate) fn serialize<S: Serializer>(
            accel: &Option<Accel>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            accel.map(|a| a.to_string()).serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Accel>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|name| super::parse(&name).map_err(D::Error::custom))
                .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        #[serde(default, with = "accel_name::option")]
        accel: Option<Accel>,
    }

    #[test]
    fn accelerators_keep_their_names_in_json() {
        for (accel, json) in [
            (Some(Accel::Tcg), r#"{"accel":"tcg"}"#),
            (Some(Accel::Kvm), r#"{"accel":"kvm"}"#),
            (None, r#"{"accel":null}"#),
        ] {
            let h = Holder { accel };
            assert_eq!(serde_json::to_string(&h).unwrap(), json);
            assert_eq!(serde_json::from_str::<Holder>(json).unwrap(), h);
        }
        // Files written before the field was typed, and without it.
        assert_eq!(serde_json::from_str::<Holder>("{}").unwrap().accel, None);
        assert!(serde_json::from_str::<Holder>(r#"{"accel":"hvf"}"#).is_err());
    }
}
