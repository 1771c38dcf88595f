//! The guest kernel series (`--guest 6.12`, `make lab-01 GUEST=6.12`):
//! which Debian kernel the modules are built for and the guest boots.
//!
//! Without `--guest` the guest is the host's own Debian kernel series,
//! whose headers the host's `linux-headers-amd64` installs (see
//! [`crate::tools::setup`]): 6.1 on Debian 12. A series other than the
//! host's is taken from Debian's archive as packages, never installed on
//! the host: the image (`linux-image-<abi>-unsigned`), the headers
//! (`linux-headers-<abi>`, `linux-headers-<base>-common`) and the Kbuild
//! tools (`linux-kbuild-<base>`) are downloaded with `apt-get download`
//! through an apt configuration of the cache's own (its own source list and
//! package lists, so the machine's sources stay as they are and no root is
//! needed) and unpacked with `dpkg-deb -x` into `<cache>/<abi>/`, next to
//! the image, where the headers' absolute links to `/usr/src` are made to
//! point into the cache. Two kernels so live side by side, and their
//! modules build into their own cargo target folders
//! (`target/guest-<series>`): the kernel crate's bindings follow the tree.
//!
//! `<cache>/guest-<series>` names the ABI once it is complete; a run then
//! needs no network. Progress goes to stderr: `checker kdir --guest`'s
//! stdout is `module.mk`'s `KDIR`.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::probe::{self, GuestKernel};

/// A guest kernel series (`--guest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Linux {
    /// Linux 6.1: Debian 12's kernel (bookworm and its security updates).
    #[default]
    #[value(name = "6.1")]
    V6_1,
    /// Linux 6.12: Debian 13's kernel (bookworm-backports on Debian 12).
    #[value(name = "6.12")]
    V6_12,
}

impl Linux {
    /// The value of `--guest` that selects it.
    pub fn arg(self) -> &'static str {
        match self {
            Linux::V6_1 => "6.1",
            Linux::V6_12 => "6.12",
        }
    }

    /// The series of the kernel ABI `abi` (`6.12.95+deb12-amd64`, the
    /// debug kernel's `debug-6.1.192-3`), when it is one of these.
    pub fn of(abi: &str) -> Option<Linux> {
        let series = series_of(abi)?;
        [Linux::V6_1, Linux::V6_12]
            .into_iter()
            .find(|l| l.arg() == series)
    }
}

/// The series a host that is not Debian (Ubuntu, Gradescope's images)
/// builds for and boots without `--guest`: the current Debian stable's,
/// from bookworm-backports there (see [`ensure_cached`]).
pub const ELSEWHERE: Linux = Linux::V6_12;

/// The kernel ABI of the host's series: on Debian the one its installed
/// headers metapackage points at ([`probe::kernel_abi`]); elsewhere the
/// cache's kernel of [`ELSEWHERE`], which `make setup` downloads.
pub fn host_abi() -> Result<String> {
    if probe::host_is_debian() {
        return probe::kernel_abi();
    }
    cached_abi(&::vm::cache_root(), ELSEWHERE).with_context(|| {
        format!(
            "no Linux {} in the cache yet (this host is not Debian: the kernel comes from \
             Debian's archive): run `make setup`",
            ELSEWHERE.arg()
        )
    })
}

/// The Kbuild tree of the host's kernel `abi`: Debian's installed headers
/// on Debian, the ones unpacked into the cache elsewhere.
pub fn host_headers(abi: &str) -> PathBuf {
    if probe::host_is_debian() {
        probe::headers_dir(abi)
    } else {
        headers_in(&GuestKernel::locate(&::vm::cache_root(), abi).dir, abi)
    }
}

/// The `KDIR` of a build for the host's series (`checker kdir`, for
/// `module.mk`).
pub fn host_kdir() -> Result<PathBuf> {
    Ok(host_headers(&host_abi()?))
}

