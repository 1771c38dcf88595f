//! What the pipeline stands on, and the commands around it: what the
//! machine has ([`probe`]), installing it and checking it ([`setup`],
//! [`doctor`]), `make` for Kbuild ([`exec`]), the sandbox every build of
//! a student's code runs in ([`sandbox`]), the debug kernel's
//! toolchain ([`debugkernel`]), the guest kernel series ([`guest`]), the
//! API reference ([`docs`]), the kernel crate's doc examples in the guest
//! ([`doctests`]), `make sizes` ([`sizes`]) and what a built module
//! imports ([`imports`]), `checker bench-binder` ([`binderbench`]) and
//! `checker bench-nvme` ([`nvmebench`]) with what they share ([`bench`]), `checker watch`
//! ([`watch`]), `checker new-driver` ([`newdriver`]), the workspace root
//! ([`workspace`]), the labs' skeletons made from their solutions
//! ([`skeleton`]) and `checker export-course`, the student repository
//! ([`export`]).

pub mod bench;
pub mod binderbench;
pub mod debugkernel;
pub mod docs;
pub mod doctests;
pub mod doctor;
pub mod exec;
pub mod export;
pub mod guest;
pub mod imports;
pub mod mdbook;
pub mod newdriver;
pub mod nvmebench;
pub mod probe;
pub mod sandbox;
pub mod setup;
pub mod sizes;
pub mod skeleton;
pub mod watch;
pub mod workspace;
