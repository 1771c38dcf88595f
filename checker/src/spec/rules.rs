//! The rules of the student-file policy ([`crate::spec::policy`]), named
//! as a lab's `allow` (`lab.toml`, [`crate::spec::lab`]) names them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A rule of the policy, named as `allow` in `lab.toml` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// No `unsafe`: blocks, functions, impls, traits, `extern` blocks,
    /// function pointer types, `#[unsafe(...)]` attributes.
    Unsafe,
    /// No path segment `bindings`: the kernel crate's raw C bindings.
    Bindings,
    /// No `include!`, `include_str!`, `include_bytes!`: files read at
    /// build time.
    Include,
    /// No `env!`, `option_env!`: the build's environment.
    Env,
    /// No `#[path = ...]`: a module made of another file.
    PathAttribute,
    /// No `extern crate`.
    ExternCrate,
    /// No `std`: kernel code has none, and a proc macro (lab 02) must not
    /// reach files, processes or the environment while it builds.
    Std,
    /// No `#![feature(...)]`: the kernel build turns unstable features on
    /// for the kernel crate, not for student code.
    Features,
    /// No `#[no_mangle]`, `#[export_name]`: symbols that could replace the
    /// kernel's.
    SymbolNames,
    /// No `#[link_section]`, `#[used]`: data placed in the module's
    /// sections, such as the `.modinfo` the kernel reads.
    LinkSections,
    /// No `asm!`, `global_asm!`, `naked_asm!`, and no glob import from
    /// `core::arch` that would bring them in unnamed.
    Asm,
    /// No macro the token scan cannot see through: a `macro_rules!` body
    /// that calls a macro named by a fragment (`$m!(...)`) or builds an
    /// attribute from one (`#[$m]`), and no forbidden macro's name passed
    /// to a macro as a plain word (`m!(include_str, "...")`).
    OpaqueMacros,
    /// Every source file the compiler read is a course file or a student
    /// file this policy checked (checked after the build, on the
    /// compiler's dep-info).
    Sources,
}

impl Rule {
    /// The name `allow` uses.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Unsafe => "unsafe",
            Rule::Bindings => "bindings",
            Rule::Include => "include",
            Rule::Env => "env",
            Rule::PathAttribute => "path-attribute",
            Rule::ExternCrate => "extern-crate",
            Rule::Std => "std",
            Rule::Features => "features",
            Rule::SymbolNames => "symbol-names",
            Rule::LinkSections => "link-sections",
            Rule::Asm => "asm",
            Rule::OpaqueMacros => "opaque-macros",
            Rule::Sources => "sources",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_as_lab_toml_writes_them() {
        #[derive(Deserialize)]
        struct T {
            allow: Vec<Rule>,
        }
        let t: T = toml::from_str(
            "allow = ['unsafe', 'bindings', 'include', 'env', 'path-attribute', 'extern-crate', \
             'std', 'features', 'symbol-names', 'link-sections', 'asm', 'opaque-macros', 'sources']",
        )
        .unwrap();
        let names: Vec<&str> = t.allow.iter().map(|r| r.name()).collect();
        assert_eq!(
            names.join(" "),
            "unsafe bindings include env path-attribute extern-crate std features symbol-names link-sections asm opaque-macros sources"
        );
        let err = toml::from_str::<T>("allow = ['unsafe_code']")
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("unknown variant `unsafe_code`"),
            "{err}"
        );
    }
}
