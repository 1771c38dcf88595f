//! What a lab is: the `lab.toml` format ([`lab`]), its guest hardware
//! ([`devices`]: memory, disks, NVMe controllers), the randomised inputs
//! of differential steps ([`inputs`]) and the rules for student files
//! ([`policy`]).

pub mod devices;
pub mod inputs;
pub mod lab;
pub mod policy;
