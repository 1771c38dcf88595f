//! An interactive guest (`checker shell`): the lab's guest,
//! with its modules and programs in `/lab`, but `/init` hands the console
//! to a shell instead of running steps. The console is QEMU's standard
//! input and output, so the terminal that started it is the guest's
//! console; `exit` (or Ctrl-D) powers the guest off, which ends QEMU.
//! QEMU's monitor is on the same terminal (Ctrl-A C, Ctrl-A X quits).

use std::io::{Read as _, Write as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::{bail, Context as _, Result};

use crate::guest::{self, Contents, Guest, Program, Source};
use crate::qemu::{self, Ending};

/// The file whose presence tells `/init` to start a shell; its text is
/// printed first.
pub const MARKER: &str = "shell";

/// The banner's last line: a script is typed in once the console shows it.
pub const READY: &str = "checker shell: ready";

/// How an interactive guest is started.
#[derive(Debug, Clone, Default)]
pub struct Session<'a> {
    /// Printed on the console before the shell's prompt.
    pub banner: &'a str,
    /// Kill QEMU after this long (scripted use); none for a person.
    pub limit: Option<Duration>,
    /// Type these lines into the shell once it is ready, instead of
    /// handing it this process's standard input (for tests); the console
    /// is still copied to standard output.
    pub script: Option<&'a str>,
}

/// Boots `guest` with a shell on the console of this process's terminal
/// (or whatever its standard input and output are), and returns QEMU's
/// exit status once the guest has powered off. `guest.steps` are not run.
pub fn run(guest: &Guest, opts: &Session<'_>) -> Result<ExitStatus> {
    let tmp = tempfile::Builder::new()
        .prefix("checker-shell-")
        .tempdir()?;
    let initramfs = tmp.path().join("initramfs.cpio");
    let mut guest = guest.clone();
    let banner = format!("{}\n{READY}\n", opts.banner.trim_end());
    guest.programs.push(Program {
        name: MARKER.into(),
        source: Source::Bytes(banner.into_bytes()),
    });
    let busybox = guest::read_busybox()?;
    let contents = Contents::read(&guest)?;
    guest::write_initramfs(&initramfs, &busybox, &contents, &[], "shell")?;

    let args = qemu::qemu_args_with(&guest, &initramfs, "mon:stdio", "null");
    let scripted = opts.script.is_some();
    let piped = || {
        if scripted {
            Stdio::piped()
        } else {
            Stdio::inherit()
        }
    };
    let mut child = Command::new("qemu-system-x86_64")
        .args(&args)
        .stdin(piped())
        .stdout(piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start qemu-system-x86_64: install qemu-system-x86 (`make setup`)")?;
    let ready = opts
        .script
        .map(|script| type_when_ready(&mut child, script));
    // Killed on every way out, as a lab run's QEMU is.
    let mut qemu = qemu::QemuGuard(child);
    let started = Instant::now();
    let limit = opts.limit.unwrap_or(Duration::MAX);
    let status = match qemu::wait(&mut qemu, limit, started, &mut || {})? {
        (Ending::Exited, Some(status)) => status,
        _ => bail!(
            Qemu,
            "the guest was still running after {} s: killed",
            started.elapsed().as_secs()
        ),
    };
    if let Some(ready) = ready {
        if !ready.join().unwrap_or(false) {
            bail!(Qemu, "the guest's shell never said {READY:?}");
        }
    }
    Ok(status)
}

/// Copies the console to standard output, and types `script` into the
/// shell once the console shows [`READY`]. The thread returns whether
/// it did.
fn type_when_ready(child: &mut Child, script: &str) -> std::thread::JoinHandle<bool> {
    let mut console = child.stdout.take().expect("stdout is piped");
    let mut keyboard = child.stdin.take().expect("stdin is piped");
    let script = format!("{}\n", script.trim_end());
    let (seen_tx, seen_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        let mut told = false;
        while let Ok(n @ 1..) = console.read(&mut buf) {
            let _ = std::io::stdout().write_all(&buf[..n]);
            let _ = std::io::stdout().flush();
            if !told {
                seen.push_str(&String::from_utf8_lossy(&buf[..n]));
                if seen.contains(READY) {
                    told = true;
                    let _ = seen_tx.send(());
                }
            }
        }
    });
    std::thread::spawn(move || {
        if seen_rx.recv().is_err() {
            return false;
        }
        keyboard.write_all(script.as_bytes()).is_ok()
    })
}
