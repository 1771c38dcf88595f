//! `checker bench-binder` (`make bench-binder`): the Rust Binder driver
//! against Debian's C one, measured in one guest boot with 2 CPUs.
//!
//! Builds `drivers/binder` (`rust_binder.ko` and `bindertest`), boots the
//! guest with `binder_linux` from the kernel image (see
//! `vm::image`) and the Rust module, and runs `bindertest`'s
//! benchmarks on each device in turn, C, Rust, C, Rust: round-trip latency
//! at five payload sizes (min, p50, p99; client and server pinned to one
//! CPU), calls per second with [`PAIRS`] client/server pairs, and a flood
//! of one-way calls. The Rust/C ratios compare the sums of the two runs of
//! each driver; the second C run against the first (C/C) shows how much
//! the numbers move when nothing changes. The table goes to
//! `book/src/generated/binder-bench.md` for the Binder chapter (the one file
//! of that folder in git: the book shows the last run committed).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ::vm::accel::{self, AccelChoice};
use ::vm::{Guest, Module, Program, Source};
use anyhow::{bail, Context, Result};

use crate::spec::lab::Step;
use crate::tools::bench::{self, ratio};
use crate::tools::setup::Toolchain;

/// Payload sizes of the latency runs, in bytes.
pub const PAYLOADS: [usize; 5] = [0, 64, 1024, 4096, 16384];

/// Client/server pairs of the throughput run.
pub const PAIRS: u32 = 4;

/// The runs, in the order they happen: each driver twice, interleaved.
pub const RUNS: [(&str, &str); 4] = [
    ("c-1", "/dev/binder"),
    ("rust-1", "/dev/rust-binder"),
    ("c-2", "/dev/binder"),
    ("rust-2", "/dev/rust-binder"),
];

/// What `checker bench-binder` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Calls per latency measurement (and per pair in the throughput
    /// run); the one-way flood sends ten times as many.
    pub count: u32,
    /// Where the Markdown table goes; `None`: the book's.
    pub out: Option<PathBuf>,
}

/// The numbers of one run on one device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunResult {
    /// Payload size -> (min, p50, p99) round trip in ns.
    pub latency: BTreeMap<usize, [u64; 3]>,
    /// Calls per second with [`PAIRS`] pairs.
    pub throughput: Option<f64>,
    /// One-way calls per second.
    pub oneway: Option<f64>,
}

/// The guest command of one run on `device`.
pub fn script(device: &str, count: u32) -> String {
    let mut s = String::new();
    for size in PAYLOADS {
        let _ = write!(
            s,
            "/lab/bindertest {device} bench-latency {size} {count} && "
        );
    }
    let _ = write!(
        s,
        "/lab/bindertest {device} bench-throughput {PAIRS} {count} && \
         /lab/bindertest {device} bench-oneway {}",
        count * 10
    );
    s
}

/// Parses what [`script`] printed (`latency SIZE MIN P50 P99`,
/// `throughput PAIRS CALLS_PER_S`, `oneway COUNT CALLS_PER_S`).
pub fn parse(output: &str) -> Result<RunResult> {
    let mut r = RunResult::default();
    for line in output.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> Result<f64> {
            f.get(i)
                .and_then(|x| x.parse().ok())
                .with_context(|| format!("not a benchmark line: {line:?}"))
        };
        match f.first() {
            Some(&"latency") => {
                let size = num(1)? as usize;
                r.latency
                    .insert(size, [num(2)? as u64, num(3)? as u64, num(4)? as u64]);
            }
            Some(&"throughput") => r.throughput = Some(num(2)?),
            Some(&"oneway") => r.oneway = Some(num(2)?),
            _ => {}
        }
    }
    for size in PAYLOADS {
        if !r.latency.contains_key(&size) {
            bail!("no latency for {size} bytes in:\n{output}");
        }
    }
    if r.throughput.is_none() || r.oneway.is_none() {
        bail!("no throughput or one-way figure in:\n{output}");
    }
    Ok(r)
}

/// The Rust/C p50 latency ratio per payload (sums of both runs of each).
pub fn latency_ratios(runs: &[(&str, RunResult)]) -> Vec<(usize, f64)> {
    let sum = |prefix: &str, size: usize, i: usize| -> f64 {
        runs.iter()
            .filter(|(n, _)| n.starts_with(prefix))
            .map(|(_, r)| r.latency.get(&size).map_or(0, |l| l[i]) as f64)
            .sum()
    };
    PAYLOADS
        .iter()
        .map(|&s| (s, ratio(sum("rust", s, 1), sum("c", s, 1))))
        .collect()
}

