//! The debug guest kernel's build and cache (`make vm-debug`).
//!
//! Debian's kernel has none of the kernel's own bug detectors turned on. The
//! debug kernel is built here from Debian's kernel source of a series
//! (`linux-source-6.1`, `linux-source-6.12`: the caller finds the tarball,
//! see [`Source`]) with the options of `debug/debug.config` (KASAN,
//! lockdep, might-sleep checks, kmemleak, failslab) merged onto `make
//! allnoconfig`, and cached in `<cache>/debug-<source version>-<key>/`
//! where the key is a hash of the fragment's option lines: a changed option
//! means a new folder and a new build, an unchanged one means no build at
//! all. The source version starts with the series (`6.1.192-3`,
//! `6.12.95-1~bpo12+1`), so the two series' kernels live side by side.
//!
//! The fragment's `=m` options (the C drivers that labs compare against:
//! `binder_linux`, the `nvme` stack) are built as modules inside the tree,
//! which is the debug kernel's image-module folder for
//! [`crate::image::resolve`].
//!
//! [`crate::console::find_reports`] reads the guest console for what the
//! detectors print: KASAN reports, lockdep splats, sleeping in atomic
//! context and the kmemleak scan that `guest/init` runs after the last
//! step. See `book/src/debug-kernel.md`.

use std::fs;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{bail, Context as _, Error, Result};

/// The configuration fragment (`debug/debug.config`).
pub const FRAGMENT: &str = include_str!("../debug/debug.config");
/// The Debian package with the kernel source of `series` (`6.12`).
pub fn source_package(series: &str) -> String {
    format!("linux-source-{series}")
}
/// The tarball [`source_package`] holds, below its root (`usr/src/...`).
pub fn source_tarball(series: &str) -> String {
    format!("usr/src/linux-source-{series}.tar.xz")
}
/// The marker written when a build completed; it holds the build time.
const COMPLETE: &str = "complete";

/// The option lines of a fragment: `CONFIG_X=...` and
/// `# CONFIG_X is not set`, trimmed; comments and blank lines left out.
pub fn fragment_options(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("CONFIG_") || (l.starts_with("# CONFIG_") && l.ends_with(" is not set"))
        })
        .collect()
}

/// The cache key of a fragment: FNV-1a (64 bit) of its option lines, each
/// followed by a newline, in hex.
pub fn config_key(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for line in fragment_options(text) {
        for b in line.bytes().chain(std::iter::once(b'\n')) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// The options of `fragment` that the final `.config` does not have as
/// asked (Kconfig drops an option whose dependencies are not met).
pub fn config_mismatches(fragment: &str, dotconfig: &str) -> Vec<String> {
    let have: std::collections::HashSet<&str> = dotconfig.lines().map(str::trim).collect();
    fragment_options(fragment)
        .into_iter()
        .filter(|want| {
            if let Some(name) = want
                .strip_prefix("# ")
                .and_then(|l| l.strip_suffix(" is not set"))
            {
                // Unset also when the option is not there at all.
                !dotconfig
                    .lines()
                    .all(|l| !l.starts_with(&format!("{name}=")))
            } else {
                !have.contains(want)
            }
        })
        .map(str::to_owned)
        .collect()
}

/// What a debug kernel is built from: one series' source, as the caller
/// found it (downloaded and unpacked, see the checker's
/// `tools::debugkernel`).
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The source package's version, e.g. `6.12.95-1~bpo12+1`: it starts
    /// with the series.
    pub version: String,
    /// The source tarball, `.../linux-source-<series>.tar.xz`.
    pub tarball: PathBuf,
}

/// Where one debug kernel lives in the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugKernel {
    /// `<cache>/debug-<version>-<key>`.
    pub dir: PathBuf,
    /// The source version, e.g. `6.1.192-3`.
    pub version: String,
}

/// Whether the source `version` (`6.12.95-1~bpo12+1`) is of the kernel
/// `series` (`6.12`, not `6.1`).
pub fn is_of_series(version: &str, series: &str) -> bool {
    version
        .strip_prefix(series)
        .is_some_and(|rest| rest.starts_with(['.', '-', '+', '~']))
}

/// The source version of a cache folder's name `debug-<version>-<key>`
/// for the fragment's `key`.
fn version_of_folder<'a>(name: &'a str, key: &str) -> Option<&'a str> {
    name.strip_prefix("debug-")?
        .strip_suffix(key)?
        .strip_suffix('-')
        .filter(|v| !v.is_empty())
}

