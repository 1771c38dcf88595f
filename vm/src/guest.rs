//! What a guest is: the description [`Guest`] a caller fills in, and the
//! initramfs made from it.
//!
//! The initramfs (uncompressed newc, [`crate::cpio`]) holds `/bin/busybox`,
//! `/init` (`guest/init`), `/lab/runner.sh` (`guest/runner.sh`),
//! `/lab/steps.sh` (the steps), `/lab/token`, the modules under `/lab/`
//! (the kernel image's own under `/lab/image/`, with the `load.sh` that
//! `/init` runs before the steps) and the programs.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{bail, Context as _, Result};

use crate::accel::Accel;
use crate::{channel, cpio, image};

/// One step: a shell command the runner runs in the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Short name, `[a-z0-9_-]+`.
    pub name: String,
    /// Shell command line run by busybox `sh -c` in the guest.
    pub run: String,
}

/// A kernel module put into the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// Its name in the guest without `.ko`, relative to `/lab/`: `hello`
    /// is `/lab/hello.ko`, `ref/hello` is `/lab/ref/hello.ko`.
    pub name: String,
    /// The `.ko` on the host.
    pub path: PathBuf,
}

/// Where a program's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file on the host.
    Path(PathBuf),
    /// Text compiled into this crate (a guest script).
    Text(&'static str),
    /// Bytes the host made for this run (a disk image's hash).
    Bytes(Vec<u8>),
}

/// A program put into the guest as `/lab/<name>`, executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Its file name in `/lab/`.
    pub name: String,
    /// Its contents.
    pub source: Source,
}

/// Something added to QEMU's machine besides the two serial ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Device {
    /// A disk image QEMU serves from `file` (`-drive
    /// file=FILE,if=none,id=ID,format=FORMAT`), for a [`Device::Qemu`] that
    /// names it (`drive=ID`).
    Drive {
        /// The drive's id.
        id: String,
        /// The backing file on the host.
        file: PathBuf,
        /// `raw` or `qcow2`.
        format: String,
        /// QEMU's `cache=` mode (`writeback` when `None`).
        cache: Option<String>,
    },
    /// A `-device` argument as QEMU takes it, e.g.
    /// `nvme,serial=labs,drive=nvm`.
    Qemu(String),
}

impl Device {
    /// QEMU's arguments for it.
    pub fn qemu_args(&self) -> Vec<String> {
        match self {
            Device::Drive {
                id,
                file,
                format,
                cache,
            } => vec![
                "-drive".into(),
                format!(
                    "file={},if=none,id={id},format={format}{}",
                    file.display().to_string().replace(',', ",,"),
                    cache
                        .as_ref()
                        .map_or(String::new(), |c| format!(",cache={c}"))
                ),
            ],
            Device::Qemu(spec) => vec!["-device".into(), spec.clone()],
        }
    }
}

/// Everything about one guest run.
#[derive(Debug, Clone)]
pub struct Guest {
    /// Guest kernel image (bzImage or ELF `vmlinux`).
    pub kernel: PathBuf,
    /// Added to [`KERNEL_CMDLINE`] (the debug kernel's [`DEBUG_CMDLINE`]).
    pub extra_cmdline: String,
    /// The lab's modules (and the reference solution's, `ref/NAME`).
    pub modules: Vec<Module>,
    /// Modules of the guest kernel's own image, loaded in this order by
    /// `/init` before the first step (see [`crate::image::resolve`]); their
    /// names are file stems (`nvme-core`), put in `/lab/image/`.
    pub image_modules: Vec<Module>,
    /// Programs (lab.toml `programs`, the checker's own guest tools).
    pub programs: Vec<Program>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Guest CPUs.
    pub cpus: u32,
    /// Guest memory in MiB.
    pub memory_mb: u32,
    /// Extra QEMU devices and disks.
    pub devices: Vec<Device>,
    /// Time limit for the whole run, boot included.
    pub timeout: Duration,
    /// Accelerator.
    pub accel: Accel,
    /// Keep the temporary folder (its path is in
    /// [`crate::GuestRun::kept_dir`]).
    pub keep: bool,
}

/// Where the static busybox comes from (Debian's `busybox-static`).
pub const BUSYBOX: &str = "/bin/busybox";

/// The guest's `/init`: `guest/init`.
pub const INIT: &str = include_str!("../guest/init");

/// The kernel command line of a lab guest.
pub const KERNEL_CMDLINE: &str = "console=ttyS0 loglevel=7 panic=-1 rdinit=/init";

