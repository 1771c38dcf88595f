//! Saved guests: a run restored from a guest that booted once, instead of
//! a boot (see `README.md`, "Saved guests").
//!
//! Under TCG a boot to the first step takes about 2.5 s of a lab's 4 s.
//! So the host boots a *base* guest once (the same kernel, command line,
//! CPUs, memory and accelerator as the lab's guest; an initramfs with only
//! busybox, `/init` and `guest/restore.sh`), waits until it says
//! [`READY`], saves it with QEMU's migration to a file and keeps that file
//! in the cache, under a key of everything that shapes it ([`key_text`]).
//! Each run then starts QEMU with the same machine and `-incoming` from
//! that file: every run starts from the same pristine guest, and nothing a
//! run does reaches the file (QEMU only reads it). The run's own files
//! (its modules, programs, steps and the runner) reach the restored guest
//! on a disk that was empty at the save: a virtio disk of
//! [`DRIVE_BYTES`], whose first 64 KiB block holds `MAGIC TOKEN SEED
//! BLOCKS EPOCH` (EPOCH: the host's time, which the guest's clock takes) and the next BLOCKS blocks a newc cpio of `/lab`
//! (`guest::write_lab`). The saved guest polls that disk; once restored
//! it unpacks the cpio, overwrites the header (the token) and goes on
//! with `/init` as after a boot.
//!
//! What differs from a cold boot: the kernel's own modules that drive the
//! disk ([`DRIVER_MODULES`] and what they need) are loaded, a `vmgenid`
//! device makes the kernel reseed its random generator at each restore
//! (and the host's seed is written to `/dev/urandom`), and every restored
//! run has the same kernel address layout (KASLR is drawn once, at the
//! save). The console log starts with the saved boot's console.
//!
//! [`run`] restores when it can and otherwise boots ([`crate::qemu::run`])
//! after a one-line [`Progress::Note`] that says why: a guest with disks or
//! devices of its own (they would have to be in the state of the save), a
//! run whose files do not fit the disk, a save that failed, a restore
//! that failed (QEMU refused the file: the entry is dropped and marked,
//! `KEY.unusable`, so later runs boot without trying) or that did not
//! reach its first step within [`RESTORE_LIMIT`].

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

use crate::channel;
use crate::console::Finding;
use crate::cpio;
use crate::error::{bail, Context as _, Error, Result};
use crate::guest::{self, Contents, Guest, Module};
use crate::qemu::{self, interrupted, Ending, GuestRun, Progress, RunEnd, RunFiles, StepWatch};

/// The first word of the run disk's header.
pub const MAGIC: &str = "RKLPAYLD1";

/// What the base guest writes to `ttyS1` once it waits for a run: the
/// host saves it then.
pub const READY: &str = "checker: saved guest ready";

/// The base guest's `/lab/restore.sh`, sourced by `/init`.
pub const RESTORE_SCRIPT: &str = include_str!("../guest/restore.sh");

/// The size of the run disk, the same at the save and at each restore.
pub const DRIVE_BYTES: u64 = 64 << 20;

/// The header's block, and the unit of the cpio's length.
const BLOCK: usize = 64 << 10;

/// The kernel's modules that drive the run disk, with what they need.
pub const DRIVER_MODULES: [&str; 2] = ["virtio_pci", "virtio_blk"];

/// How long a restored guest may take to reach its runner before the run
/// boots instead (a restore takes under a second).
pub const RESTORE_LIMIT: Duration = Duration::from_secs(30);

/// How long the base guest may take to boot and save.
const SAVE_LIMIT: Duration = Duration::from_secs(180);

/// Bumped when the way a guest is saved changes.
const FORMAT: &str = "saved-guest 1";

/// Files of a cache entry.
const STATE: &str = "state";
const INITRAMFS: &str = "initramfs.cpio";
const CONSOLE: &str = "console.log";
const KEY: &str = "key.txt";

