//! A lab's guest hardware in `lab.toml`: memory, disks and NVMe
//! controllers, turned into [`vm::Device`]s with backing files the checker
//! makes for each run (in a temporary folder, never in the repository).
//!
//! ```toml
//! memory = 512                  # optional: guest memory in MiB (default 512)
//!
//! [[disk]]
//! id = "nvm"                    # [a-z0-9_]+, the drive's id
//! size = 64                     # MiB
//! block_size = 512              # optional: logical block size, 512 (default) or 4096
//! image = "pattern"             # "zero" (default) or "pattern" (see vm::disk)
//! seed = 1                      # optional, pattern only: the image's seed (default 1)
//! generation = 0                # optional, pattern only: every sector's generation (default 0)
//! cache = "writeback"           # optional: QEMU's cache mode (writeback, none, writethrough, directsync, unsafe)
//!
//! [[nvme]]
//! disk = "nvm"                  # the [[disk]] it serves as namespace 1
//! serial = "labs"               # optional (default: the disk's id)
//! max_ioqpairs = 2              # optional: QEMU's default is 64
//! mdts = 7                      # optional: max transfer 2^mdts pages (7: 512 KiB; QEMU 10 refuses above 9)
//! msix_qsize = 65               # optional: MSI-X vectors
//! ```
//!
//! The guest finds a disk's SHA-256 as it was made in `/lab/<id>.sha256`.
//! A `check_disk` step (see [`crate::spec::lab`]) reads the backing file
//! again after the guest powered off.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Deserialize;

/// Guest memory when `memory` is not given, MiB.
pub const DEFAULT_MEMORY_MB: u32 = 512;

/// A `[[disk]]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// The drive's id (`id`).
    pub id: String,
    /// Size in MiB (`size`).
    pub size: u32,
    /// Logical block size in bytes (`block_size`).
    pub block_size: Option<u32>,
    /// What the host writes (`image`).
    #[serde(default)]
    pub image: ImageKind,
    /// The pattern's seed (`seed`).
    pub seed: Option<u64>,
    /// The pattern's generation (`generation`).
    pub generation: Option<u32>,
    /// QEMU's cache mode (`cache`).
    pub cache: Option<CacheMode>,
}

/// `image`: what a new disk holds.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    /// Zeroes.
    #[default]
    Zero,
    /// Pattern sectors (`vm::disk`).
    Pattern,
}

/// `cache`: QEMU's `-drive cache=` modes.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// The host's page cache, flushes honoured (QEMU's default).
    Writeback,
    /// `O_DIRECT` on the host, flushes honoured.
    None,
    /// Every write synced.
    Writethrough,
    /// `O_DIRECT` and every write synced.
    Directsync,
    /// Flushes ignored.
    Unsafe,
}

impl CacheMode {
    fn name(self) -> &'static str {
        match self {
            CacheMode::Writeback => "writeback",
            CacheMode::None => "none",
            CacheMode::Writethrough => "writethrough",
            CacheMode::Directsync => "directsync",
            CacheMode::Unsafe => "unsafe",
        }
    }
}

/// A `[[nvme]]` controller.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NvmeSpec {
    /// The `[[disk]]` it serves (`disk`).
    pub disk: String,
    /// Its serial number (`serial`).
    pub serial: Option<String>,
    /// QEMU's `max_ioqpairs`.
    pub max_ioqpairs: Option<u32>,
    /// QEMU's `mdts`.
    pub mdts: Option<u8>,
    /// QEMU's `msix_qsize`.
    pub msix_qsize: Option<u32>,
}

impl DiskSpec {
    /// The image the host makes.
    pub fn image(&self) -> vm::disk::Image {
        match self.image {
            ImageKind::Zero => vm::disk::Image::Zero,
            ImageKind::Pattern => vm::disk::Image::Pattern {
                seed: self.seed.unwrap_or(1),
                generation: self.generation.unwrap_or(0),
            },
        }
    }

    /// Bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.size) << 20
    }
}

