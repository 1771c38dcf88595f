//! `checker bench-binder` (`make bench-binder`): the Rust Binder driver
//! against Debian's C one, measured in one guest boot with 2 CPUs.
//!
//! Builds `drivers/binder` (`rust_binder.ko` and `bindertest`), boots the
//! guest with `binder_linux` from the kernel image (see
//! `vm::image`) and the Rust module, and runs `bindertest`'s
//! benchmarks on each device in ABBA rounds (C, Rust, Rust, C, as many
//! rounds as asked): round-trip latency at five payload sizes (min, p50,
//! p99; client and server pinned to one CPU), calls per second with
//! [`PAIRS`] client/server pairs, and a flood of one-way calls. The
//! Rust/C ratios compare the sums of each driver's runs; the C runs after
//! the Rust ones against those before (C/C) show how much the numbers
//! move when nothing changes. The table goes to
//! `book/src/generated/binder-bench.md` for the Binder chapter (the one file
//! of that folder in git: the book shows the last run committed).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ::vm::accel::{self, Accel, AccelChoice};
use ::vm::{Guest, Module, Program, Source};
use anyhow::{bail, Context, Result};

use crate::commands::bench::{self, ratio, Driver, ABBA};
use crate::spec::lab::Step;
use crate::tools::setup::Toolchain;

/// Payload sizes of the latency runs, in bytes.
pub const PAYLOADS: [usize; 5] = [0, 64, 1024, 4096, 16384];

/// Client/server pairs of the throughput run.
pub const PAIRS: u32 = 4;

/// The device each driver's runs use.
fn device(driver: Driver) -> &'static str {
    match driver {
        Driver::C => "/dev/binder",
        Driver::Rust => "/dev/rust-binder",
    }
}

/// What `checker bench-binder` was asked for.
#[derive(Debug, Clone)]
pub struct BinderBench {
    /// Calls per latency measurement (and per pair in the throughput
    /// run); the one-way flood sends ten times as many.
    pub count: u32,
    /// ABBA rounds of C, Rust, Rust, C.
    pub rounds: u32,
    /// Where the Markdown table goes; `None`: the book's.
    pub out: Option<PathBuf>,
}

