//! The book's table of contents, `book/src/SUMMARY.md`, read the way
//! mdBook numbers it: which chapter a lab's `chapter` key names, and its
//! heading ("chapter 4: ..."), which a run shows and
//! `tests/book_numbering.rs` checks against the labs.

use std::path::Path;

use anyhow::{bail, Context, Result};

/// A numbered entry of the book's table of contents, `book/src/SUMMARY.md`,
/// with the number mdBook gives it (see [`numbered_chapters`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookChapter {
    /// The number: `[4]` for chapter 4, `[4, 1]` for its section 4.1.
    pub number: Vec<u32>,
    /// The title as the table of contents shows it (inline code without
    /// its backticks).
    pub title: String,
    /// The file under `book/src`, as a lab's `chapter` names it; `None` for
    /// a draft chapter, `[Title]()`.
    pub file: Option<String>,
}

impl BookChapter {
    /// The number as mdBook prints it, without the final dot: `4`, `4.1`.
    pub fn number_text(&self) -> String {
        let parts: Vec<String> = self.number.iter().map(u32::to_string).collect();
        parts.join(".")
    }

    /// `chapter 4: Errors, printing and the allocator`, or `section 4.1:
    /// The debug kernel` for a nested entry.
    pub fn heading(&self) -> String {
        let kind = if self.number.len() == 1 {
            "chapter"
        } else {
            "section"
        };
        format!("{kind} {}: {}", self.number_text(), self.title)
    }
}

/// The numbered chapters of `<root>/book/src/SUMMARY.md` (see
/// [`numbered_chapters`]).
pub fn book_chapters(root: &Path) -> Result<Vec<BookChapter>> {
    let file = root.join("book/src/SUMMARY.md");
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    numbered_chapters(&text).with_context(|| format!("invalid {}", file.display()))
}

/// The heading of the book's chapter `file` (a lab's `chapter`), read from
/// `<root>/book/src/SUMMARY.md`: `chapter 4: Errors, printing and the
/// allocator` for `errors-and-allocation.md`. `None` when there is no book
/// there or `file` is not one of its numbered chapters.
pub fn chapter_heading(root: &Path, file: &str) -> Option<String> {
    let chapters = book_chapters(root).ok()?;
    let chapter = chapters.iter().find(|c| c.file.as_deref() == Some(file))?;
    Some(chapter.heading())
}

/// The numbered chapters of the text of a `SUMMARY.md`, in reading order,
/// numbered the way mdBook numbers them:
///
/// - a first line `# Title` is the book's title;
/// - the links before the first list or part heading (`# Part`) are prefix
///   chapters, and the links after the numbered lists suffix chapters:
///   neither is numbered;
/// - the top-level items of the lists are numbered 1, 2, 3, ... through the
///   whole book: part headings, other headings and `---` separators do not
///   start the count again;
/// - the items nested in chapter N's item are N.1, N.2, ..., theirs N.1.1,
///   and so on;
/// - a draft chapter, `[Title]()`, is numbered like any other.
///
/// Like mdBook, it refuses a list item that is not a link and a list or a
/// part heading after the suffix chapters.
pub fn numbered_chapters(summary: &str) -> Result<Vec<BookChapter>> {
    let mut toc = Toc::default();
    let mut first_line = true;
    let mut in_comment = false;
    for (index, raw) in summary.lines().enumerate() {
        let line = index + 1;
        if in_comment {
            in_comment = !raw.contains("-->");
            continue;
        }
        let expanded = expand_tabs(raw);
        let text = expanded.trim_start();
        let indent = expanded.len() - text.len();
        if text.is_empty() {
            toc.continues = false;
        } else if text.starts_with("<!--") {
            in_comment = !text.contains("-->");
            toc.fresh = false;
        } else if indent < 4 && is_thematic_break(text) {
            first_line = false;
            toc.rule();
        } else if let Some(level) = heading_level(text).filter(|_| indent < 4) {
            let is_title = std::mem::take(&mut first_line);
            toc.heading(level, is_title, line)?;
        } else {
            first_line = false;
            toc.text(&expanded, indent, line)?;
        }
    }
    Ok(toc.chapters)
}

/// Where [`numbered_chapters`] is in a `SUMMARY.md`.
#[derive(Debug, Default, PartialEq)]
enum Section {
    /// Before the first list or part heading: prefix chapters.
    #[default]
    Prefix,
    /// The numbered lists and their part headings.
    Numbered,
    /// The links after the numbered lists: suffix chapters.
    Suffix,
}

/// One level of nested lists: items so far (for the top level, in the
/// whole book), and where the content of the last one starts.
struct Level {
    count: u32,
    content: usize,
}