/// What the debug kernel's command line adds: RCU reports a stalled CPU
/// after 120 s instead of the config's 21. Under TCG with KASAN,
/// `pci_enable_device` (the ACPI interpreter evaluating the slot's
/// interrupt routing, `_PRT`, in a `PREEMPT_NONE` kernel) holds a
/// CPU for 16-19 s on an idle host at every NVMe probe, C's or rnvme's,
/// and past 21 s on a loaded one: a slow machine, not a stall. A CPU that
/// never comes back is still reported, well inside a lab's time limit.
/// (Past 30 s ACPICA gives up on `_PRT`, `AE_AML_LOOP_TIMEOUT`, and that
/// probe fails: seen once at host load ~6. `acpi=noirq` would skip `_PRT`
/// but leaves the guest without an APIC, so without MSI-X.)
pub const DEBUG_CMDLINE: &str = "rcupdate.rcu_cpu_stall_timeout=120";

/// The contents of an initramfs, read into memory.
#[derive(Debug, Default)]
pub struct Contents {
    /// `(name, bytes)` of each module, as [`Guest::modules`].
    pub modules: Vec<(String, Vec<u8>)>,
    /// `(stem, bytes)` of each module of the kernel image, in load order.
    pub image_modules: Vec<(String, Vec<u8>)>,
    /// `(name, bytes)` of each program.
    pub programs: Vec<(String, Vec<u8>)>,
}

impl Contents {
    /// Reads the files `guest` names.
    pub fn read(guest: &Guest) -> Result<Contents> {
        let read =
            |path: &Path| fs::read(path).with_context(|| format!("cannot read {}", path.display()));
        let modules = |list: &[Module]| -> Result<Vec<(String, Vec<u8>)>> {
            list.iter()
                .map(|m| Ok((m.name.clone(), read(&m.path)?)))
                .collect()
        };
        Ok(Contents {
            modules: modules(&guest.modules)?,
            image_modules: modules(&guest.image_modules)?,
            programs: guest
                .programs
                .iter()
                .map(|p| {
                    let data = match &p.source {
                        Source::Path(path) => read(path)?,
                        Source::Text(text) => text.as_bytes().to_vec(),
                        Source::Bytes(bytes) => bytes.clone(),
                    };
                    Ok((p.name.clone(), data))
                })
                .collect::<Result<_>>()?,
        })
    }
}

/// Writes the initramfs with `contents`, `steps` and result-channel
/// `token` to `path`.
pub fn write_initramfs(
    path: &Path,
    busybox: &[u8],
    contents: &Contents,
    steps: &[Step],
    token: &str,
) -> Result<()> {
    let file =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = cpio::Writer::new(std::io::BufWriter::new(file));
    write_system(&mut w, busybox)?;
    write_lab(&mut w, contents, steps)?;
    let token_file = channel::TOKEN_FILE.trim_start_matches('/');
    w.file(token_file, 0o600, format!("{token}\n").as_bytes())?;
    w.finish()?;
    Ok(())
}

/// The initramfs's system part: its folders (`/lab` too), `/dev/console`,
/// busybox and `/init`.
pub(crate) fn write_system<W: std::io::Write>(
    w: &mut cpio::Writer<W>,
    busybox: &[u8],
) -> std::io::Result<()> {
    for dir in ["bin", "dev", "proc", "sys", "tmp", "lab"] {
        w.dir(dir, 0o755)?;
    }
    w.char_dev("dev/console", 0o600, 5, 1)?;
    w.file("bin/busybox", 0o755, busybox)?;
    w.file("init", 0o755, INIT.as_bytes())
}

/// The run's files under `/lab/` (its folder itself excepted): the
/// modules, the image's with their `load.sh`, the programs, the runner
/// and the steps; not the token. A cold boot's initramfs holds them, and
/// so does the cpio a restored guest unpacks ([`crate::snapshot`]).
pub(crate) fn write_lab<W: std::io::Write>(
    w: &mut cpio::Writer<W>,
    contents: &Contents,
    steps: &[Step],
) -> std::io::Result<()> {
    // The reference solution's modules (`ref/NAME`) have a folder of their own.
    if contents
        .modules
        .iter()
        .any(|(name, _)| name.starts_with("ref/"))
    {
        w.dir("lab/ref", 0o755)?;
    }
    for (name, data) in &contents.modules {
        w.file(&format!("lab/{name}.ko"), 0o644, data)?;
    }
    // `/init` runs `load.sh` before the steps: the image's modules in order.
    if !contents.image_modules.is_empty() {
        let dir = format!("lab/{}", image::GUEST_DIR);
        w.dir(&dir, 0o755)?;
        for (stem, data) in &contents.image_modules {
            w.file(&format!("{dir}/{stem}.ko"), 0o644, data)?;
        }
        let stems: Vec<&str> = contents
            .image_modules
            .iter()
            .map(|(stem, _)| stem.as_str())
            .collect();
        w.file(
            &format!("{dir}/load.sh"),
            0o755,
            image::load_script(&stems).as_bytes(),
        )?;
    }
    for (name, data) in &contents.programs {
        w.file(&format!("lab/{name}"), 0o755, data)?;
    }
    w.file("lab/runner.sh", 0o755, channel::RUNNER.as_bytes())?;
    let script = channel::steps_script(steps);
    w.file("lab/steps.sh", 0o755, script.as_bytes())
}

