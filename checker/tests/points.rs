//! Every point measures the student: in every lab whose module can be
//! given inputs drawn per run, the differential steps (graded against the
//! reference solution's run with the same inputs, see
//! `checker::spec::inputs`) carry more than half of the points on Debian's
//! kernel, so a module that prints the snapshots' lines as constants, and
//! so passes every step that has a snapshot, scores less than half.
//! `snapshots/lab-points.txt` records each lab's points; `checker verify`
//! proves, with guest runs, that no scored step passes on a skeleton.

use checker::spec::lab::{all_labs, Lab};

use checker::tools::workspace::source_root as root;

/// Labs whose module cannot take inputs drawn per run, and why.
/// (Lab 02's exercise is a proc macro, whose output is fixed when the
/// module is built; its host step `expansion` runs the macro on many
/// inputs and carries more than half of its points instead.)
const FIXED: &[(&str, &str)] = &[(
    "lab-02",
    "the exercise is a proc macro: its output is fixed when the module is built",
)];

#[test]
fn a_fixed_transcript_scores_less_than_half() {
    let mut table = format!(
        "{:<8} {:>6} {:>13} {:>17}\n",
        "lab", "points", "differential", "fixed transcript"
    );
    let mut wrong = Vec::new();
    for dir in all_labs(&root()).expect("the labs") {
        let lab = Lab::load(&dir).expect("the lab loads");
        // Debian's kernel's run: the debug kernel's steps are left out.
        let steps: Vec<_> = (lab.config.steps.iter())
            .filter(|s| s.debug.is_none())
            .collect();
        let total: u32 = steps.iter().map(|s| s.points).sum();
        let differential: u32 = (steps.iter())
            .filter(|s| s.differential)
            .map(|s| s.points)
            .sum();
        let fixed = total - differential;
        table += &format!(
            "{:<8} {total:>6} {differential:>13} {:>17}\n",
            lab.name,
            format!("{fixed}/{total}")
        );
        let exempt = FIXED.iter().any(|(name, _)| *name == lab.name);
        if !exempt && 2 * fixed >= total {
            wrong.push(format!(
                "{}: a module that prints the snapshots earns {fixed}/{total}: \
                 give the differential steps more than half of the points",
                lab.name
            ));
        }
        if exempt && differential > 0 {
            wrong.push(format!(
                "{}: has differential steps: drop it from FIXED",
                lab.name
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    expect_test::expect_file!["snapshots/lab-points.txt"].assert_eq(&table);
}
