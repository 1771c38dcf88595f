//! A forgery: the vector is the reference solution's, made a module of by
//! `#[path]`, an attribute built by a macro of the student's from a `meta`
//! fragment. A token scan sees no `#[path]`; the `opaque-macros` rule
//! refuses the macro, and the grading workspace holds no `solution/`.

macro_rules! module_from {
    ($how:meta) => {
        #[$how]
        mod reference;
    };
}

module_from!(path = "../solution/src/vec.rs");

pub(crate) use reference::LabVec;
