//! Snapshot text of a step, as stored in `labs/<lab>/expected/NN-name.txt`.
//!
//! ```text
//! $ insmod /lab/hello.ko
//! status: 0
//! --- output
//! <stdout+stderr of the command>
//! --- kernel log
//! <kernel log lines of the step, filtered>
//! ```
//!
//! Both headers are always present (an empty section has no lines), and the
//! text always ends with a newline.
//!
//! Normalisation, and nothing more:
//! - kernel log: the `[    1.234567] ` timestamp (and a `<6>` level) prefix
//!   is removed ([`console::strip_prefix`]); only lines that start with
//!   `<module>:` for one of the lab's modules, or that report a finding
//!   ([`console::Finding::in_line`]), are kept; the two lines every
//!   out-of-tree unsigned module causes
//!   ([`console::ROUTINE_MODULE_LINES`]) are dropped;
//! - output and kernel log: hexadecimal addresses (`0x` followed by 8 or more
//!   hex digits, or a bare 16-hex-digit word) become `0x<ADDR>`; a
//!   device's `firmware '...'` becomes `firmware '<VERSION>'` (QEMU's
//!   emulated devices report QEMU's version, the host's); a `\r` before a
//!   newline (added by the serial line) is removed.
//!
//! A host step (see [`crate::spec::lab`]) has no kernel log, and its output is
//! reduced to what the test harness concluded, by [`test_summary`]:
//!
//! ```text
//! $ cargo test -p lab-02-macro
//! status: 101
//! --- output
//! test tests::empty_list ... FAILED
//! test tests::one_author ... ok
//! test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
//! ```

use std::fmt::Write as _;

use ::vm::console;

/// Renders the snapshot text of one finished step.
pub fn render(command: &str, status: i32, output: &str, kmsg: &str, modules: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "$ {command}");
    let _ = writeln!(s, "status: {status}");
    s.push_str("--- output\n");
    push_body(&mut s, &normalise_output(output));
    s.push_str("--- kernel log\n");
    push_body(&mut s, &filter_kmsg(kmsg, modules));
    s
}

/// The snapshot text of a compile-fail step.
///
/// ```text
/// $ compile-fail compile-fail/guard_send.rs
/// status: build failed
/// --- errors
/// error[E0277]: `*mut ()` cannot be sent between threads safely
///   --> labs/lab-05/compile-fail/guard_send.rs:12:17
/// ...
/// ```
pub fn render_compile_fail(case: &str, status: i32, errors: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "$ compile-fail {case}");
    let verdict = if status == 0 {
        "built (the case compiled: the types do not forbid it)"
    } else {
        "build failed"
    };
    let _ = writeln!(s, "status: {verdict}");
    s.push_str("--- errors\n");
    s.push_str(errors);
    s
}

/// Renders the snapshot text of one finished host step.
pub fn render_host(command: &str, status: i32, output: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "$ {command}");
    let _ = writeln!(s, "status: {status}");
    s.push_str("--- output\n");
    push_body(&mut s, &test_summary(output));
    s
}

/// Renders the snapshot text of a `check_disk` step: the disk, the
/// verdict, and the checker's report whole (it is deterministic).
pub fn render_check_disk(disk: &str, status: i32, output: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "$ check_disk {disk}");
    let _ = writeln!(s, "status: {status}");
    s.push_str("--- output\n");
    push_body(&mut s, output);
    s
}

/// What a run of Rust test binaries concluded, deterministically: each
/// binary's `test NAME ... RESULT` lines, sorted by name (tests run in
/// parallel), then its `test result:` line without the time it took.
/// Everything else (build messages, the failures' own output) is left out.
/// If no test binary ran, the `error` lines are kept instead (the tests
/// did not build).
pub fn test_summary(output: &str) -> String {
    let mut out = String::new();
    let mut tests: Vec<&str> = Vec::new();
    let mut ran = false;
    let mut errors = String::new();
    for line in output.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("test ") && line.contains(" ... ") {
            tests.push(line);
        } else if let Some(result) = line.strip_prefix("test result: ") {
            ran = true;
            tests.sort_unstable();
            for test in tests.drain(..) {
                out.push_str(test);
                out.push('\n');
            }
            let result = result.split("; finished in ").next().unwrap_or(result);
            let _ = writeln!(out, "test result: {result}");
        } else if line.starts_with("error") {
            errors.push_str(line);
            errors.push('\n');
        }
    }
    // A binary that stopped before its summary (it crashed).
    tests.sort_unstable();
    for test in tests {
        out.push_str(test);
        out.push('\n');
    }
    if !ran {
        out.push_str(&errors);
    }
    out
}

fn push_body(s: &mut String, body: &str) {
    if !body.is_empty() {
        s.push_str(body);
        if !body.ends_with('\n') {
            s.push('\n');
        }
    }
}

