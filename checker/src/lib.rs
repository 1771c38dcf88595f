//! The lab checker: machine setup, guest runs and grading.
//!
//! - [`setup`]: installs and locates the toolchain (`checker setup`).
//! - [`lab`]: the `labs/<lab>/lab.toml` format.
//! - [`vm`]: builds the initramfs and runs the steps in a QEMU guest.
//! - [`results`]: parses the guest's result channel.
//! - [`snapshot`]: turns a step's result into snapshot text.
//! - [`grade`]: compares with the expected files and reports.
#![forbid(unsafe_code)]

pub mod setup;
pub mod workspace;