impl DebugKernel {
    /// The cache folder for source `version` and the fragment's key.
    pub fn locate(cache: &Path, version: &str) -> DebugKernel {
        DebugKernel {
            dir: cache.join(format!("debug-{version}-{}", config_key(FRAGMENT))),
            version: version.to_owned(),
        }
    }

    /// The kernel tree: the Kbuild folder modules are built against, and
    /// where the fragment's own modules (`=m`) are built.
    pub fn tree(&self) -> PathBuf {
        self.dir.join("src")
    }

    /// The ELF kernel QEMU boots (PVH entry).
    pub fn vmlinux(&self) -> PathBuf {
        self.tree().join("vmlinux")
    }

    /// The compressed kernel.
    pub fn bzimage(&self) -> PathBuf {
        self.tree().join("arch/x86/boot/bzImage")
    }

    /// The build log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("build.log")
    }

    /// A complete build is cached.
    pub fn is_built(&self) -> bool {
        self.dir.join(COMPLETE).is_file() && self.vmlinux().is_file()
    }
}

/// The cached debug kernel of `series` (`6.1`, `6.12`) for the current
/// fragment, if one was built (no build, no network): of several source
/// versions, the one built last.
pub fn cached(cache: &Path, series: &str) -> Option<DebugKernel> {
    let key = config_key(FRAGMENT);
    fs::read_dir(cache)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = version_of_folder(&name, &key)?;
            if !is_of_series(version, series) {
                return None;
            }
            let dk = DebugKernel::locate(cache, version);
            let built = fs::metadata(dk.dir.join(COMPLETE)).ok()?.modified().ok()?;
            dk.is_built().then_some((built, dk))
        })
        .max_by_key(|(built, _)| *built)
        .map(|(_, dk)| dk)
}

