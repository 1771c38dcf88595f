//! An interactive guest (`checker shell`): the lab's guest,
//! with its modules and programs in `/lab`, but `/init` hands the console
//! to a shell instead of running steps. The console is QEMU's standard
//! input and output, so the terminal that started it is the guest's
//! console; `exit` (or Ctrl-D) powers the guest off, which ends QEMU.
//! QEMU's monitor is on the same terminal (Ctrl-A C, Ctrl-A X quits).

use std::io::{Read as _, Write as _};
use std::path::Path;
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
    /// `make gdb-NN`: a folder for QEMU's gdbstub socket ([`GDB_SOCKET`])
    /// and the file [`GDB_SYMBOLS`] that the guest's `/lab/gdb-symbols`
    /// writes (see [`symbols_script`]).
    pub gdb: Option<&'a Path>,
}

/// The gdbstub's socket in [`Session::gdb`]'s folder.
pub const GDB_SOCKET: &str = "gdb.sock";

/// The gdb commands `/lab/gdb-symbols` writes, in [`Session::gdb`]'s
/// folder (QEMU copies the guest's second serial port into it).
pub const GDB_SYMBOLS: &str = "symbols.gdb";

/// The guest's `/lab/gdb-symbols`: for each of `modules` that is loaded,
/// one gdb `add-symbol-file` command with the host's `.ko` and every
/// section at the address the module loader gave it
/// (`/sys/module/NAME/sections/`), written to the second serial port,
/// which QEMU copies to [`GDB_SYMBOLS`] on the host. A module's functions
/// are each in a section of their own (`.text.NAME`), so every section is
/// named: one `.text` address would place only one function. The init
/// sections are freed once init returns and are not listed; the symbol
/// tables the kernel keeps for kallsyms are no sections of the file.
pub fn symbols_script(modules: &[crate::guest::Module]) -> String {
    let mut text = String::from(
        "#!/bin/sh\n\
         # gdb-symbols: `add-symbol-file` for the loaded lab modules, to the host.\n",
    );
    for m in modules {
        // `/sys/module` spells `-` as `_`; the reference's `ref/NAME` is
        // loaded under NAME too, so only the student's are listed.
        if m.name.contains('/') {
            continue;
        }
        let name = m.name.replace('-', "_");
        let ko = m.path.display().to_string().replace('\'', "'\\''");
        text += &format!(
            "d=/sys/module/{name}/sections\n\
             if [ -d \"$d\" ]; then\n\
             \tline='add-symbol-file {ko}'\n\
             \tfor s in \"$d\"/.[!.]* \"$d\"/*; do\n\
             \t\tcase ${{s##*/}} in .symtab|.strtab) continue;; esac\n\
             \t\t[ -f \"$s\" ] && line=\"$line -s ${{s##*/}} $(cat \"$s\")\"\n\
             \tdone\n\
             \techo \"$line\" >/dev/ttyS1\n\
             \techo \"gdb-symbols: {name}: in gdb, source the host's {GDB_SYMBOLS}\"\n\
             else\n\
             \techo \"gdb-symbols: {name} is not loaded\"\n\
             fi\n"
        );
    }
    text
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
    let mut results = "null".to_owned();
    if let Some(dir) = opts.gdb {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let _ = std::fs::remove_file(dir.join(GDB_SOCKET));
        std::fs::write(dir.join(GDB_SYMBOLS), "")?;
        results = format!("file:{}", dir.join(GDB_SYMBOLS).display());
        guest.programs.push(Program {
            name: "gdb-symbols".into(),
            source: Source::Bytes(symbols_script(&guest.modules).into_bytes()),
        });
        // The kernel where System.map says, for a person with one.
        guest.extra_cmdline = format!("{} nokaslr", guest.extra_cmdline);
    }
    let banner = format!("{}\n{READY}\n", opts.banner.trim_end());
    guest.programs.push(Program {
        name: MARKER.into(),
        source: Source::Bytes(banner.into_bytes()),
    });
    let busybox = guest::read_busybox()?;
    let contents = Contents::read(&guest)?;
    guest::write_initramfs(&initramfs, &busybox, &contents, &[], "shell")?;

    let mut args = qemu::qemu_args_with(&guest, &initramfs, "mon:stdio", &results);
    if let Some(dir) = opts.gdb {
        let socket = dir.join(GDB_SOCKET);
        args.extend([
            "-gdb".into(),
            format!("unix:{},server=on,wait=off", socket.display()),
        ]);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::Module;

    #[test]
    fn the_symbols_script_names_the_students_modules() {
        let m = |name: &str, path: &str| Module {
            name: name.into(),
            path: path.into(),
        };
        let script = symbols_script(&[
            m("rust-sem", "/w/it's/rust-sem.ko"),
            m("ref/rust-sem", "/w/ref/rust-sem.ko"),
        ]);
        assert!(script.contains("d=/sys/module/rust_sem/sections\n"));
        assert!(script.contains("line='add-symbol-file /w/it'\\''s/rust-sem.ko'\n"));
        assert!(!script.contains("/w/ref/"), "{script}");
        assert!(script.contains(">/dev/ttyS1"));
    }
}
