//! QEMU's command line and life cycle (see `vm/README.md`).
//!
//! [`run`] makes a temporary folder, writes the initramfs of a [`Guest`]
//! ([`crate::guest`]), boots its kernel with the console on `ttyS0`
//! (`console.log`) and the result channel on `ttyS1` (`results.log`, see
//! [`crate::channel`]), and waits for QEMU to exit, the time limit, or
//! Ctrl-C. QEMU is killed on every exit path (a guard kills it on drop) and
//! the temporary folder is removed unless `keep` is set.

use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Context as _, Error, Result};

use crate::channel::{self, Transcript};
use crate::guest::{self, Contents, Guest, KERNEL_CMDLINE};

/// Set by the Ctrl-C handler; the poll loop kills QEMU when it sees it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once per process).
pub fn install_interrupt_handler() -> Result<()> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))
        .map_err(|e| Error::other("cannot install the Ctrl-C handler", e))
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Ctrl-C stopped a run (exit status 130), as the checker's own code
/// returns it; this crate's functions return [`Error::Interrupted`].
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Events reported while the guest runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// QEMU started.
    Booting,
    /// QEMU started from a saved, booted guest ([`crate::snapshot`]).
    Restoring,
    /// A one-line note: saving a booted guest, or why a run boots cold.
    Note(String),
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
    /// Restored from a saved guest ([`crate::snapshot`]), not booted;
    /// `console` starts with the saved boot's console.
    pub restored: bool,
}

/// Kills and reaps QEMU when dropped, whatever the exit path.
pub(crate) struct QemuGuard(pub(crate) Child);

impl Drop for QemuGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// QEMU's arguments for `guest`, booted with `initramfs`, the console
/// written to `console` and the result channel to `results`.
pub fn qemu_args(guest: &Guest, initramfs: &Path, console: &Path, results: &Path) -> Vec<String> {
    let file = |p: &Path| format!("file:{}", p.display());
    qemu_args_with(guest, initramfs, &file(console), &file(results))
}

/// [`qemu_args`] with QEMU character devices for the console and the
/// result channel (`file:PATH`, `mon:stdio`, `null`).
pub(crate) fn qemu_args_with(
    guest: &Guest,
    initramfs: &Path,
    console: &str,
    results: &str,
) -> Vec<String> {
    let mut args: Vec<String> = guest.accel.qemu_args().map(String::from).to_vec();
    args.extend([
        "-m".into(),
        guest.memory_mb.to_string(),
        "-smp".into(),
        guest.cpus.to_string(),
    ]);
    args.extend(["-nodefaults", "-display", "none", "-no-reboot"].map(String::from));
    args.extend([
        "-kernel".into(),
        guest.kernel.display().to_string(),
        "-initrd".into(),
        initramfs.display().to_string(),
        "-append".into(),
        format!("{KERNEL_CMDLINE} {}", guest.extra_cmdline)
            .trim_end()
            .to_owned(),
        "-serial".into(),
        console.into(),
        "-serial".into(),
        results.into(),
    ]);
    args.extend(guest.devices.iter().flat_map(|d| d.qemu_args()));
    args
}

/// Boots the guest, runs the steps and collects what they reported.
/// `progress` is called from the poll loop. Returns `Err(Error::Interrupted)` on
/// Ctrl-C, after killing QEMU and removing the temporary folder.
pub fn run(guest: &Guest, progress: &mut dyn FnMut(Progress)) -> Result<GuestRun> {
    let tmp = tempfile::Builder::new().prefix("checker-vm-").tempdir()?;
    let files = RunFiles::in_dir(tmp.path());
    let token = channel::new_token().context("cannot read /dev/urandom")?;
    let busybox = guest::read_busybox()?;
    let contents = Contents::read(guest)?;
    guest::write_initramfs(&files.initramfs, &busybox, &contents, &guest.steps, &token)?;

    let started = Instant::now();
    let mut qemu = start(guest, &files)?;
    progress(Progress::Booting);
    let mut watch = StepWatch::new(&token, started);
    let (ending, qemu_status) = wait(&mut qemu, guest.timeout, started, &mut || {
        watch.poll(&files.results, progress)
    })?;
    let wall = started.elapsed();
    drop(qemu);
    let end = RunEnd {
        ending,
        qemu_status,
        wall,
        seen_boot: watch.boot_time,
    };
    Ok(GuestRun::collect(
        &files, &token, end, None, tmp, guest.keep,
    ))
}

/// How a guest run ended, before its files are read.
pub(crate) struct RunEnd {
    pub(crate) ending: Ending,
    pub(crate) qemu_status: Option<ExitStatus>,
    pub(crate) wall: Duration,
    /// When the poll loop saw the first step start, if it did.
    pub(crate) seen_boot: Option<Duration>,
}

fn read_lossy(path: &Path) -> String {
    String::from_utf8_lossy(&fs::read(path).unwrap_or_default()).into_owned()
}