/// The environment variable that makes `checker lab` boot every guest
/// (also `--cold`, `make lab-NN COLD=1`).
pub const COLD_ENV: &str = "CHECKER_COLD_BOOT";

/// The folder of the saved guests under the cache root.
pub fn dir(cache: &Path) -> PathBuf {
    cache.join("saved-guests")
}

/// Why `guest` cannot be restored from a saved guest (`None`: it can).
pub fn unsuitable(guest: &Guest) -> Option<&'static str> {
    (!guest.devices.is_empty()).then_some(
        "the guest has disks or devices, which a saved guest would need in their state of the save",
    )
}

/// Runs `guest` restored from its saved guest (made first if there is
/// none), or, when that cannot be, boots it after a [`Progress::Note`]
/// that says why. `modules_dir` is the kernel image's module folder (for
/// [`DRIVER_MODULES`]), `cache` the cache root.
pub fn run(
    guest: &Guest,
    modules_dir: &Path,
    cache: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<GuestRun> {
    match restore_or_why(guest, modules_dir, cache, progress) {
        Ok(Ok(run)) => return Ok(run),
        Ok(Err(why)) => progress(Progress::Note(format!("cold boot: {why}"))),
        Err(e) if e.is_interrupted() => return Err(e),
        Err(e) => progress(Progress::Note(format!("cold boot: {}", chain(&e)))),
    }
    qemu::run(guest, progress)
}

/// An error and its causes on one line.
fn chain(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let _ = write!(text, ": {s}");
        source = s.source();
    }
    text
}

/// The restored run, or why there is none.
fn restore_or_why(
    guest: &Guest,
    modules_dir: &Path,
    cache: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<std::result::Result<GuestRun, String>> {
    if let Some(why) = unsuitable(guest) {
        return Ok(Err(why.into()));
    }
    let root = dir(cache);
    if root.to_string_lossy().contains(['\'', '"', '\\', ',']) {
        return Ok(Err(format!(
            "the cache's path {} has a quote or a comma",
            root.display()
        )));
    }
    let names = modular(modules_dir, &DRIVER_MODULES);
    let modules = crate::image::guest_modules(modules_dir, &names)?;
    let busybox = guest::read_busybox()?;
    let text = key_text(guest, &modules, &busybox);
    let key = key_of(&text);
    let entry = root.join(&key);
    let unusable = root.join(format!("{key}.unusable"));
    if let Ok(reason) = fs::read_to_string(&unusable) {
        return Ok(Err(format!(
            "this saved guest failed before ({}); remove {} to try again",
            reason.trim(),
            unusable.display()
        )));
    }
    if !entry.join(STATE).is_file() {
        fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
        // One save at a time (`check-all -j2`); the other run waits and
        // finds it.
        let lock_path = root.join(format!("{key}.lock"));
        let lock = fs::File::create(&lock_path)
            .with_context(|| format!("cannot create {}", lock_path.display()))?;
        lock.lock()
            .with_context(|| format!("cannot lock {}", lock_path.display()))?;
        if !entry.join(STATE).is_file() {
            progress(Progress::Note(
                "saving a booted guest for the next runs (once per kernel, QEMU and guest size)"
                    .into(),
            ));
            let started = Instant::now();
            if let Err(e) = save(guest, &modules, &busybox, &entry, &text) {
                if e.is_interrupted() {
                    return Err(e);
                }
                let why = chain(&e);
                let _ = fs::write(&unusable, format!("saving failed: {why}\n"));
                return Ok(Err(format!("cannot save a booted guest: {why}")));
            }
            progress(Progress::Note(format!(
                "saved the booted guest in {:.1} s: {}",
                started.elapsed().as_secs_f64(),
                entry.display()
            )));
            prune(&root, &key, UNUSED_FOR);
        }
    }
    // Its last use, for [`prune`].
    let _ = fs::File::options()
        .write(true)
        .open(entry.join(KEY))
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    match restore(guest, &entry, progress)? {
        Restore::Ran(run) => Ok(Ok(*run)),
        Restore::Failed(Decision::ColdBoot { why, forget }) => {
            if forget {
                let _ = fs::write(&unusable, format!("restoring failed: {why}\n"));
                let _ = fs::remove_dir_all(&entry);
            }
            Ok(Err(format!("the saved guest did not start: {why}")))
        }
        Restore::Failed(_) => unreachable!("restore fails only with a cold boot"),
    }
}

/// The names of `names` that are modules of the image, not built into its
/// kernel (`modules.builtin`): Debian's 6.1 builds `virtio_pci` as a
/// module, its 6.12 into the kernel.
fn modular(modules_dir: &Path, names: &[&str]) -> Vec<String> {
    let builtin = fs::read_to_string(modules_dir.join("modules.builtin")).unwrap_or_default();
    let stems: Vec<String> = builtin
        .lines()
        .filter_map(|l| l.rsplit('/').next())
        .map(|f| f.trim_end_matches(".ko").replace('-', "_"))
        .collect();
    names
        .iter()
        .filter(|n| !stems.contains(&n.replace('-', "_")))
        .map(|n| n.to_string())
        .collect()
}

/// Entries not restored for this long go when another is saved.
const UNUSED_FOR: Duration = Duration::from_secs(14 * 24 * 3600);

/// Removes the entries of `root` but `keep` that were last restored (the
/// time of their `key.txt`) over `age` ago, with their lock and marker
/// files, and saves that were abandoned over a day ago: each entry is
/// 60-70 MB, and a new QEMU, kernel or `/init` makes a new one.
fn prune(root: &Path, keep: &str, age: Duration) {
    let old = |p: &Path, age: Duration| {
        fs::metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|e| e > age))
    };
    let Ok(dir) = fs::read_dir(root) else {
        return;
    };
    for e in dir.filter_map(|e| e.ok()) {
        let (path, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
        if !path.is_dir() || name == keep {
            continue;
        }
        if name.starts_with(".saving-") {
            if old(&path, Duration::from_secs(24 * 3600)) {
                let _ = fs::remove_dir_all(&path);
            }
            continue;
        }
        if old(&path.join(KEY), age) || !path.join(KEY).exists() && old(&path, age) {
            let _ = fs::remove_dir_all(&path);
            let _ = fs::remove_file(root.join(format!("{name}.lock")));
        }
    }
}