/// Makes sure the debug kernel of `series` for the current fragment is
/// built, building it when it is not (6 to 10 minutes on 2 cores, see
/// `debug/README.md`, "Measured"; progress on stdout); `source` finds its
/// source first (installing what the build needs, downloading the source
/// when it is not cached).
/// Idempotent: a cached build costs a few checks.
pub fn ensure(
    cache: &Path,
    series: &str,
    source: &dyn Fn() -> Result<Source>,
) -> Result<DebugKernel> {
    let say = |s: &str| println!("{s}");
    let found = |dk: DebugKernel| {
        let took = fs::read_to_string(dk.dir.join(COMPLETE)).unwrap_or_default();
        say(&format!(
            "vm-debug: cached in {} ({})",
            dk.dir.display(),
            took.trim()
        ));
        dk
    };
    if let Some(dk) = cached(cache, series) {
        return Ok(found(dk));
    }
    // Two checkers (parallel runs of `--kernel debug`) must not build the
    // same tree at once: the second waits for the first, then finds it
    // built. The lock goes when the file is closed, also when we are killed.
    fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let lock_path = cache.join(format!("debug-kernel-{series}.lock"));
    let lock = fs::File::create(&lock_path)
        .with_context(|| format!("cannot create {}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        say("vm-debug: another checker is building the debug kernel; waiting for it");
        lock.lock()
            .with_context(|| format!("cannot lock {}", lock_path.display()))?;
        if let Some(dk) = cached(cache, series) {
            return Ok(found(dk));
        }
    }
    let src = source()?;
    if !is_of_series(&src.version, series) {
        bail!(
            Kernel,
            "the source {} is version {}, not of Linux {series}",
            src.tarball.display(),
            src.version
        );
    }
    let dk = DebugKernel::locate(cache, &src.version);
    if !dk.is_built() {
        build(&dk, &src.tarball)?;
    }
    Ok(dk)
}

/// Runs one command of the build, output appended to the log.
fn run_logged(cmd: &mut Command, log: &Path, what: &str) -> Result<()> {
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
        .with_context(|| format!("cannot run {what}"))?;
    check_status(status, log, what)
}

/// `Ok` if the command `what` succeeded, else an error with the last
/// lines of its log.
fn check_status(status: std::process::ExitStatus, log: &Path, what: &str) -> Result<()> {
    if !status.success() {
        let text = fs::read_to_string(log).unwrap_or_default();
        bail!(
            Kernel,
            "{what} failed; last lines of {}:\n{}",
            log.display(),
            crate::console::tail(&text, 30)
        );
    }
    Ok(())
}

/// Builds the debug kernel into `dk.dir` (unpack, configure, compile),
/// then writes the [`COMPLETE`] marker with the time it took.
fn build(dk: &DebugKernel, tarball: &Path) -> Result<()> {
    let started = Instant::now();
    fs::create_dir_all(&dk.dir).with_context(|| format!("cannot create {}", dk.dir.display()))?;
    let log = dk.log();
    fs::write(&log, "")?;
    println!(
        "vm-debug: building the debug kernel in {}",
        dk.dir.display()
    );
    println!("vm-debug: log in {}", log.display());
    unpack(dk, tarball, &log)?;
    configure(dk, &log)?;
    compile(dk, &log, started)?;
    let took = format!("built in {}", minutes(started.elapsed()));
    let mut f = fs::File::create(dk.dir.join(COMPLETE))?;
    writeln!(f, "{took}")?;
    println!("vm-debug: {took}: {}", dk.vmlinux().display());
    Ok(())
}

/// Unpacks the source `tarball` into a fresh tree (through a temporary
/// folder, so that a killed unpack leaves no half tree).
fn unpack(dk: &DebugKernel, tarball: &Path, log: &Path) -> Result<()> {
    let tree = dk.tree();
    let tmp = dk.dir.join("src.tmp");
    println!("vm-debug: unpacking {} ...", tarball.display());
    let _ = fs::remove_dir_all(&tmp);
    let _ = fs::remove_dir_all(&tree);
    fs::create_dir_all(&tmp)?;
    run_logged(
        Command::new("tar")
            .arg("-xf")
            .arg(tarball)
            .arg("-C")
            .arg(&tmp)
            .arg("--strip-components=1"),
        log,
        "tar",
    )?;
    fs::rename(&tmp, &tree)?;
    Ok(())
}

/// `make allnoconfig` with the fragment, then checks that Kconfig took
/// every option of it.
fn configure(dk: &DebugKernel, log: &Path) -> Result<()> {
    let tree = dk.tree();
    let fragment = dk.dir.join("debug.config");
    fs::write(&fragment, FRAGMENT)?;
    println!("vm-debug: configuring (allnoconfig + vm/debug/debug.config) ...");
    run_logged(
        Command::new("make")
            .arg("-C")
            .arg(&tree)
            .arg("ARCH=x86_64")
            .arg(format!("KCONFIG_ALLCONFIG={}", fragment.display()))
            .arg("allnoconfig"),
        log,
        "make allnoconfig",
    )?;
    let dotconfig =
        fs::read_to_string(tree.join(".config")).context("no .config after allnoconfig")?;
    let missing = config_mismatches(FRAGMENT, &dotconfig);
    if !missing.is_empty() {
        bail!(
            Kernel,
            "Kconfig did not take these options of vm/debug/debug.config (their dependencies are \
             not met): {}",
            missing.join(", ")
        );
    }
    Ok(())
}

/// The long `make`: the kernel, its modules and what out-of-tree modules
/// need, at low priority, with a progress line every 30 s.
fn compile(dk: &DebugKernel, log: &Path, started: Instant) -> Result<()> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    println!(
        "vm-debug: make -j{jobs} vmlinux bzImage modules modules_prepare (6-10 min on 2 cores) ..."
    );
    let file = fs::OpenOptions::new().append(true).open(log)?;
    let child = Command::new("nice")
        .arg("make")
        .arg("-C")
        .arg(dk.tree())
        .arg("ARCH=x86_64")
        .arg(format!("-j{jobs}"))
        .args(["vmlinux", "bzImage", "modules", "modules_prepare"])
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .process_group(0)
        .spawn()
        .context("cannot run make")?;
    let status = wait_with_progress(child, log, started)?;
    check_status(status, log, "the debug kernel build")
}