/// The static busybox, refused when it is dynamically linked.
pub fn read_busybox() -> Result<Vec<u8>> {
    let data = fs::read(BUSYBOX)
        .with_context(|| format!("cannot read {BUSYBOX}: install busybox-static (`make setup`)"))?;
    // A dynamically linked busybox (package `busybox`) cannot run in the
    // initramfs, which has no libc.
    if has_interpreter(&data) {
        bail!(
            Guest,
            "{BUSYBOX} is dynamically linked: install busybox-static (`make setup`)"
        );
    }
    Ok(data)
}

/// Whether an ELF64 little-endian executable asks for a dynamic loader
/// (has a `PT_INTERP` program header).
pub fn has_interpreter(elf: &[u8]) -> bool {
    const PT_INTERP: u32 = 3;
    let u16_at = |o: usize| {
        elf.get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(|b| u64::from_le_bytes(b) as usize)
    };
    if !elf.starts_with(b"\x7fELF") {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return false;
    };
    (0..phnum).any(|i| u32_at(phoff + i * phentsize) == Some(PT_INTERP))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn interpreter_detection() {
        assert!(!has_interpreter(b"not an elf"));
        if let Ok(bb) = fs::read(BUSYBOX) {
            assert!(!has_interpreter(&bb), "busybox-static has no PT_INTERP");
        }
        if let Ok(sh) = fs::read("/bin/sh") {
            assert!(has_interpreter(&sh), "/bin/sh is dynamically linked");
        }
    }

    #[test]
    fn initramfs_lists_expected_files() {
        let Ok(out) = Command::new("cpio").arg("--version").output() else {
            return;
        };
        if !out.status.success() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.cpio");
        let steps = vec![Step {
            name: "load".into(),
            run: "insmod /lab/hello.ko".into(),
        }];
        let contents = Contents {
            modules: vec![("hello".into(), b"ko".to_vec())],
            ..Contents::default()
        };
        write_initramfs(
            &path,
            b"fake busybox",
            &contents,
            &steps,
            "0123456789abcdef",
        )
        .unwrap();
        let out = Command::new("cpio")
            .args(["-t", "--quiet", "-F"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
        expect_test::expect![[r#"
            bin
            dev
            proc
            sys
            tmp
            lab
            dev/console
            bin/busybox
            init
            lab/hello.ko
            lab/runner.sh
            lab/steps.sh
            lab/token
        "#]]
        .assert_eq(&String::from_utf8(out.stdout).unwrap());
    }

    #[test]
    fn initramfs_loads_image_modules_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.cpio");
        let contents = Contents {
            modules: vec![("rust_nvme".into(), b"c".to_vec())],
            image_modules: vec![
                ("t10-pi".into(), b"a".to_vec()),
                ("nvme-core".into(), b"b".to_vec()),
            ],
            programs: Vec::new(),
        };
        write_initramfs(&path, b"bb", &contents, &[], "0123456789abcdef").unwrap();
        let bytes = fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for name in [
            "lab/image\0",
            "lab/image/t10-pi.ko\0",
            "lab/image/load.sh\0",
        ] {
            assert!(text.contains(name), "{name:?} missing");
        }
        let script = image::load_script(&["t10-pi", "nvme-core"]);
        assert!(text.contains(&script), "load.sh is not {script:?}");
        // The C twin's modules load first, so /init must run load.sh before
        // the steps.
        let load = INIT.find("/lab/image/load.sh").unwrap();
        assert!(load < INIT.find("/lab/runner.sh").unwrap());
    }

    #[test]
    fn devices_on_the_command_line() {
        let devices = [
            Device::Drive {
                id: "nvm".into(),
                file: "/tmp/a,b.img".into(),
                format: "raw".into(),
                cache: Some("none".into()),
            },
            Device::Qemu("nvme,serial=labs,drive=nvm".into()),
        ];
        let args: Vec<String> = devices.iter().flat_map(Device::qemu_args).collect();
        expect_test::expect![[r#"
            -drive file=/tmp/a,,b.img,if=none,id=nvm,format=raw,cache=none
            -device nvme,serial=labs,drive=nvm"#]]
        .assert_eq(
            &args
                .chunks(2)
                .map(|c| c.join(" "))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
}
