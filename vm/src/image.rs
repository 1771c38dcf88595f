//! Modules taken from the guest kernel's own image (lab.toml
//! `image_modules`), for labs that run a C driver Debian ships next to the
//! Rust one: `binder_linux`, `nvme`.
//!
//! An entry is either a path relative to the image's module folder
//! (`kernel/drivers/android/binder_linux.ko`) or a module name (`nvme`,
//! `-` and `_` alike). Either way the modules it depends on come too, each
//! once, before the modules that need them. The cached image has no
//! `modules.dep`, so the dependencies are read where `depmod` reads them:
//! the `depends=` string of each module's `.modinfo` ELF section. Soft
//! dependencies (`softdep=`) are not followed.
//!
//! The guest finds them as `/lab/image/<file name>` and loads them in that
//! order before the first step (see [`crate::guest::write_initramfs`]).
//!
//! Linux 6.12's image (Debian 13, bookworm-backports) ships its modules
//! xz-compressed (`nvme.ko.xz`), which busybox's `insmod` cannot load: a
//! module found only as `.ko.xz` is unpacked once, next to it, with `xz`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{bail, Context as _, Error, Result};

/// The guest folder of the image's modules, under `/lab/`.
pub const GUEST_DIR: &str = "image";

/// One module to copy from the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageModule {
    /// The file name without `.ko`, e.g. `nvme-core`: the guest has it as
    /// `/lab/image/nvme-core.ko`.
    pub stem: String,
    /// Path relative to the module folder, `/`-separated.
    pub rel: String,
    /// Path on this machine.
    pub path: PathBuf,
}

/// The guest loads an image module by its stem, from its file here.
impl From<ImageModule> for crate::guest::Module {
    fn from(m: ImageModule) -> Self {
        crate::guest::Module {
            name: m.stem,
            path: m.path,
        }
    }
}

/// [`resolve`]'s modules as the guest loads them: the one step every
/// user of `image_modules` takes (labs and benchmarks alike).
pub fn guest_modules(dir: &Path, entries: &[String]) -> Result<Vec<crate::guest::Module>> {
    Ok(resolve(dir, entries)?.into_iter().map(Into::into).collect())
}

/// Whether an entry of `image_modules` is a path (else a module name).
fn is_path(entry: &str) -> bool {
    entry.contains('/') || entry.ends_with(".ko")
}

/// The form of a module name that `-`/`_` spellings share.
fn normalise(name: &str) -> String {
    name.replace('-', "_")
}

/// Checks one `image_modules` entry of a `lab.toml` (before any image is
/// looked at).
pub fn check_entry(entry: &str) -> std::result::Result<(), &'static str> {
    if entry.is_empty() {
        return Err("is empty");
    }
    if !entry
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
    {
        return Err("must be a module name or a path made of [A-Za-z0-9_./-]");
    }
    if !is_path(entry) {
        return Ok(());
    }
    if entry.starts_with('/') {
        return Err("must be relative to the image's module folder, not absolute");
    }
    if !entry.ends_with(".ko") {
        return Err("is a path but does not end in .ko");
    }
    if entry
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err("must stay inside the image's module folder: no empty, `.` or `..` segment");
    }
    Ok(())
}

/// The `.modinfo` section of an ELF64 little-endian object, `None` when
/// `elf` is not one or has no such section.
pub fn modinfo_section(elf: &[u8]) -> Option<&[u8]> {
    let u16_at = |o: usize| -> Option<usize> {
        Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?) as usize)
    };
    let u32_at = |o: usize| -> Option<usize> {
        Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?) as usize)
    };
    let u64_at = |o: usize| -> Option<usize> {
        usize::try_from(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?)).ok()
    };
    // ELFCLASS64, ELFDATA2LSB.
    if !elf.starts_with(b"\x7fELF\x02\x01") {
        return None;
    }
    let shoff = u64_at(0x28)?;
    let shentsize = u16_at(0x3a)?;
    let shnum = u16_at(0x3c)?;
    let shstrndx = u16_at(0x3e)?;
    let section = |i: usize| -> Option<(usize, &[u8])> {
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let name = u32_at(h)?;
        let offset = u64_at(h + 0x18)?;
        let size = u64_at(h + 0x20)?;
        Some((name, elf.get(offset..offset.checked_add(size)?)?))
    };
    let (_, names) = section(shstrndx)?;
    (0..shnum).find_map(|i| {
        let (name, data) = section(i)?;
        let rest = names.get(name..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        (&rest[..end] == b".modinfo").then_some(data)
    })
}