/// `path`'s size and modification time, which change when a package
/// replaces it (hashing a 60 MB kernel at every run would cost more than
/// the key saves).
fn stamp(path: &Path) -> String {
    match fs::metadata(path) {
        Ok(m) => format!(
            "{} {} {}",
            path.display(),
            m.len(),
            m.mtime_nsec() + m.mtime() * 1_000_000_000
        ),
        Err(_) => format!("{} missing", path.display()),
    }
}

/// The QEMU binary that `qemu-system-x86_64` runs (the first on `PATH`).
fn qemu_binary() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("qemu-system-x86_64"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("qemu-system-x86_64"))
}

/// The firmware QEMU loads (SeaBIOS, the option ROMs): in the machine's
/// state, so in the key.
const FIRMWARE_DIR: &str = "/usr/share/qemu";

/// Everything that shapes a saved guest, one item a line: the format,
/// QEMU and its firmware, the kernel, the machine's command line (memory,
/// CPUs, accelerator, kernel command line, devices), busybox, `/init` and
/// `restore.sh`, the disk's modules. A run's modules, programs and steps
/// are not in it: they come after the restore.
pub fn key_text(guest: &Guest, modules: &[Module], busybox: &[u8]) -> String {
    let mut text = format!("{FORMAT}\nqemu {}\n", stamp(&qemu_binary()));
    let mut firmware: Vec<PathBuf> = fs::read_dir(FIRMWARE_DIR)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    firmware.sort();
    for f in firmware {
        let _ = writeln!(text, "firmware {}", stamp(&f));
    }
    let _ = writeln!(text, "kernel {}", stamp(&guest.kernel));
    let args = machine_args(
        guest,
        Path::new("INITRAMFS"),
        Path::new("DISK"),
        "CONSOLE",
        "RESULTS",
    );
    let _ = writeln!(text, "machine {}", args.join(" "));
    let hash = |bytes: &[u8]| format!("{:x}", Sha256::digest(bytes));
    let _ = writeln!(text, "busybox {}", hash(busybox));
    let _ = writeln!(text, "init {}", hash(guest::INIT.as_bytes()));
    let _ = writeln!(text, "restore {}", hash(RESTORE_SCRIPT.as_bytes()));
    for m in modules {
        let _ = writeln!(text, "module {} {}", m.name, stamp(&m.path));
    }
    text
}

