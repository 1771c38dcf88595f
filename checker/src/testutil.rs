//! What the unit tests share: labs parsed from `lab.toml` text, file
//! trees in temporary folders and a host toolchain.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::spec::lab::{self, Lab};
use crate::tools::setup::Toolchain;

/// The lab of `lab_toml` at `dir` (the folder need not exist; the name is
/// its last component). Unlike [`Lab::load`], `student` patterns are not
/// checked against files.
pub(crate) fn lab(dir: impl Into<PathBuf>, lab_toml: &str) -> Lab {
    let dir = dir.into();
    let name = dir
        .file_name()
        .map_or_else(|| "lab".to_owned(), |n| n.to_string_lossy().into_owned());
    let config = lab::parse(lab_toml).expect("the test's lab.toml parses");
    Lab { name, dir, config }
}

/// A lab loaded from `lab_toml` written into a new temporary folder, which
/// lives as long as the returned [`TempDir`].
pub(crate) fn lab_on_disk(lab_toml: &str) -> (TempDir, Lab) {
    let dir = tree(&[("lab.toml", lab_toml)]);
    let lab = Lab::load(dir.path()).expect("the test's lab loads");
    (dir, lab)
}

/// A new temporary folder holding `files` (a path relative to it, the
/// contents), with the folders they need.
pub(crate) fn tree(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    write(dir.path(), files);
    dir
}

/// Writes `files` below `root`, making the folders they need.
pub(crate) fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a folder"))
            .expect("the folder is made");
        std::fs::write(&path, contents).expect("the file is written");
    }
}

/// A Debian 12 host's toolchain (6.1 headers, no debug kernel) whose
/// checker cache is `cache`; the kernel paths need not exist.
pub(crate) fn host_toolchain(cache: &Path) -> Toolchain {
    Toolchain {
        abi: "6.1.0-57-amd64".into(),
        kdir: "/usr/src/linux-headers-6.1.0-57-amd64".into(),
        vmlinuz: "/c/6.1/vmlinuz".into(),
        boot_kernel: "/c/6.1/vmlinux".into(),
        modules_dir: "/c/6.1/lib/modules".into(),
        cache: cache.to_owned(),
        debug: false,
        rust_target_dir: None,
    }
}