/// The module names in the `depends=` field of a module's `.modinfo`
/// (empty when it depends on nothing).
pub fn depends(elf: &[u8]) -> Option<Vec<String>> {
    let info = modinfo_section(elf)?;
    let field = info
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(b"depends="))
        .unwrap_or_default();
    Some(
        String::from_utf8_lossy(field)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// The module name of a file name: `nvme.ko` and `nvme.ko.xz` are `nvme`.
fn module_stem(file: &str) -> Option<&str> {
    file.strip_suffix(".ko")
        .or_else(|| file.strip_suffix(".ko.xz"))
}

/// The plain `.ko` of the module file `full`: itself, or for a `.ko.xz`
/// the file unpacked next to it (once; atomically, so that a parallel run
/// never reads half a module).
fn unpacked(full: &Path) -> Result<PathBuf> {
    let Some(plain) = full.to_str().and_then(|p| p.strip_suffix(".xz")) else {
        return Ok(full.to_owned());
    };
    let plain = PathBuf::from(plain);
    if plain.is_file() {
        return Ok(plain);
    }
    let dir =
        (plain.parent()).ok_or_else(|| Error::Kernel(format!("{}: no folder", plain.display())))?;
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot unpack {} in {}", full.display(), dir.display()))?;
    let status = std::process::Command::new("xz")
        .arg("-dc")
        .arg(full)
        .stdout(tmp.reopen().context("cannot reopen the unpacked module")?)
        .stdin(std::process::Stdio::null())
        .status()
        .context("cannot run xz (install xz-utils)")?;
    if !status.success() {
        bail!(Kernel, "xz -dc {} failed ({status})", full.display());
    }
    tmp.persist(&plain)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", plain.display()))?;
    Ok(plain)
}

/// Every `.ko` (or `.ko.xz`) under `dir`, by normalised module name: its
/// path relative to `dir` (the `.ko` when there are both). Symbolic links
/// (`build`, `source`) are not followed.
fn index(dir: &Path) -> Result<BTreeMap<String, String>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let here = dir.join(&rel);
        let entries =
            fs::read_dir(&here).with_context(|| format!("cannot read {}", here.display()))?;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if let Some(stem) = module_stem(&name).filter(|_| kind.is_file()) {
                // Two files of one name: keep the first in path order, as
                // a stable choice.
                let slot = found.entry(normalise(stem)).or_insert_with(|| path.clone());
                if path < *slot {
                    *slot = path;
                }
            }
        }
    }
    Ok(found)
}

/// The modules of `entries` and their dependencies, found under the
/// image's module folder `dir`, in loading order (dependencies first, each
/// module once). An entry that is not there is an error naming it.
pub fn resolve(dir: &Path, entries: &[String]) -> Result<Vec<ImageModule>> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let by_name = index(dir)?;
    let mut order = Vec::new();
    let mut done = BTreeMap::new(); // normalised name -> rel
    for entry in entries {
        let rel = if is_path(entry) {
            let xz = format!("{entry}.xz");
            if !dir.join(entry).is_file() && dir.join(&xz).is_file() {
                xz
            } else if !dir.join(entry).is_file() {
                bail!(
                    Kernel,
                    "image_modules: {entry} is not in the guest kernel's modules ({})",
                    dir.display()
                );
            } else {
                entry.clone()
            }
        } else {
            by_name.get(&normalise(entry)).cloned().ok_or_else(|| {
                Error::Kernel(format!(
                    "image_modules: the guest kernel has no module {entry} (no {entry}.ko under {})",
                    dir.display()
                ))
            })?
        };
        visit(dir, &by_name, &rel, &mut Vec::new(), &mut done, &mut order)?;
    }
    Ok(order)
}

