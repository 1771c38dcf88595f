//! What a lab is: the `lab.toml` format ([`lab`]), the randomised
//! inputs of differential steps ([`inputs`]) and the rules for student
//! files ([`policy`]).

pub mod inputs;
pub mod lab;
pub mod policy;