/// The Markdown table of the four runs.
pub fn render(runs: &[(&str, RunResult)], count: u32) -> String {
    let get = |name: &str| runs.iter().find(|(n, _)| *n == name).map(|(_, r)| r);
    let (Some(c1), Some(r1), Some(c2), Some(r2)) =
        (get("c-1"), get("rust-1"), get("c-2"), get("rust-2"))
    else {
        return "(incomplete runs)\n".into();
    };
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Round trips (µs), {count} calls each, client and server on one CPU; \
         min / p50 / p99 of each run, in the order they ran:\n"
    );
    let _ = writeln!(
        out,
        "| payload | C (1) | Rust (1) | C (2) | Rust (2) | Rust/C p50 | C/C p50 |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|");
    let ratios = latency_ratios(runs);
    for (size, rust_c) in ratios {
        let cell = |r: &RunResult| {
            let l = r.latency[&size];
            format!("{} / {} / {}", us(l[0]), us(l[1]), us(l[2]))
        };
        let noise = ratio(c2.latency[&size][1] as f64, c1.latency[&size][1] as f64);
        let _ = writeln!(
            out,
            "| {size} B | {} | {} | {} | {} | {rust_c:.2} | {noise:.2} |",
            cell(c1),
            cell(r1),
            cell(c2),
            cell(r2)
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| calls per second | C (1) | Rust (1) | C (2) | Rust (2) | Rust/C | C/C |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    let rows = [
        (
            format!("{PAIRS} pairs, 64 B calls"),
            [c1, r1, c2, r2].map(|r| r.throughput.unwrap_or(0.0)),
        ),
        (
            "one-way flood, 64 B".into(),
            [c1, r1, c2, r2].map(|r| r.oneway.unwrap_or(0.0)),
        ),
    ];
    for (label, [c1, r1, c2, r2]) in rows {
        let _ = writeln!(
            out,
            "| {label} | {c1:.0} | {r1:.0} | {c2:.0} | {r2:.0} | {:.2} | {:.2} |",
            ratio(r1 + r2, c1 + c2),
            ratio(c2, c1)
        );
    }
    out
}

/// Builds `drivers/binder` for `tc`'s kernel.
pub fn build(root: &Path, tc: &Toolchain) -> Result<PathBuf> {
    let dir = root.join("drivers").join("binder");
    crate::tools::exec::build_quietly(&dir, tc)?;
    Ok(dir)
}

/// Builds, boots, measures; writes the table and returns it with the
/// five latency ratios first.
pub fn run(root: &Path, tc: &Toolchain, opts: &Options) -> Result<String> {
    let dir = build(root, tc)?;
    let image_modules = vm::image::guest_modules(&tc.modules_dir, &["binder_linux".into()])?;
    let mut steps = vec![Step {
        name: "load".into(),
        run: "insmod /lab/rust_binder.ko && ls /dev/binder /dev/rust-binder".into(),
    }];
    for (name, device) in RUNS {
        steps.push(Step {
            name: name.into(),
            run: script(device, opts.count),
        });
    }
    let (accel, why) = accel::choose(AccelChoice::Auto, &tc.vmlinuz, &tc.cache);
    // About 0.3 ms a call under TCG, with room to spare; bindertest stops
    // a benchmark that hangs after 300 s itself.
    let secs = 420 + u64::from(opts.count) * 40 / 1000 * RUNS.len() as u64;
    let guest = Guest {
        kernel: tc.boot_kernel.clone(),
        extra_cmdline: String::new(),
        modules: vec![Module {
            name: "rust_binder".into(),
            path: dir.join("rust_binder.ko"),
        }],
        image_modules,
        programs: vec![Program {
            name: "bindertest".into(),
            source: Source::Path(dir.join("bindertest")),
        }],
        steps: steps.clone(),
        cpus: 2,
        memory_mb: crate::run::GUEST_MEMORY_MB,
        devices: Vec::new(),
        timeout: Duration::from_secs(secs),
        accel,
        keep: false,
    };
    println!(
        "bench-binder: {} calls per measurement; accelerator {accel}: {why}",
        opts.count
    );
    let outputs = bench::run_steps("bench-binder", &guest)?;
    let mut runs = Vec::new();
    for (i, output) in outputs.iter().enumerate().skip(1) {
        runs.push((RUNS[i - 1].0, parse(output)?));
    }
    let table = render(&runs, opts.count);
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| root.join("book/src/generated/binder-bench.md"));
    bench::write_table(&out, &table)?;
    let mut summary = String::from("Rust/C p50 latency:");
    for (size, r) in latency_ratios(&runs) {
        let _ = write!(summary, " {size} B {r:.2};");
    }
    Ok(format!(
        "{summary}\n\n{table}\nwritten to {}\n",
        out.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn fake(scale: f64) -> String {
        let mut s = String::new();
        for (i, size) in PAYLOADS.iter().enumerate() {
            let base = 100_000.0 * scale + i as f64 * 1000.0;
            let _ = writeln!(
                s,
                "latency {size} {} {} {}",
                base as u64,
                (base * 1.5) as u64,
                (base * 9.0) as u64
            );
        }
        let _ = writeln!(s, "throughput 4 {:.0}", 2000.0 / scale);
        let _ = writeln!(s, "oneway 20000 {:.0}", 5000.0 / scale);
        s
    }

    #[test]
    fn script_and_parse() {
        expect![[r#"/lab/bindertest /dev/binder bench-latency 0 20 && /lab/bindertest /dev/binder bench-latency 64 20 && /lab/bindertest /dev/binder bench-latency 1024 20 && /lab/bindertest /dev/binder bench-latency 4096 20 && /lab/bindertest /dev/binder bench-latency 16384 20 && /lab/bindertest /dev/binder bench-throughput 4 20 && /lab/bindertest /dev/binder bench-oneway 200"#]]
            .assert_eq(&script("/dev/binder", 20));
        let r = parse(&fake(1.0)).unwrap();
        assert_eq!(r.latency[&64], [101_000, 151_500, 909_000]);
        assert_eq!(r.throughput, Some(2000.0));
        let err = parse("latency 0 1 2 3\n").unwrap_err().to_string();
        assert!(err.contains("no latency for 64 bytes"), "{err}");
        assert!(parse("latency x 1 2 3\n").is_err());
    }

    #[test]
    fn table() {
        let runs = vec![
            ("c-1", parse(&fake(1.0)).unwrap()),
            ("rust-1", parse(&fake(1.1)).unwrap()),
            ("c-2", parse(&fake(1.0)).unwrap()),
            ("rust-2", parse(&fake(1.1)).unwrap()),
        ];
        expect![[r#"
            Round trips (µs), 20 calls each, client and server on one CPU; min / p50 / p99 of each run, in the order they ran:

            | payload | C (1) | Rust (1) | C (2) | Rust (2) | Rust/C p50 | C/C p50 |
            |---:|---:|---:|---:|---:|---:|---:|
            | 0 B | 100.0 / 150.0 / 900.0 | 110.0 / 165.0 / 990.0 | 100.0 / 150.0 / 900.0 | 110.0 / 165.0 / 990.0 | 1.10 | 1.00 |
            | 64 B | 101.0 / 151.5 / 909.0 | 111.0 / 166.5 / 999.0 | 101.0 / 151.5 / 909.0 | 111.0 / 166.5 / 999.0 | 1.10 | 1.00 |
            | 1024 B | 102.0 / 153.0 / 918.0 | 112.0 / 168.0 / 1008.0 | 102.0 / 153.0 / 918.0 | 112.0 / 168.0 / 1008.0 | 1.10 | 1.00 |
            | 4096 B | 103.0 / 154.5 / 927.0 | 113.0 / 169.5 / 1017.0 | 103.0 / 154.5 / 927.0 | 113.0 / 169.5 / 1017.0 | 1.10 | 1.00 |
            | 16384 B | 104.0 / 156.0 / 936.0 | 114.0 / 171.0 / 1026.0 | 104.0 / 156.0 / 936.0 | 114.0 / 171.0 / 1026.0 | 1.10 | 1.00 |

            | calls per second | C (1) | Rust (1) | C (2) | Rust (2) | Rust/C | C/C |
            |---|---:|---:|---:|---:|---:|---:|
            | 4 pairs, 64 B calls | 2000 | 1818 | 2000 | 1818 | 0.91 | 1.00 |
            | one-way flood, 64 B | 5000 | 4545 | 5000 | 4545 | 0.91 | 1.00 |
        "#]]
        .assert_eq(&render(&runs, 20));
        assert!(render(&runs[..3], 20).contains("incomplete"));
    }
}
