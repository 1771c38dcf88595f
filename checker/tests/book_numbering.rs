//! The book's chapters and the labs are numbered alike, as the
//! introduction promises: `labs/lab-NN` goes with chapter NN, as mdBook
//! numbers `book/src/SUMMARY.md` (sections such as 4.1 have no lab of their
//! own, and draft chapters none yet).

use checker::spec::book::{book_chapters, BookChapter};
use checker::spec::lab::{all_labs, Lab};

use checker::tools::workspace::source_root as root;

fn chapters() -> Vec<BookChapter> {
    book_chapters(&root()).expect("book/src/SUMMARY.md parses")
}

/// NN of `lab-NN`.
fn lab_number(lab: &Lab) -> u32 {
    lab.name
        .strip_prefix("lab-")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}: a lab folder is named lab-NN", lab.name))
}

/// Fails with `what` and the list when `wrong` is not empty.
#[track_caller]
fn none_of(what: &str, wrong: &[String]) {
    assert!(wrong.is_empty(), "{what}:\n{}", wrong.join("\n"));
}

#[test]
fn every_lab_names_the_chapter_with_its_number() {
    let chapters = chapters();
    let labs = all_labs(&root()).expect("labs/ is readable");
    assert!(!labs.is_empty(), "no lab found under labs/");
    let mut wrong = Vec::new();
    for dir in labs {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        let number = lab_number(&lab);
        let file = lab.config.chapter.as_str();
        match chapters.iter().find(|c| c.file.as_deref() == Some(file)) {
            None => wrong.push(format!(
                "{}: its chapter, {file}, is not a numbered chapter of book/src/SUMMARY.md",
                lab.name
            )),
            Some(c) if c.number != [number] => wrong.push(format!(
                "{}: its chapter, {file} (\"{}\"), is numbered {} in book/src/SUMMARY.md, \
                 not {number}",
                lab.name,
                c.title,
                c.number_text()
            )),
            Some(_) => {}
        }
    }
    none_of("chapter and lab numbers differ", &wrong);
}

/// The converse: every numbered chapter that is written (not a draft, not
/// a section of another) has the lab with its number.
#[test]
fn every_written_chapter_has_the_lab_with_its_number() {
    let mut wrong = Vec::new();
    for c in chapters() {
        let (Some(file), [number]) = (c.file.as_deref(), c.number.as_slice()) else {
            continue;
        };
        let name = format!("lab-{number:02}");
        let dir = root().join("labs").join(&name);
        if !dir.join("lab.toml").is_file() {
            wrong.push(format!(
                "chapter {number}, {file}: there is no labs/{name}/lab.toml"
            ));
            continue;
        }
        let lab = Lab::load(&dir).expect("lab.toml parses");
        if lab.config.chapter != file {
            wrong.push(format!(
                "chapter {number}, {file}: labs/{name}/lab.toml names {} instead",
                lab.config.chapter
            ));
        }
    }
    none_of("chapters without their lab", &wrong);
}
