//! What a lab is: the `lab.toml` format ([`lab`]) and its steps
//! ([`steps`]), its files and the `student` patterns ([`files`]), the
//! book's chapters it names ([`book`]), its guest hardware ([`devices`]:
//! memory, disks, NVMe controllers), the randomised inputs of
//! differential steps ([`inputs`]), the rules for student files
//! ([`policy`], its [`rules`]) and the labs' skeletons made from their
//! solutions ([`skeleton`]).

pub mod book;
pub mod devices;
pub mod files;
pub mod inputs;
pub mod lab;
pub mod policy;
pub mod rules;
pub mod skeleton;
pub mod steps;
