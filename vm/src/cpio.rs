//! A minimal writer of the `newc` cpio format (uncompressed), which the
//! kernel unpacks as an initramfs.
//!
//! Each entry is a 110-byte ASCII header (`070701` and 13 fields of 8 hex
//! digits), the NUL-terminated name padded to a multiple of 4, then the data
//! padded to a multiple of 4. The archive ends with the entry `TRAILER!!!`.

use std::io::{self, Write};

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFCHR: u32 = 0o020000;

/// Writes a newc archive entry by entry; call [`Writer::finish`] at the end.
pub struct Writer<W: Write> {
    out: W,
    ino: u32,
    written: u64,
}

impl<W: Write> Writer<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Self {
        Writer {
            out,
            ino: 1,
            written: 0,
        }
    }

    /// A directory; `path` has no leading `/` (e.g. `"bin"`).
    pub fn dir(&mut self, path: &str, perm: u32) -> io::Result<()> {
        self.entry(path, S_IFDIR | perm, 2, (0, 0), &[])
    }

    /// A regular file with `data`.
    pub fn file(&mut self, path: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        self.entry(path, S_IFREG | perm, 1, (0, 0), data)
    }

    /// A character device node.
    pub fn char_dev(&mut self, path: &str, perm: u32, major: u32, minor: u32) -> io::Result<()> {
        self.entry(path, S_IFCHR | perm, 1, (major, minor), &[])
    }

    /// Writes the trailer and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.ino = 0;
        self.entry("TRAILER!!!", 0, 1, (0, 0), &[])?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn entry(
        &mut self,
        name: &str,
        mode: u32,
        nlink: u32,
        rdev: (u32, u32),
        data: &[u8],
    ) -> io::Result<()> {
        let size = u32::try_from(data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large for cpio"))?;
        let ino = self.ino;
        if ino != 0 {
            self.ino += 1;
        }
        let header = format!(
            "070701{ino:08x}{mode:08x}{uid:08x}{gid:08x}{nlink:08x}{mtime:08x}{size:08x}\
             {devmajor:08x}{devminor:08x}{rmaj:08x}{rmin:08x}{namesize:08x}{check:08x}",
            uid = 0,
            gid = 0,
            mtime = 0,
            devmajor = 0,
            devminor = 0,
            rmaj = rdev.0,
            rmin = rdev.1,
            namesize = name.len() + 1,
            check = 0,
        );
        self.write(header.as_bytes())?;
        self.write(name.as_bytes())?;
        self.write(&[0])?;
        self.pad()?;
        self.write(data)?;
        self.pad()
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - (self.written % 4) as usize) % 4;
        self.write(&[0; 3][..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn archive_layout() {
        let mut w = Writer::new(Vec::new());
        w.dir("bin", 0o755).unwrap();
        w.file("init", 0o755, b"#!/bin/sh\n").unwrap();
        w.char_dev("dev/console", 0o600, 5, 1).unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        let shown = String::from_utf8(bytes)
            .unwrap()
            .replace('\0', "@")
            .replace("070701", "\n070701");
        expect![[r#"

            07070100000001000041ed0000000000000000000000020000000000000000000000000000000000000000000000000000000400000000bin@@@
            07070100000002000081ed000000000000000000000001000000000000000a000000000000000000000000000000000000000500000000init@@#!/bin/sh
            @@
            07070100000003000021800000000000000000000000010000000000000000000000000000000000000005000000010000000c00000000dev/console@@@
            07070100000000000000000000000000000000000000010000000000000000000000000000000000000000000000000000000b00000000TRAILER!!!@@@@"#]]
        .assert_eq(&shown);
    }

    #[test]
    fn agrees_with_gnu_cpio() {
        // Cross-check with the cpio tool when it is installed (setup installs it).
        let Ok(out) = std::process::Command::new("cpio").arg("--version").output() else {
            return;
        };
        if !out.status.success() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.cpio");
        let mut w = Writer::new(std::fs::File::create(&archive).unwrap());
        w.dir("lab", 0o755).unwrap();
        w.file("lab/x.txt", 0o644, b"hello cpio\n").unwrap();
        w.file("lab/odd", 0o600, b"12345").unwrap();
        w.finish().unwrap();
        let status = std::process::Command::new("cpio")
            .args(["-i", "-d", "--quiet", "-F"])
            .arg(&archive)
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lab/x.txt")).unwrap(),
            "hello cpio\n"
        );
        assert_eq!(
            std::fs::read(dir.path().join("lab/odd")).unwrap(),
            b"12345".to_vec()
        );
    }
}