/// The entry's name: the hash of [`key_text`].
pub fn key_of(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))[..24].to_owned()
}

/// QEMU's arguments of the saved machine: the lab guest's, with the run
/// disk and `vmgenid`.
fn machine_args(
    guest: &Guest,
    initramfs: &Path,
    disk: &Path,
    console: &str,
    results: &str,
) -> Vec<String> {
    let mut args = qemu::qemu_args_with(guest, initramfs, console, results);
    args.extend([
        "-drive".into(),
        format!(
            "file={},if=none,id=runfiles,format=raw",
            disk.display().to_string().replace(',', ",,")
        ),
        "-device".into(),
        "virtio-blk-pci,drive=runfiles".into(),
        "-device".into(),
        "vmgenid".into(),
    ]);
    args
}

/// Boots the base guest, saves it once it is ready and puts the entry at
/// `entry` (made in a temporary folder next to it, then renamed).
fn save(
    guest: &Guest,
    modules: &[Module],
    busybox: &[u8],
    entry: &Path,
    key_text: &str,
) -> Result<()> {
    let parent = entry.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".saving-")
        .tempdir_in(parent)?;
    // The socket's path must be short: a folder under $TMPDIR.
    let work = tempfile::Builder::new().prefix("checker-save-").tempdir()?;
    let initramfs = tmp.path().join(INITRAMFS);
    write_base(&initramfs, busybox, modules)?;
    let disk = work.path().join("disk.img");
    fs::File::create(&disk)
        .and_then(|f| f.set_len(DRIVE_BYTES))
        .with_context(|| format!("cannot create {}", disk.display()))?;
    let console = tmp.path().join(CONSOLE);
    let results = work.path().join("results.log");
    let socket = work.path().join("qmp.sock");
    let stderr = work.path().join("qemu.stderr");
    let file = |p: &Path| format!("file:{}", p.display());
    let mut args = machine_args(guest, &initramfs, &disk, &file(&console), &file(&results));
    args.extend([
        "-qmp".into(),
        format!("unix:{},server=on,wait=off", socket.display()),
    ]);
    let mut qemu = qemu::spawn(&args, &stderr)?;
    let started = Instant::now();
    let first_line = |p: &Path| {
        let text = fs::read_to_string(p).unwrap_or_default();
        text.lines().next().unwrap_or("").to_owned()
    };
    loop {
        if let Some(status) = qemu.0.try_wait()? {
            bail!(
                Qemu,
                "QEMU exited ({status}) before the guest was ready: {}",
                first_line(&stderr)
            );
        }
        if interrupted() {
            return Err(Error::Interrupted);
        }
        if started.elapsed() > SAVE_LIMIT {
            bail!(
                Qemu,
                "the base guest was not ready within {} s",
                SAVE_LIMIT.as_secs()
            );
        }
        let said = fs::read(&results).unwrap_or_default();
        if String::from_utf8_lossy(&said).contains(READY) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let state = tmp.path().join(STATE);
    let mut qmp = Qmp::connect(&socket)?;
    qmp.migrate_to(&state)?;
    let _ = qmp.execute(r#"{"execute":"quit"}"#);
    let deadline = Instant::now() + Duration::from_secs(10);
    while qemu.0.try_wait()?.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(qemu);
    // A boot that reported a problem is not worth keeping: every run
    // would start from it.
    let boot = String::from_utf8_lossy(&fs::read(&console)?).into_owned();
    if let Some(line) = boot.lines().find(|l| Finding::in_line(l).is_some()) {
        bail!(Kernel, "the base guest's boot reported: {}", line.trim());
    }
    if !state.is_file() {
        bail!(Qemu, "QEMU wrote no state to {}", state.display());
    }
    fs::write(tmp.path().join(KEY), key_text)?;
    let kept = tmp.keep();
    if let Err(e) = fs::rename(&kept, entry) {
        let _ = fs::remove_dir_all(&kept);
        if !entry.join(STATE).is_file() {
            return Err(e).with_context(|| format!("cannot rename to {}", entry.display()));
        }
    }
    Ok(())
}

/// The base guest's initramfs: the system part, `restore.sh`, and the
/// disk's modules with the script that loads them in order.
fn write_base(path: &Path, busybox: &[u8], modules: &[Module]) -> Result<()> {
    let file =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = cpio::Writer::new(std::io::BufWriter::new(file));
    guest::write_system(&mut w, busybox)?;
    w.dir("lab/restore", 0o755)?;
    let mut load = String::from("# Generated by the checker: the run disk's modules.\n");
    for m in modules {
        let data =
            fs::read(&m.path).with_context(|| format!("cannot read {}", m.path.display()))?;
        w.file(&format!("lab/restore/{}.ko", m.name), 0o644, &data)?;
        let _ = writeln!(load, "insmod /lab/restore/{}.ko", m.name);
    }
    w.file("lab/restore/load.sh", 0o755, load.as_bytes())?;
    w.file("lab/restore.sh", 0o755, RESTORE_SCRIPT.as_bytes())?;
    w.finish()?;
    Ok(())
}

/// The run disk's bytes before its cpio: the header block.
pub fn disk_header(token: &str, seed: &str, epoch: u64, cpio_len: usize) -> Option<Vec<u8>> {
    let blocks = cpio_len.div_ceil(BLOCK);
    if ((1 + blocks) * BLOCK) as u64 > DRIVE_BYTES {
        return None;
    }
    let mut header = format!("{MAGIC} {token} {seed} {blocks} {epoch}\n").into_bytes();
    header.resize(BLOCK, 0);
    Some(header)
}

/// What a restored run's state says before its runner wrote anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Wait on.
    Wait,
    /// The runner started: the restore worked, the run goes on.
    Restored,
    /// Boot instead; `forget`: QEMU refused the saved state, so drop it.
    ColdBoot {
        /// Why, for the note.
        why: String,
        /// Drop the entry and mark it unusable.
        forget: bool,
    },
}

