//! The escape sequences of the reports' colours, shared by the terminal
//! ([`crate::report::terminal`]) and the diffs ([`crate::report::diff`]).

/// The escape sequences of the few styles the reports use (all empty
/// without colour).
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Passed, added lines.
    pub green: &'static str,
    /// Failed, removed lines.
    pub red: &'static str,
    /// Updated, skipped, hints.
    pub yellow: &'static str,
    /// The score line.
    pub bold: &'static str,
    /// Diff context markers.
    pub dim: &'static str,
    /// Back to plain text.
    pub reset: &'static str,
}

impl Style {
    /// The styles, or none when `color` is false.
    pub fn new(color: bool) -> Style {
        if color {
            Style {
                green: "\x1b[32m",
                red: "\x1b[31m",
                yellow: "\x1b[33m",
                bold: "\x1b[1m",
                dim: "\x1b[2m",
                reset: "\x1b[0m",
            }
        } else {
            Style {
                green: "",
                red: "",
                yellow: "",
                bold: "",
                dim: "",
                reset: "",
            }
        }
    }
}