/// The Debian suites that carry `series` for a host of `codename`
/// (`VERSION_CODENAME` of `/etc/os-release`): a name for the cache's apt
/// folder and the source list's lines. For 6.12 on Debian 12 the suite
/// built with the host's own libc (bookworm-backports), since the Kbuild
/// tools of the package run on the host; 6.1 is Debian 12's, with its
/// security updates.
pub fn sources(series: Linux, codename: &str) -> (&'static str, Vec<String>) {
    let line = |url: &str, suite: &str| {
        format!(
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] \
             http://deb.debian.org/{url} {suite} main\n"
        )
    };
    match (series, codename) {
        (Linux::V6_1, _) => (
            "bookworm",
            vec![
                line("debian", "bookworm"),
                line("debian-security", "bookworm-security"),
            ],
        ),
        (Linux::V6_12, "bookworm") => (
            "bookworm-backports",
            vec![line("debian", "bookworm-backports")],
        ),
        (Linux::V6_12, _) => ("trixie", vec![line("debian", "trixie")]),
    }
}

/// Whether the kernel ABI `abi` (`6.1.0-57-amd64`) is of `series`.
pub fn is_of(abi: &str, series: Linux) -> bool {
    abi.starts_with(&format!("{}.", series.arg()))
}

/// The series (`6.12`) of the kernel ABI `abi` (`6.12.95+deb12-amd64`,
/// the debug kernel's `debug-6.1.192-3`): its first two version numbers;
/// `None` when it does not start with them.
pub fn series_of(abi: &str) -> Option<String> {
    let version = abi.strip_prefix("debug-").unwrap_or(abi);
    let mut numbers = version.splitn(3, '.');
    let major = numbers.next()?;
    let minor: String = numbers
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(major) && digits(&minor)).then(|| format!("{major}.{minor}"))
}

/// Whether `s` names a kernel series (`6.1`, `6.12`): two version numbers.
pub fn is_series(s: &str) -> bool {
    series_of(s).as_deref() == Some(s)
}

/// The host's `VERSION_CODENAME`, empty when unknown.
fn host_codename() -> String {
    fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|v| v.trim_matches('"').to_owned())
        .unwrap_or_default()
}

/// The Kbuild tree of an unpacked series `abi` in `dir` (`<cache>/<abi>`).
pub fn headers_in(dir: &Path, abi: &str) -> PathBuf {
    dir.join("usr/src").join(format!("linux-headers-{abi}"))
}

/// The file that names the ABI of `series` once it is unpacked.
fn marker(cache: &Path, series: Linux) -> PathBuf {
    cache.join(format!("guest-{}", series.arg()))
}

/// The ABI of `series` in `cache`, when it is complete there.
pub fn cached_abi(cache: &Path, series: Linux) -> Option<String> {
    let abi = fs::read_to_string(marker(cache, series)).ok()?;
    let abi = abi.trim().to_owned();
    let g = GuestKernel::locate(cache, &abi);
    (g.vmlinuz.is_file() && headers_in(&g.dir, &abi).join("Makefile").is_file()).then_some(abi)
}

/// The series whose kernels are in `cache`: `(series, abi)` for each
/// complete one of [`Linux::V6_12`] and up (6.1's is the host's ABI).
pub fn cached(cache: &Path) -> Vec<(Linux, String)> {
    [Linux::V6_12]
        .into_iter()
        .filter_map(|s| cached_abi(cache, s).map(|abi| (s, abi)))
        .collect()
}

/// An apt of the cache's own for `suite`: its source list, package lists
/// and archive cache under `<cache>/apt/<suite>/`, the host's apt
/// configuration (proxies) otherwise.
struct ArchiveApt {
    options: Vec<String>,
}

