//! Disk images the host makes for a guest's block devices, and what the
//! host reads back from them after the guest powered off.
//!
//! A *pattern* image makes every 512-byte sector say what it is, so that a
//! sector written in the wrong place, torn, or never written is visible
//! without a copy of the expected disk:
//!
//! | Bytes | Field |
//! |---|---|
//! | 0..8 | [`MAGIC`], `NVMEPAT1` |
//! | 8..16 | the sector's LBA (512-byte units), little-endian |
//! | 16..24 | the image's seed |
//! | 24..28 | the sector's generation (the host writes 0 or the lab's) |
//! | 28..32 | zero |
//! | 32..512 | 60 words of [`splitmix64`] seeded from (seed, LBA, generation) |
//!
//! `drivers/tools/nvmetest.c` writes and checks the same format in the
//! guest (a written sector gets the next generation), so the host's scan
//! ([`scan`]) after power-off accepts exactly what a correct driver can
//! leave behind.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use crate::error::{Context as _, Error, Result};
use sha2::{Digest, Sha256};

/// The sector size of the pattern, whatever the device's block size.
pub const SECTOR: usize = 512;

/// The first bytes of every pattern sector.
pub const MAGIC: &[u8; 8] = b"NVMEPAT1";

/// What a new image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Image {
    /// Zeroes (a sparse file).
    Zero,
    /// Pattern sectors of `seed`, all of `generation`.
    Pattern {
        /// The image's seed.
        seed: u64,
        /// The generation of every sector.
        generation: u32,
    },
}

/// One step of the splitmix64 generator (Steele, Lea, Flood 2014): `state`
/// advances, the result is mixed from it.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `out` with the pattern sector `lba` of `seed` at `generation`.
pub fn pattern_sector(seed: u64, lba: u64, generation: u32, out: &mut [u8; SECTOR]) {
    out[..8].copy_from_slice(MAGIC);
    out[8..16].copy_from_slice(&lba.to_le_bytes());
    out[16..24].copy_from_slice(&seed.to_le_bytes());
    out[24..28].copy_from_slice(&generation.to_le_bytes());
    out[28..32].fill(0);
    let mut state = seed
        ^ lba.wrapping_mul(0xd1b5_4a32_d192_ed03)
        ^ u64::from(generation).wrapping_mul(0x8cb9_2ba7_2f3d_8dd7);
    for word in out[32..].chunks_exact_mut(8) {
        word.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
}

/// What is wrong with a sector that is not the pattern sector of its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadSector {
    /// No [`MAGIC`]: never written with the pattern (or torn at its start).
    NoMagic,
    /// The sector of another LBA (written in the wrong place).
    Misplaced(u64),
    /// Another image's seed.
    OtherSeed(u64),
    /// The header is right but the bytes are not (a torn write).
    Torn,
}

impl std::fmt::Display for BadSector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadSector::NoMagic => f.write_str("not a pattern sector"),
            BadSector::Misplaced(lba) => write!(f, "holds the sector of LBA {lba}"),
            BadSector::OtherSeed(seed) => write!(f, "has seed {seed}, not the image's"),
            BadSector::Torn => f.write_str("header right, bytes wrong (torn)"),
        }
    }
}

/// Checks that `sector` is the pattern sector `lba` of `seed`; returns its
/// generation.
pub fn check_sector(seed: u64, lba: u64, sector: &[u8; SECTOR]) -> Result<u32, BadSector> {
    let word = |at: usize| u64::from_le_bytes(sector[at..at + 8].try_into().unwrap_or_default());
    if &sector[..8] != MAGIC {
        return Err(BadSector::NoMagic);
    }
    if word(8) != lba {
        return Err(BadSector::Misplaced(word(8)));
    }
    if word(16) != seed {
        return Err(BadSector::OtherSeed(word(16)));
    }
    let generation = u32::from_le_bytes(sector[24..28].try_into().unwrap_or_default());
    let mut expected = [0u8; SECTOR];
    pattern_sector(seed, lba, generation, &mut expected);
    if expected[..] != sector[..] {
        return Err(BadSector::Torn);
    }
    Ok(generation)
}

/// Bytes per write: 1 MiB.
const CHUNK: usize = 2048 * SECTOR;

/// Writes `size` bytes (a multiple of [`SECTOR`]) of `image` to `path`;
/// returns the image's SHA-256 in hex.
pub fn write_image(path: &Path, size: u64, image: Image) -> Result<String> {
    if !size.is_multiple_of(SECTOR as u64) {
        return Err(Error::Guest(format!(
            "a disk's size must be a multiple of {SECTOR} bytes, not {size}"
        )));
    }
    let mut file =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut hash = Sha256::new();
    let mut chunk = vec![0u8; CHUNK];
    let mut done = 0u64;
    if image == Image::Zero {
        file.set_len(size)
            .with_context(|| format!("cannot size {}", path.display()))?;
    }
    while done < size {
        let len = CHUNK.min((size - done) as usize);
        let chunk = &mut chunk[..len];
        if let Image::Pattern { seed, generation } = image {
            for (i, sector) in chunk.chunks_exact_mut(SECTOR).enumerate() {
                let lba = done / SECTOR as u64 + i as u64;
                let sector: &mut [u8; SECTOR] = sector.try_into().expect("SECTOR bytes");
                pattern_sector(seed, lba, generation, sector);
            }
            file.write_all(chunk)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        hash.update(&*chunk);
        done += len as u64;
    }
    Ok(hex(&hash.finalize()))
}

/// What the host found in a pattern image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// 512-byte sectors read.
    pub sectors: u64,
    /// How many sectors each generation holds.
    pub generations: BTreeMap<u32, u64>,
    /// How many sectors are not valid pattern sectors of their place.
    pub bad: u64,
    /// The first few of those.
    pub first_bad: Vec<(u64, BadSector)>,
    /// The SHA-256 of the whole file, in hex.
    pub sha256: String,
}

