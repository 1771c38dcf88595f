//! The lab checker. Its folders follow a lab run, from what a lab is to
//! what the student reads, each importing only the ones before it
//! ([`tools`] < [`spec`] < [`plan`] < [`grade`] < [`run`] < [`report`] <
//! [`batch`] < [`commands`]; `tests/layers.rs` checks it). [`grade`] sits
//! below [`run`]: the runner grades each step as it ends, and grading is
//! the comparison it calls, knowing nothing of running:
//!
//! - [`tools`]: the ground floor the pipeline stands on: probes, set-up,
//!   `make`, the sandbox, the debug kernel's toolchain, the guest kernels.
//! - [`spec`]: what a lab is: `lab.toml` ([`spec::lab`]), the randomised
//!   inputs of differential steps, the rules for student files.
//! - [`plan`]: which of a lab's steps run where, in what order (typed step
//!   ids).
//! - [`grade`]: a run's transcript graded against the snapshots: one
//!   [`grade::Status`] per step, crashes found.
//! - [`run`]: the runner (`checker lab`, `checker verify`): a
//!   [`run::LabRequest`] in; host and compile-fail steps, the build, one
//!   guest boot (the guest itself is the `vm` crate); a [`run::RunResult`]
//!   out, with [`run::events`] on the way.
//! - [`report`]: the verdict of a run, and what reads the events and
//!   results: the terminal, the JSON and JUnit reports, the summary table,
//!   Gradescope's results.
//! - [`batch`]: many runs at once (`checker run --all`, `checker grade`,
//!   `checker fixtures`), each a child run that streams its events back.
//! - [`commands`]: the commands around the pipeline, on top of it (doctor,
//!   docs, doctests, sizes, benches, watch, new-driver, the book's
//!   preprocessor, export-course).
//! - [`outcome`]: how a command ended, and its exit code (beside
//!   [`report`]: it reads a run's results).
#![forbid(unsafe_code)]

// The stages of a run, in order (blank lines keep rustfmt from sorting them).
pub mod tools;

pub mod spec;

pub mod plan;

pub mod grade;

pub mod run;

pub mod report;

pub mod batch;

pub mod commands;

// How a command ended: its exit code.
pub mod outcome;

#[cfg(test)]
mod testutil;
