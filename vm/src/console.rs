//! The guest kernel's log, as the console (`ttyS0`) and `dmesg` show it.
//!
//! Everything the checker knows about kernel log text is here:
//! - the `<6>` level and `[    1.234567] ` timestamp a line starts with
//!   ([`strip_prefix`]);
//! - the marker the step runner writes before each step, so the console
//!   shows where each step starts ([`step_marker`], [`parse_step_marker`]);
//! - a module's own lines ([`module_message`]) and the two every unsigned
//!   out-of-tree module causes ([`ROUTINE_MODULE_LINES`]);
//! - what the kernel and the debug kernel's tools report, as one enum
//!   ([`Finding`]), and the debug tools' reports cut out of a console
//!   ([`find_reports`]).

use std::fmt;

/// Removes the `\r` the serial line adds, a `<N>` level and a
/// `[    1.234567] ` timestamp (each when present) from a kernel log line.
pub fn strip_prefix(line: &str) -> &str {
    let mut line = line.trim_end_matches('\r');
    if let Some((level, rest)) = line.strip_prefix('<').and_then(|r| r.split_once('>')) {
        if !level.is_empty() && level.chars().all(|c| c.is_ascii_digit()) {
            line = rest;
        }
    }
    let stamped = line.trim_start();
    if let Some((stamp, rest)) = stamped.strip_prefix('[').and_then(|r| r.split_once(']')) {
        let stamp = stamp.trim();
        if !stamp.is_empty() && stamp.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return rest.strip_prefix(' ').unwrap_or(rest);
        }
    }
    line
}

/// What the step runner writes to the kernel log before step `number`
/// (1-based) called `name`. The runner is a shell script, so both may be
/// shell words (`"$1"`).
pub fn step_marker(number: &str, name: &str) -> String {
    format!("{STEP_MARKER}{number} {name}")
}

/// How a step marker starts.
const STEP_MARKER: &str = "checker: step ";

/// The 0-based index and name of the step a [`step_marker`] line starts
/// (timestamp or not), or `None` when the line is no step marker.
pub fn parse_step_marker(line: &str) -> Option<(usize, String)> {
    let (_, rest) = line.split_once(STEP_MARKER)?;
    let (n, name) = rest.split_once(' ')?;
    let n: usize = n.parse().ok()?;
    Some((n.checked_sub(1)?, name.trim().to_owned()))
}

/// What a module said in a (prefix-stripped) line `module: message`, or
/// `None` when the line is not `module`'s.
pub fn module_message<'a>(line: &'a str, module: &str) -> Option<&'a str> {
    line.strip_prefix(module)?.strip_prefix(':')
}

/// The messages (after the `module:` prefix, trimmed) the kernel prints
/// when any unsigned out-of-tree module loads; they say nothing about it.
pub const ROUTINE_MODULE_LINES: &[&str] = &[
    "loading out-of-tree module taints kernel.",
    "module verification failed: signature and/or required key missing - tainting kernel",
];

/// How the kernel words an oops (a fault in kernel code).
const OOPS: &[&str] = &[
    "Oops:",
    "general protection fault",
    "BUG: kernel NULL pointer dereference",
    "BUG: unable to handle",
    // `BUG()`, as a Rust panic ends in the kernel crate (an oops follows).
    "kernel BUG at",
];

/// The headlines of lockdep's reports.
const LOCKDEP: &[&str] = &[
    "WARNING: possible circular locking dependency detected",
    "WARNING: possible recursive locking detected",
    "WARNING: inconsistent lock state",
    "WARNING: bad unlock balance detected",
    "WARNING: held lock freed",
    "WARNING: lock held when returning to user space",
    "WARNING: possible irq lock inversion dependency detected",
    "WARNING: suspicious RCU usage",
    "BUG: held lock freed",
];

/// The headlines of the atomic-sleep check's reports (`might_sleep()`).
const ATOMIC_SLEEP: &[&str] = &[
    "BUG: sleeping function called from invalid context",
    "BUG: scheduling while atomic",
    "BUG: workqueue leaked lock or atomic",
];