impl GuestRun {
    /// What a booted or restored run left in `files` (in `tmp`, kept when
    /// `keep`). A restored run's console starts with the saved boot's,
    /// read from `saved_console`.
    pub(crate) fn collect(
        files: &RunFiles,
        token: &str,
        end: RunEnd,
        saved_console: Option<&Path>,
        tmp: tempfile::TempDir,
        keep: bool,
    ) -> GuestRun {
        let results_text = read_lossy(&files.results);
        let transcript = channel::parse(token, &results_text);
        // A step that started between the last poll and QEMU's end.
        let boot_time = end
            .seen_boot
            .or(transcript.last_started().map(|_| end.wall));
        let console =
            saved_console.map(read_lossy).unwrap_or_default() + &read_lossy(&files.console);
        GuestRun {
            console,
            transcript,
            results_text,
            ending: end.ending,
            qemu_status: end.qemu_status,
            qemu_stderr: read_lossy(&files.stderr),
            wall: end.wall,
            boot_time,
            kept_dir: keep.then(|| tmp.keep()),
            restored: saved_console.is_some(),
        }
    }
}

/// The files of one run, in its temporary folder.
pub(crate) struct RunFiles {
    pub(crate) initramfs: PathBuf,
    pub(crate) console: PathBuf,
    pub(crate) results: PathBuf,
    pub(crate) stderr: PathBuf,
}

impl RunFiles {
    pub(crate) fn in_dir(dir: &Path) -> RunFiles {
        RunFiles {
            initramfs: dir.join("initramfs.cpio"),
            console: dir.join("console.log"),
            results: dir.join("results.log"),
            stderr: dir.join("qemu.stderr"),
        }
    }
}

/// Starts QEMU for `guest`.
fn start(guest: &Guest, files: &RunFiles) -> Result<QemuGuard> {
    spawn(
        &qemu_args(guest, &files.initramfs, &files.console, &files.results),
        &files.stderr,
    )
}

/// Starts QEMU with `args`, its stderr to the file `stderr`.
pub(crate) fn spawn(args: &[String], stderr: &Path) -> Result<QemuGuard> {
    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(stderr)?)
        // Its own process group: Ctrl-C reaches the checker only, which then
        // kills QEMU itself.
        .process_group(0);
    let child = cmd
        .spawn()
        .context("cannot start qemu-system-x86_64: install qemu-system-x86 (`make setup`)")?;
    Ok(QemuGuard(child))
}

/// Waits for QEMU to exit or the time limit (then kills it), calling
/// `poll` every 50 ms; `Err(Error::Interrupted)` on Ctrl-C.
pub(crate) fn wait(
    qemu: &mut QemuGuard,
    timeout: Duration,
    started: Instant,
    poll: &mut dyn FnMut(),
) -> Result<(Ending, Option<ExitStatus>)> {
    loop {
        if let Some(status) = qemu.0.try_wait()? {
            return Ok((Ending::Exited, Some(status)));
        }
        if interrupted() {
            return Err(Error::Interrupted);
        }
        if started.elapsed() >= timeout {
            let _ = qemu.0.kill();
            let _ = qemu.0.wait();
            return Ok((Ending::TimedOut, None));
        }
        poll();
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Follows the result channel while the guest runs: reports each step's
/// start once and notes when the first one started.
pub(crate) struct StepWatch<'a> {
    token: &'a str,
    started: Instant,
    seen_len: u64,
    /// Steps whose start was reported.
    reported: usize,
    pub(crate) boot_time: Option<Duration>,
}

impl<'a> StepWatch<'a> {
    pub(crate) fn new(token: &'a str, started: Instant) -> Self {
        StepWatch {
            token,
            started,
            seen_len: 0,
            reported: 0,
            boot_time: None,
        }
    }

    /// Reads the channel again if it grew.
    pub(crate) fn poll(&mut self, results: &Path, progress: &mut dyn FnMut(Progress)) {
        let len = fs::metadata(results).map(|m| m.len()).unwrap_or(0);
        if len == self.seen_len {
            return;
        }
        self.seen_len = len;
        let text = String::from_utf8_lossy(&fs::read(results).unwrap_or_default()).into_owned();
        let Some(last) = channel::parse(self.token, &text).last_started() else {
            return;
        };
        self.boot_time.get_or_insert_with(|| self.started.elapsed());
        while self.reported <= last {
            progress(Progress::StepStarted(self.reported));
            self.reported += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::Accel;
    use crate::guest::Device;

    #[test]
    fn command_line() {
        let guest = Guest {
            kernel: "/cache/vmlinux".into(),
            extra_cmdline: String::new(),
            modules: Vec::new(),
            image_modules: Vec::new(),
            programs: Vec::new(),
            steps: Vec::new(),
            cpus: 2,
            memory_mb: 512,
            devices: vec![
                Device::Drive {
                    id: "nvm".into(),
                    file: "/tmp/disk.img".into(),
                    format: "raw".into(),
                    cache: None,
                },
                Device::Qemu("nvme,serial=labs,drive=nvm".into()),
            ],
            timeout: Duration::from_secs(60),
            accel: Accel::Tcg,
            keep: false,
        };
        let args = qemu_args(
            &guest,
            Path::new("/t/initramfs.cpio"),
            Path::new("/t/console.log"),
            Path::new("/t/results.log"),
        );
        expect_test::expect![[r#"
            -accel tcg -cpu max -m 512 -smp 2 -nodefaults -display none -no-reboot -kernel /cache/vmlinux -initrd /t/initramfs.cpio -append console=ttyS0 loglevel=7 panic=-1 rdinit=/init -serial file:/t/console.log -serial file:/t/results.log -drive file=/tmp/disk.img,if=none,id=nvm,format=raw -device nvme,serial=labs,drive=nvm"#]]
        .assert_eq(&args.join(" "));
    }
}
