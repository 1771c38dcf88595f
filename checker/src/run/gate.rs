//! The run's side of the student-file policy ([`crate::spec::policy`]):
//! the check before the build, reported as an event and, when a rule is
//! broken, written to the build log as a failed build ([`gate`]); and the
//! check of what the build read, after it ([`sources_gate`]).

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::run::events::{Event, Reporter};
use crate::run::result::BuildOutcome;
use crate::spec::lab::Lab;
use crate::spec::policy::{
    check_run, check_sources, dep_info_paths, lexical, toolchain_dirs, Rule, Violation, REJECTED,
};
use crate::tools::setup::Toolchain;

/// `checker lab`'s check before the host steps and the build: prints one
/// line, and each broken rule. When a rule is broken, the build is failed
/// without running: the lines also go to `log` (the build log), and the
/// failed build is returned. A lab without student files (a sample, a
/// fixture) is not checked.
pub fn gate(
    lab: &Lab,
    solution: bool,
    log: &Path,
    out: &mut dyn Reporter,
) -> Result<Option<BuildOutcome>> {
    if lab.config.student.is_empty() {
        return Ok(None);
    }
    let checked = check_run(lab, solution)?;
    out.event(&Event::Policy {
        files: checked.files.clone(),
        ms: checked.time.as_secs_f64() * 1000.0,
        violations: checked.violations.clone(),
    });
    if checked.violations.is_empty() {
        return Ok(None);
    }
    let mut text = format!("checker: {REJECTED}\n");
    for v in &checked.violations {
        text.push_str(&format!("{v}\n"));
    }
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    fs::write(log, text).with_context(|| format!("cannot write {}", log.display()))?;
    Ok(Some(BuildOutcome {
        ok: false,
        time: checked.time,
        log: log.to_path_buf(),
        limit: None,
    }))
}

/// [`check_sources`] after a build that succeeded: the dep-info of the
/// lab's package under `tc`'s target folder. A missing dep-info fails the
/// check (nothing could be checked). Broken rules go to `log`; returns
/// whether none was. The reference solution's runs and labs without
/// student files are not checked.
pub fn sources_gate(lab: &Lab, tc: &Toolchain, solution: bool, log: &Path) -> Result<bool> {
    if solution || lab.config.student.is_empty() {
        return Ok(true);
    }
    let manifest = fs::read_to_string(lab.dir.join("Cargo.toml")).unwrap_or_default();
    let package = toml::from_str::<toml::Table>(&manifest)
        .ok()
        .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| lab.name.clone());
    let dir = lexical(&lab.dir);
    let root = dir.parent().and_then(Path::parent).unwrap_or(&dir);
    let target = crate::tools::exec::cargo_target_dir(root, tc);
    let file = crate::tools::exec::kernel_profile_dir(root, tc)
        .join(format!("lib{}.d", package.replace('-', "_")));
    let found = match fs::read_to_string(&file) {
        Ok(text) => check_sources(
            lab,
            solution,
            &dep_info_paths(&text),
            &target,
            &toolchain_dirs(tc),
        )?,
        Err(e) => vec![Violation {
            file: file.display().to_string(),
            line: 1,
            column: 1,
            rule: Some(Rule::Sources),
            reason: format!(
                "cannot read the build's dep-info ({e}), so what it read cannot be checked"
            ),
        }],
    };
    if found.is_empty() {
        return Ok(true);
    }
    let mut text = String::from(
        "checker: the build read files that are not the course's or the student's checked files\n",
    );
    for v in &found {
        text.push_str(&format!("{v}\n"));
    }
    let mut f = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)
        .with_context(|| format!("cannot write {}", log.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    Ok(false)
}
