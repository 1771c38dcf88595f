//! The ground floor: what the pipeline stands on. What the machine has
//! ([`probe`]) and installing it ([`setup`]), where the labs, samples and
//! fixtures are ([`discovery`]), `make` for Kbuild
//! ([`exec`]) and what a built module imports ([`imports`]), the sandbox
//! every build of a student's code runs in ([`sandbox`]), the debug
//! kernel's toolchain ([`debugkernel`]), the guest kernel series
//! ([`guest`]) and the workspace root ([`workspace`]).

pub mod debugkernel;
pub mod discovery;
pub mod exec;
pub mod guest;
pub mod imports;
pub mod probe;
pub mod sandbox;
pub mod setup;
pub mod workspace;
