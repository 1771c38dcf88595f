//! A lab's files: the files of a lab folder ([`list_files`]: no build
//! output, nothing hidden) and the `student` patterns that pick some of
//! them ([`glob_matches`], [`matching_files`], [`check_pattern`]).

use std::path::Path;

use anyhow::Result;

/// Whether `path` (relative, `/`-separated) matches `pattern`: `*` and `?`
/// match within one path segment, a `**` segment any number of segments.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    match_segments(&pattern, &path)
}

fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => path.split_first().is_some_and(|(segment, path_rest)| {
            match_segment(first.as_bytes(), segment.as_bytes()) && match_segments(rest, path_rest)
        }),
    }
}

fn match_segment(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| match_segment(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && match_segment(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && match_segment(rest, &name[1..]),
    }
}

/// Whether `pattern` may be a `student` pattern: a relative path inside
/// the lab folder, with only the wildcards [`glob_matches`] knows; else
/// why not.
pub fn check_pattern(pattern: &str) -> std::result::Result<(), &'static str> {
    if pattern.is_empty() {
        return Err("is empty");
    }
    if pattern.starts_with('/') {
        return Err("must be relative to the lab folder, not absolute");
    }
    if pattern.contains(['\\', '[', ']', '{', '}']) {
        return Err("may use only the wildcards `*`, `?` and `**`");
    }
    for segment in pattern.split('/') {
        match segment {
            "" => return Err("has an empty path segment"),
            "." | ".." => return Err("must stay inside the lab folder: no `.` or `..`"),
            s if s.contains("**") && s != "**" => {
                return Err("`**` must be a whole path segment (`src/**/*.rs`)")
            }
            _ => {}
        }
    }
    Ok(())
}

/// The files under `dir`, relative to it and `/`-separated, sorted; build
/// output and hidden entries left out, symbolic links not followed.
pub fn list_files(dir: &Path) -> Result<Vec<String>> {
    crate::tools::discovery::regular_files(dir, |_, name| {
        name.starts_with('.') || crate::tools::discovery::is_build_output(name)
    })
}

/// The files under `dir` that one of `patterns` matches (see
/// [`glob_matches`]), sorted.
pub fn matching_files(dir: &Path, patterns: &[String]) -> Result<Vec<String>> {
    if patterns.is_empty() {
        return Ok(Vec::new());
    }
    Ok(list_files(dir)?
        .into_iter()
        .filter(|f| patterns.iter().any(|p| glob_matches(p, f)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        // A pattern, the paths it matches, the paths it does not.
        let cases: [(&str, &[&str], &[&str]); 7] = [
            ("src/vec.rs", &["src/vec.rs"], &["src/vec.rs.orig"]),
            ("src/*.rs", &["src/vec.rs"], &["src/a/vec.rs"]),
            ("src/**/*.rs", &["src/vec.rs", "src/a/b/vec.rs"], &[]),
            ("**/strings.rs", &["macro/src/strings.rs"], &[]),
            ("src/v?c.rs", &["src/vec.rs"], &["src/vc.rs"]),
            ("src/**", &["src/a/b"], &["srcx/a"]),
            ("*", &["lib.rs"], &["src/lib.rs"]),
        ];
        for (pattern, matched, unmatched) in cases {
            for path in matched {
                assert!(glob_matches(pattern, path), "{pattern} {path}");
            }
            for path in unmatched {
                assert!(!glob_matches(pattern, path), "{pattern} {path}");
            }
        }
    }
}
