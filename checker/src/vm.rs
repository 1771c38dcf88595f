//! Running a lab's steps in a QEMU guest (see `vm/README.md`).
//!
//! [`run`] makes a temporary folder, writes an uncompressed newc initramfs
//! (busybox, `/init`, the modules under `/lab/`, `/lab/steps.sh`), boots
//! Debian's kernel with the console on `ttyS0` (`console.log`) and the result
//! channel on `ttyS1` (`results.log`, see [`crate::results`]), and waits for
//! QEMU to exit, the time limit, or Ctrl-C. QEMU is killed on every exit path
//! (a guard kills it on drop) and the temporary folder is removed unless
//! `keep` is set.

use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::accel::Accel;
use crate::cpio;
use crate::imagemods;
use crate::lab::Step;
use crate::results::{self, Transcript};

/// Set by the Ctrl-C handler; the poll loop kills QEMU when it sees it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once per process).
pub fn install_interrupt_handler() -> Result<()> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The error returned when Ctrl-C stopped a run (exit status 130).
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Where the static busybox comes from (Debian's `busybox-static`).
pub const BUSYBOX: &str = "/bin/busybox";

/// The guest's `/init`: `vm/init`.
pub const INIT: &str = include_str!("../../vm/init");

/// The serial port of the result channel, in the guest.
pub const RESULT_PORT: &str = "/dev/ttyS1";

/// What to run in the guest.
pub struct GuestConfig<'a> {
    /// Guest kernel image (bzImage or ELF `vmlinux`).
    pub kernel: &'a Path,
    /// `(name, path)` of each module: copied to `/lab/<name>.ko`; those
    /// named `image/<stem>` (lab.toml `image_modules`) are loaded in this
    /// order before the first step.
    pub modules: Vec<(String, PathBuf)>,
    /// `(name, path)` of each test program (lab.toml `programs`): copied
    /// to `/lab/<name>`, executable.
    pub programs: Vec<(String, PathBuf)>,
    /// Steps to run, in order.
    pub steps: &'a [Step],
    /// Guest CPUs.
    pub smp: u32,
    /// Guest memory in MiB.
    pub memory_mb: u32,
    /// Time limit for the whole run, boot included.
    pub timeout: Duration,
    /// Accelerator.
    pub accel: Accel,
    /// Keep the temporary folder (its path is in [`GuestRun::kept_dir`]).
    pub keep: bool,
    /// Added to [`KERNEL_CMDLINE`] (the debug kernel's [`DEBUG_CMDLINE`]).
    pub extra_cmdline: &'static str,
}

/// Events reported while the guest runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// QEMU started.
    Booting,
    /// Step `index` (0-based) started in the guest.
    StepStarted(usize),
}

/// How the guest run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// QEMU exited by itself (power-off, panic with `-no-reboot`, error).
    Exited,
    /// The time limit expired; QEMU was killed.
    TimedOut,
}

/// What a guest run produced.
#[derive(Debug)]
pub struct GuestRun {
    /// Kernel console (`ttyS0`), lossily decoded.
    pub console: String,
    /// The parsed result channel.
    pub transcript: Transcript,
    /// The result channel (`ttyS1`) as received, lossily decoded.
    pub results_text: String,
    /// How the run ended.
    pub ending: Ending,
    /// QEMU's exit status when it exited by itself.
    pub qemu_status: Option<ExitStatus>,
    /// QEMU's own stderr (its error messages).
    pub qemu_stderr: String,
    /// Wall time from QEMU start to its end.
    pub wall: Duration,
    /// Wall time from QEMU start to the first step's start marker.
    pub boot_time: Option<Duration>,
    /// The temporary folder, when kept.
    pub kept_dir: Option<PathBuf>,
}

/// Kills and reaps QEMU when dropped, whatever the exit path.
struct QemuGuard(Child);

impl Drop for QemuGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Writes the initramfs for `steps` with result-channel `token` to `path`.
pub fn write_initramfs(
    path: &Path,
    busybox: &[u8],
    modules: &[(String, Vec<u8>)],
    steps: &[Step],
    token: &str,
) -> Result<()> {
    write_initramfs_with(path, busybox, modules, &[], steps, token)
}

