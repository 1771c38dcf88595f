//! `checker bench-nvme` (`make bench-nvme`): the Rust NVMe driver (rnvme)
//! against Debian's C one on the same QEMU controller, in one guest boot
//! with 2 CPUs.
//!
//! Builds `drivers/nvme` (`rnvme.ko` and `nvmetest`), boots the guest with
//! a 64 MiB disk behind one controller (`max_ioqpairs = 2`), `nvme` from
//! the kernel image and rnvme, and moves the controller between the two
//! drivers (`nvmetest bind`) for each run, in ABBA rounds: C, Rust, Rust,
//! C, as many rounds as asked (short rounds spread a burst of host load
//! over both drivers).
//! Each run reads for a second unmeasured, then measures `O_DIRECT` reads
//! through Linux AIO (`nvmetest bench`): 4 KiB random at queue depth 1 and
//! 32, 128 KiB sequential at depth 4. The C driver gets the Rust one's
//! settings: the same I/O queue depth (read from rnvme's probe line), no
//! SGLs (`sgl_threshold=0`; QEMU advertises them, rnvme uses PRPs), no poll
//! queues; both get one I/O queue per CPU. The Rust/C ratios compare the
//! sums of each driver's runs; the C runs after the Rust ones against those
//! before (C/C) are the noise. Until rnvme has a disk to read, only the C runs happen and
//! the table says so. The table goes to `book/src/generated/nvme-bench.md`
//! (committed, like binder-bench.md).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ::vm::accel::{self, AccelChoice};
use ::vm::{Device, Guest, Module, Program, Source};
use anyhow::{bail, Context, Result};

use crate::commands::bench::{self, ratio};
use crate::spec::lab::Step;
use crate::tools::setup::Toolchain;

/// The measurements of one run: (name, `nvmetest bench` arguments).
pub const WORKLOADS: [(&str, &str); 3] = [
    ("4 KiB random read, QD 1", "randread --bs 4096 --qd 1"),
    ("4 KiB random read, QD 32", "randread --bs 4096 --qd 32"),
    (
        "128 KiB sequential read, QD 4",
        "seqread --bs 131072 --qd 4",
    ),
];

/// One round, in the order its runs happen ([`bench::ABBA`]): driver, disk.
pub const ROUND: [(&str, &str); 4] = [
    ("nvme", "/dev/nvme0n1"),
    ("rnvme", "/dev/rnvme0n1"),
    ("rnvme", "/dev/rnvme0n1"),
    ("nvme", "/dev/nvme0n1"),
];

/// The disk, MiB: small, QEMU's NVMe is slow under TCG.
const DISK_MIB: u64 = 64;

/// What `checker bench-nvme` was asked for.
#[derive(Debug, Clone)]
pub struct NvmeBench {
    /// Seconds per measurement.
    pub seconds: f64,
    /// ABBA rounds: short rounds one after another spread a burst of
    /// load on the host over both drivers.
    pub rounds: u32,
    /// Where the Markdown table goes; `None`: the book's.
    pub out: Option<PathBuf>,
}

/// The marker the probe step leaves when rnvme made a disk.
const RUST_OK: &str = "/tmp/rust-has-disk";

/// The first step: rnvme takes the controller; says its queue depth and
/// whether it made a disk, then gives the controller back to nvme with
/// rnvme's queue depth, no SGLs and no poll queues.
pub fn probe_script() -> String {
    format!(
        "/lab/nvmetest wait /dev/nvme0n1 >/dev/null && insmod /lab/rnvme.ko && \
         /lab/nvmetest bind rnvme >/dev/null && \
         if /lab/nvmetest wait /dev/rnvme0n1 --seconds 10 >/dev/null; then touch {RUST_OK}; \
         echo 'rust disk: yes'; else echo 'rust disk: no'; fi; \
         depth=$(dmesg | sed -n 's/.*I\\/O queue pairs of \\([0-9]*\\) entries.*/\\1/p' | tail -1); \
         echo \"rust queue depth: ${{depth:-unknown}}\"; \
         p=/sys/module/nvme/parameters; echo 0 >$p/sgl_threshold && echo 0 >$p/poll_queues && \
         if [ -n \"$depth\" ]; then echo $depth >$p/io_queue_depth; fi && \
         echo \"c settings: io_queue_depth $(cat $p/io_queue_depth), sgl_threshold $(cat $p/sgl_threshold), poll_queues $(cat $p/poll_queues)\" && \
         /lab/nvmetest bind nvme /dev/nvme0n1 >/dev/null && \
         echo \"c queues: $(dmesg | grep -o '[0-9]*/[0-9]*/[0-9]* default/read/poll queues' | tail -1)\""
    )
}