/// The state of [`numbered_chapters`] between the lines of a `SUMMARY.md`.
#[derive(Default)]
struct Toc {
    section: Section,
    chapters: Vec<BookChapter>,
    levels: Vec<Level>,
    /// The number of the last top-level chapter.
    top: u32,
    /// The previous line belongs to a paragraph or a list item, so this one
    /// may continue it.
    continues: bool,
    /// Nothing but a part heading since the numbered section started:
    /// mdBook skips a paragraph here instead of starting the suffix
    /// chapters.
    fresh: bool,
}

impl Toc {
    /// A thematic break (`---`): the lists before it end.
    fn rule(&mut self) {
        if self.section == Section::Numbered {
            self.levels.clear();
            self.fresh = false;
        }
        self.continues = false;
    }

    /// A heading of `level`; a part heading (`#`) starts the numbered
    /// section, unless it is the book's title on the first line.
    fn heading(&mut self, level: usize, is_title: bool, line: usize) -> Result<()> {
        self.continues = false;
        if is_title && level == 1 {
            return Ok(());
        }
        match self.section {
            Section::Suffix if level == 1 => bail!(
                "line {line}: a part heading after the suffix chapters (the links after \
                 the numbered lists)"
            ),
            Section::Suffix => {}
            _ if level == 1 => {
                self.section = Section::Numbered;
                self.levels.clear();
                self.fresh = true;
            }
            Section::Numbered => {
                self.levels.clear();
                self.fresh = false;
            }
            Section::Prefix => {}
        }
        Ok(())
    }

    /// Any other line (`expanded` has its tabs expanded, `indent` columns
    /// of it are white space): a list item, a continuation or a paragraph.
    fn text(&mut self, expanded: &str, indent: usize, line: usize) -> Result<()> {
        // Text inside the last list item (indented to its content), or a
        // lazy continuation line of a paragraph or item.
        let inside_item = self.levels.first().is_some_and(|l| indent >= l.content);
        let item = list_item(expanded);
        if item.is_none() && (self.continues || inside_item) {
            self.continues = true;
            return Ok(());
        }
        self.continues = true;
        let Some((content_column, content)) = item else {
            // A paragraph: a prefix or suffix chapter, or prose.
            if self.section == Section::Numbered && !std::mem::take(&mut self.fresh) {
                self.section = Section::Suffix;
            }
            return Ok(());
        };
        self.fresh = false;
        match self.section {
            Section::Suffix => bail!(
                "line {line}: a list after the suffix chapters (the links after the numbered \
                 lists)"
            ),
            Section::Prefix => self.section = Section::Numbered,
            Section::Numbered => {}
        }
        let (title, file) = parse_link(content).with_context(|| {
            format!(
                "line {line}: a list item must be a link alone, `[Title](file.md)` or `[Title]()`"
            )
        })?;
        self.item(indent, content_column, title, file);
        Ok(())
    }

    /// A list item indented by `indent` whose content starts at
    /// `content_column`: it nests in every open level whose last item's
    /// content it is indented to.
    fn item(&mut self, indent: usize, content_column: usize, title: String, file: Option<String>) {
        let levels = &mut self.levels;
        let depth = levels.iter().take_while(|l| indent >= l.content).count();
        if depth == levels.len() {
            let count = if depth == 0 { self.top + 1 } else { 1 };
            levels.push(Level {
                count,
                content: content_column,
            });
        } else {
            levels.truncate(depth + 1);
            levels[depth].count += 1;
            levels[depth].content = content_column;
        }
        self.top = levels[0].count;
        self.chapters.push(BookChapter {
            number: levels.iter().map(|l| l.count).collect(),
            title,
            file,
        });
    }
}

/// A line with its tabs expanded to the next multiple of 4 columns.
fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c == '\t' {
            let spaces = 4 - out.chars().count() % 4;
            out.extend(std::iter::repeat_n(' ', spaces));
        } else {
            out.push(c);
        }
    }
    out
}

/// `---`, `***`, `___` (three or more, spaces allowed between).
fn is_thematic_break(text: &str) -> bool {
    let marks: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3 && ['-', '*', '_'].iter().any(|m| marks.iter().all(|c| c == m))
}

/// The level of an ATX heading (`# Part` is 1).
fn heading_level(text: &str) -> Option<usize> {
    let level = text.chars().take_while(|&c| c == '#').count();
    let rest = &text[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
        .then_some(level)
}

/// A list item's line: the column its content starts at, and the content.
fn list_item(line: &str) -> Option<(usize, &str)> {
    let text = line.trim_start();
    let indent = line.len() - text.len();
    let marker = if text.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        if !(1..=9).contains(&digits) || !text[digits..].starts_with(['.', ')']) {
            return None;
        }
        digits + 1
    };
    let after = &text[marker..];
    let content = after.trim_start();
    let spaces = after.len() - content.len();
    if spaces == 0 || content.is_empty() {
        return None;
    }
    // Five spaces or more after the marker: the content starts after one.
    let spaces = if spaces > 4 { 1 } else { spaces };
    Some((indent + marker + spaces, content))
}

