//! `drivers/tools/nvmetest.c` on the host, on an image file the vm crate
//! made: the C program and `vm::disk` must agree on the pattern and the
//! hash, and a write plan must leave what `verify` and the host's scan
//! expect. (In the guest the same program runs on the NVMe disks; here
//! only its arithmetic is tested, in about a second.)

use std::path::Path;
use std::process::Command;

use checker::tools::workspace::source_root as root;

/// Runs `nvmetest ARGS`; returns its exit status and output.
fn run(bin: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(bin).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn nvmetest_and_the_host_agree() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("nvmetest");
    let Ok(built) = Command::new("gcc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&bin)
        .arg(root().join("drivers/tools/nvmetest.c"))
        .arg("-lpthread")
        .status()
    else {
        eprintln!("no gcc: skipped");
        return;
    };
    assert!(built.success(), "nvmetest.c does not build");
    // Not on /tmp: O_DIRECT needs a file system that has it (not tmpfs).
    let images = tempfile::tempdir_in(root().join("target")).unwrap();
    let image = images.path().join("disk.img");
    let img = image.to_str().unwrap();
    let sha = vm::disk::write_image(
        &image,
        8 << 20,
        vm::disk::Image::Pattern {
            seed: 3,
            generation: 0,
        },
    )
    .unwrap();
    let expect = images.path().join("disk.sha256");
    std::fs::write(&expect, format!("{sha}\n")).unwrap();

    let (status, out) = run(&bin, &["hash", img, "--expect", expect.to_str().unwrap()]);
    assert_eq!(
        (status, out),
        (
            0,
            format!("8388608 bytes\nsha256 {sha}\nequals the host's image\n")
        )
    );
    let (status, out) = run(&bin, &["check", img]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("generation 0: 16384 sectors\nevery sector is a pattern sector"));

    let plan = [
        "--seed",
        "5",
        "--ops",
        "40",
        "--gen",
        "1",
        "--max-kib",
        "1024",
    ];
    let (status, out) = run(&bin, &[&["write", img][..], &plan].concat());
    assert_eq!(status, 0, "{out}");
    assert!(out.starts_with("40 writes of generation 1 from "), "{out}");
    let (status, out) = run(&bin, &[&["verify", img][..], &plan].concat());
    assert_eq!(status, 0, "{out}");
    assert!(
        out.ends_with("every sector is what the plan says\n"),
        "{out}"
    );
    // The host sees what nvmetest wrote and hashed.
    let scan = vm::disk::scan(&image, 3).unwrap();
    assert_eq!(scan.bad, 0);
    assert_eq!(scan.generations.keys().copied().collect::<Vec<_>>(), [0, 1]);
    assert!(out.contains(&format!("sha256 {}\n", scan.sha256)), "{out}");
    // Another plan is not what was written.
    let (status, out) = run(
        &bin,
        &[
            "verify",
            img,
            "--seed",
            "6",
            "--ops",
            "40",
            "--max-kib",
            "1024",
        ],
    );
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("sectors are not what the plan says"), "{out}");
    // One write of the size and buffer offset asked for: 9 sectors from
    // 512 bytes into a page span 2 pages.
    let (status, out) = run(
        &bin,
        &[
            "write-at",
            img,
            "--lba",
            "16",
            "--sectors",
            "9",
            "--offset",
            "512",
            "--gen",
            "4",
        ],
    );
    assert_eq!(
        (status, out.as_str()),
        (
            0,
            "write of 9 sectors at LBA 16, buffer at 512 in its page (2 pages): written\n"
        )
    );
    assert_eq!(
        vm::disk::scan(&image, 3).unwrap().generations.get(&4),
        Some(&9)
    );
    // A torn sector is found by both.
    let mut data = std::fs::read(&image).unwrap();
    data[4096 + 200] ^= 1;
    std::fs::write(&image, &data).unwrap();
    let (status, out) = run(&bin, &["check", img]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.starts_with("  LBA 8: not the pattern sector of its place\n"),
        "{out}"
    );
    assert_eq!(vm::disk::scan(&image, 3).unwrap().bad, 1);
}