/// The guest command of one run: bind the driver, then every workload.
pub fn run_script(driver: &str, disk: &str, seconds: f64) -> String {
    let mut s = String::new();
    if driver == "rnvme" {
        let _ = write!(s, "[ -e {RUST_OK} ] || {{ echo skipped; exit 0; }}; ");
    }
    // One unmeasured second first, as fio's ramp_time: the disk was just
    // added (partition scan), the queues are cold.
    let _ = write!(
        s,
        "/lab/nvmetest bind {driver} {disk} >/dev/null && \
         /lab/nvmetest bench {disk} randread --bs 4096 --qd 32 --seconds 1 >/dev/null"
    );
    for (_, args) in WORKLOADS {
        let _ = write!(
            s,
            " && /lab/nvmetest bench {disk} {args} --seconds {seconds}"
        );
    }
    s
}

/// IOPS of each workload, in [`WORKLOADS`] order, from what
/// `nvmetest bench` printed (`KIND bs=B qd=N: IOPS IOPS, ...`); `None`
/// for a skipped run.
pub fn parse(output: &str) -> Result<Option<Vec<f64>>> {
    if output.trim() == "skipped" {
        return Ok(None);
    }
    let mut iops = Vec::new();
    for (name, args) in WORKLOADS {
        let words: Vec<&str> = args.split_whitespace().collect();
        let head = format!("{} bs={} qd={}:", words[0], words[2], words[4]);
        let value = output
            .lines()
            .find_map(|l| l.strip_prefix(&head))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .with_context(|| format!("no figure for {name} in:\n{output}"))?;
        iops.push(value);
    }
    Ok(Some(iops))
}

/// The sum of workload `w`'s IOPS over the runs of `rounds` (each in
/// [`ROUND`] order) at positions `at`; `None` if one of them was skipped.
fn sum(rounds: &[Vec<Option<Vec<f64>>>], at: &[usize], w: usize) -> Option<f64> {
    let mut total = 0.0;
    for round in rounds {
        for &i in at {
            total += round.get(i)?.as_ref()?[w];
        }
    }
    Some(total)
}