/// `[Title](file.md)` or `[Title]()`, nothing else: the title as shown
/// (inline code without backticks, escapes resolved) and the file.
fn parse_link(content: &str) -> Result<(String, Option<String>)> {
    let content = content.trim_end();
    let inner = content
        .strip_prefix('[')
        .and_then(|c| c.strip_suffix(')'))
        .context("not a link")?;
    let (title, target) = inner.rsplit_once("](").context("not a link")?;
    let mut shown = String::new();
    let mut chars = title.chars();
    while let Some(c) = chars.next() {
        match c {
            '`' => {}
            '\\' => shown.extend(chars.next()),
            c => shown.push(c),
        }
    }
    let target = target.trim();
    let target = target
        .strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(target);
    let file = target.strip_prefix("./").unwrap_or(target);
    let file = (!file.is_empty()).then(|| file.to_owned());
    Ok((shown, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// The numbered chapters of a `SUMMARY.md`, one a line.
    fn toc(summary: &str) -> String {
        match numbered_chapters(summary) {
            Ok(chapters) => chapters
                .iter()
                .map(|c| {
                    let file = c.file.as_deref().unwrap_or("(draft)");
                    format!("{} {} {file}", c.number_text(), c.title)
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("error: {e:#}"),
        }
    }

    #[test]
    fn book_numbering_as_mdbook_does() {
        // Every case here was checked against mdBook 0.4.52's own numbering.
        let summary = "# Summary

[Introduction](introduction.md)
[Set-up](setup.md)

# Foundations

- [First](first.md)
- [The `second!` macro](./second.md)
  - [Nested](nested.md)
    - [Deeper](deeper.md)
  - [Nested too](nested-too.md)
- [Third](third.md)

# Devices

- [Fourth](fourth.md)

---

- [Fifth]()
<!-- a comment -->
- [Sixth](sixth.md)

## A subheading

1. [Seventh](seventh.md)
\t- [Tabbed](tabbed.md)

---

[For instructors](instructors.md)
[Appendix](appendix.md)
";
        expect![[r#"
            1 First first.md
            2 The second! macro second.md
            2.1 Nested nested.md
            2.1.1 Deeper deeper.md
            2.2 Nested too nested-too.md
            3 Third third.md
            4 Fourth fourth.md
            5 Fifth (draft)
            6 Sixth sixth.md
            7 Seventh seventh.md
            7.1 Tabbed tabbed.md"#]]
        .assert_eq(&toc(summary));
        assert_eq!(
            numbered_chapters(summary).unwrap()[3].heading(),
            "section 2.1.1: Deeper"
        );
        assert_eq!(
            numbered_chapters(summary).unwrap()[5].heading(),
            "chapter 3: Third"
        );
    }

    #[test]
    fn book_numbering_without_parts_or_affixes() {
        expect![[r#"
            1 One one.md
            1.1 Lazy one-one.md
            2 Two two.md"#]]
        .assert_eq(&toc(
            "- [One](one.md)\n  more of the first item\n\n    - [Lazy](one-one.md)\n- [Two](two.md)\n",
        ));
        expect![[""]].assert_eq(&toc("# Summary\n\n[Only a prefix](intro.md)\n"));
        // mdBook skips a paragraph right after a part heading.
        expect![["1 One one.md"]].assert_eq(&toc(
            "# Summary\n\n# Part\n\n[Skipped](skipped.md)\n\n- [One](one.md)\n",
        ));
    }

    #[test]
    fn book_numbering_errors() {
        expect![[r#"error: line 3: a list item must be a link alone, `[Title](file.md)` or `[Title]()`: not a link"#]]
            .assert_eq(&toc("# Summary\n\n- Just text\n"));
        expect![[r#"error: line 5: a list after the suffix chapters (the links after the numbered lists)"#]]
            .assert_eq(&toc("- [One](one.md)\n\n[Suffix](suffix.md)\n\n- [Two](two.md)\n"));
        expect![[r#"error: line 5: a part heading after the suffix chapters (the links after the numbered lists)"#]]
            .assert_eq(&toc("- [One](one.md)\n\n[Suffix](suffix.md)\n\n# Part\n"));
    }

    #[test]
    fn chapter_heading_from_the_book() {
        let root = std::env::temp_dir().join(format!("checker-book-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("book/src")).unwrap();
        std::fs::write(
            root.join("book/src/SUMMARY.md"),
            "[Intro](intro.md)\n\n- [One](one.md)\n  - [Aside](aside.md)\n- [Two](two.md)\n",
        )
        .unwrap();
        let headings: Vec<Option<String>> = ["two.md", "aside.md", "intro.md"]
            .iter()
            .map(|f| chapter_heading(&root, f))
            .collect();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            headings,
            [
                Some("chapter 2: Two".to_owned()),
                Some("section 1.1: Aside".to_owned()),
                None
            ]
        );
        assert_eq!(chapter_heading(&root, "two.md"), None);
    }
}
