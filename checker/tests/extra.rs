//! The instructor's hidden steps in `tests/extra/` load onto their labs
//! (`checker grade --extra`), and each has its snapshot.

use std::path::{Path, PathBuf};

use checker::lab::Lab;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("checker/ has a parent")
        .to_path_buf()
}

#[test]
fn extra_steps_load_onto_their_labs() {
    let extra = root().join("checker/tests/extra");
    let mut shown = Vec::new();
    for lab in ["lab-01", "lab-03"] {
        let mut lab = Lab::load(&root().join("labs").join(lab)).expect("lab.toml parses");
        let own = lab.config.steps.len();
        let added = lab.add_extra(&extra).expect("the extra steps are valid");
        for index in own..own + added {
            let step = &lab.config.steps[index];
            let expected = lab.expected_path(index);
            assert!(expected.starts_with(&extra), "{}", expected.display());
            if !step.differential {
                assert!(expected.is_file(), "{} is missing", expected.display());
            }
            shown.push(format!(
                "{} {:02} {}{}",
                lab.name,
                index + 1,
                step.name,
                if step.differential {
                    " (differential)"
                } else {
                    ""
                }
            ));
        }
    }
    expect_test::expect![[r#"
        lab-01 05 reload
        lab-03 14 hidden-count (differential)"#]]
    .assert_eq(&shown.join("\n"));
}
