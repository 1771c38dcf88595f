//! Choosing the QEMU accelerator.
//!
//! On the project's machines `/dev/kvm` exists but KVM guests hang or abort
//! (`failed to set MSR 0x10a`), so `auto` only takes KVM after a probe guest
//! printed `Linux version` within [`PROBE_TIME`]. The verdict is cached in
//! the cache folder, keyed by `/proc/sys/kernel/random/boot_id`, so the probe
//! runs once per host boot.

use std::fmt;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{bail, Result};

/// How long the KVM probe guest may take to print its banner.
pub const PROBE_TIME: Duration = Duration::from_secs(3);

/// What the user asked for (`--accel`, `CHECKER_ACCEL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AccelChoice {
    /// KVM when a probe guest boots with it, else TCG.
    Auto,
    /// Hardware virtualisation.
    Kvm,
    /// Software emulation (always works, slower).
    Tcg,
}

impl AccelChoice {
    /// Parses `auto`, `kvm` or `tcg`.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s.trim() {
            "auto" | "" => AccelChoice::Auto,
            "kvm" => AccelChoice::Kvm,
            "tcg" => AccelChoice::Tcg,
            other => bail!(
                Guest,
                "unknown accelerator {other:?} (CHECKER_ACCEL): use auto, kvm or tcg"
            ),
        })
    }
}

/// The accelerator a guest runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    /// `-accel kvm -cpu host`.
    Kvm,
    /// `-accel tcg -cpu max`.
    Tcg,
}

impl Accel {
    /// QEMU arguments selecting this accelerator.
    pub fn qemu_args(self) -> [&'static str; 4] {
        match self {
            Accel::Kvm => ["-accel", "kvm", "-cpu", "host"],
            Accel::Tcg => ["-accel", "tcg", "-cpu", "max"],
        }
    }
}

impl fmt::Display for Accel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        })
    }
}

/// The file in the cache folder that holds the probe's verdict,
/// `<boot id> <kvm|tcg>`.
const PROBE_FILE: &str = "accel-probe";

/// This host boot's id (`/proc/sys/kernel/random/boot_id`).
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The verdict of a KVM probe made since the host booted, if any (`checker
/// doctor` reports it).
pub fn cached_probe(cache: &Path) -> Option<Accel> {
    let text = std::fs::read_to_string(cache.join(PROBE_FILE)).ok()?;
    let (id, verdict) = text.trim().split_once(' ')?;
    let boot = boot_id();
    (id == boot && !boot.is_empty()).then_some(if verdict == "kvm" {
        Accel::Kvm
    } else {
        Accel::Tcg
    })
}

/// Picks the accelerator; the string says why.
pub fn choose(choice: AccelChoice, vmlinuz: &Path, cache: &Path) -> (Accel, String) {
    match choice {
        AccelChoice::Kvm => (Accel::Kvm, "requested".into()),
        AccelChoice::Tcg => (Accel::Tcg, "requested".into()),
        AccelChoice::Auto => auto(vmlinuz, cache),
    }
}

fn auto(vmlinuz: &Path, cache: &Path) -> (Accel, String) {
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
    {
        return (Accel::Tcg, format!("/dev/kvm is not usable: {e}"));
    }
    if let Some(accel) = cached_probe(cache) {
        let why = match accel {
            Accel::Kvm => "a KVM guest booted (probe cached for this host boot)",
            Accel::Tcg => "a KVM guest did not boot (probe cached for this host boot)",
        };
        return (accel, why.into());
    }
    let started = Instant::now();
    let works = probe_kvm(vmlinuz).unwrap_or(false);
    let accel = if works { Accel::Kvm } else { Accel::Tcg };
    let _ = std::fs::create_dir_all(cache);
    let _ = std::fs::write(cache.join(PROBE_FILE), format!("{} {accel}\n", boot_id()));
    let why = format!(
        "{} ({:.1} s probe, cached until the host reboots)",
        if works {
            "a KVM guest booted"
        } else {
            "a KVM guest printed nothing"
        },
        started.elapsed().as_secs_f64()
    );
    (accel, why)
}

/// Boots `vmlinuz` with KVM and no initrd; true when the console shows
/// `Linux version` within [`PROBE_TIME`].
fn probe_kvm(vmlinuz: &Path) -> Result<bool> {
    let dir = tempfile::tempdir()?;
    let console = dir.path().join("console.log");
    let mut child = Command::new("qemu-system-x86_64")
        .args(Accel::Kvm.qemu_args())
        .args(["-m", "256", "-nodefaults", "-display", "none", "-no-reboot"])
        .arg("-kernel")
        .arg(vmlinuz)
        .args(["-append", "earlyprintk=serial,ttyS0 console=ttyS0 panic=-1"])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    let started = Instant::now();
    let mut seen = false;
    while started.elapsed() < PROBE_TIME {
        if std::fs::read(&console)
            .map(|b| b.windows(13).any(|w| w == b"Linux version"))
            .unwrap_or(false)
        {
            seen = true;
            break;
        }
        if child.try_wait()?.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_choice() {
        assert_eq!(AccelChoice::parse("tcg").unwrap(), AccelChoice::Tcg);
        assert_eq!(AccelChoice::parse("").unwrap(), AccelChoice::Auto);
        assert!(AccelChoice::parse("hvf").is_err());
    }
}
