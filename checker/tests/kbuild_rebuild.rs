//! Kbuild rebuilds a module after an edit anywhere in its crate graph: in
//! the module's own package, even when that package lives outside the
//! module folder (lab 08's solution is `drivers/semaphore`), and in the
//! `kernel` crate; and it rebuilds nothing when nothing changed. The list
//! of inputs comes from cargo's dep-info file (see
//! `kernel-crate/kbuild/rust-module.mk`).
//!
//! This builds a real module through Kbuild, so it needs the kernel
//! headers of `make setup`; without them it says so and passes, except
//! under CI (`CI` set), where it fails.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

mod common;
use common::root;

/// `make -C labs/lab-08 SOLUTION=1` into a target folder of its own: the
/// `cargo test` running this holds the lock of the workspace's.
fn build(root: &Path) {
    let out = Command::new("make")
        .arg("-C")
        .arg(root.join("labs/lab-08"))
        .arg("SOLUTION=1")
        .arg(format!(
            "RUST_TARGET_DIR={}",
            root.join("target/kbuild-rebuild-test").display()
        ))
        .output()
        .expect("cannot run make");
    assert!(
        out.status.success(),
        "make failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Marks `source` as edited: its modification time moves past `object`'s.
fn edit(source: &Path, object: &Path) {
    let later = mtime(object) + Duration::from_secs(2);
    fs::File::options()
        .append(true)
        .open(source)
        .and_then(|f| f.set_modified(later.max(SystemTime::now())))
        .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
}

#[test]
fn an_edit_anywhere_in_the_crate_graph_rebuilds_the_module() {
    if !common::set_up() {
        return;
    }
    let root = root();
    let object = root.join("labs/lab-08/rust_semaphore_rust.o");
    build(&root);
    let built = mtime(&object);

    build(&root);
    assert_eq!(
        mtime(&object),
        built,
        "nothing changed, yet the module was rebuilt"
    );

    for source in ["drivers/semaphore/src/lib.rs", "kernel-crate/src/file.rs"] {
        let before = mtime(&object);
        edit(&root.join(source), &object);
        build(&root);
        assert!(
            mtime(&object) > before,
            "{source} changed but rust_semaphore_rust.o was not rebuilt"
        );
    }
}