impl ArchiveApt {
    fn new(cache: &Path, name: &str, lines: &[String]) -> Result<ArchiveApt> {
        let dir = cache.join("apt").join(name);
        for sub in ["lists/partial", "cache/archives/partial", "parts"] {
            fs::create_dir_all(dir.join(sub))
                .with_context(|| format!("cannot create {}", dir.join(sub).display()))?;
        }
        let list = dir.join("sources.list");
        fs::write(&list, lines.concat())?;
        let status = dir.join("status");
        if !status.exists() {
            fs::write(&status, "")?;
        }
        let opt = |k: &str, v: &Path| vec!["-o".to_owned(), format!("{k}={}", v.display())];
        let mut options = Vec::new();
        options.extend(opt("Dir::Etc::SourceList", &list));
        options.extend(opt("Dir::Etc::SourceParts", &dir.join("parts")));
        options.extend(opt("Dir::State::Lists", &dir.join("lists")));
        options.extend(opt("Dir::Cache", &dir.join("cache")));
        options.extend(opt("Dir::State::status", &status));
        // Everything is the user's own: no privilege drop to `_apt`.
        options.extend(["-o".to_owned(), "APT::Sandbox::User=root".to_owned()]);
        Ok(ArchiveApt { options })
    }

    fn run(&self, program: &str, args: &[&str], dir: &Path) -> Result<String> {
        let out = Command::new(program)
            .args(&self.options)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {program}"))?;
        if !out.status.success() {
            bail!(
                "`{program} {}` failed: {}",
                args.join(" "),
                vm::console::tail(&String::from_utf8_lossy(&out.stderr), 10)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The packages of kernel `abi` (e.g. `6.12.95+deb12-amd64`): image,
/// headers, and what the headers depend on of the common headers and the
/// Kbuild tools, read from `depends` (`apt-cache depends
/// linux-headers-<abi>`: their names differ between releases,
/// `linux-kbuild-6.1` against `linux-kbuild-6.12.95+deb12`).
pub fn packages(abi: &str, depends: &str) -> Vec<String> {
    let mut names = vec![
        format!("linux-image-{abi}-unsigned"),
        format!("linux-headers-{abi}"),
    ];
    for line in depends.lines() {
        let Some(name) = line
            .trim()
            .strip_prefix("Depends: ")
            .and_then(|rest| rest.split_whitespace().next())
        else {
            continue;
        };
        let common = name.starts_with("linux-headers-") && name.ends_with("-common");
        if (common || name.starts_with("linux-kbuild-")) && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// [`fetch`] under a lock of the cache's (`<cache>/guest-<series>.lock`),
/// so that parallel runs (`checker run -j2`) download it once; the lock
/// goes with the file, also when the run is killed.
fn fetch_once(series: Linux, cache: &Path) -> Result<String> {
    fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let path = cache.join(format!("guest-{}.lock", series.arg()));
    let lock =
        fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    if lock.try_lock().is_err() {
        eprintln!(
            "setup: guest kernel {} ... waiting for another run's download",
            series.arg()
        );
        lock.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
    }
    match cached_abi(cache, series) {
        Some(abi) => Ok(abi),
        None => fetch(series, cache),
    }
}

/// The ABI of `series` in the cache, downloaded first when it is not
/// there (under the cache's lock).
pub fn ensure_cached(series: Linux, cache: &Path) -> Result<String> {
    match cached_abi(cache, series) {
        Some(abi) => Ok(abi),
        None => fetch_once(series, cache),
    }
}

/// Downloads and unpacks `series` into the cache; returns its ABI.
fn fetch(series: Linux, cache: &Path) -> Result<String> {
    // A host that is not Debian takes Debian 12's suites: the Kbuild tools
    // of the package run on the host, and bookworm's need only glibc 2.36
    // (trixie's 2.41, newer than Ubuntu 24.04's).
    let codename = if probe::host_is_debian() {
        host_codename()
    } else {
        "bookworm".to_owned()
    };
    let (suite, lines) = sources(series, &codename);
    let started = Instant::now();
    eprintln!(
        "setup: guest kernel {} ... resolving it in Debian's {suite}",
        series.arg()
    );
    let apt = ArchiveApt::new(cache, suite, &lines)?;
    apt.run("apt-get", &["update"], cache)
        .context("retry with `make setup`")?;
    let depends = apt.run("apt-cache", &["depends", probe::HEADERS_METAPACKAGE], cache)?;
    let abi = depends
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends:"))
        .find_map(probe::abi_from_depends)
        .with_context(|| format!("no kernel ABI in {suite}'s {}", probe::HEADERS_METAPACKAGE))?;
    if !is_of(&abi, series) {
        bail!("{suite} has kernel {abi}, not {}", series.arg());
    }
    let dest = GuestKernel::locate(cache, &abi).dir;
    let tmp = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(cache)?;
    let depends = apt.run(
        "apt-cache",
        &["depends", &format!("linux-headers-{abi}")],
        cache,
    )?;
    let names = packages(&abi, &depends);
    if names.len() != 4 {
        bail!("linux-headers-{abi} does not name its common headers and Kbuild tools: {names:?}");
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    eprintln!(
        "setup: guest kernel {} ... downloading {}",
        series.arg(),
        names.join(" ")
    );
    let mut args = vec!["download"];
    args.extend(&names);
    apt.run("apt-get", &args, tmp.path())?;
    let root = tmp.path().join("root");
    let mut bytes = 0;
    for entry in fs::read_dir(tmp.path())?.flatten() {
        let deb = entry.path();
        if deb.extension() != Some(OsStr::new("deb")) {
            continue;
        }
        bytes += entry.metadata()?.len();
        let out = Command::new("dpkg-deb")
            .arg("-x")
            .arg(&deb)
            .arg(&root)
            .stdin(Stdio::null())
            .output()
            .context("cannot run dpkg-deb")?;
        if !out.status.success() {
            bail!(
                "dpkg-deb -x {} failed: {}",
                deb.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    relocate_headers(&root, &dest, &abi)?;
    if dest.exists() {
        fs::remove_dir_all(&dest)
            .with_context(|| format!("cannot remove the stale {}", dest.display()))?;
    }
    fs::rename(&root, &dest)
        .with_context(|| format!("cannot move the kernel into {}", dest.display()))?;
    fs::write(marker(cache, series), format!("{abi}\n"))?;
    eprintln!(
        "setup: guest kernel {} ... ok ({abi}, {:.0} MB downloaded and unpacked in {:.1} s)",
        series.arg(),
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(abi)
}

/// Makes the headers unpacked in `root` (to be renamed to `dest`) work
/// there: Debian's `linux-headers-<abi>/Makefile` includes the common
/// headers by their absolute `/usr/src` path, and `lib/modules/<abi>/build`
/// and `source` link there too.
fn relocate_headers(root: &Path, dest: &Path, abi: &str) -> Result<()> {
    let kdir = headers_in(root, abi);
    let makefile = kdir.join("Makefile");
    let text = fs::read_to_string(&makefile)
        .with_context(|| format!("the headers have no {}", makefile.display()))?;
    let usr_src = dest.join("usr/src");
    let text = relocate_makefile(&text, &usr_src.to_string_lossy());
    fs::write(&makefile, text)?;
    let modules = root.join("lib/modules").join(abi);
    for link in ["build", "source"] {
        let path = modules.join(link);
        let Ok(target) = fs::read_link(&path) else {
            continue;
        };
        if let Ok(rest) = target.strip_prefix("/usr/src") {
            fs::remove_file(&path)?;
            std::os::unix::fs::symlink(Path::new("../../../usr/src").join(rest), &path)?;
        }
    }
    if probe::headers_release(&kdir).as_deref() != Some(abi) {
        bail!("the headers in {} are not for {abi}", kdir.display());
    }
    Ok(())
}

/// `include /usr/src/...` lines of a Debian headers Makefile, pointed at
/// `usr_src` instead.
pub fn relocate_makefile(text: &str, usr_src: &str) -> String {
    text.lines()
        .map(|l| match l.strip_prefix("include /usr/src/") {
            Some(rest) => format!("include {usr_src}/{rest}\n"),
            None => format!("{l}\n"),
        })
        .collect()
}

/// The unpacked `linux-source-<series>` package in the cache:
/// `<cache>/debug-source-<series>/`, with the package's files below it and
/// `version` (the package's version) written last.
pub fn source_dir(cache: &Path, series: Linux) -> PathBuf {
    cache.join(format!("debug-source-{}", series.arg()))
}

/// The debug kernel's source of `series` (see
/// [`crate::tools::debugkernel`]): `linux-source-<series>` from the Debian
/// suite that carries the series for this host ([`sources`]), downloaded
/// with the cache's own apt and unpacked with `dpkg-deb -x` into
/// [`source_dir`] once; later builds (another fragment) take it from there
/// without network. Remove that folder to take a newer source. The caller
/// holds the debug kernel's lock of the series.
pub fn fetch_source(series: Linux, cache: &Path) -> Result<vm::debugkernel::Source> {
    let dir = source_dir(cache, series);
    let tarball = dir.join(vm::debugkernel::source_tarball(series.arg()));
    if let Ok(version) = fs::read_to_string(dir.join("version")) {
        if tarball.is_file() {
            return Ok(vm::debugkernel::Source {
                version: version.trim().to_owned(),
                tarball,
            });
        }
    }
    let package = vm::debugkernel::source_package(series.arg());
    let (suite, lines) = sources(series, &host_codename());
    let started = Instant::now();
    eprintln!("vm-debug: downloading {package} from Debian's {suite} ...");
    fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let apt = ArchiveApt::new(cache, suite, &lines)?;
    apt.run("apt-get", &["update"], cache)
        .context("retry with `make vm-debug`")?;
    let tmp = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(cache)?;
    apt.run("apt-get", &["download", &package], tmp.path())?;
    let deb = fs::read_dir(tmp.path())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension() == Some(OsStr::new("deb")))
        .with_context(|| format!("apt-get download {package} left no .deb"))?;
    let bytes = fs::metadata(&deb)?.len();
    let dpkg_deb = |args: &[&OsStr]| -> Result<String> {
        let out = Command::new("dpkg-deb")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .context("cannot run dpkg-deb")?;
        if !out.status.success() {
            bail!(
                "dpkg-deb {} failed: {}",
                deb.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let version = dpkg_deb(&["-f".as_ref(), deb.as_os_str(), "Version".as_ref()])?;
    let root = tmp.path().join("root");
    dpkg_deb(&["-x".as_ref(), deb.as_os_str(), root.as_os_str()])?;
    if !root
        .join(vm::debugkernel::source_tarball(series.arg()))
        .is_file()
    {
        bail!(
            "{package} {version} has no {}",
            vm::debugkernel::source_tarball(series.arg())
        );
    }
    fs::write(root.join("version"), format!("{version}\n"))?;
    if dir.exists() {
        fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove the stale {}", dir.display()))?;
    }
    fs::rename(&root, &dir)
        .with_context(|| format!("cannot move the source into {}", dir.display()))?;
    eprintln!(
        "vm-debug: {package} {version} ({:.0} MB) downloaded and unpacked in {:.1} s",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(vm::debugkernel::Source { version, tarball })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_of_an_abi() {
        let of = |abi| series_of(abi);
        assert_eq!(of("6.1.0-57-amd64").as_deref(), Some("6.1"));
        assert_eq!(of("6.12.95+deb12-amd64").as_deref(), Some("6.12"));
        assert_eq!(of("6.12").as_deref(), Some("6.12"));
        assert_eq!(of("debug-6.1.192-3").as_deref(), Some("6.1"));
        for abi in ["", "6", "6.", ".1", "amd64", "v6.1", "6.x", "debug-"] {
            assert_eq!(of(abi), None, "{abi:?}");
        }
        // Every series --guest offers is one.
        for s in [Linux::V6_1, Linux::V6_12] {
            assert!(is_series(s.arg()), "{}", s.arg());
        }
        assert!(!is_series("6.12.95"));
        assert!(!is_series("6"));
        assert!(!is_series("debug-6.1"));
    }

    #[test]
    fn suites_and_packages() {
        let names = |s, c| sources(s, c).0;
        assert_eq!(names(Linux::V6_1, "trixie"), "bookworm");
        assert_eq!(sources(Linux::V6_1, "trixie").1.len(), 2);
        assert_eq!(names(Linux::V6_12, "bookworm"), "bookworm-backports");
        assert_eq!(names(Linux::V6_12, "trixie"), "trixie");
        assert_eq!(names(Linux::V6_12, "noble"), "trixie");
        assert!(sources(Linux::V6_12, "bookworm").1[0]
            .ends_with(" http://deb.debian.org/debian bookworm-backports main\n"));
        assert!(is_of("6.1.0-57-amd64", Linux::V6_1));
        assert!(!is_of("6.12.95+deb12-amd64", Linux::V6_1));
        assert!(is_of("6.12.95+deb12-amd64", Linux::V6_12));
        let depends = "linux-headers-6.12.95+deb12-amd64
  Depends: linux-base
  Depends: linux-headers-6.12.95+deb12-common
 |Depends: linux-image-6.12.95+deb12-amd64
  Depends: linux-image-6.12.95+deb12-amd64-unsigned
  Depends: linux-kbuild-6.12.95+deb12
  Depends: <gcc-12>
";
        assert_eq!(
            packages("6.12.95+deb12-amd64", depends),
            [
                "linux-image-6.12.95+deb12-amd64-unsigned",
                "linux-headers-6.12.95+deb12-amd64",
                "linux-headers-6.12.95+deb12-common",
                "linux-kbuild-6.12.95+deb12",
            ]
        );
        let depends = "  Depends: linux-headers-6.1.0-57-common (= 6.1.192-3)\n  Depends: linux-kbuild-6.1 (>= 6.1.192-3)\n";
        assert_eq!(
            packages("6.1.0-57-amd64", depends),
            [
                "linux-image-6.1.0-57-amd64-unsigned",
                "linux-headers-6.1.0-57-amd64",
                "linux-headers-6.1.0-57-common",
                "linux-kbuild-6.1",
            ]
        );
    }

    #[test]
    fn makefile_relocated() {
        assert_eq!(
            relocate_makefile(
                "include /usr/src/linux-headers-6.12.95+deb12-common/Makefile\n",
                "/c/6.12.95+deb12-amd64/usr/src"
            ),
            "include /c/6.12.95+deb12-amd64/usr/src/linux-headers-6.12.95+deb12-common/Makefile\n"
        );
        assert_eq!(relocate_makefile("x := 1\n", "/c"), "x := 1\n");
    }

    #[test]
    fn series_of_an_abi_and_source_folder() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(Linux::of("6.1.0-57-amd64"), Some(Linux::V6_1));
        assert_eq!(Linux::of("6.12.117+deb13-amd64"), Some(Linux::V6_12));
        assert_eq!(Linux::of("debug-6.12.95-1~bpo12+1"), Some(Linux::V6_12));
        assert_eq!(Linux::of("5.10.0-30-amd64"), None);
        assert_eq!(
            source_dir(d.path(), Linux::V6_12),
            d.path().join("debug-source-6.12")
        );
    }

    #[test]
    fn source_cached_once_unpacked() {
        let d = tempfile::tempdir().unwrap();
        let dir = source_dir(d.path(), Linux::V6_12);
        crate::testutil::write(
            &dir,
            &[
                ("usr/src/linux-source-6.12.tar.xz", ""),
                ("version", "6.12.95-1~bpo12+1\n"),
            ],
        );
        // No network: the unpacked package as it is.
        let src = fetch_source(Linux::V6_12, d.path()).unwrap();
        assert_eq!(src.version, "6.12.95-1~bpo12+1");
        assert_eq!(src.tarball, dir.join("usr/src/linux-source-6.12.tar.xz"));
    }

    #[test]
    fn cached_only_when_complete() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(cached_abi(d.path(), Linux::V6_12), None);
        let abi = "6.12.95+deb12-amd64";
        fs::write(d.path().join("guest-6.12"), format!("{abi}\n")).unwrap();
        assert_eq!(cached_abi(d.path(), Linux::V6_12), None);
        crate::testutil::write(
            d.path(),
            &[
                (&format!("{abi}/boot/vmlinuz-{abi}"), ""),
                (&format!("{abi}/usr/src/linux-headers-{abi}/Makefile"), ""),
            ],
        );
        assert_eq!(cached_abi(d.path(), Linux::V6_12).as_deref(), Some(abi));
        assert_eq!(cached(d.path()), [(Linux::V6_12, abi.to_owned())]);
    }
}
