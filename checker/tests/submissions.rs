//! The submissions in `checker/tests/submissions/` get the verdicts they
//! should, on the host and before any build: each forgery is refused
//! whole (a binary patch), refused by the policy with the line named, or
//! its edit is ignored and named; the correct lab 02 has its file taken. `snapshots/submission-verdicts.txt`
//! holds the verdicts (the book's "For instructors" chapter includes it).

use std::fs;

use checker::batch::gradedir::{find_submissions, prepare_sources, Form};

use checker::tools::workspace::source_root as root;

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.join(", ")
    }
}

#[test]
fn every_submission_gets_its_verdict() {
    let root = root();
    let dir = root.join("checker/tests/submissions");
    let work = tempfile::tempdir().expect("a temporary folder");
    let mut out = String::new();
    for sub in find_submissions(&dir).expect("the submissions") {
        let form = match &sub.source {
            Form::Tree(_) => "a folder",
            Form::Patch(_) => "a patch",
        };
        let p = match prepare_sources(&root, &sub, work.path(), &[]) {
            Ok(p) => p,
            Err(e) => {
                out.push_str(&format!("{} ({form})\n  refused: {e:#}\n\n", sub.student));
                // Nothing of a refused submission stays.
                assert!(!work.path().join(&sub.student).join("submitted").exists());
                continue;
            }
        };
        let rejected: Vec<String> = p.violations.iter().map(|(_, v)| v.to_string()).collect();
        out.push_str(&format!(
            "{} ({form})\n  graded: {}\n  taken: {}\n  ignored: {}\n  rejected before the build:{}\n\n",
            sub.student,
            list(&p.labs),
            list(&p.files.taken),
            list(&p.files.ignored),
            if rejected.is_empty() {
                " (none)".to_owned()
            } else {
                rejected.iter().map(|v| format!("\n    {v}")).collect()
            }
        ));
        // Whatever was ignored, the workspace holds the course's copy.
        for path in p.files.ignored.iter().filter(|f| f.starts_with("labs/")) {
            let ours = fs::read(root.join(path)).ok();
            let graded = fs::read(p.workspace.join(path)).ok();
            let in_expected = path.contains("/expected/");
            assert!(
                in_expected || graded == ours,
                "{}: {path} is not the course's copy in the workspace",
                sub.student
            );
        }
        // And a student file taken is the student's (a patch's copy of
        // labs/ is gone once collected).
        match &sub.source {
            Form::Tree(dir) => {
                for path in &p.files.taken {
                    assert_eq!(
                        fs::read(p.workspace.join(path)).ok(),
                        fs::read(dir.join(path)).ok(),
                        "{}: {path}",
                        sub.student
                    );
                }
            }
            Form::Patch(_) => {
                assert!(!work.path().join(&sub.student).join("submitted").exists())
            }
        }
        // No answer in the workspace: no solution folder, no snapshot.
        for l in &p.labs {
            let dir = p.workspace.join("labs").join(l);
            assert!(!dir.join("solution").exists(), "{}: {l}", sub.student);
            assert!(!dir.join("expected").exists(), "{}: {l}", sub.student);
        }
    }
    expect_test::expect_file!["snapshots/submission-verdicts.txt"].assert_eq(out.trim_end());
}