/// The decision on a restored run: `runner_started` (the result channel
/// has something), QEMU's exit (`Some(success)`), the time since it
/// started, and the limit ([`RESTORE_LIMIT`], or the run's own when
/// shorter).
pub fn decide(
    runner_started: bool,
    exited: Option<bool>,
    elapsed: Duration,
    limit: Duration,
) -> Decision {
    match exited {
        _ if runner_started => Decision::Restored,
        Some(success) => Decision::ColdBoot {
            why: format!(
                "QEMU exited{} before the first step",
                if success { "" } else { " with an error" }
            ),
            forget: !success,
        },
        None if elapsed >= limit => Decision::ColdBoot {
            why: format!("no step started within {} s", limit.as_secs()),
            forget: false,
        },
        None => Decision::Wait,
    }
}

/// A restore's end.
enum Restore {
    Ran(Box<GuestRun>),
    Failed(Decision),
}

/// Starts the saved guest of `entry` with `guest`'s files on the run disk
/// and runs it as [`qemu::run`] runs a booted one.
fn restore(guest: &Guest, entry: &Path, progress: &mut dyn FnMut(Progress)) -> Result<Restore> {
    let tmp = tempfile::Builder::new().prefix("checker-vm-").tempdir()?;
    let files = RunFiles::in_dir(tmp.path());
    let token = channel::new_token().context("cannot read /dev/urandom")?;
    let mut seed = String::new();
    for _ in 0..4 {
        seed += &channel::new_token().context("cannot read /dev/urandom")?;
    }
    let contents = Contents::read(guest)?;
    let mut w = cpio::Writer::new(Vec::new());
    guest::write_lab(&mut w, &contents, &guest.steps)?;
    let payload = w.finish()?;
    let epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let Some(header) = disk_header(&token, &seed, epoch, payload.len()) else {
        return Ok(Restore::Failed(Decision::ColdBoot {
            why: format!(
                "the run's files ({} MiB) do not fit the saved guest's disk",
                payload.len() >> 20
            ),
            forget: false,
        }));
    };
    let disk = tmp.path().join("runfiles.img");
    let mut f =
        fs::File::create(&disk).with_context(|| format!("cannot create {}", disk.display()))?;
    f.write_all(&header)?;
    f.write_all(&payload)?;
    f.set_len(DRIVE_BYTES)?;
    drop(f);
    let file = |p: &Path| format!("file:{}", p.display());
    let mut args = machine_args(
        guest,
        &entry.join(INITRAMFS),
        &disk,
        &file(&files.console),
        &file(&files.results),
    );
    args.extend([
        "-incoming".into(),
        format!("exec:cat '{}'", entry.join(STATE).display()),
    ]);
    let started = Instant::now();
    let mut qemu = qemu::spawn(&args, &files.stderr)?;
    progress(Progress::Restoring);
    let mut watch = StepWatch::new(&token, started);
    let limit = RESTORE_LIMIT.min(guest.timeout);
    let mut restored = false;
    let runner_started = || fs::metadata(&files.results).is_ok_and(|m| m.len() > 0);
    let (ending, qemu_status) = loop {
        let status = qemu.0.try_wait()?;
        if !restored {
            match decide(
                runner_started(),
                status.map(|s| s.success()),
                started.elapsed(),
                limit,
            ) {
                Decision::Restored => restored = true,
                Decision::Wait => {}
                cold @ Decision::ColdBoot { .. } => {
                    drop(qemu);
                    return Ok(Restore::Failed(cold));
                }
            }
        }
        if let Some(status) = status {
            break (Ending::Exited, Some(status));
        }
        if interrupted() {
            return Err(Error::Interrupted);
        }
        if started.elapsed() >= guest.timeout {
            let _ = qemu.0.kill();
            let _ = qemu.0.wait();
            break (Ending::TimedOut, None);
        }
        watch.poll(&files.results, progress);
        std::thread::sleep(Duration::from_millis(20));
    };
    let wall = started.elapsed();
    drop(qemu);
    let end = RunEnd {
        ending,
        qemu_status,
        wall,
        seen_boot: watch.boot_time,
    };
    let console = entry.join(CONSOLE);
    Ok(Restore::Ran(Box::new(GuestRun::collect(
        &files,
        &token,
        end,
        Some(&console),
        tmp,
        guest.keep,
    ))))
}