/// How many bad sectors a [`Scan`] lists.
const LISTED_BAD: usize = 8;

/// Reads the image at `path` (made with `seed`), hashing it and checking
/// every sector.
pub fn scan(path: &Path, seed: u64) -> Result<Scan> {
    let mut file =
        fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut hash = Sha256::new();
    let mut chunk = vec![0u8; CHUNK];
    let mut scan = Scan {
        sectors: 0,
        generations: BTreeMap::new(),
        bad: 0,
        first_bad: Vec::new(),
        sha256: String::new(),
    };
    loop {
        let len = read_full(&mut file, &mut chunk)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if len == 0 {
            break;
        }
        hash.update(&chunk[..len]);
        for sector in chunk[..len].chunks(SECTOR) {
            let lba = scan.sectors;
            scan.sectors += 1;
            let verdict = match <&[u8; SECTOR]>::try_from(sector) {
                Ok(sector) => check_sector(seed, lba, sector),
                Err(_) => Err(BadSector::Torn),
            };
            match verdict {
                Ok(generation) => *scan.generations.entry(generation).or_default() += 1,
                Err(why) => {
                    scan.bad += 1;
                    if scan.first_bad.len() < LISTED_BAD {
                        scan.first_bad.push((lba, why));
                    }
                }
            }
        }
    }
    scan.sha256 = hex(&hash.finalize());
    Ok(scan)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..])? {
            0 => break,
            n => len += n,
        }
    }
    Ok(len)
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn pattern_sector_layout() {
        let mut s = [0u8; SECTOR];
        pattern_sector(7, 3, 2, &mut s);
        assert_eq!(&s[..8], MAGIC);
        assert_eq!(s[8..16], 3u64.to_le_bytes());
        assert_eq!(s[16..24], 7u64.to_le_bytes());
        assert_eq!(s[24..28], 2u32.to_le_bytes());
        // nvmetest.c computes the same words: pin the first one.
        expect_test::expect!["8d64245146fd3429"].assert_eq(&format!(
            "{:016x}",
            u64::from_le_bytes(s[32..40].try_into().unwrap())
        ));
        assert_eq!(check_sector(7, 3, &s), Ok(2));
    }

    #[test]
    fn bad_sectors_are_named() {
        let mut s = [0u8; SECTOR];
        assert_eq!(check_sector(7, 3, &s), Err(BadSector::NoMagic));
        pattern_sector(7, 4, 0, &mut s);
        assert_eq!(check_sector(7, 3, &s), Err(BadSector::Misplaced(4)));
        assert_eq!(check_sector(8, 4, &s), Err(BadSector::OtherSeed(7)));
        s[300] ^= 1;
        assert_eq!(check_sector(7, 4, &s), Err(BadSector::Torn));
        // Another generation's bytes under this generation's header.
        pattern_sector(7, 4, 1, &mut s);
        s[24] = 0;
        assert_eq!(check_sector(7, 4, &s), Err(BadSector::Torn));
    }

    #[test]
    fn image_hash_and_scan_agree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk.img");
        let started = Instant::now();
        let sha = write_image(
            &path,
            64 << 20,
            Image::Pattern {
                seed: 1,
                generation: 0,
            },
        )
        .unwrap();
        // About 0.2 s in the dev profile (vm and sha2 optimised); not
        // asserted, the machine may be busy.
        eprintln!("64 MiB pattern image: {:?}", started.elapsed());
        assert_eq!(fs::metadata(&path).unwrap().len(), 64 << 20);
        let scan = scan(&path, 1).unwrap();
        assert_eq!(scan.sha256, sha);
        assert_eq!(scan.sectors, 131_072);
        assert_eq!(scan.bad, 0);
        assert_eq!(scan.generations, BTreeMap::from([(0, 131_072)]));

        // One misplaced sector and one torn one.
        let mut data = fs::read(&path).unwrap();
        data.copy_within(5 * SECTOR..6 * SECTOR, 9 * SECTOR);
        data[20 * SECTOR + 100] ^= 0xff;
        fs::write(&path, &data).unwrap();
        let scan = super::scan(&path, 1).unwrap();
        assert_eq!(scan.bad, 2);
        assert_eq!(
            scan.first_bad,
            [(9, BadSector::Misplaced(5)), (20, BadSector::Torn)]
        );
        assert_ne!(scan.sha256, sha);
    }

    #[test]
    fn zero_image_is_sparse_zeroes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zero.img");
        let sha = write_image(&path, 1 << 20, Image::Zero).unwrap();
        assert_eq!(fs::read(&path).unwrap(), vec![0u8; 1 << 20]);
        // sha256 of 1 MiB of zeroes.
        expect_test::expect!["30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58"]
            .assert_eq(&sha);
        assert!(write_image(&path, 1000, Image::Zero).is_err());
    }
}
