//! The instructor's hidden steps in `tests/extra/` load onto their labs
//! (`checker grade --extra`), and each has its snapshot.

use checker::spec::lab::Lab;

use checker::tools::workspace::source_root as root;

#[test]
fn extra_steps_load_onto_their_labs() {
    let extra = root().join("checker/tests/extra");
    let mut shown = Vec::new();
    for lab in ["lab-01", "lab-03", "lab-04"] {
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
            let compared_with = match step.differential {
                true => "the reference solution".to_owned(),
                false => expected.strip_prefix(&extra).unwrap().display().to_string(),
            };
            shown.push(format!(
                "{} step {}: {} (compared with {compared_with})",
                lab.name,
                index + 1,
                step.name
            ));
        }
    }
    expect_test::expect![[r#"
        lab-01 step 7: reload (compared with lab-01/expected/01-reload.txt)
        lab-03 step 16: hidden-count (compared with the reference solution)
        lab-04 step 8: three (compared with lab-04/expected/01-three.txt)"#]]
    .assert_eq(&shown.join("\n"));
}
