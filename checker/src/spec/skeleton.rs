//! A lab's skeleton, generated from its reference solution.
//!
//! The exercise and its solution are one source: the solution's copy of a
//! student file (see [`crate::spec::lab`]'s `student` and `solution_dir`) marks
//! each part the student writes, and the skeleton is that file with each
//! marked part replaced by what the student starts from, the way the
//! Linux kernel labs of UPB generate their skeletons from TODO markers:
//!
//! ```text
//!     // TODO-BEGIN
//!     let needed = self.len().checked_add(additional).ok_or(ENOMEM)?;
//!     // TODO-ELSE
//!     // // TODO: compute the length needed (`checked_add`: ENOMEM on overflow).
//!     // Err(ENOMEM)
//!     // TODO-END
//! ```
//!
//! becomes, in the skeleton,
//!
//! ```text
//!     // TODO: compute the length needed (`checked_add`: ENOMEM on overflow).
//!     Err(ENOMEM)
//! ```
//!
//! The lines between `TODO-BEGIN` and `TODO-ELSE` (or `TODO-END` when there
//! is no `TODO-ELSE`) are the solution's and are left out. Each line
//! between `TODO-ELSE` and `TODO-END` is a comment in the solution, so that
//! the solution still compiles; in the skeleton it loses its first `// `
//! (or a bare `//`), so `// // TODO: ...` becomes the comment `// TODO: ...`
//! and `// Err(ENOMEM)` becomes code. The marker lines themselves never
//! reach the skeleton; every other line is copied as it is. Regions do not
//! nest.
//!
//! The generated skeletons are committed, since they are the files the
//! student edits: `checker/tests/skeletons.rs` fails when one differs from
//! what its solution generates, and `UPDATE_EXPECT=1 cargo test -p checker
//! --test skeletons` writes them again.

use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::spec::lab::Lab;

/// The markers, as they appear after a line's indentation.
const BEGIN: &str = "// TODO-BEGIN";
const ELSE: &str = "// TODO-ELSE";
const END: &str = "// TODO-END";

/// A mistake in a solution's markers: its line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerError {
    /// The line of the solution file.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for MarkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for MarkerError {}

/// Where a line is, relative to the markers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Outside,
    Solution { begin: usize },
    Skeleton { begin: usize },
}

/// The marker a line is, if any (after its indentation; text after the
/// marker is allowed, as a note to the reader of the solution).
fn marker(line: &str) -> Option<&'static str> {
    let code = line.trim_start();
    [BEGIN, ELSE, END].into_iter().find(|m| {
        code.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':']))
    })
}

/// Whether `solution` has any marker: a student file without one is kept
/// by hand (for instance a file the student writes from nothing).
pub fn has_markers(solution: &str) -> bool {
    solution.lines().any(|l| marker(l).is_some())
}

/// The skeleton of `solution` (see the module docs).
pub fn generate(solution: &str) -> Result<String, MarkerError> {
    let mut out = String::with_capacity(solution.len());
    let mut state = State::Outside;
    for (i, line) in solution.lines().enumerate() {
        let n = i + 1;
        let err = |message: &str| MarkerError {
            line: n,
            message: message.to_string(),
        };
        match (marker(line), state) {
            (Some(BEGIN), State::Outside) => state = State::Solution { begin: n },
            (Some(BEGIN), _) => {
                return Err(err("TODO-BEGIN inside a region (regions do not nest)"))
            }
            (Some(ELSE), State::Solution { begin }) => state = State::Skeleton { begin },
            (Some(ELSE), State::Outside) => return Err(err("TODO-ELSE outside a region")),
            (Some(ELSE), State::Skeleton { .. }) => return Err(err("a second TODO-ELSE")),
            (Some(_), State::Outside) => return Err(err("TODO-END without TODO-BEGIN")),
            (Some(_), _) => state = State::Outside,
            (None, State::Outside) => {
                out.push_str(line);
                out.push('\n');
            }
            (None, State::Solution { .. }) => {}
            (None, State::Skeleton { .. }) => {
                let indent = &line[..line.len() - line.trim_start().len()];
                let rest = &line[indent.len()..];
                let text = rest
                    .strip_prefix("// ")
                    .or_else(|| (rest == "//").then_some(""))
                    .ok_or_else(|| {
                        err("a skeleton line (after TODO-ELSE) must be a `// ` comment")
                    })?;
                if !text.is_empty() {
                    out.push_str(indent);
                    out.push_str(text);
                }
                out.push('\n');
            }
        }
    }
    match state {
        State::Outside => Ok(out),
        State::Solution { begin } | State::Skeleton { begin } => Err(MarkerError {
            line: begin,
            message: "TODO-BEGIN without TODO-END".to_string(),
        }),
    }
}

/// One generated file of a lab: the solution's copy it comes from and the
/// student's copy it must equal.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The solution's copy, with the markers.
    pub solution: PathBuf,
    /// The skeleton, in the lab folder.
    pub skeleton: PathBuf,
}

/// The student files of `lab` whose solution copies have markers, each
/// with the path of the skeleton it generates.
pub fn generated_files(lab: &Lab) -> Result<Vec<Generated>> {
    let mut files = Vec::new();
    for file in lab.student_files()? {
        let solution = lab.solution_dir().join(&file);
        let text = std::fs::read_to_string(&solution)
            .with_context(|| format!("reading {}", solution.display()))?;
        if has_markers(&text) {
            files.push(Generated {
                solution,
                skeleton: lab.dir.join(&file),
            });
        }
    }
    Ok(files)
}

/// The skeleton that `file.solution` generates.
pub fn generate_file(file: &Generated) -> Result<String> {
    let text = std::fs::read_to_string(&file.solution)
        .with_context(|| format!("reading {}", file.solution.display()))?;
    generate(&text).with_context(|| format!("{}", file.solution.display()))
}