/// Depth-first: `rel`'s dependencies, then `rel` itself. `path` is the
/// chain that led here, to report a cycle.
fn visit(
    dir: &Path,
    by_name: &BTreeMap<String, String>,
    rel: &str,
    path: &mut Vec<String>,
    done: &mut BTreeMap<String, String>,
    order: &mut Vec<ImageModule>,
) -> Result<()> {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    let stem = module_stem(file).unwrap_or(file).to_owned();
    let key = normalise(&stem);
    if let Some(other) = done.get(&key) {
        if other != rel {
            bail!(
                Kernel,
                "image_modules: {other} and {rel} are both module {stem}"
            );
        }
        return Ok(());
    }
    if path.contains(&key) {
        bail!(
            Kernel,
            "image_modules: the dependencies of {stem} go round in a circle ({} -> {stem})",
            path.join(" -> ")
        );
    }
    let full = unpacked(&dir.join(rel))?;
    let data = fs::read(&full).with_context(|| format!("cannot read {}", full.display()))?;
    let needs = depends(&data).ok_or_else(|| {
        Error::Kernel(format!(
            "image_modules: {} has no .modinfo section",
            full.display()
        ))
    })?;
    path.push(key.clone());
    for need in needs {
        let dep = by_name.get(&normalise(&need)).ok_or_else(|| {
            Error::Kernel(format!(
                "image_modules: {stem} depends on {need}, which is not under {}",
                dir.display()
            ))
        })?;
        visit(dir, by_name, dep, path, done, order)?;
    }
    path.pop();
    done.insert(key, rel.to_owned());
    order.push(ImageModule {
        stem,
        rel: rel.strip_suffix(".xz").unwrap_or(rel).to_owned(),
        path: full,
    });
    Ok(())
}

