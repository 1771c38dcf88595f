//! The book's mdBook preprocessor (`checker mdbook-preprocess`, named in
//! `book.toml`): after mdBook has expanded the includes, every chapter
//! goes through two passes:
//!
//! - [`crate::spec::skeleton::strip_markers`] drops the skeleton markers,
//!   so the solution pages show the reference code without them;
//! - [`figures`]: a ` ```mermaid ` listing becomes a figure, drawn in the
//!   reader's browser by `book/theme/diagrams.js` with Mermaid, in the
//!   colours of the reader's theme. Left as a listing, mdBook would hand it
//!   to highlight.js as code in a language it does not know.
//!
//! Every diagram names itself with an `accTitle:` line, which becomes the
//! figure's caption and its text alternative (Mermaid also writes it into
//! the SVG's `<title>`): no diagram reaches a reader without words.

use anyhow::{bail, Context, Result};

use crate::spec::skeleton::strip_markers;

/// Reads mdBook's `[context, book]` JSON and returns the book with both
/// passes applied to every chapter; an error names the chapter.
pub fn preprocess(input: &str) -> Result<String> {
    let (_context, mut book): (serde_json::Value, serde_json::Value) =
        serde_json::from_str(input).context("reading mdBook's JSON on stdin")?;
    for key in ["sections", "items"] {
        if let Some(items) = book.get_mut(key) {
            walk(items)?;
        }
    }
    Ok(serde_json::to_string(&book)?)
}

/// Applies both passes to every chapter of `items` and its sub-chapters.
fn walk(items: &mut serde_json::Value) -> Result<()> {
    let Some(items) = items.as_array_mut() else {
        return Ok(());
    };
    for item in items {
        let Some(chapter) = item.get_mut("Chapter") else {
            continue;
        };
        let path = chapter
            .get("path")
            .and_then(|p| p.as_str())
            .unwrap_or("(a chapter)")
            .to_owned();
        if let Some(content) = chapter.get_mut("content") {
            if let Some(text) = content.as_str() {
                let text = figures(&strip_markers(text)).with_context(|| path.clone())?;
                *content = serde_json::Value::String(text);
            }
        }
        if let Some(sub) = chapter.get_mut("sub_items") {
            walk(sub)?;
        }
    }
    Ok(())
}

/// Turns every ` ```mermaid ` listing of `markdown` into an HTML figure
/// holding the diagram's source, escaped, and its `accTitle` as caption.
/// Other listings, and `mermaid` inside them, are copied as they are.
pub fn figures(markdown: &str) -> Result<String> {
    let mut out = String::with_capacity(markdown.len());
    let mut lines = markdown.split_inclusive('\n').enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(fence) = opening_fence(line) else {
            out.push_str(line);
            continue;
        };
        let mut body: Vec<&str> = Vec::new();
        let mut closed = false;
        for (_, inner) in lines.by_ref() {
            if is_closing(inner, fence.marker) {
                closed = true;
                if !fence.mermaid {
                    out.push_str(line);
                    body.iter().for_each(|l| out.push_str(l));
                    out.push_str(inner);
                }
                break;
            }
            body.push(inner);
        }
        if !closed {
            bail!("line {}: a listing that never ends", n + 1);
        }
        if fence.mermaid {
            out.push_str(&figure(&body).with_context(|| format!("line {}", n + 1))?);
        }
    }
    Ok(out)
}

/// An opening code fence: its marker (```` ``` ```` or `~~~`, as long as
/// written) and whether its language is `mermaid`.
struct Fence<'a> {
    marker: &'a str,
    mermaid: bool,
}

fn opening_fence(line: &str) -> Option<Fence<'_>> {
    let line = line.trim_end();
    let ch = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = line.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = line[len..].trim();
    Some(Fence {
        marker: &line[..len],
        mermaid: info == "mermaid",
    })
}

fn is_closing(line: &str, marker: &str) -> bool {
    let line = line.trim_end();
    line.starts_with(marker) && line.chars().all(|c| marker.starts_with(c))
}

/// The figure for one diagram's source lines. Blank lines are left out:
/// in Markdown a blank line ends an HTML block.
fn figure(body: &[&str]) -> Result<String> {
    let title = body
        .iter()
        .find_map(|l| l.trim().strip_prefix("accTitle:"))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let Some(title) = title else {
        bail!("a mermaid diagram needs an `accTitle: ...` line (its caption and text alternative)");
    };
    let source: String = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| escape(l))
        .collect();
    let title = escape(title);
    Ok(format!(
        "<figure class=\"diagram\" role=\"group\" aria-label=\"{title}\">\n\
         <pre class=\"mermaid\">\n{source}</pre>\n\
         <figcaption>{title}</figcaption>\n\
         </figure>\n"
    ))
}

/// `text` with the characters HTML gives a meaning escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    #[track_caller]
    fn check(markdown: &str, expect: Expect) {
        let out = figures(markdown).unwrap_or_else(|e| format!("error: {e:#}\n"));
        expect.assert_eq(&out);
    }

    #[test]
    fn a_diagram_becomes_a_figure() {
        check(
            "Text.\n\n```mermaid\nflowchart LR\n  accTitle: A to B\n\n  a[\"x < y\"] --> b\n```\n\nMore.\n",
            expect![[r#"
                Text.

                <figure class="diagram" role="group" aria-label="A to B">
                <pre class="mermaid">
                flowchart LR
                  accTitle: A to B
                  a[&quot;x &lt; y&quot;] --&gt; b
                </pre>
                <figcaption>A to B</figcaption>
                </figure>

                More.
            "#]],
        );
    }

    #[test]
    fn other_listings_are_copied() {
        let text = "````markdown\n```mermaid\nnot a diagram\n```\n````\n```rust\nfn f() {}\n```\n";
        assert_eq!(figures(text).unwrap(), text);
    }

    #[test]
    fn a_diagram_needs_a_title() {
        check(
            "```mermaid\nflowchart LR\n  a --> b\n```\n",
            expect![[r#"
                error: line 1: a mermaid diagram needs an `accTitle: ...` line (its caption and text alternative)
            "#]],
        );
    }

    #[test]
    fn the_preprocessor_does_both_to_every_chapter() {
        let input = r#"[{"root": "."}, {"sections": [{"Chapter": {"name": "a", "path": "a.md", "content": "x\n// TODO-BEGIN\ny\n// TODO-ELSE\n// z\n// TODO-END\n", "sub_items": [{"Chapter": {"name": "b", "path": "b.md", "content": "```mermaid\naccTitle: T\n```\n", "sub_items": []}}]}}, "Separator"], "__non_exhaustive": null}]"#;
        expect![[r#"{"__non_exhaustive":null,"sections":[{"Chapter":{"content":"x\ny\n","name":"a","path":"a.md","sub_items":[{"Chapter":{"content":"<figure class=\"diagram\" role=\"group\" aria-label=\"T\">\n<pre class=\"mermaid\">\naccTitle: T\n</pre>\n<figcaption>T</figcaption>\n</figure>\n","name":"b","path":"b.md","sub_items":[]}}]}},"Separator"]}"#]]
            .assert_eq(&preprocess(input).unwrap());
        let bad = input.replace("accTitle: T", "flowchart LR");
        expect!["b.md: line 1: a mermaid diagram needs an `accTitle: ...` line (its caption and text alternative)"]
            .assert_eq(&format!("{:#}", preprocess(&bad).unwrap_err()));
    }

    #[test]
    fn a_listing_must_end() {
        check(
            "a\n```mermaid\nflowchart LR\n",
            expect![[r#"
                error: line 2: a listing that never ends
            "#]],
        );
    }
}