/// Checks the disks and controllers of a `lab.toml`; each message names
/// the table and key.
pub fn validate(memory: Option<u32>, disks: &[DiskSpec], nvme: &[NvmeSpec]) -> Result<()> {
    if let Some(m) = memory {
        if !(128..=4096).contains(&m) {
            bail!("`memory` must be 128 to 4096 (MiB), not {m}");
        }
    }
    for (i, d) in disks.iter().enumerate() {
        let at = format!("[[disk]] {:?}", d.id);
        if d.id.is_empty()
            || !d
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            bail!("{at}: `id` must be [a-z0-9_]+");
        }
        if disks[..i].iter().any(|e| e.id == d.id) {
            bail!("{at}: two disks have this `id`");
        }
        if !(1..=4096).contains(&d.size) {
            bail!("{at}: `size` must be 1 to 4096 (MiB), not {}", d.size);
        }
        if let Some(bs) = d.block_size.filter(|bs| ![512, 4096].contains(bs)) {
            bail!("{at}: `block_size` must be 512 or 4096, not {bs}");
        }
        if d.image == ImageKind::Zero && (d.seed.is_some() || d.generation.is_some()) {
            bail!("{at}: `seed` and `generation` are for `image = \"pattern\"`");
        }
    }
    for (i, n) in nvme.iter().enumerate() {
        let at = format!("[[nvme]] {}", i + 1);
        if !disks.iter().any(|d| d.id == n.disk) {
            bail!("{at}: `disk = {:?}` names no [[disk]]", n.disk);
        }
        if nvme[..i].iter().any(|e| e.disk == n.disk) {
            bail!(
                "{at}: `disk = {:?}` is already another controller's",
                n.disk
            );
        }
        if let Some(s) = &n.serial {
            if s.is_empty() || s.len() > 20 || !s.chars().all(|c| c.is_ascii_alphanumeric()) {
                bail!("{at}: `serial` must be 1 to 20 letters or digits");
            }
        }
        if n.max_ioqpairs == Some(0) {
            bail!("{at}: `max_ioqpairs` must be at least 1");
        }
        if let Some(m) = n.mdts.filter(|m| !(1..=12).contains(m)) {
            bail!("{at}: `mdts` must be 1 to 12, not {m}");
        }
        if let Some(q) = n.msix_qsize.filter(|q| !(2..=2048).contains(q)) {
            bail!("{at}: `msix_qsize` must be 2 to 2048, not {q}");
        }
    }
    Ok(())
}

/// The QEMU `-device` of a controller serving `disk`.
pub fn nvme_device(n: &NvmeSpec, disk: &DiskSpec) -> String {
    let mut spec = format!(
        "nvme,serial={},drive={}",
        n.serial.as_deref().unwrap_or(&disk.id),
        disk.id
    );
    let mut opt = |key: &str, value: Option<u32>| {
        if let Some(v) = value {
            spec.push_str(&format!(",{key}={v}"));
        }
    };
    opt("max_ioqpairs", n.max_ioqpairs);
    opt("mdts", n.mdts.map(u32::from));
    opt("msix_qsize", n.msix_qsize);
    opt("logical_block_size", disk.block_size);
    opt("physical_block_size", disk.block_size);
    spec
}

/// One disk as made for a run.
#[derive(Debug, Clone)]
pub struct MadeDisk {
    /// Its spec.
    pub spec: DiskSpec,
    /// The backing file.
    pub file: PathBuf,
    /// Its SHA-256 as made, hex.
    pub sha256: String,
}

/// The disks and controllers of a lab, made in `dir`: the backing files,
/// QEMU's devices, and the guest files `<id>.sha256`.
pub fn make(
    dir: &Path,
    disks: &[DiskSpec],
    nvme: &[NvmeSpec],
) -> Result<(Vec<MadeDisk>, Vec<vm::Device>, Vec<vm::Program>)> {
    let mut made = Vec::new();
    let mut devices = Vec::new();
    let mut files = Vec::new();
    for d in disks {
        let file = dir.join(format!("{}.img", d.id));
        let sha256 = vm::disk::write_image(&file, d.bytes(), d.image())?;
        devices.push(vm::Device::Drive {
            id: d.id.clone(),
            file: file.clone(),
            format: "raw".into(),
            cache: d.cache.map(|c| c.name().to_owned()),
        });
        files.push(vm::Program {
            name: format!("{}.sha256", d.id),
            source: vm::Source::Bytes(format!("{sha256}\n").into_bytes()),
        });
        made.push(MadeDisk {
            spec: d.clone(),
            file,
            sha256,
        });
    }
    for n in nvme {
        if let Some(d) = disks.iter().find(|d| d.id == n.disk) {
            devices.push(vm::Device::Qemu(nvme_device(n, d)));
        }
    }
    Ok((made, devices, files))
}