/// The skeleton form of `lab`'s solution copies, for a grading workspace
/// whose harness builds against a finished driver (labs 08, 10 and 11 take
/// their harness from `drivers/<driver>`, which is also their
/// `solution_dir`): each student file's solution copy, relative to
/// [`Lab::solution_dir`], with what the student starts from. A copy with
/// markers becomes its generated skeleton; one without (a file the student
/// writes from nothing) becomes the lab folder's own copy.
pub fn skeleton_form(lab: &Lab) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for file in lab.solution_files()? {
        let solution = lab.solution_dir().join(&file);
        let text = std::fs::read_to_string(&solution)
            .with_context(|| format!("reading {}", solution.display()))?;
        let skeleton = if has_markers(&text) {
            generate(&text).with_context(|| format!("{}", solution.display()))?
        } else {
            let own = lab.dir.join(&file);
            std::fs::read_to_string(&own).with_context(|| format!("reading {}", own.display()))?
        };
        out.push((file, skeleton));
    }
    Ok(out)
}

/// `solution` as a reader of the book sees it: the solution's lines, without
/// the markers and the skeleton's lines. The book's solution pages include
/// the solutions by anchor, and the book runs this over every page as an
/// mdBook preprocessor (`checker mdbook-preprocess`, [`crate::commands::mdbook`]). A code fence ends any
/// region an anchor cut short.
pub fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skeleton = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            skeleton = false;
        }
        match marker(line.trim_end_matches(['\n', '\r'])) {
            Some(ELSE) => skeleton = true,
            Some(_) => skeleton = false,
            None if !skeleton => out.push_str(line),
            None => {}
        }
    }
    out
}

/// Whether `line` is a marker line (`// TODO-BEGIN`, `// TODO-ELSE`,
/// `// TODO-END` after its indentation).
pub fn is_marker(line: &str) -> bool {
    marker(line).is_some()
}

/// For each line of `text`, whether it shows any of a solution region:
/// a marker, or a line between `TODO-BEGIN` and `TODO-END` (the
/// skeleton's lines too, which only a solution file carries as comments).
/// A region left open runs to the end.
pub fn region_lines(text: &str) -> Vec<bool> {
    let mut inside = false;
    text.lines()
        .map(|line| match marker(line) {
            Some(BEGIN) => {
                inside = true;
                true
            }
            Some(END) => {
                inside = false;
                true
            }
            Some(_) => true,
            None => inside,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    #[track_caller]
    fn check(solution: &str, expect: Expect) {
        let out = match generate(solution) {
            Ok(s) => s,
            Err(e) => format!("error: {e}\n"),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn a_region_becomes_its_skeleton_lines() {
        check(
            "fn f() -> Result {\n    // TODO-BEGIN\n    work()?;\n    Ok(())\n    // TODO-ELSE\n    // // TODO: do the work.\n    //\n    // Err(ENOSYS)\n    // TODO-END\n}\n",
            expect![[r#"
                fn f() -> Result {
                    // TODO: do the work.

                    Err(ENOSYS)
                }
            "#]],
        );
    }

    #[test]
    fn a_region_without_else_disappears() {
        check(
            "use a;\n// TODO-BEGIN: only the solution needs it\nuse b;\n// TODO-END\nuse c;\n",
            expect![[r#"
                use a;
                use c;
            "#]],
        );
    }

    #[test]
    fn text_without_markers_is_copied() {
        let text = "// TODO: not a marker\n// TODO-BEGINNING is not one either\nfn f() {}\n";
        assert!(!has_markers(text));
        assert_eq!(generate(text).as_deref(), Ok(text));
    }

    #[test]
    fn a_skeleton_line_must_be_a_comment() {
        check(
            "// TODO-BEGIN\na\n// TODO-ELSE\nb\n// TODO-END\n",
            expect![[r#"
                error: line 4: a skeleton line (after TODO-ELSE) must be a `// ` comment
            "#]],
        );
    }

    #[test]
    fn regions_do_not_nest() {
        check(
            "// TODO-BEGIN\n// TODO-BEGIN\n// TODO-END\n// TODO-END\n",
            expect![[r#"
                error: line 2: TODO-BEGIN inside a region (regions do not nest)
            "#]],
        );
    }

    #[test]
    fn every_region_ends() {
        check(
            "a\n// TODO-BEGIN\nb\n// TODO-ELSE\n",
            expect![[r#"
                error: line 2: TODO-BEGIN without TODO-END
            "#]],
        );
        check(
            "// TODO-END\n",
            expect![[r#"
                error: line 1: TODO-END without TODO-BEGIN
            "#]],
        );
        check(
            "// TODO-ELSE\n",
            expect![[r#"
                error: line 1: TODO-ELSE outside a region
            "#]],
        );
        check(
            "// TODO-BEGIN\n// TODO-ELSE\n// TODO-ELSE\n// TODO-END\n",
            expect![[r#"
                error: line 3: a second TODO-ELSE
            "#]],
        );
    }

    #[test]
    fn the_book_shows_the_solution_without_markers() {
        let text = "```rust\nfn f() {\n    // TODO-BEGIN\n    work();\n    // TODO-ELSE\n    // // TODO\n    // TODO-END\n}\n```\n";
        expect![[r#"
            ```rust
            fn f() {
                work();
            }
            ```
        "#]]
        .assert_eq(&strip_markers(text));
        // An anchor that ends inside the skeleton's lines: the fence ends them.
        let cut = "```rust\n// TODO-BEGIN\na\n// TODO-ELSE\n// b\n```\ntext\n";
        assert_eq!(strip_markers(cut), "```rust\na\n```\ntext\n");
    }
}