/// The guest script that loads the image's modules `stems` (in order) from
/// `/lab/image/`. A module that does not load is reported on the console
/// (the steps that need it fail on their own); the others are still tried.
pub fn load_script(stems: &[&str]) -> String {
    let mut s = String::from("# Generated by the checker: lab.toml `image_modules`.\n");
    for stem in stems {
        s.push_str(&format!(
            "insmod /lab/{GUEST_DIR}/{stem}.ko || echo \"checker: cannot load {stem}.ko from \
             the kernel image\" >/dev/console\n"
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// A minimal ELF64 object with a `.modinfo` section holding `info`.
    fn elf_with_modinfo(info: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.modinfo\0";
        let mut elf = vec![0u8; 0x40];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let names_at = elf.len();
        elf.extend_from_slice(names);
        let info_at = elf.len();
        elf.extend_from_slice(info);
        let shoff = elf.len();
        let header = |name: u32, offset: usize, size: usize| {
            let mut h = vec![0u8; 0x40];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(offset as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            h
        };
        elf.extend(header(0, 0, 0));
        elf.extend(header(1, names_at, names.len()));
        elf.extend(header(11, info_at, info.len()));
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&0x40u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        elf[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        elf
    }

    #[test]
    fn reads_depends() {
        let elf = elf_with_modinfo(b"license=GPL\0depends=nvme-core,t10_pi\0name=nvme\0");
        assert_eq!(depends(&elf).unwrap(), ["nvme-core", "t10_pi"]);
        let elf = elf_with_modinfo(b"license=GPL\0depends=\0");
        assert!(depends(&elf).unwrap().is_empty());
        assert_eq!(depends(b"not an elf"), None);
        // Truncated: the section headers are missing.
        assert_eq!(depends(&elf[..0x50]), None);
    }

    /// A fake module folder: `(path, depends)` per module.
    fn tree(modules: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, deps) in modules {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(
                path,
                elf_with_modinfo(format!("depends={deps}\0").as_bytes()),
            )
            .unwrap();
        }
        dir
    }

    const NVME: &[(&str, &str)] = &[
        ("kernel/lib/crc-t10dif.ko", "crct10dif_common"),
        ("kernel/crypto/crct10dif_common.ko", ""),
        ("kernel/lib/crc64-rocksoft.ko", "crc64"),
        ("kernel/lib/crc64.ko", ""),
        ("kernel/block/t10-pi.ko", "crc-t10dif,crc64-rocksoft"),
        ("kernel/drivers/nvme/host/nvme-core.ko", "t10-pi"),
        ("kernel/drivers/nvme/host/nvme.ko", "nvme-core"),
        ("kernel/drivers/android/binder_linux.ko", ""),
        ("kernel/x/loop-a.ko", "loop_b"),
        ("kernel/x/loop-b.ko", "loop-a"),
        ("kernel/x/needs-ghost.ko", "ghost"),
    ];

    #[track_caller]
    fn check(entries: &[&str], expect: Expect) {
        let dir = tree(NVME);
        let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        let actual = match resolve(dir.path(), &entries) {
            Ok(mods) => mods
                .iter()
                .map(|m| {
                    assert_eq!(m.path, dir.path().join(&m.rel));
                    format!("{} {}", m.stem, m.rel)
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("error: {e:#}").replace(&dir.path().display().to_string(), "DIR"),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn dependencies_first_each_once() {
        check(
            &["nvme"],
            expect![[r#"
                crct10dif_common kernel/crypto/crct10dif_common.ko
                crc-t10dif kernel/lib/crc-t10dif.ko
                crc64 kernel/lib/crc64.ko
                crc64-rocksoft kernel/lib/crc64-rocksoft.ko
                t10-pi kernel/block/t10-pi.ko
                nvme-core kernel/drivers/nvme/host/nvme-core.ko
                nvme kernel/drivers/nvme/host/nvme.ko"#]],
        );
        check(
            // By name or path; crc-t10dif, asked for first, is not loaded
            // again as t10-pi's dependency.
            &[
                "crc_t10dif",
                "kernel/drivers/android/binder_linux.ko",
                "t10_pi",
            ],
            expect![[r#"
                crct10dif_common kernel/crypto/crct10dif_common.ko
                crc-t10dif kernel/lib/crc-t10dif.ko
                binder_linux kernel/drivers/android/binder_linux.ko
                crc64 kernel/lib/crc64.ko
                crc64-rocksoft kernel/lib/crc64-rocksoft.ko
                t10-pi kernel/block/t10-pi.ko"#]],
        );
        check(&[], expect![[""]]);
    }

    #[test]
    fn xz_modules_are_unpacked_once() {
        let dir = tree(NVME);
        let host = dir.path().join("kernel/drivers/nvme/host");
        for m in ["nvme", "nvme-core"] {
            let status = std::process::Command::new("xz")
                .arg(host.join(format!("{m}.ko")))
                .status()
                .unwrap();
            assert!(status.success());
        }
        assert!(!host.join("nvme.ko").exists());
        let mods = resolve(dir.path(), &["nvme".into()]).unwrap();
        let last = &mods[mods.len() - 2..];
        assert_eq!(
            last.iter()
                .map(|m| format!("{} {}", m.stem, m.rel))
                .collect::<Vec<_>>(),
            [
                "nvme-core kernel/drivers/nvme/host/nvme-core.ko",
                "nvme kernel/drivers/nvme/host/nvme.ko"
            ]
        );
        // Unpacked next to the .xz, as a module with its dependencies.
        assert_eq!(last[1].path, host.join("nvme.ko"));
        assert_eq!(
            depends(&fs::read(host.join("nvme.ko")).unwrap()),
            Some(vec!["nvme-core".to_owned()])
        );
        // A path entry names the plain .ko even when only the .xz is there.
        fs::remove_file(host.join("nvme.ko")).unwrap();
        let mods = resolve(dir.path(), &["kernel/drivers/nvme/host/nvme.ko".into()]).unwrap();
        assert_eq!(mods.last().unwrap().path, host.join("nvme.ko"));
    }

    #[test]
    fn errors_name_the_module() {
        check(
            &["binder"],
            expect![[
                "error: image_modules: the guest kernel has no module binder (no binder.ko under DIR)"
            ]],
        );
        check(
            &["kernel/drivers/android/binder.ko"],
            expect![[
                "error: image_modules: kernel/drivers/android/binder.ko is not in the guest kernel's modules (DIR)"
            ]],
        );
        check(
            &["needs-ghost"],
            expect![["error: image_modules: needs-ghost depends on ghost, which is not under DIR"]],
        );
        check(
            &["loop-a"],
            expect![[
                "error: image_modules: the dependencies of loop-a go round in a circle (loop_a -> loop_b -> loop-a)"
            ]],
        );
    }

    #[test]
    fn entries() {
        let check = |e: &str, expect: Expect| {
            expect.assert_eq(&format!("{:?}", check_entry(e)));
        };
        check("binder_linux", expect![[r#"Ok(())"#]]);
        check(
            "kernel/drivers/android/binder_linux.ko",
            expect![[r#"Ok(())"#]],
        );
        check("", expect![[r#"Err("is empty")"#]]);
        check(
            "/lib/modules/x.ko",
            expect![[r#"Err("must be relative to the image's module folder, not absolute")"#]],
        );
        check(
            "kernel/../x.ko",
            expect![[
                r#"Err("must stay inside the image's module folder: no empty, `.` or `..` segment")"#
            ]],
        );
        check(
            "kernel/x",
            expect![[r#"Err("is a path but does not end in .ko")"#]],
        );
        check(
            "nvme core",
            expect![[r#"Err("must be a module name or a path made of [A-Za-z0-9_./-]")"#]],
        );
    }

    #[test]
    fn script_loads_in_order() {
        expect![[r#"
            # Generated by the checker: lab.toml `image_modules`.
            insmod /lab/image/t10-pi.ko || echo "checker: cannot load t10-pi.ko from the kernel image" >/dev/console
            insmod /lab/image/nvme-core.ko || echo "checker: cannot load nvme-core.ko from the kernel image" >/dev/console
        "#]]
        .assert_eq(&load_script(&["t10-pi", "nvme-core"]));
    }

    /// The real image, when `make setup` has cached it.
    #[test]
    fn the_cached_image() {
        let root = crate::cache_root();
        let Ok(abis) = fs::read_dir(&root) else {
            return;
        };
        for abi in abis.flatten() {
            let name = abi.file_name().to_string_lossy().into_owned();
            let dir = abi.path().join("lib/modules").join(&name);
            if !dir.join("kernel").is_dir() {
                continue;
            }
            let got = resolve(&dir, &["binder_linux".into()]).unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].rel, "kernel/drivers/android/binder_linux.ko");
            let nvme: Vec<String> = resolve(&dir, &["nvme".into()])
                .unwrap()
                .into_iter()
                .map(|m| m.stem)
                .collect();
            assert_eq!(nvme.last().map(String::as_str), Some("nvme"));
            // 6.1's nvme-core needs the T10 PI chain; 6.12's needs
            // nvme-auth instead (and its modules are .ko.xz).
            let needs: &[&str] = if name.starts_with("6.1.") {
                &["nvme-core", "t10-pi", "crc-t10dif", "crc64-rocksoft"]
            } else {
                &["nvme-core"]
            };
            for need in needs {
                assert!(
                    nvme.iter().any(|m| m == *need),
                    "{need} missing from {nvme:?}"
                );
            }
        }
    }
}