/// The text of a `check_disk` step: `disk` read again after power-off,
/// every sector a pattern sector of its place, its hash against the last
/// one a guest step printed (`sha256 HEX` at the start of a line, see
/// `nvmetest hash`). Returns the exit status (0: all good) and the text.
pub fn check_disk(disk: &MadeDisk, guest_outputs: &[(String, String)]) -> Result<(i32, String)> {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut ok = true;
    let seed = match disk.spec.image() {
        vm::disk::Image::Pattern { seed, .. } => seed,
        vm::disk::Image::Zero => {
            bail!("check_disk: disk {:?} is not a pattern image", disk.spec.id)
        }
    };
    let scan = vm::disk::scan(&disk.file, seed)?;
    let _ = writeln!(
        out,
        "disk {}: {} sectors of 512 bytes, seed {seed}",
        disk.spec.id, scan.sectors
    );
    for (generation, count) in &scan.generations {
        let _ = writeln!(out, "generation {generation}: {count} sectors");
    }
    if scan.bad == 0 {
        let _ = writeln!(out, "every sector is a pattern sector in its place");
    } else {
        ok = false;
        let _ = writeln!(
            out,
            "{} sectors are not pattern sectors of their place:",
            scan.bad
        );
        for (lba, why) in &scan.first_bad {
            let _ = writeln!(out, "  LBA {lba}: {why}");
        }
    }
    let last = guest_outputs.iter().rev().find_map(|(step, output)| {
        output.lines().rev().find_map(|line| {
            let hex = line.strip_prefix("sha256 ")?.split_whitespace().next()?;
            (hex.len() == 64).then(|| (step.clone(), hex.to_owned()))
        })
    });
    match last {
        Some((step, hex)) if hex == scan.sha256 => {
            let _ = writeln!(out, "sha256 equals the guest's last hash (step {step})");
        }
        Some((step, hex)) => {
            ok = false;
            let _ = writeln!(
                out,
                "sha256 {} differs from the guest's last hash (step {step}): {hex}",
                scan.sha256
            );
        }
        None => {
            ok = false;
            let _ = writeln!(out, "no guest step printed a hash (`sha256 HEX`)");
        }
    }
    Ok((if ok { 0 } else { 1 }, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    #[track_caller]
    fn check(toml_text: &str, expect: Expect) {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Hw {
            memory: Option<u32>,
            #[serde(default)]
            disk: Vec<DiskSpec>,
            #[serde(default)]
            nvme: Vec<NvmeSpec>,
        }
        let actual = match toml::from_str::<Hw>(toml_text) {
            Err(e) => format!("error: {}", e.message()),
            Ok(hw) => match validate(hw.memory, &hw.disk, &hw.nvme) {
                Err(e) => format!("error: {e}"),
                Ok(()) => (hw.nvme.iter())
                    .map(|n| nvme_device(n, hw.disk.iter().find(|d| d.id == n.disk).unwrap()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            },
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn a_controller_on_a_pattern_disk() {
        check(
            "memory = 512\n[[disk]]\nid = 'nvm'\nsize = 64\nimage = 'pattern'\nseed = 3\n\
             [[nvme]]\ndisk = 'nvm'\nmax_ioqpairs = 2\nmdts = 9",
            expect!["nvme,serial=nvm,drive=nvm,max_ioqpairs=2,mdts=9"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 32\nblock_size = 4096\ncache = 'none'\n\
             [[nvme]]\ndisk = 'a'\nserial = 'X1'\nmsix_qsize = 3",
            expect!["nvme,serial=X1,drive=a,msix_qsize=3,logical_block_size=4096,physical_block_size=4096"],
        );
    }

    #[test]
    fn errors_name_the_key() {
        check(
            "[[disk]]\nid = 'a'\nsize = 'big'",
            expect!["error: invalid type: string \"big\", expected u32"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\nimage = 'random'",
            expect!["error: unknown variant `random`, expected `zero` or `pattern`"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\nsectors = 2",
            expect!["error: unknown field `sectors`, expected one of `id`, `size`, `block_size`, `image`, `seed`, `generation`, `cache`"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 0",
            expect!["error: [[disk]] \"a\": `size` must be 1 to 4096 (MiB), not 0"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\nblock_size = 1024",
            expect!["error: [[disk]] \"a\": `block_size` must be 512 or 4096, not 1024"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\nseed = 2",
            expect!["error: [[disk]] \"a\": `seed` and `generation` are for `image = \"pattern\"`"],
        );
        check(
            "[[disk]]\nid = 'A'\nsize = 1",
            expect!["error: [[disk]] \"A\": `id` must be [a-z0-9_]+"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\n[[disk]]\nid = 'a'\nsize = 1",
            expect!["error: [[disk]] \"a\": two disks have this `id`"],
        );
        check(
            "[[nvme]]\ndisk = 'b'",
            expect!["error: [[nvme]] 1: `disk = \"b\"` names no [[disk]]"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\n[[nvme]]\ndisk = 'a'\n[[nvme]]\ndisk = 'a'",
            expect!["error: [[nvme]] 2: `disk = \"a\"` is already another controller's"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\n[[nvme]]\ndisk = 'a'\nmdts = 13",
            expect!["error: [[nvme]] 1: `mdts` must be 1 to 12, not 13"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\n[[nvme]]\ndisk = 'a'\nmax_ioqpairs = 0",
            expect!["error: [[nvme]] 1: `max_ioqpairs` must be at least 1"],
        );
        check(
            "[[disk]]\nid = 'a'\nsize = 1\n[[nvme]]\ndisk = 'a'\nserial = 'a b'",
            expect!["error: [[nvme]] 1: `serial` must be 1 to 20 letters or digits"],
        );
        check(
            "memory = 64",
            expect!["error: `memory` must be 128 to 4096 (MiB), not 64"],
        );
    }

    #[test]
    fn check_disk_after_power_off() {
        let dir = tempfile::tempdir().unwrap();
        let spec: DiskSpec =
            toml::from_str("id = 'nvm'\nsize = 1\nimage = 'pattern'\nseed = 5").unwrap();
        let (made, devices, files) = make(dir.path(), &[spec], &[]).unwrap();
        assert_eq!(devices.len(), 1);
        assert_eq!(files[0].name, "nvm.sha256");
        let disk = &made[0];
        let outputs = |hex: &str| {
            vec![
                ("c-hash".to_owned(), "sha256 0000 /dev/x\n".to_owned()),
                (
                    "rust-hash".to_owned(),
                    format!("reading\nsha256 {hex} /dev/nvme0n1\n"),
                ),
            ]
        };
        let (status, text) = check_disk(disk, &outputs(&disk.sha256)).unwrap();
        assert_eq!(status, 0);
        expect![[r#"
            disk nvm: 2048 sectors of 512 bytes, seed 5
            generation 0: 2048 sectors
            every sector is a pattern sector in its place
            sha256 equals the guest's last hash (step rust-hash)
        "#]]
        .assert_eq(&text);
        // A sector written to the wrong place, and a hash that is not the file's.
        let mut data = std::fs::read(&disk.file).unwrap();
        let mut sector = [0u8; 512];
        vm::disk::pattern_sector(5, 7, 1, &mut sector);
        data[3 * 512..4 * 512].copy_from_slice(&sector);
        std::fs::write(&disk.file, &data).unwrap();
        let (status, text) = check_disk(disk, &outputs(&disk.sha256)).unwrap();
        assert_eq!(status, 1);
        let text = text.replace(&vm::disk::scan(&disk.file, 5).unwrap().sha256, "NOW");
        expect![[r#"
            disk nvm: 2048 sectors of 512 bytes, seed 5
            generation 0: 2047 sectors
            1 sectors are not pattern sectors of their place:
              LBA 3: holds the sector of LBA 7
            sha256 NOW differs from the guest's last hash (step rust-hash): MADE
        "#]]
        .assert_eq(&text.replace(&disk.sha256, "MADE"));
        let (status, text) = check_disk(disk, &[]).unwrap();
        assert_eq!(status, 1);
        assert!(text.ends_with("no guest step printed a hash (`sha256 HEX`)\n"));
    }
}