/// The Markdown table; `rounds` each in [`ROUND`] order, `settings` the
/// probe step's report.
pub fn render(rounds: &[Vec<Option<Vec<f64>>>], settings: &str, seconds: f64) -> String {
    let mut out = String::new();
    let n = rounds.len();
    let _ = writeln!(
        out,
        "IOPS of `O_DIRECT` reads (Linux AIO), {seconds} s each after an unmeasured \
         second, 2 CPUs, one controller with 2 I/O queue pairs and a 64 MiB disk, \
         under TCG; {n} round(s) of C, Rust, Rust, C. C and Rust are the means of \
         their runs; Rust/C compares the sums, C/C the C runs after the Rust ones \
         with those before (the noise); then each round's Rust/C.\n"
    );
    if rounds.is_empty() || rounds.iter().any(|r| r.len() != ROUND.len()) {
        let _ = writeln!(out, "(incomplete runs)");
        return out;
    }
    let rust = sum(rounds, &[1, 2], 0).is_some();
    out.push_str(&table(rounds, rust));
    if !rust {
        let _ = writeln!(
            out,
            "\nRust: not measurable yet (rnvme made no disk to read), so only the C \
             driver's runs and their noise."
        );
    }
    let _ = writeln!(out, "\nSettings: {}.", settings.trim().replace('\n', "; "));
    out
}
/// The table of [`render`], a row per workload; Rust's columns only when
/// `rust` (its runs were measured).
fn table(rounds: &[Vec<Option<Vec<f64>>>], rust: bool) -> String {
    let mut out = String::new();
    let runs = (2 * rounds.len()) as f64;
    if rust {
        let _ = writeln!(
            out,
            "| workload | C | Rust | Rust/C | C/C | Rust/C by round |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
    } else {
        let _ = writeln!(out, "| workload | C | C/C | C/C by round |");
        let _ = writeln!(out, "|---|---:|---:|---|");
    }
    for (w, (name, _)) in WORKLOADS.iter().enumerate() {
        let c = sum(rounds, &[0, 3], w).unwrap_or(0.0);
        let noise = ratio(
            sum(rounds, &[3], w).unwrap_or(0.0),
            sum(rounds, &[0], w).unwrap_or(0.0),
        );
        if rust {
            let r = sum(rounds, &[1, 2], w).unwrap_or(0.0);
            let _ = writeln!(
                out,
                "| {name} | {:.0} | {:.0} | {:.2} | {noise:.2} | {} |",
                c / runs,
                r / runs,
                ratio(r, c),
                by_round(rounds, w, &[1, 2], &[0, 3])
            );
        } else {
            let _ = writeln!(
                out,
                "| {name} | {:.0} | {noise:.2} | {} |",
                c / runs,
                by_round(rounds, w, &[3], &[0])
            );
        }
    }
    out
}

/// Each round's ratio of workload `w` in its runs `at` to its runs
/// `base`, comma-separated.
fn by_round(rounds: &[Vec<Option<Vec<f64>>>], w: usize, at: &[usize], base: &[usize]) -> String {
    (rounds.iter())
        .map(|r| {
            let r = std::slice::from_ref(r);
            let a = sum(r, at, w).unwrap_or(0.0);
            format!("{:.2}", ratio(a, sum(r, base, w).unwrap_or(0.0)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Builds `drivers/nvme` for `tc`'s kernel.
pub fn build(root: &Path, tc: &Toolchain) -> Result<PathBuf> {
    let dir = root.join("drivers").join("nvme");
    crate::tools::exec::build_quietly(&dir, tc)?;
    Ok(dir)
}

/// The guest of a benchmark run: rnvme and Debian's nvme on one QEMU
/// controller, a probe step, then `rounds` rounds of [`ROUND`].
fn guest(
    tc: &Toolchain,
    dir: &Path,
    disk: PathBuf,
    accel: vm::accel::Accel,
    opts: &NvmeBench,
) -> Result<Guest> {
    let image_modules = vm::image::guest_modules(&tc.modules_dir, &["nvme".into()])?;
    let mut steps = vec![Step {
        name: "probe".into(),
        run: probe_script(),
    }];
    for r in 0..opts.rounds as usize {
        for (i, (driver, disk)) in ROUND.iter().enumerate() {
            steps.push(Step {
                name: bench::run_name(r, i),
                run: run_script(driver, disk, opts.seconds),
            });
        }
    }
    let runs = opts.rounds as usize * ROUND.len();
    let measured = (opts.seconds + 1.0) * (WORKLOADS.len() * runs) as f64;
    Ok(Guest {
        kernel: tc.boot_kernel.clone(),
        extra_cmdline: String::new(),
        modules: vec![Module {
            name: "rnvme".into(),
            path: dir.join("rnvme.ko"),
        }],
        image_modules,
        programs: vec![Program {
            name: "nvmetest".into(),
            source: Source::Path(dir.join("nvmetest")),
        }],
        steps,
        cpus: 2,
        memory_mb: crate::run::GUEST_MEMORY_MB,
        devices: vec![
            Device::Drive {
                id: "nvm".into(),
                file: disk,
                format: "raw".into(),
                cache: None,
            },
            Device::Qemu("nvme,serial=bench,drive=nvm,max_ioqpairs=2".into()),
        ],
        // Boot, binds (each a few seconds under TCG) and the
        // measurements, with room to spare.
        timeout: Duration::from_secs(300 + 10 * runs as u64 + 2 * measured as u64),
        accel,
        keep: false,
    })
}

/// Builds, boots, measures; writes the table and returns it with the
/// ratios first.
pub fn run(root: &Path, tc: &Toolchain, opts: &NvmeBench) -> Result<String> {
    if !(opts.seconds > 0.0 && opts.seconds <= 60.0) {
        bail!("--seconds must be more than 0 and at most 60");
    }
    if !(1..=10).contains(&opts.rounds) {
        bail!("--rounds must be 1 to 10");
    }
    let dir = build(root, tc)?;
    let disks = tempfile::Builder::new()
        .prefix("checker-bench-nvme-")
        .tempdir()?;
    let disk = disks.path().join("nvm.img");
    vm::disk::write_image(&disk, DISK_MIB << 20, vm::disk::Image::Zero)?;
    let (accel, why) = accel::choose(AccelChoice::Auto, &tc.vmlinuz, &tc.cache);
    let guest = guest(tc, &dir, disk, accel, opts)?;
    println!(
        "bench-nvme: {} round(s), {} s per measurement; accelerator {accel}: {why}",
        opts.rounds, opts.seconds
    );
    let load = bench::host_load();
    let outputs = bench::run_steps("bench-nvme", &guest)?;
    let settings = format!(
        "{}host load average before and after: {load}, {}",
        outputs.first().cloned().unwrap_or_default(),
        bench::host_load()
    );
    let runs = (outputs.iter().skip(1))
        .map(|o| parse(o))
        .collect::<Result<Vec<_>>>()?;
    let rounds: Vec<Vec<Option<Vec<f64>>>> = runs.chunks(ROUND.len()).map(<[_]>::to_vec).collect();
    let table = render(&rounds, &settings, opts.seconds);
    let out = (opts.out.clone()).unwrap_or_else(|| root.join("book/src/generated/nvme-bench.md"));
    bench::write_table(&out, &table)?;
    Ok(format!("{table}\nwritten to {}\n", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn fake(scale: f64) -> String {
        format!(
            "randread bs=4096 qd=1: {:.0} IOPS, 1.00 MB/s (1 reads in 1.00 s)\n\
             randread bs=4096 qd=32: {:.0} IOPS, 2.00 MB/s (1 reads in 1.00 s)\n\
             seqread bs=131072 qd=4: {:.0} IOPS, 3.00 MB/s (1 reads in 1.00 s)\n",
            1000.0 * scale,
            3000.0 * scale,
            200.0 * scale
        )
    }

    #[test]
    fn scripts() {
        expect!["[ -e /tmp/rust-has-disk ] || { echo skipped; exit 0; }; /lab/nvmetest bind rnvme /dev/rnvme0n1 >/dev/null && /lab/nvmetest bench /dev/rnvme0n1 randread --bs 4096 --qd 32 --seconds 1 >/dev/null && /lab/nvmetest bench /dev/rnvme0n1 randread --bs 4096 --qd 1 --seconds 0.5 && /lab/nvmetest bench /dev/rnvme0n1 randread --bs 4096 --qd 32 --seconds 0.5 && /lab/nvmetest bench /dev/rnvme0n1 seqread --bs 131072 --qd 4 --seconds 0.5"]
        .assert_eq(&run_script("rnvme", "/dev/rnvme0n1", 0.5));
        assert!(probe_script().contains("echo 0 >$p/sgl_threshold"));
    }

    #[test]
    fn parse_and_render() {
        let c = parse(&fake(1.0)).unwrap();
        assert_eq!(c, Some(vec![1000.0, 3000.0, 200.0]));
        assert_eq!(parse("skipped\n").unwrap(), None);
        assert!(parse("randread bs=4096 qd=1: 5 IOPS\n").is_err());
        assert_eq!(
            (0..4).map(|i| bench::run_name(1, i)).collect::<Vec<_>>(),
            ["c-2a", "rust-2a", "rust-2b", "c-2b"]
        );
        let f = |scale| parse(&fake(scale)).unwrap();
        let settings = "rust disk: yes\nrust queue depth: 256\n";
        let rounds = [
            vec![f(1.0), f(0.9), f(1.0), f(1.0)],
            vec![f(1.0), f(1.1), f(1.1), f(1.2)],
        ];
        expect![[r#"
            IOPS of `O_DIRECT` reads (Linux AIO), 5 s each after an unmeasured second, 2 CPUs, one controller with 2 I/O queue pairs and a 64 MiB disk, under TCG; 2 round(s) of C, Rust, Rust, C. C and Rust are the means of their runs; Rust/C compares the sums, C/C the C runs after the Rust ones with those before (the noise); then each round's Rust/C.

            | workload | C | Rust | Rust/C | C/C | Rust/C by round |
            |---|---:|---:|---:|---:|---|
            | 4 KiB random read, QD 1 | 1050 | 1025 | 0.98 | 1.10 | 0.95, 1.00 |
            | 4 KiB random read, QD 32 | 3150 | 3075 | 0.98 | 1.10 | 0.95, 1.00 |
            | 128 KiB sequential read, QD 4 | 210 | 205 | 0.98 | 1.10 | 0.95, 1.00 |

            Settings: rust disk: yes; rust queue depth: 256.
        "#]]
        .assert_eq(&render(&rounds, settings, 5.0));
        let only_c = [vec![c.clone(), None, None, f(1.1)]];
        expect![[r#"
            IOPS of `O_DIRECT` reads (Linux AIO), 1 s each after an unmeasured second, 2 CPUs, one controller with 2 I/O queue pairs and a 64 MiB disk, under TCG; 1 round(s) of C, Rust, Rust, C. C and Rust are the means of their runs; Rust/C compares the sums, C/C the C runs after the Rust ones with those before (the noise); then each round's Rust/C.

            | workload | C | C/C | C/C by round |
            |---|---:|---:|---|
            | 4 KiB random read, QD 1 | 1050 | 1.10 | 1.10 |
            | 4 KiB random read, QD 32 | 3150 | 1.10 | 1.10 |
            | 128 KiB sequential read, QD 4 | 210 | 1.10 | 1.10 |

            Rust: not measurable yet (rnvme made no disk to read), so only the C driver's runs and their noise.

            Settings: rust disk: no.
        "#]]
        .assert_eq(&render(&only_c, "rust disk: no\n", 1.0));
        assert!(render(&[vec![c.clone()]], "", 1.0).contains("incomplete"));
        assert!(render(&[], "", 1.0).contains("incomplete"));
    }
}