/// Something the kernel reported: a crash, a warning, or one of the debug
/// kernel's tools (KASAN, lockdep, the atomic-sleep check, kmemleak).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Finding {
    /// `Kernel panic - not syncing`: the kernel stopped.
    Panic,
    /// A fault in kernel code: `Oops:`, a general protection fault, a NULL
    /// pointer dereference or another page fault the kernel cannot handle.
    Oops,
    /// Another `BUG:` report (scheduling while atomic on a kernel without
    /// the debug checks, a soft lockup, ...).
    Bug,
    /// `WARNING:` (a `WARN_ON` that fired).
    Warning,
    /// A stack dump without a headline of its own (`Call Trace:`, as
    /// `dump_stack()` prints).
    CallTrace,
    /// KASAN: out-of-bounds access, use after free, double free.
    Kasan,
    /// lockdep: lock order inversion, recursive locking, inconsistent state.
    Lockdep,
    /// `might_sleep()`: sleeping in atomic context, scheduling while atomic.
    AtomicSleep,
    /// kmemleak: memory nobody points to any more.
    Kmemleak,
}

impl Finding {
    /// The debug kernel's tools, in the order their reports are looked for.
    pub const DEBUG_TOOLS: [Finding; 4] = [
        Finding::Kasan,
        Finding::Lockdep,
        Finding::AtomicSleep,
        Finding::Kmemleak,
    ];

    /// Its name. A debug tool's [`Report::line`] starts with it (`KASAN: ...`).
    pub fn name(self) -> &'static str {
        match self {
            Finding::Panic => "kernel panic",
            Finding::Oops => "oops",
            Finding::Bug => "BUG",
            Finding::Warning => "WARNING",
            Finding::CallTrace => "call trace",
            Finding::Kasan => "KASAN",
            Finding::Lockdep => "lockdep",
            Finding::AtomicSleep => "sleep in atomic context",
            Finding::Kmemleak => "kmemleak",
        }
    }

    /// The word a run's verdict uses when this finding decided it. A bare
    /// stack dump is a `crash`, as is a line nothing here recognises.
    pub fn verdict_word(self) -> &'static str {
        match self {
            Finding::Panic => "kernel-panic",
            Finding::Oops => "oops",
            Finding::Bug => "bug",
            Finding::Warning => "warning",
            Finding::CallTrace => "crash",
            Finding::Kasan => "kasan",
            Finding::Lockdep => "lockdep",
            Finding::AtomicSleep => "atomic-sleep",
            Finding::Kmemleak => "memory-leak",
        }
    }

    /// The kernel's own findings, in the order they are looked for in a
    /// line (an oops's `BUG: unable to handle` before a plain `BUG:`).
    const KERNEL: [Finding; 5] = [
        Finding::Panic,
        Finding::Oops,
        Finding::Bug,
        Finding::Warning,
        Finding::CallTrace,
    ];

    /// The words that tell it: for the kernel's own findings, words a line
    /// contains; for the debug tools', how their headlines start.
    fn words(self) -> &'static [&'static str] {
        match self {
            Finding::Panic => &["Kernel panic"],
            Finding::Oops => OOPS,
            Finding::Bug => &["BUG:"],
            Finding::Warning => &["WARNING:"],
            Finding::CallTrace => &["Call Trace:"],
            Finding::Kasan => &["BUG: KASAN: "],
            Finding::Lockdep => LOCKDEP,
            Finding::AtomicSleep => ATOMIC_SLEEP,
            Finding::Kmemleak => &["unreferenced object 0x"],
        }
    }

    /// What a console line (timestamp or not) reports in the kernel's own
    /// words, whatever the kernel: a panic, an oops, a `BUG:`, a `WARNING:`
    /// or a stack dump. The debug tools' headlines are `BUG:` and
    /// `WARNING:` lines too; [`Finding::of_headline`] tells them apart.
    pub fn in_line(line: &str) -> Option<Finding> {
        Finding::KERNEL
            .into_iter()
            .find(|f| f.words().iter().any(|w| line.contains(w)))
    }

    /// The debug tool whose report a (prefix-stripped) line is the
    /// headline of.
    pub fn of_headline(line: &str) -> Option<Finding> {
        Finding::DEBUG_TOOLS
            .into_iter()
            .find(|f| f.words().iter().any(|h| line.starts_with(h)))
    }

    /// What the line a run's verdict names reports: a debug tool's
    /// [`Report::line`] (`KASAN: BUG: KASAN: ...`), else the kernel's own
    /// words ([`Finding::in_line`]).
    pub fn of_verdict_line(line: &str) -> Option<Finding> {
        Finding::DEBUG_TOOLS
            .into_iter()
            .find(|t| {
                line.strip_prefix(t.name())
                    .is_some_and(|rest| rest.starts_with(": "))
            })
            .or_else(|| Finding::in_line(line))
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One report of a debug tool, cut out of the console.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The tool (one of [`Finding::DEBUG_TOOLS`]).
    pub tool: Finding,
    /// Its headline (`BUG: KASAN: use-after-free in ...`), without the
    /// timestamp.
    pub title: String,
    /// 0-based step index and name it happened in (from the runner's
    /// [`step_marker`] lines), if after a step started.
    pub step: Option<(usize, String)>,
    /// The report's lines, timestamps removed.
    pub excerpt: String,
}

