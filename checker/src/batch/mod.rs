//! Many runs at once: child runs that stream their events back
//! ([`jobs`]), for `checker run --all`, `checker grade` over a folder of
//! submissions ([`gradedir`]) and the checker's broken modules
//! ([`fixtures`]).

pub mod fixtures;
pub mod gradedir;
pub mod jobs;
