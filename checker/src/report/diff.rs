//! A failed step's expected/actual line diff, for the terminal, the
//! reports and Gradescope: grading keeps the two texts
//! ([`StepGrade::expected`], [`StepGrade::actual`]), this renders them.

use std::fmt::Write as _;

use crate::grade::{Failure, Status, StepGrade};
use crate::report::style::Style;

/// The expected/actual line diff of a mismatch.
pub fn step_diff(g: &StepGrade, color: bool) -> Option<String> {
    match (&g.status, &g.expected) {
        (Status::Failed(Failure::Mismatch), Some(expected)) => {
            Some(diff(expected, g.actual.as_deref().unwrap_or(""), color))
        }
        _ => None,
    }
}

/// A line diff, `-` expected / `+` actual, with 3 lines of context;
/// coloured when `color`.
pub fn diff(expected: &str, actual: &str, color: bool) -> String {
    use similar::{ChangeTag, TextDiff};
    let Style {
        red,
        green,
        dim,
        reset,
        ..
    } = Style::new(color);
    let d = TextDiff::from_lines(expected, actual);
    let mut out = String::new();
    for (g, group) in d.grouped_ops(3).iter().enumerate() {
        if g > 0 {
            let _ = writeln!(out, "{dim}...{reset}");
        }
        for op in group {
            for change in d.iter_changes(op) {
                let line = change.value();
                let line = line.strip_suffix('\n').unwrap_or(line);
                let missing_newline = if change.missing_newline() {
                    " (no newline at end)"
                } else {
                    ""
                };
                let _ = match change.tag() {
                    ChangeTag::Delete => writeln!(out, "{red}-{line}{missing_newline}{reset}"),
                    ChangeTag::Insert => writeln!(out, "{green}+{line}{missing_newline}{reset}"),
                    ChangeTag::Equal => writeln!(out, " {line}"),
                };
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn line_diff() {
        expect![[r#"
             $ cat /dev/x
            -status: 0
            +status: 1
             --- output
            -hello
            +hullo
             --- kernel log
        "#]]
        .assert_eq(&diff(
            "$ cat /dev/x\nstatus: 0\n--- output\nhello\n--- kernel log\n",
            "$ cat /dev/x\nstatus: 1\n--- output\nhullo\n--- kernel log\n",
            false,
        ));
        assert_eq!(
            diff("a\n", "b\n", true),
            "\x1b[31m-a\x1b[0m\n\x1b[32m+b\x1b[0m\n"
        );
    }
}
