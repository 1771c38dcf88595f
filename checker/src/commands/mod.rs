//! The commands around the pipeline, each on top of it: `checker clippy`
//! ([`clippy`]), the API reference ([`docs`]), the kernel crate's doc
//! examples in the guest ([`doctests`]), checking the machine
//! ([`doctor`]), `make sizes` ([`sizes`]), `checker bench-binder`
//! ([`binderbench`]) and `checker bench-nvme` ([`nvmebench`]) with what
//! they share ([`mod@bench`]), `checker watch` ([`watch`]), `checker
//! new-driver` ([`newdriver`]), the book's mdBook preprocessor
//! ([`mdbook`]) and `checker export-course`, the student repository
//! ([`export`]), and `checker chroot-check`, the set-up from nothing on a
//! fresh Debian 13 root ([`chroot`]).

pub mod bench;
pub mod binderbench;
pub mod chroot;
pub mod clippy;
pub mod docs;
pub mod doctests;
pub mod doctor;
pub mod export;
pub mod mdbook;
pub mod newdriver;
pub mod nvmebench;
pub mod sizes;
pub mod watch;
