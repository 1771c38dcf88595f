//! Every lab's skeleton is generated from its reference solution's TODO
//! markers (see `checker::spec::skeleton`), and the committed skeleton is what
//! the solution generates now. `UPDATE_EXPECT=1` writes them again.

use std::path::PathBuf;

use checker::spec::lab::{all_labs, Lab};
use checker::spec::skeleton::{generate_file, generated_files};

use checker::tools::workspace::source_root as root;

fn labs() -> Vec<Lab> {
    all_labs(&root())
        .expect("labs/ is readable")
        .iter()
        .map(|dir| Lab::load(dir).expect("lab.toml parses"))
        .collect()
}

#[test]
fn skeletons_are_what_the_solutions_generate() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut stale = Vec::new();
    for lab in labs() {
        for file in generated_files(&lab).expect("the student files are listed") {
            let want = generate_file(&file).expect("the markers are well formed");
            let have = std::fs::read_to_string(&file.skeleton).unwrap_or_default();
            if have == want {
                continue;
            }
            if update {
                std::fs::write(&file.skeleton, &want).expect("the skeleton is writable");
            } else {
                stale.push(format!(
                    "{} differs from what {} generates",
                    file.skeleton.display(),
                    file.solution.display()
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{}\n(UPDATE_EXPECT=1 cargo test -p checker --test skeletons writes them)",
        stale.join("\n")
    );
}

/// One source per exercise: every lab's student files come from markers,
/// none is a second copy kept by hand.
#[test]
fn every_student_file_is_generated() {
    let mut by_hand = Vec::new();
    for lab in labs() {
        let generated: Vec<PathBuf> = generated_files(&lab)
            .expect("the student files are listed")
            .into_iter()
            .map(|f| f.skeleton)
            .collect();
        for file in lab.student_files().expect("the student files are listed") {
            let path = lab.dir.join(&file);
            if !generated.contains(&path) {
                by_hand.push(format!(
                    "{}: {file} has no TODO markers in its solution",
                    lab.name
                ));
            }
        }
    }
    assert!(by_hand.is_empty(), "{}", by_hand.join("\n"));
}
