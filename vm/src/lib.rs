//! The guest the labs run in (see `README.md`).
//!
//! - [`console`]: what the guest kernel's log says: timestamps, the step
//!   marker, and the findings (oops, BUG, KASAN, ...) it reports.
#![forbid(unsafe_code)]

pub mod console;