/// Waits for the build's `make`, printing how many files it compiled
/// every 30 s; on Ctrl-C kills its process group.
fn wait_with_progress(
    mut child: std::process::Child,
    log: &Path,
    started: Instant,
) -> Result<std::process::ExitStatus> {
    let mut last = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if crate::qemu::interrupted() {
            let _ = Command::new("kill")
                .arg("--")
                .arg(format!("-{}", child.id()))
                .status();
            let _ = child.wait();
            return Err(Error::Interrupted);
        }
        if last.elapsed() >= Duration::from_secs(30) {
            last = Instant::now();
            let text = fs::read_to_string(log).unwrap_or_default();
            let compiled = text.lines().filter(|l| l.starts_with("  CC")).count();
            println!(
                "vm-debug: {compiled} files compiled, {} elapsed",
                minutes(started.elapsed())
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn key_ignores_comments() {
        let a = "# a comment\nCONFIG_A=y\n\n# CONFIG_B is not set\n";
        let b = "CONFIG_A=y\n# another comment\n# CONFIG_B is not set\n";
        assert_eq!(config_key(a), config_key(b));
        assert_ne!(config_key(a), config_key("CONFIG_A=y\n"));
        expect!["cbf29ce484222325"].assert_eq(&config_key(""));
        assert_eq!(
            fragment_options(a),
            vec!["CONFIG_A=y", "# CONFIG_B is not set"]
        );
    }

    #[test]
    fn mismatches() {
        let fragment = "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n# CONFIG_D is not set\n";
        let dotconfig = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n";
        expect![[r##"["CONFIG_B=y", "# CONFIG_C is not set"]"##]]
            .assert_eq(&format!("{:?}", config_mismatches(fragment, dotconfig)));
    }

    #[test]
    fn series_of_a_source_version() {
        assert!(is_of_series("6.1.192-3", "6.1"));
        assert!(!is_of_series("6.12.95-1~bpo12+1", "6.1"));
        assert!(is_of_series("6.12.95-1~bpo12+1", "6.12"));
        assert!(is_of_series("6.12.117-1", "6.12"));
        assert!(!is_of_series("6.1.192-3", "6.12"));
        assert!(!is_of_series("6.1", "6.1"));
        let key = "76bab46d928cb87f";
        assert_eq!(
            version_of_folder("debug-6.12.95-1~bpo12+1-76bab46d928cb87f", key),
            Some("6.12.95-1~bpo12+1")
        );
        assert_eq!(
            version_of_folder("debug-6.1.192-3-0123456789abcdef", key),
            None
        );
        assert_eq!(version_of_folder("debug--76bab46d928cb87f", key), None);
        assert_eq!(version_of_folder("6.1.0-57-amd64", key), None);
    }

    #[test]
    fn cached_per_series() {
        let cache = tempfile::tempdir().unwrap();
        let built = |version: &str| {
            let dk = DebugKernel::locate(cache.path(), version);
            fs::create_dir_all(dk.tree()).unwrap();
            fs::write(dk.vmlinux(), "").unwrap();
            fs::write(dk.dir.join(COMPLETE), "built in 6:00\n").unwrap();
            dk
        };
        assert_eq!(cached(cache.path(), "6.1"), None);
        let v61 = built("6.1.192-3");
        assert_eq!(cached(cache.path(), "6.1"), Some(v61.clone()));
        assert_eq!(cached(cache.path(), "6.12"), None);
        // An interrupted build (no `complete`) is not cached.
        let half = DebugKernel::locate(cache.path(), "6.12.95-1~bpo12+1");
        fs::create_dir_all(half.tree()).unwrap();
        fs::write(half.vmlinux(), "").unwrap();
        assert_eq!(cached(cache.path(), "6.12"), None);
        let v612 = built("6.12.95-1~bpo12+1");
        assert_eq!(cached(cache.path(), "6.12"), Some(v612));
        assert_eq!(cached(cache.path(), "6.1"), Some(v61));
        // Another fragment's build is not this one's.
        let other = cache.path().join("debug-6.1.200-1-0123456789abcdef");
        fs::create_dir_all(other.join("src")).unwrap();
        assert_eq!(
            cached(cache.path(), "6.1").map(|d| d.version),
            Some("6.1.192-3".to_owned())
        );
    }

    #[test]
    fn the_fragment_asks_for_the_tools() {
        let opts = fragment_options(FRAGMENT);
        for want in [
            "CONFIG_KASAN=y",
            "CONFIG_PROVE_LOCKING=y",
            "CONFIG_DEBUG_ATOMIC_SLEEP=y",
            "CONFIG_DEBUG_KMEMLEAK=y",
            "CONFIG_FAILSLAB=y",
            "# CONFIG_MODVERSIONS is not set",
            // The C drivers the Binder and NVMe runs load from the tree.
            "CONFIG_ANDROID_BINDER_IPC=m",
            "CONFIG_ANDROID_BINDER_DEVICES=\"binder\"",
            "CONFIG_BLK_DEV_NVME=m",
        ] {
            assert!(opts.contains(&want), "{want}");
        }
    }
}