/// Normalises a command's output: addresses, `\r\n`.
pub fn normalise_output(output: &str) -> String {
    normalise_firmware(&normalise_addresses(&output.replace("\r\n", "\n")))
}

/// Replaces the text of each `firmware '...'` by `<VERSION>`: what QEMU's
/// emulated devices report there is the host's QEMU version.
pub fn normalise_firmware(text: &str) -> String {
    const KEY: &str = "firmware '";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let value = &rest[at + KEY.len()..];
        let Some(end) = value
            .find(['\'', '\n'])
            .filter(|&e| value[e..].starts_with('\''))
        else {
            break;
        };
        out.push_str(&rest[..at + KEY.len()]);
        out.push_str("<VERSION>");
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

/// Keeps the lab's module lines and crash lines of a step's kernel log,
/// normalised, one per line.
pub fn filter_kmsg(kmsg: &str, modules: &[String]) -> String {
    let mut out = String::new();
    for raw in kmsg.lines() {
        let line = console::strip_prefix(raw);
        let module_rest = modules
            .iter()
            .find_map(|m| console::module_message(line, m));
        let keep = match module_rest {
            Some(rest) => !console::ROUTINE_MODULE_LINES.contains(&rest.trim()),
            None => console::Finding::in_line(line).is_some(),
        };
        if keep {
            out.push_str(&normalise_firmware(&normalise_addresses(line)));
            out.push('\n');
        }
    }
    out
}

/// Replaces `0x` + 8 or more hex digits, and bare 16-hex-digit words, by
/// `0x<ADDR>`.
pub fn normalise_addresses(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    while i < bytes.len() {
        let at_word_start = i == 0 || !is_word(bytes[i - 1]);
        if !at_word_start {
            i += 1;
            continue;
        }
        // `0x` form.
        if bytes[i] == b'0' && bytes.get(i + 1) == Some(&b'x') {
            let digits = hex_run(&bytes[i + 2..]);
            if digits >= 8 {
                out.push_str(&text[copied..i]);
                out.push_str("0x<ADDR>");
                i += 2 + digits;
                copied = i;
                continue;
            }
        }
        // Bare 16-digit word.
        let digits = hex_run(&bytes[i..]);
        if digits == 16 && !bytes.get(i + 16).copied().is_some_and(is_word) {
            out.push_str(&text[copied..i]);
            out.push_str("0x<ADDR>");
            i += 16;
            copied = i;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

fn hex_run(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_hexdigit()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    #[test]
    fn a_compile_fail_case_that_compiles_says_so() {
        expect![[r#"
            $ compile-fail compile-fail/guard_send.rs
            status: built (the case compiled: the types do not forbid it)
            --- errors
        "#]]
        .assert_eq(&render_compile_fail("compile-fail/guard_send.rs", 0, ""));
    }

    fn modules() -> Vec<String> {
        vec!["hello".into(), "rust_misc".into()]
    }

    fn check_kmsg(kmsg: &str, expect: Expect) {
        expect.assert_eq(&filter_kmsg(kmsg, &modules()));
    }

    #[test]
    fn kmsg_filter() {
        check_kmsg(
            "[    3.123456] checker: step 1 load\n\
             [    3.200000] hello: loading out-of-tree module taints kernel.\n\
             [    3.200001] hello: module verification failed: signature and/or required key missing - tainting kernel\n\
             [    3.210000] hello: Hello, world\n\
             [   13.210000] hello_world: not ours\n\
             [  113.210000] rust_misc: registered minor 123\n\
             <6>[    3.3] hello: level prefixed\n\
             [    3.4] random: crng init done\n\
             hello: no timestamp\r\n\
             [    3.5] hellothere: no colon match\n",
            expect![[r#"
                hello: Hello, world
                rust_misc: registered minor 123
                hello: level prefixed
                hello: no timestamp
            "#]],
        );
    }

    #[test]
    fn kmsg_crash_lines_kept() {
        check_kmsg(
            "[    5.1] BUG: kernel NULL pointer dereference, address: 0000000000000008\n\
             [    5.2] #PF: supervisor read access in kernel mode\n\
             [    5.3] Oops: 0000 [#1] PREEMPT SMP NOPTI\n\
             [    5.4] RIP: 0010:hello_init+0x5/0x10 [hello]\n\
             [    5.5] Call Trace:\n\
             [    5.6]  <TASK>\n\
             [    5.7] WARNING: CPU: 0 PID: 1 at lib/foo.c:1 bar+0x1/0x2\n\
             [    5.8] hello: RSP: ffffa3c2c0013e40 and 0xffffffffc0a01000\n",
            expect![[r#"
                BUG: kernel NULL pointer dereference, address: 0x<ADDR>
                Oops: 0000 [#1] PREEMPT SMP NOPTI
                Call Trace:
                WARNING: CPU: 0 PID: 1 at lib/foo.c:1 bar+0x1/0x2
                hello: RSP: 0x<ADDR> and 0x<ADDR>
            "#]],
        );
    }

    #[test]
    fn firmware_versions() {
        let check = |input: &str, expect: Expect| expect.assert_eq(&normalise_firmware(input));
        check(
            "model 'QEMU NVMe Ctrl', serial 'lab11', firmware '7.2.22', max transfer 4096 KiB",
            expect!["model 'QEMU NVMe Ctrl', serial 'lab11', firmware '<VERSION>', max transfer 4096 KiB"],
        );
        check(
            "firmware '10.0.2' and firmware '1.0'",
            expect!["firmware '<VERSION>' and firmware '<VERSION>'"],
        );
        check(
            "firmware 'unclosed\nnext",
            expect!["firmware 'unclosed\nnext"],
        );
        check("no firmware here", expect!["no firmware here"]);
    }

    #[test]
    fn addresses() {
        let check = |input: &str, expect: Expect| expect.assert_eq(&normalise_addresses(input));
        check("ptr 0xffffffffc0a01000!", expect!["ptr 0x<ADDR>!"]);
        check("short 0x1234567 kept", expect!["short 0x1234567 kept"]);
        check("eight 0x12345678.", expect!["eight 0x<ADDR>."]);
        check("bare ffff8880abcd1234 word", expect!["bare 0x<ADDR> word"]);
        check(
            "not bare ffff8880abcd12345 or xffff8880abcd1234 or ffff8880abcd123",
            expect!["not bare ffff8880abcd12345 or xffff8880abcd1234 or ffff8880abcd123"],
        );
        check("x0xdeadbeefdead", expect!["x0xdeadbeefdead"]);
        check("hello+0x5/0x10 [hello]", expect!["hello+0x5/0x10 [hello]"]);
        check("ünïcode 0xdeadbeef ök", expect!["ünïcode 0x<ADDR> ök"]);
    }

    #[test]
    fn host_rendering() {
        let check = |status, output: &str, expect: Expect| {
            expect.assert_eq(&render_host("cargo test -p m", status, output))
        };
        check(
            101,
            "   Compiling m v0.1.0 (/w/m)\n\
             \x20   Finished `test` profile [unoptimized + debuginfo] target(s) in 1.02s\n\
             \x20    Running unittests src/lib.rs (target/debug/deps/m-0123)\n\
             \n\
             running 3 tests\n\
             test tests::b ... ok\n\
             test tests::c ... FAILED\n\
             test tests::a ... ok\n\
             \n\
             failures:\n\
             \n\
             ---- tests::c stdout ----\n\
             test failed\n\
             \n\
             failures:\n\
             \x20   tests::c\n\
             \n\
             test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\
             \n\
             error: test failed, to rerun pass `-p m --lib`\n",
            expect![[r#"
                $ cargo test -p m
                status: 101
                --- output
                test tests::a ... ok
                test tests::b ... ok
                test tests::c ... FAILED
                test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
            "#]],
        );
        check(
            101,
            "error[E0425]: cannot find value `x` in this scope\r\n --> src/lib.rs:1:1\n\
             error: could not compile `m` (lib test) due to 1 previous error\n",
            expect![[r#"
                $ cargo test -p m
                status: 101
                --- output
                error[E0425]: cannot find value `x` in this scope
                error: could not compile `m` (lib test) due to 1 previous error
            "#]],
        );
        check(
            0,
            "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
            expect![[r#"
                $ cargo test -p m
                status: 0
                --- output
                test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
            "#]],
        );
    }

    #[test]
    fn rendering() {
        let check = |status, output: &str, kmsg: &str, expect: Expect| {
            expect.assert_eq(&render(
                "insmod /lab/hello.ko",
                status,
                output,
                kmsg,
                &modules(),
            ))
        };
        check(
            0,
            "",
            "[    3.2] hello: loading out-of-tree module taints kernel.\n[    3.3] hello: Hello\n",
            expect![[r#"
                $ insmod /lab/hello.ko
                status: 0
                --- output
                --- kernel log
                hello: Hello
            "#]],
        );
        check(
            1,
            "insmod: can't insert '/lab/hello.ko': File exists",
            "",
            expect![[r#"
                $ insmod /lab/hello.ko
                status: 1
                --- output
                insmod: can't insert '/lab/hello.ko': File exists
                --- kernel log
            "#]],
        );
        check(
            0,
            "a\r\nb at 0xffff888000000000\n",
            "",
            expect![[r#"
                $ insmod /lab/hello.ko
                status: 0
                --- output
                a
                b at 0x<ADDR>
                --- kernel log
            "#]],
        );
    }
}