/// A QMP connection (QEMU's JSON monitor), for the save only.
struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Qmp {
    /// Connects, reads the greeting and leaves negotiation mode.
    fn connect(socket: &Path) -> Result<Qmp> {
        let stream = UnixStream::connect(socket)
            .with_context(|| format!("cannot connect to QMP at {}", socket.display()))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let writer = stream.try_clone()?;
        let mut qmp = Qmp {
            reader: BufReader::new(stream),
            writer,
        };
        let mut greeting = String::new();
        qmp.reader.read_line(&mut greeting)?;
        qmp.execute(r#"{"execute":"qmp_capabilities"}"#)?;
        Ok(qmp)
    }

    /// Sends one command and returns its answer (events are skipped).
    fn execute(&mut self, command: &str) -> Result<String> {
        writeln!(self.writer, "{command}")?;
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                bail!(Qemu, "QMP closed while waiting for {command}");
            }
            if line.contains("\"error\"") {
                bail!(Qemu, "QMP refused {command}: {}", line.trim());
            }
            if line.contains("\"return\"") {
                return Ok(line);
            }
        }
    }

    /// Saves the running guest to `state` and waits for the end.
    fn migrate_to(&mut self, state: &Path) -> Result<()> {
        // The guest keeps running while it is saved (it only polls its
        // disk): a guest stopped first would be restored stopped.
        self.execute(&format!(
            r#"{{"execute":"migrate","arguments":{{"uri":"exec:cat > '{}'"}}}}"#,
            state.display()
        ))?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let answer = self.execute(r#"{"execute":"query-migrate"}"#)?;
            let answer = answer.replace(' ', "");
            if answer.contains(r#""status":"completed""#) {
                return Ok(());
            }
            if answer.contains(r#""status":"failed""#) || answer.contains(r#""status":"cancelled""#)
            {
                bail!(
                    Qemu,
                    "the migration to {} failed: {answer}",
                    state.display()
                );
            }
            if Instant::now() > deadline {
                bail!(Qemu, "the migration to {} took over 60 s", state.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::Accel;
    use crate::guest::{Device, Step};

    fn guest() -> Guest {
        Guest {
            kernel: "/nonexistent/vmlinux".into(),
            extra_cmdline: String::new(),
            modules: vec![Module {
                name: "hello".into(),
                path: "/labs/hello.ko".into(),
            }],
            image_modules: Vec::new(),
            programs: Vec::new(),
            steps: vec![Step {
                name: "load".into(),
                run: "insmod /lab/hello.ko".into(),
            }],
            cpus: 1,
            memory_mb: 512,
            devices: Vec::new(),
            timeout: Duration::from_secs(60),
            accel: Accel::Tcg,
            keep: false,
        }
    }

    /// The key follows the machine and the kernel, not the run's files.
    #[test]
    fn key_follows_what_shapes_the_saved_guest() {
        let base = guest();
        let key = |g: &Guest, busybox: &[u8]| key_of(&key_text(g, &[], busybox));
        let k = key(&base, b"bb");
        assert_eq!(k, key(&base, b"bb"), "the same guest, the same key");
        assert_eq!(k.len(), 24);
        let same = [
            Guest {
                modules: Vec::new(),
                ..base.clone()
            },
            Guest {
                steps: Vec::new(),
                ..base.clone()
            },
            Guest {
                timeout: Duration::from_secs(5),
                keep: true,
                ..base.clone()
            },
        ];
        for g in &same {
            assert_eq!(key(g, b"bb"), k, "a run's files are not in the key");
        }
        let different = [
            Guest {
                memory_mb: 1024,
                ..base.clone()
            },
            Guest {
                cpus: 2,
                ..base.clone()
            },
            Guest {
                extra_cmdline: "nokaslr".into(),
                ..base.clone()
            },
            Guest {
                kernel: "/other/vmlinux".into(),
                ..base.clone()
            },
            Guest {
                accel: Accel::Kvm,
                ..base.clone()
            },
        ];
        for g in &different {
            assert_ne!(key(g, b"bb"), k, "{g:?}");
        }
        assert_ne!(key(&base, b"other busybox"), k);
        let module = Module {
            name: "virtio_blk".into(),
            path: "/m/virtio_blk.ko".into(),
        };
        assert_ne!(key_of(&key_text(&base, &[module], b"bb")), k);
    }

    /// A kernel image replaced in place (same path) changes the key.
    #[test]
    fn key_follows_the_kernel_file() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = dir.path().join("vmlinux");
        fs::write(&kernel, b"one").unwrap();
        let g = Guest {
            kernel: kernel.clone(),
            ..guest()
        };
        let before = key_of(&key_text(&g, &[], b"bb"));
        fs::write(&kernel, b"three").unwrap();
        assert_ne!(key_of(&key_text(&g, &[], b"bb")), before);
    }

    #[test]
    fn built_in_drivers_are_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(modular(dir.path(), &DRIVER_MODULES), DRIVER_MODULES);
        fs::write(
            dir.path().join("modules.builtin"),
            "kernel/drivers/virtio/virtio.ko\nkernel/drivers/virtio/virtio_pci.ko\n",
        )
        .unwrap();
        assert_eq!(modular(dir.path(), &DRIVER_MODULES), ["virtio_blk"]);
    }

    #[test]
    fn prune_keeps_what_was_used() {
        let root = tempfile::tempdir().unwrap();
        let day = Duration::from_secs(24 * 3600);
        let long_ago = std::time::SystemTime::now() - 30 * day;
        for name in ["recent", "unused", "current"] {
            fs::create_dir(root.path().join(name)).unwrap();
            fs::write(root.path().join(name).join(KEY), "k").unwrap();
            fs::write(root.path().join(format!("{name}.lock")), "").unwrap();
        }
        for name in ["unused", "current"] {
            fs::File::options()
                .write(true)
                .open(root.path().join(name).join(KEY))
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        prune(root.path(), "current", 14 * day);
        let left = |n: &str| root.path().join(n).exists();
        assert!(left("recent") && left("recent.lock"));
        assert!(left("current"), "the entry just saved stays");
        assert!(!left("unused") && !left("unused.lock"));
    }

    #[test]
    fn guests_with_devices_boot() {
        assert_eq!(unsuitable(&guest()), None);
        let g = Guest {
            devices: vec![Device::Qemu("nvme,serial=labs,drive=nvm".into())],
            ..guest()
        };
        assert!(unsuitable(&g).is_some());
    }

    #[test]
    fn fallback_decisions() {
        let (s, limit) = (Duration::from_secs(1), Duration::from_secs(30));
        assert_eq!(decide(false, None, s, limit), Decision::Wait);
        assert_eq!(decide(true, None, s, limit), Decision::Restored);
        // A run that ended after its runner started is a run, not a
        // failed restore (a panic in a step, a power-off).
        assert_eq!(decide(true, Some(false), s, limit), Decision::Restored);
        assert!(matches!(
            decide(false, Some(false), s, limit),
            Decision::ColdBoot { forget: true, .. }
        ));
        assert!(matches!(
            decide(false, Some(true), s, limit),
            Decision::ColdBoot { forget: false, .. }
        ));
        assert!(matches!(
            decide(false, None, limit, limit),
            Decision::ColdBoot { forget: false, .. }
        ));
    }

    #[test]
    fn disk_header_and_its_limit() {
        let h = disk_header("0123456789abcdef", "ab", 1_700_000_000, 100_000).unwrap();
        assert_eq!(h.len(), BLOCK);
        let line =
            String::from_utf8_lossy(&h[..h.iter().position(|&b| b == b'\n').unwrap()]).into_owned();
        assert_eq!(line, format!("{MAGIC} 0123456789abcdef ab 2 1700000000"));
        // `restore.sh` reads the line with `read -n 120`.
        let seed = "f".repeat(64);
        let h = disk_header("0123456789abcdef", &seed, u64::MAX, 100_000).unwrap();
        assert!(h.iter().position(|&b| b == b'\n').unwrap() < 120);
        assert!(disk_header("t", "s", 0, DRIVE_BYTES as usize).is_none());
    }

    /// The guest script and the host agree on the names.
    #[test]
    fn restore_script_matches_the_host() {
        assert!(RESTORE_SCRIPT.contains(&format!("\"$magic\" = {MAGIC}")));
        assert!(RESTORE_SCRIPT.contains(&format!("echo \"{READY}\" >/dev/ttyS1")));
        assert!(RESTORE_SCRIPT.contains("bs=64k") && BLOCK == 64 << 10);
        assert!(guest::INIT.contains(". /lab/restore.sh"));
        let restore = guest::INIT.find("/lab/restore.sh").unwrap();
        assert!(restore < guest::INIT.find("/lab/image/load.sh").unwrap());
    }
}