/// [`write_initramfs`] plus test programs, copied to `/lab/<name>` with
/// mode 0755.
pub fn write_initramfs_with(
    path: &Path,
    busybox: &[u8],
    modules: &[(String, Vec<u8>)],
    programs: &[(String, Vec<u8>)],
    steps: &[Step],
    token: &str,
) -> Result<()> {
    let file =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = cpio::Writer::new(std::io::BufWriter::new(file));
    for dir in ["bin", "dev", "proc", "sys", "tmp", "lab"] {
        w.dir(dir, 0o755)?;
    }
    w.char_dev("dev/console", 0o600, 5, 1)?;
    w.file("bin/busybox", 0o755, busybox)?;
    w.file("init", 0o755, INIT.as_bytes())?;
    // The reference solution's modules (`ref/NAME`) and the kernel image's
    // (`image/NAME`) have folders of their own.
    let image = format!("{}/", imagemods::GUEST_DIR);
    for sub in ["ref/", image.as_str()] {
        if modules.iter().any(|(name, _)| name.starts_with(sub)) {
            w.dir(&format!("lab/{}", sub.trim_end_matches('/')), 0o755)?;
        }
    }
    for (name, data) in modules {
        w.file(&format!("lab/{name}.ko"), 0o644, data)?;
    }
    // `/init` runs it before the steps: the image's modules in the order given.
    let stems: Vec<&str> = modules
        .iter()
        .filter_map(|(name, _)| name.strip_prefix(&image))
        .collect();
    if !stems.is_empty() {
        let script = imagemods::load_script(&stems);
        w.file(&format!("lab/{image}load.sh"), 0o755, script.as_bytes())?;
    }
    for (name, data) in programs {
        w.file(&format!("lab/{name}"), 0o755, data)?;
    }
    let script = results::runner_script(steps, RESULT_PORT);
    w.file("lab/steps.sh", 0o755, script.as_bytes())?;
    let token_file = results::TOKEN_FILE.trim_start_matches('/');
    w.file(token_file, 0o600, format!("{token}\n").as_bytes())?;
    w.finish()?;
    Ok(())
}