/// The numbers of one run on one device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    /// Payload size -> (min, p50, p99) round trip in ns.
    pub latency: BTreeMap<usize, [u64; 3]>,
    /// Calls per second with [`PAIRS`] pairs.
    pub throughput: Option<f64>,
    /// One-way calls per second.
    pub oneway: Option<f64>,
    /// In the one-way flood: the calls the client sent again because the
    /// server's one-way buffer space was full, and the times the server
    /// slept waiting for a call (what explains a slow flood).
    pub oneway_retries: u64,
    pub oneway_sleeps: u64,
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
/// `throughput PAIRS CALLS_PER_S`, `oneway COUNT CALLS_PER_S retries N
/// sleeps N`).
pub fn parse(output: &str) -> Result<Measurement> {
    let mut r = Measurement::default();
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
            Some(&"oneway") => {
                r.oneway = Some(num(2)?);
                r.oneway_retries = num(4)? as u64;
                r.oneway_sleeps = num(6)? as u64;
            }
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

/// One figure of a run.
type Figure = fn(&Measurement) -> f64;

/// The runs of one round, in [`ABBA`] order.
pub type Round = [Measurement; 4];

/// The sum of `figure` over the runs at positions `at` of every round.
fn sum(rounds: &[Round], at: &[usize], figure: impl Fn(&Measurement) -> f64) -> f64 {
    rounds
        .iter()
        .flat_map(|round| at.iter().map(|&i| figure(&round[i])))
        .sum()
}

/// Positions of a driver's runs in a round.
fn runs_of(driver: Driver) -> Vec<usize> {
    (0..ABBA.len()).filter(|&i| ABBA[i] == driver).collect()
}

/// Rust/C over all rounds, C/C (the C runs after the Rust ones against
/// those before), and each round's Rust/C, of one figure.
fn ratios(rounds: &[Round], figure: impl Fn(&Measurement) -> f64 + Copy) -> (f64, f64, String) {
    let (c, rust) = (runs_of(Driver::C), runs_of(Driver::Rust));
    let rust_c = ratio(sum(rounds, &rust, figure), sum(rounds, &c, figure));
    let noise = ratio(sum(rounds, &c[1..], figure), sum(rounds, &c[..1], figure));
    let by_round = (rounds.chunks(1))
        .map(|r| format!("{:.2}", ratio(sum(r, &rust, figure), sum(r, &c, figure))))
        .collect::<Vec<_>>()
        .join(", ");
    (rust_c, noise, by_round)
}

/// The p50 round trip of `size` bytes in a run, ns.
fn p50(size: usize) -> impl Fn(&Measurement) -> f64 + Copy {
    move |r| r.latency.get(&size).map_or(0, |l| l[1]) as f64
}

/// The Rust/C p50 latency ratio per payload (sums of all runs of each).
pub fn latency_ratios(rounds: &[Round]) -> Vec<(usize, f64)> {
    PAYLOADS
        .iter()
        .map(|&s| (s, ratios(rounds, p50(s)).0))
        .collect()
}

/// The median of a driver's (min, p50, p99) of `size` bytes, each on its
/// own, µs.
fn median_latency(rounds: &[Round], driver: Driver, size: usize) -> String {
    let cell = |k: usize| {
        let mut v: Vec<u64> = (rounds.iter())
            .flat_map(|round| runs_of(driver).into_iter().map(move |i| &round[i]))
            .map(|r| r.latency.get(&size).map_or(0, |l| l[k]))
            .collect();
        v.sort_unstable();
        let m = v.len() / 2;
        let ns = if v.len().is_multiple_of(2) {
            (v[m - 1] + v[m]) as f64 / 2.0
        } else {
            v[m] as f64
        };
        format!("{:.1}", ns / 1000.0)
    };
    format!("{} / {} / {}", cell(0), cell(1), cell(2))
}

/// The Markdown table of `rounds` (each in [`ABBA`] order); `load`: the
/// host's load average before and after.
pub fn render(rounds: &[Round], count: u32, load: &str) -> String {
    let n = rounds.len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Round trips (µs), {count} calls each, client and server on one CPU of \
         two, under TCG; {n} round(s) of C, Rust, Rust, C. C and Rust are the \
         medians of their runs' min / p50 / p99; Rust/C compares the sums of the \
         p50s, C/C the C runs after the Rust ones with those before (the noise); \
         then each round's Rust/C.\n"
    );
    if rounds.is_empty() {
        let _ = writeln!(out, "(no runs)");
        return out;
    }
    let _ = writeln!(
        out,
        "| payload | C | Rust | Rust/C p50 | C/C p50 | Rust/C p50 by round |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---|");
    for size in PAYLOADS {
        let (rust_c, noise, by_round) = ratios(rounds, p50(size));
        let _ = writeln!(
            out,
            "| {size} B | {} | {} | {rust_c:.2} | {noise:.2} | {by_round} |",
            median_latency(rounds, Driver::C, size),
            median_latency(rounds, Driver::Rust, size),
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| calls per second (mean) | C | Rust | Rust/C | C/C | Rust/C by round |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
    let rows: [(String, Figure); 2] = [
        (format!("{PAIRS} pairs, 64 B calls"), |r| {
            r.throughput.unwrap_or(0.0)
        }),
        ("one-way flood, 64 B".into(), |r| r.oneway.unwrap_or(0.0)),
    ];
    for (label, figure) in rows {
        let (rust_c, noise, by_round) = ratios(rounds, figure);
        let mean = |d| sum(rounds, &runs_of(d), figure) / (2 * n) as f64;
        let _ = writeln!(
            out,
            "| {label} | {:.0} | {:.0} | {rust_c:.2} | {noise:.2} | {by_round} |",
            mean(Driver::C),
            mean(Driver::Rust),
        );
    }
    let per_run =
        |d, f: fn(&Measurement) -> u64| sum(rounds, &runs_of(d), |r| f(r) as f64) / (2 * n) as f64;
    let _ = writeln!(
        out,
        "\nIn the one-way flood, per run (mean): calls sent again on a full \
         one-way buffer, C {:.0}, Rust {:.0}; the server's sleeps waiting for a \
         call, C {:.0}, Rust {:.0}.",
        per_run(Driver::C, |r| r.oneway_retries),
        per_run(Driver::Rust, |r| r.oneway_retries),
        per_run(Driver::C, |r| r.oneway_sleeps),
        per_run(Driver::Rust, |r| r.oneway_sleeps),
    );
    let _ = writeln!(out, "\nHost load average before and after: {load}.");
    out
}

/// Builds `drivers/binder` for `tc`'s kernel.
pub fn build(root: &Path, tc: &Toolchain) -> Result<PathBuf> {
    let dir = root.join("drivers").join("binder");
    crate::tools::exec::build_quietly(&dir, tc)?;
    Ok(dir)
}

/// The guest of a benchmark run: `binder_linux` from the kernel image and
/// `rust_binder.ko`, a load step, then `rounds` ABBA rounds.
fn guest(tc: &Toolchain, dir: &Path, accel: Accel, opts: &BinderBench) -> Result<Guest> {
    let image_modules = vm::image::guest_modules(&tc.modules_dir, &["binder_linux".into()])?;
    let mut steps = vec![Step {
        name: "load".into(),
        run: "insmod /lab/rust_binder.ko && ls /dev/binder /dev/rust-binder".into(),
    }];
    for r in 0..opts.rounds as usize {
        for (i, &driver) in ABBA.iter().enumerate() {
            steps.push(Step {
                name: bench::run_name(r, i),
                run: script(device(driver), opts.count),
            });
        }
    }
    // About 0.3 ms a call under TCG, with room to spare; bindertest stops
    // a benchmark that hangs after 300 s itself.
    let runs = u64::from(opts.rounds) * ABBA.len() as u64;
    let secs = 420 + u64::from(opts.count) * 40 / 1000 * runs;
    Ok(Guest {
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
        steps,
        cpus: 2,
        memory_mb: crate::run::GUEST_MEMORY_MB,
        devices: Vec::new(),
        timeout: Duration::from_secs(secs),
        accel,
        keep: false,
    })
}

/// Builds, boots, measures; writes the table and returns it with the
/// five latency ratios first.
pub fn run(root: &Path, tc: &Toolchain, opts: &BinderBench) -> Result<String> {
    let dir = build(root, tc)?;
    let (accel, why) = accel::choose(AccelChoice::Auto, &tc.vmlinuz, &tc.cache);
    let guest = guest(tc, &dir, accel, opts)?;
    println!(
        "bench-binder: {} round(s), {} calls per measurement; accelerator {accel}: {why}",
        opts.rounds, opts.count
    );
    let load = bench::host_load();
    let outputs = bench::run_steps("bench-binder", &guest)?;
    let load = format!("{load}, {}", bench::host_load());
    let mut rounds = Vec::new();
    for chunk in outputs[1..].chunks(ABBA.len()) {
        let runs: Vec<Measurement> = chunk.iter().map(|o| parse(o)).collect::<Result<_>>()?;
        rounds.push(
            <Round>::try_from(runs)
                .map_err(|_| anyhow::anyhow!("a round without its four runs"))?,
        );
    }
    let table = render(&rounds, opts.count, &load);
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| root.join("book/src/generated/binder-bench.md"));
    bench::write_table(&out, &table)?;
    let mut summary = String::from("Rust/C p50 latency:");
    for (size, r) in latency_ratios(&rounds) {
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
        let _ = writeln!(
            s,
            "oneway 20000 {:.0} retries {:.0} sleeps 7",
            5000.0 / scale,
            10.0 * scale
        );
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
        let run = |scale| parse(&fake(scale)).unwrap();
        let rounds = vec![
            [run(1.0), run(1.1), run(1.1), run(1.0)],
            [run(1.0), run(1.3), run(1.3), run(2.0)],
        ];
        expect![[r#"
            Round trips (µs), 20 calls each, client and server on one CPU of two, under TCG; 2 round(s) of C, Rust, Rust, C. C and Rust are the medians of their runs' min / p50 / p99; Rust/C compares the sums of the p50s, C/C the C runs after the Rust ones with those before (the noise); then each round's Rust/C.

            | payload | C | Rust | Rust/C p50 | C/C p50 | Rust/C p50 by round |
            |---:|---:|---:|---:|---:|---|
            | 0 B | 100.0 / 150.0 / 900.0 | 120.0 / 180.0 / 1080.0 | 0.96 | 1.50 | 1.10, 0.87 |
            | 64 B | 101.0 / 151.5 / 909.0 | 121.0 / 181.5 / 1089.0 | 0.96 | 1.50 | 1.10, 0.87 |
            | 1024 B | 102.0 / 153.0 / 918.0 | 122.0 / 183.0 / 1098.0 | 0.96 | 1.49 | 1.10, 0.87 |
            | 4096 B | 103.0 / 154.5 / 927.0 | 123.0 / 184.5 / 1107.0 | 0.96 | 1.49 | 1.10, 0.87 |
            | 16384 B | 104.0 / 156.0 / 936.0 | 124.0 / 186.0 / 1116.0 | 0.96 | 1.48 | 1.10, 0.87 |

            | calls per second (mean) | C | Rust | Rust/C | C/C | Rust/C by round |
            |---|---:|---:|---:|---:|---|
            | 4 pairs, 64 B calls | 1750 | 1678 | 0.96 | 0.75 | 0.91, 1.03 |
            | one-way flood, 64 B | 4375 | 4196 | 0.96 | 0.75 | 0.91, 1.03 |

            In the one-way flood, per run (mean): calls sent again on a full one-way buffer, C 12, Rust 12; the server's sleeps waiting for a call, C 7, Rust 7.

            Host load average before and after: 0.10, 0.20.
        "#]]
        .assert_eq(&render(&rounds, 20, "0.10, 0.20"));
        let ratios = latency_ratios(&rounds);
        assert_eq!(ratios.len(), PAYLOADS.len());
        assert!((ratios[0].1 - 4.8 / 5.0).abs() < 1e-9, "{ratios:?}");
        assert!(render(&[], 20, "").contains("(no runs)"));
    }
}
