//! The lab checker: machine setup, guest runs and grading.
//!
//! - [`setup`]: installs and locates the toolchain (`checker setup`).
//! - [`lab`]: the `labs/<lab>/lab.toml` format.
//! - The guest itself (initramfs, QEMU, accelerator, result channel, the
//!   kernel log, the debug kernel's build) is the `vm` crate; [`debugkernel`]
//!   picks the kernel a run uses.
//! - [`plan`]: which of a lab's steps run where (typed step ids).
//! - [`snapshot`]: turns a step's result into snapshot text.
//! - [`grade`]: compares with the expected files, finds crashes, diffs:
//!   one [`grade::Status`] per step.
//! - [`run`]: the runner (`checker lab`, `checker verify`): a
//!   [`run::LabRequest`] in, a [`run::RunResult`] out, [`events`] on the
//!   way, which [`terminal`] renders.
//! - [`binderbench`]: `checker bench-binder`, Rust Binder against C.
//! - [`jobs`], [`gradedir`], [`fixtures`]: `checker run --all -j N`,
//!   `checker grade`, `checker fixtures`.
//! - [`doctor`], [`watch`]: `checker doctor`, `checker watch`.
//! - [`report`]: the verdict of a run, JSON and JUnit reports, the
//!   summary table.
//! - [`buildcheck`]: rejects modules that contain an allocation-failure
//!   panic path.
//! - [`policy`]: what a student file may hold, checked before the build.
//! - [`inputs`]: randomised inputs of differential steps (`[random]`).
//! - [`exec`]: `make` for a module folder, with the run's kernel tree.
//! - [`probe`]: what the machine has, for [`setup`] and [`doctor`] alike.
//! - [`skeleton`]: lab skeletons generated from the solutions' TODO markers.
#![forbid(unsafe_code)]

pub mod binderbench;
pub mod buildcheck;
pub mod compilefail;
pub mod debugkernel;
pub mod docs;
pub mod doctests;
pub mod doctor;
pub mod events;
pub mod exec;
pub mod fixtures;
pub mod grade;
pub mod gradedir;
pub mod gradescope;
pub mod inputs;
pub mod jobs;
pub mod lab;
pub mod newdriver;
pub mod plan;
pub mod policy;
pub mod probe;
pub mod report;
pub mod run;
pub mod setup;
pub mod sizes;
pub mod skeleton;
pub mod snapshot;
pub mod terminal;
pub mod watch;
pub mod workspace;