fn read_busybox() -> Result<Vec<u8>> {
    let data = fs::read(BUSYBOX)
        .with_context(|| format!("cannot read {BUSYBOX}: install busybox-static (`make setup`)"))?;
    // A dynamically linked busybox (package `busybox`) cannot run in the
    // initramfs, which has no libc.
    if has_interpreter(&data) {
        bail!("{BUSYBOX} is dynamically linked: install busybox-static (`make setup`)");
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

/// The kernel command line of a lab guest.
pub const KERNEL_CMDLINE: &str = "console=ttyS0 loglevel=7 panic=-1 rdinit=/init";

/// What the debug kernel's command line adds: the kmalloc caches carry
/// failslab's mark (`A`), so that a `failslab` step can count only the
/// allocations that go through `kmalloc` (see `vm/failnth.c`).
pub const DEBUG_CMDLINE: &str = "slub_debug=A,kmalloc-*";

/// Boots the guest, runs the steps and collects what they reported.
/// `progress` is called from the poll loop. Returns `Err(Interrupted)` on
/// Ctrl-C, after killing QEMU and removing the temporary folder.
pub fn run(cfg: &GuestConfig<'_>, progress: &mut dyn FnMut(Progress)) -> Result<GuestRun> {
    let tmp = tempfile::Builder::new().prefix("checker-vm-").tempdir()?;
    let dir = tmp.path();
    let token = results::new_token().context("cannot read /dev/urandom")?;
    let busybox = read_busybox()?;
    let mut modules = Vec::new();
    for (name, path) in &cfg.modules {
        let data = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        modules.push((name.clone(), data));
    }
    let mut programs = Vec::new();
    for (name, path) in &cfg.programs {
        let data = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        programs.push((name.clone(), data));
    }
    let initramfs = dir.join("initramfs.cpio");
    write_initramfs_with(&initramfs, &busybox, &modules, &programs, cfg.steps, &token)?;
    let console_path = dir.join("console.log");
    let results_path = dir.join("results.log");
    let stderr_path = dir.join("qemu.stderr");

    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args(cfg.accel.qemu_args())
        .args(["-m", &cfg.memory_mb.to_string()])
        .args(["-smp", &cfg.smp.to_string()])
        .args(["-nodefaults", "-display", "none", "-no-reboot"])
        .arg("-kernel")
        .arg(cfg.kernel)
        .arg("-initrd")
        .arg(&initramfs)
        .arg("-append")
        .arg(format!("{KERNEL_CMDLINE} {}", cfg.extra_cmdline).trim_end())
        .arg("-serial")
        .arg(format!("file:{}", console_path.display()))
        .arg("-serial")
        .arg(format!("file:{}", results_path.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&stderr_path)?)
        // Its own process group: Ctrl-C reaches the checker only, which then
        // kills QEMU itself.
        .process_group(0);
    let started = Instant::now();
    let mut qemu = QemuGuard(
        cmd.spawn()
            .context("cannot start qemu-system-x86_64: install qemu-system-x86 (`make setup`)")?,
    );
    progress(Progress::Booting);

    let mut boot_time = None;
    let mut seen_len = 0u64;
    let mut reported = 0usize; // steps whose start was reported
    let (ending, qemu_status) = loop {
        if let Some(status) = qemu.0.try_wait()? {
            break (Ending::Exited, Some(status));
        }
        if interrupted() {
            drop(qemu);
            drop(tmp);
            return Err(Interrupted.into());
        }
        if started.elapsed() >= cfg.timeout {
            let _ = qemu.0.kill();
            let _ = qemu.0.wait();
            break (Ending::TimedOut, None);
        }
        let len = fs::metadata(&results_path).map(|m| m.len()).unwrap_or(0);
        if len != seen_len {
            seen_len = len;
            let text =
                String::from_utf8_lossy(&fs::read(&results_path).unwrap_or_default()).into_owned();
            let t = results::parse(&token, &text);
            if boot_time.is_none() && t.last_started().is_some() {
                boot_time = Some(started.elapsed());
            }
            if let Some(last) = t.last_started() {
                while reported <= last {
                    progress(Progress::StepStarted(reported));
                    reported += 1;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let wall = started.elapsed();
    drop(qemu);
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    let console = read(&console_path);
    let results_text = read(&results_path);
    let transcript = results::parse(&token, &results_text);
    if boot_time.is_none() && transcript.last_started().is_some() {
        boot_time = Some(wall);
    }
    let qemu_stderr = read(&stderr_path);
    let kept_dir = if cfg.keep { Some(tmp.keep()) } else { None };
    Ok(GuestRun {
        console,
        transcript,
        results_text,
        ending,
        qemu_status,
        qemu_stderr,
        wall,
        boot_time,
        kept_dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        write_initramfs(
            &path,
            b"fake busybox",
            &[("hello".into(), b"ko".to_vec())],
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
            lab/steps.sh
            lab/token
        "#]]
        .assert_eq(&String::from_utf8(out.stdout).unwrap());
    }

    #[test]
    fn initramfs_loads_image_modules_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.cpio");
        let modules = [
            ("image/t10-pi".into(), b"a".to_vec()),
            ("image/nvme-core".into(), b"b".to_vec()),
            ("rust_nvme".into(), b"c".to_vec()),
        ];
        write_initramfs(&path, b"bb", &modules, &[], "0123456789abcdef").unwrap();
        let bytes = fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for name in [
            "lab/image\0",
            "lab/image/t10-pi.ko\0",
            "lab/image/load.sh\0",
        ] {
            assert!(text.contains(name), "{name:?} missing");
        }
        let script = imagemods::load_script(&["t10-pi", "nvme-core"]);
        assert!(text.contains(&script), "load.sh is not {script:?}");
        // The C twin's modules load first, so /init must run load.sh before
        // the steps.
        let load = INIT.find("/lab/image/load.sh").unwrap();
        assert!(load < INIT.find("/lab/steps.sh").unwrap());
    }
}