impl Report {
    /// The line a verdict names: the tool, then the headline.
    pub fn line(&self) -> String {
        format!("{}: {}", self.tool, self.title)
    }
}

/// Most lines kept of one report.
const MAX_REPORT_LINES: usize = 120;

/// Whether a kmemleak backtrace line points into a module: either named
/// (`func+0x1/0x2 [growvec]`) or, after the module was unloaded, a bare
/// address in the x86-64 module area (`0xffffffffa0000000` up to
/// `0xffffffffff000000`). The `[<...>]` part is the raw address, hashed
/// (`(____ptrval____)`) by default.
fn module_frame(line: &str) -> bool {
    let Some((_, what)) = line
        .trim()
        .strip_prefix("[<")
        .and_then(|r| r.split_once(">] "))
    else {
        return false;
    };
    let what = what.trim();
    if let Some(hex) = what.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16)
            .is_ok_and(|a| (0xffff_ffff_a000_0000..0xffff_ffff_ff00_0000).contains(&a));
    }
    what.ends_with(']') && what.contains(" [")
}

/// The console without the allocator's own warnings about allocations that
/// fault injection made fail: `warn_alloc()` prints `vmalloc error: ...`
/// or `page allocation failure: ...` and a stack dump, which the generic
/// crash check would take for a bug. Only a warning that follows a
/// `FAULT_INJECTION: forcing a failure.` line (within 5 lines) is removed,
/// up to the end of its stack dump (`</TASK>`).
pub fn without_injected_failure_warnings(console: &str) -> String {
    let lines: Vec<&str> = console.lines().collect();
    let mut out = String::with_capacity(console.len());
    let mut i = 0;
    while i < lines.len() {
        let l = strip_prefix(lines[i]);
        let warn =
            l.contains(": vmalloc error: size ") || l.contains(": page allocation failure: order:");
        let injected = lines[i.saturating_sub(5)..i]
            .iter()
            .any(|p| strip_prefix(p).starts_with("FAULT_INJECTION: forcing a failure"));
        if warn && injected {
            let end = lines[i..]
                .iter()
                .position(|p| strip_prefix(p).trim() == "</TASK>")
                .map_or(i, |k| i + k);
            i = end + 1;
            continue;
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

/// The console, or one step's kernel log, without the `WARN`s a step
/// expects (`lab.toml`'s `warns`, for a test of an API that must warn):
/// a warning whose message, the line after its `cut here` line, contains
/// `expected(step)` for the step it happened in (by name, from the step
/// markers; `None` before the first) loses every line to its `end trace`
/// line but the message itself, so it is no crash, and the snapshot keeps
/// what it said. Another warning, or one whose end is not there, stays.
pub fn without_expected_warnings<'a>(
    console: &str,
    expected: impl Fn(Option<&str>) -> Option<&'a str>,
) -> String {
    let lines: Vec<&str> = console.lines().collect();
    let mut out = String::with_capacity(console.len());
    let mut step: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = strip_prefix(lines[i]);
        if let Some((_, name)) = parse_step_marker(line) {
            step = Some(name);
        }
        let cut = line.trim() == "------------[ cut here ]------------";
        let wanted = expected(step.as_deref()).filter(|w| !w.is_empty());
        let message = lines.get(i + 1).map(|l| strip_prefix(l));
        if let (true, Some(w), Some(m)) = (cut, wanted, message) {
            let end = lines[i + 1..]
                .iter()
                .position(|l| strip_prefix(l).trim().starts_with("---[ end trace "));
            if let (true, Some(k)) = (m.contains(w), end) {
                out.push_str(lines[i + 1]);
                out.push('\n');
                i += k + 2;
                continue;
            }
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

/// Finds every debug-tool report in a console log, in order. kmemleak
/// blocks count only when their backtrace goes through a module: the kernel
/// itself keeps a few blocks that kmemleak cannot see the references to.
pub fn find_reports(console: &str) -> Vec<Report> {
    let lines: Vec<&str> = console.lines().collect();
    let mut reports = Vec::new();
    let mut step: Option<(usize, String)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = strip_prefix(lines[i]);
        if let Some(marker) = parse_step_marker(line) {
            step = Some(marker);
        }
        let Some(tool) = Finding::of_headline(line) else {
            i += 1;
            continue;
        };
        // The report runs to the next blank or `====` line (KASAN,
        // lockdep), the end of the stack dump (`</TASK>`), or the next
        // kmemleak block.
        let mut body = vec![line.to_owned()];
        let mut j = i + 1;
        while j < lines.len() && body.len() < MAX_REPORT_LINES {
            let l = strip_prefix(lines[j]);
            let end = match tool {
                Finding::Kmemleak => {
                    l.starts_with("unreferenced object") || !l.starts_with(' ') || l.is_empty()
                }
                Finding::Kasan => l.starts_with("=========="),
                _ => false,
            };
            if end {
                break;
            }
            body.push(l.to_owned());
            j += 1;
            if matches!(tool, Finding::Lockdep | Finding::AtomicSleep) && l.trim() == "</TASK>" {
                break;
            }
        }
        let keep = tool != Finding::Kmemleak || body.iter().any(|l| module_frame(l));
        if keep {
            reports.push(Report {
                tool,
                title: line.to_owned(),
                step: step.clone(),
                excerpt: body.join("\n"),
            });
        }
        i = j.max(i + 1);
    }
    reports
}

/// The last `n` lines of `text` (a log's excerpt in an error or a report).
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn prefixes() {
        let check = |line: &str, want: &str| assert_eq!(strip_prefix(line), want, "{line:?}");
        check("[    1.234567] hello: x", "hello: x");
        check("[12345.000001] hello: x", "hello: x");
        check("<4>[    1.2] hello: x", "hello: x");
        check("<6>hello: x\r", "hello: x");
        check("[   12.345678] BUG: KASAN: x", "BUG: KASAN: x");
        check("  [ 1.0] a] b", "a] b");
        check("[ 1.0]tight", "tight");
        check("[not a stamp] x", "[not a stamp] x");
        check("[] x", "[] x");
        check("[x] y", "[x] y");
        check("BUG: [x] y", "BUG: [x] y");
        check("<x> y", "<x> y");
        check(
            "    [<(____ptrval____)>] kmalloc",
            "    [<(____ptrval____)>] kmalloc",
        );
        check("plain", "plain");
    }

    #[test]
    fn expected_warnings_leave_their_message() {
        let console = "\
[    1.0] checker: step 1 leak
[    1.1] ------------[ cut here ]------------
[    1.1] m: a kernel::kthread::KThread was leaked: stopping it before unload
[    1.1] WARNING: CPU: 0 PID: 93 at unload.c:27 rust_helper_unload_warn+0x1/0x2 [m]
[    1.1] Call Trace:
[    1.1] ---[ end trace 0000000000000000 ]---
[    1.2] checker: step 2 other
[    1.3] ------------[ cut here ]------------
[    1.3] m: a kernel::kthread::KThread was leaked: stopping it before unload
[    1.3] WARNING: CPU: 0 PID: 94 at unload.c:27 rust_helper_unload_warn+0x1/0x2 [m]
[    1.3] ---[ end trace 0000000000000000 ]---
";
        let kept = without_expected_warnings(console, |step| {
            (step == Some("leak")).then_some("was leaked")
        });
        expect![[r#"
            [    1.0] checker: step 1 leak
            [    1.1] m: a kernel::kthread::KThread was leaked: stopping it before unload
            [    1.2] checker: step 2 other
            [    1.3] ------------[ cut here ]------------
            [    1.3] m: a kernel::kthread::KThread was leaked: stopping it before unload
            [    1.3] WARNING: CPU: 0 PID: 94 at unload.c:27 rust_helper_unload_warn+0x1/0x2 [m]
            [    1.3] ---[ end trace 0000000000000000 ]---
        "#]]
        .assert_eq(&kept);
    }

    #[test]
    fn step_markers() {
        assert_eq!(step_marker("$1", "$2"), "checker: step $1 $2");
        let written = step_marker("3", "read");
        assert_eq!(parse_step_marker(&written), Some((2, "read".into())));
        assert_eq!(
            parse_step_marker("[    2.5] checker: step 12 load-twice\r"),
            Some((11, "load-twice".into()))
        );
        for not in [
            "checker: step 0 zero",
            "checker: step x name",
            "checker: step 1",
            "checker: kmemleak scan after the last step",
            "hello: step 1 x",
        ] {
            assert_eq!(parse_step_marker(not), None, "{not}");
        }
    }

    #[test]
    fn module_lines() {
        assert_eq!(module_message("hello: Hello", "hello"), Some(" Hello"));
        assert_eq!(module_message("hellothere: x", "hello"), None);
        assert_eq!(module_message("hello_world: x", "hello"), None);
    }

    #[test]
    fn findings_in_lines() {
        let shown: Vec<String> = [
            "Kernel panic - not syncing: fx_panic: panic in init",
            "[    5.3] Oops: 0000 [#1] PREEMPT SMP NOPTI",
            "BUG: kernel NULL pointer dereference, address: 0000000000000000",
            "BUG: unable to handle page fault for address: ffffffffc0000000",
            "general protection fault, probably for non-canonical address",
            "BUG: scheduling while atomic: insmod/93/0x00000002",
            "WARNING: CPU: 0 PID: 92 at init/main.c:1284 do_one_initcall+0x1d7/0x220",
            "[    5.5] Call Trace:",
            "BUG: KASAN: use-after-free in fx_init+0x98/0x1000 [fx_uaf]",
            "hello: Oops, no colon",
            "Call Trace without a colon",
            "random: crng init done",
        ]
        .iter()
        .map(|l| format!("{:?}", Finding::in_line(l)))
        .collect();
        expect![[r#"
            Some(Panic)
            Some(Oops)
            Some(Oops)
            Some(Oops)
            Some(Oops)
            Some(Bug)
            Some(Warning)
            Some(CallTrace)
            Some(Bug)
            None
            None
            None"#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn verdict_words() {
        let words: Vec<&str> = [
            "Kernel panic - not syncing: fx_panic: panic in init",
            "BUG: kernel NULL pointer dereference, address: 0000000000000000",
            "general protection fault, probably for non-canonical address",
            "BUG: scheduling while atomic: insmod/93/0x00000002",
            "WARNING: CPU: 0 PID: 92 at init/main.c:1284 do_one_initcall+0x1d7/0x220",
            "Call Trace:",
            "KASAN: BUG: KASAN: use-after-free in fx_init+0x98/0x1000 [fx_uaf]",
            "lockdep: WARNING: possible circular locking dependency detected",
            "sleep in atomic context: BUG: scheduling while atomic: insmod/37/0x00000002",
            "kmemleak: unreferenced object 0xffff888004400000 (size 65536):",
            "kmemleak:unreferenced",
        ]
        .iter()
        .map(|l| Finding::of_verdict_line(l).map_or("crash", Finding::verdict_word))
        .collect();
        assert_eq!(
            words,
            [
                "kernel-panic",
                "oops",
                "oops",
                "bug",
                "warning",
                "crash",
                "kasan",
                "lockdep",
                "atomic-sleep",
                "memory-leak",
                "crash"
            ]
        );
    }

    /// A real console: `vm/debug/demo` on the debug kernel, one bug per step.
    #[test]
    fn real_reports() {
        let console = include_str!("../debug/reports/demo-console.txt");
        let reports = find_reports(console);
        let summary: String = reports
            .iter()
            .map(|r| {
                format!(
                    "{} | {} | step {:?} | {} lines\n",
                    r.tool,
                    r.title,
                    r.step,
                    r.excerpt.lines().count()
                )
            })
            .collect();
        expect![[r#"
            lockdep | WARNING: possible circular locking dependency detected | step Some((0, "lock-order")) | 109 lines
            sleep in atomic context | BUG: sleeping function called from invalid context at include/linux/sched/mm.h:274 | step Some((1, "sleep")) | 44 lines
            KASAN | BUG: KASAN: use-after-free in use_after_free+0xb6/0xca [debugdemo] | step Some((2, "uaf")) | 88 lines
            kmemleak | unreferenced object 0xffff888003d6aa00 (size 64): | step Some((3, "leak")) | 14 lines
        "#]].assert_eq(&summary);
        // Each report file of the book is found on its own, as one report.
        for (file, tool) in [
            (include_str!("../debug/reports/kasan.txt"), Finding::Kasan),
            (
                include_str!("../debug/reports/lockdep.txt"),
                Finding::Lockdep,
            ),
            (
                include_str!("../debug/reports/lockdep-rust.txt"),
                Finding::Lockdep,
            ),
            (
                include_str!("../debug/reports/sleep.txt"),
                Finding::AtomicSleep,
            ),
            (
                include_str!("../debug/reports/kmemleak.txt"),
                Finding::Kmemleak,
            ),
        ] {
            let found = find_reports(file);
            assert_eq!(found.len(), 1, "{tool}");
            assert_eq!(found[0].tool, tool);
        }
        expect!["kmemleak: unreferenced object 0xffff888003d6aa00 (size 64):"]
            .assert_eq(&reports[3].line());
        expect![[r#"
            unreferenced object 0xffff888003d6aa00 (size 64):
              comm "insmod", pid 68, jiffies 4294896520
              hex dump (first 32 bytes):
                58 d1 c6 03 80 88 ff ff 00 00 00 00 05 00 36 05  X.............6.
                00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
              backtrace:
                [<(____ptrval____)>] kmalloc_trace+0x21/0xc0
                [<(____ptrval____)>] 0xffffffffa0008080
                [<(____ptrval____)>] do_one_initcall+0xc0/0x320
                [<(____ptrval____)>] do_init_module+0x185/0x580
                [<(____ptrval____)>] load_module+0x5a8c/0x7be0
                [<(____ptrval____)>] __do_sys_finit_module+0xf3/0x150
                [<(____ptrval____)>] do_syscall_64+0x3c/0x90
                [<(____ptrval____)>] entry_SYSCALL_64_after_hwframe+0x4b/0xb5"#]]
        .assert_eq(&reports[3].excerpt);
    }

    #[test]
    fn kernel_blocks_are_not_leaks() {
        let console = "unreferenced object 0xffff888003d6aa00 (size 64):\n  comm \"swapper/0\", pid 1, jiffies 4294896520\n  backtrace:\n    [<(____ptrval____)>] kmalloc_trace+0x21/0xc0\n    [<(____ptrval____)>] acpi_os_map_iomem+0x1/0x2\n";
        assert!(find_reports(console).is_empty());
    }

    #[test]
    fn injected_failure_warnings() {
        let console = "[ 1.0] FAULT_INJECTION: forcing a failure.\n[ 1.0] name failslab, interval 1\n[ 1.1] insmod: vmalloc error: size 16384, vm_struct allocation failed\n[ 1.1] Call Trace:\n[ 1.1]  <TASK>\n[ 1.1]  dump_stack_lvl+0x4c/0x5f\n[ 1.1]  </TASK>\n[ 1.2] Mem-Info:\n[ 2.0] insmod: vmalloc error: size 1, vm_struct allocation failed\n[ 2.0] Call Trace:\n";
        expect![[r#"
            [ 1.0] FAULT_INJECTION: forcing a failure.
            [ 1.0] name failslab, interval 1
            [ 1.2] Mem-Info:
            [ 2.0] insmod: vmalloc error: size 1, vm_struct allocation failed
            [ 2.0] Call Trace:
        "#]]
        .assert_eq(&without_injected_failure_warnings(console));
    }

    #[test]
    fn module_frames() {
        assert!(module_frame("    [<(____ptrval____)>] 0xffffffffa0008080"));
        assert!(module_frame(
            "    [<ffffffff81234567>] leak_init+0x12/0x30 [leaky]"
        ));
        assert!(!module_frame(
            "    [<(____ptrval____)>] kmalloc_trace+0x21/0xc0"
        ));
        assert!(!module_frame("    [<(____ptrval____)>] 0xffffffff81000000"));
        assert!(!module_frame(
            "  comm \"insmod\", pid 70, jiffies 4294669960"
        ));
    }

    #[test]
    fn tail_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
