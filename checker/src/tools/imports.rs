//! A module imports only what it uses: the check over every built `.ko`.
//!
//! The kernel crate's C helpers are linked into a module only when its Rust
//! code calls them (`kernel-crate/kbuild/helpers.sh`), so a module that does
//! not use the block layer imports no blk-mq symbol, and lab 01's `hello.ko`
//! none of the Binder LSM hooks, which only Debian's Android patch exports.
//! This check holds the build to it: for each Rust module of a folder (a
//! `NAME.ko` next to the `NAME_rust.o` Kbuild linked into it), every symbol
//! the `.ko` imports from one of the [`SUBSYSTEMS`] must be accounted for
//! by the Rust object, which calls into that subsystem itself or through
//! one of its helpers (`rust_helper_blk_rq_pos` counts as `blk_rq_pos`).
//! `make kernel-clippy` runs it on every lab solution, sample driver and
//! fixture it builds, and `make sizes` on the semaphore.

use std::fmt;
use std::path::Path;

use anyhow::{Context, Result};

/// A kernel subsystem: the symbols a module imports from it, and the names
/// by which Rust code calls into it (with `rust_helper_` taken off).
/// A pattern ending in `*` is a prefix, any other a whole name; a name in
/// `not_uses` never counts as a use.
pub struct Subsystem {
    /// What the report calls it.
    pub name: &'static str,
    /// Symbols imported from it.
    pub imports: &'static [&'static str],
    /// Further names (helpers' names) that count as using it, besides
    /// [`Subsystem::imports`].
    pub uses: &'static [&'static str],
    /// Names that match a pattern above but are not a use.
    pub not_uses: &'static [&'static str],
}

/// The subsystems whose imports a module must account for.
pub const SUBSYSTEMS: &[Subsystem] = &[
    Subsystem {
        name: "Binder LSM hooks",
        imports: &["security_binder_*"],
        uses: &[],
        not_uses: &[],
    },
    Subsystem {
        name: "block layer (blk-mq)",
        imports: &[
            "blk_*",
            "__blk_*",
            "bio_*",
            "__bio_*",
            "submit_bio*",
            "device_add_disk",
            "del_gendisk",
            "put_disk",
            "set_capacity*",
        ],
        uses: &["rq_*", "req_op", "hctx_*", "disk_*", "add_disk"],
        not_uses: &[],
    },
    Subsystem {
        name: "DMA",
        imports: &["dma_*", "__dma_*", "dmam_*"],
        uses: &[],
        // Barriers (barrier.rs), not the DMA API.
        not_uses: &["dma_rmb", "dma_wmb"],
    },
    Subsystem {
        name: "scatterlists",
        imports: &["sg_*", "__sg_*", "sgl_*"],
        uses: &[],
        not_uses: &[],
    },
    Subsystem {
        name: "PCI",
        imports: &["pci_*", "__pci_*", "pcim_*", "pcie_*"],
        uses: &[],
        not_uses: &[],
    },
    Subsystem {
        name: "interrupts",
        imports: &["request_threaded_irq", "free_irq", "synchronize_irq"],
        uses: &[],
        not_uses: &[],
    },
    Subsystem {
        name: "shrinkers",
        imports: &[
            "register_shrinker*",
            "unregister_shrinker",
            "prealloc_shrinker",
            "free_prealloced_shrinker",
            "shrinker_*",
        ],
        uses: &[],
        not_uses: &[],
    },
    Subsystem {
        name: "memory maps and the mmap lock",
        imports: &[
            "__mmap_lock_*",
            "__tracepoint_mmap_lock_*",
            "vm_insert_page",
            "zap_page_range*",
            "mmput",
            "mmput_async",
            "__mmdrop",
        ],
        uses: &["mmap_*", "vma_*", "mm*", "vm_*"],
        not_uses: &[],
    },
    Subsystem {
        name: "char device regions",
        imports: &["cdev_*", "alloc_chrdev_region", "unregister_chrdev_region"],
        uses: &["chrdev_*"],
        not_uses: &[],
    },
    Subsystem {
        name: "credentials and tasks",
        imports: &["get_task_cred", "__put_cred", "__put_task_struct"],
        uses: &[
            "put_cred",
            "file_get_cred",
            "cred_*",
            "task_*",
            "put_task_struct",
        ],
        not_uses: &[],
    },
    Subsystem {
        name: "workqueues",
        imports: &["queue_work_on", "__flush_workqueue", "system_wq"],
        uses: &["schedule_work", "flush_system_wq", "init_work_with_key"],
        not_uses: &[],
    },
    Subsystem {
        name: "kernel threads",
        imports: &["kthread_*"],
        uses: &[],
        not_uses: &[],
    },
];

/// Whether `name` matches `pattern` (a prefix when it ends in `*`).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

impl Subsystem {
    /// Whether the module imports `symbol` from this subsystem.
    pub fn imported(&self, symbol: &str) -> bool {
        self.imports.iter().any(|p| matches(p, symbol))
    }

    /// Whether Rust code that leaves `symbol` undefined calls into this
    /// subsystem.
    pub fn used_by(&self, symbol: &str) -> bool {
        let name = symbol.strip_prefix("rust_helper_").unwrap_or(symbol);
        !self.not_uses.contains(&name)
            && (self
                .imports
                .iter()
                .chain(self.uses)
                .any(|p| matches(p, name)))
    }
}

/// A symbol a module imports from a subsystem its Rust code does not use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unused {
    /// The module (`hello.ko`).
    pub module: String,
    /// The subsystem's name.
    pub subsystem: &'static str,
    /// What it imports from it.
    pub symbols: Vec<String>,
}

impl fmt::Display for Unused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} imports {} ({}), a subsystem its Rust code does not use",
            self.module,
            self.symbols.join(", "),
            self.subsystem
        )
    }
}

/// The check on one module: `imports` (the `.ko`'s undefined symbols)
/// against `rust` (its Rust object's undefined symbols).
pub fn check(module: &str, imports: &[String], rust: &[String]) -> Vec<Unused> {
    SUBSYSTEMS
        .iter()
        .filter(|s| !rust.iter().any(|r| s.used_by(r)))
        .filter_map(|s| {
            let symbols: Vec<String> = imports.iter().filter(|i| s.imported(i)).cloned().collect();
            (!symbols.is_empty()).then(|| Unused {
                module: module.to_owned(),
                subsystem: s.name,
                symbols,
            })
        })
        .collect()
}

/// The undefined symbols of an object (`nm --undefined-only`).
pub fn undefined(path: &Path) -> Result<Vec<String>> {
    let out = crate::tools::exec::binutils("nm", &["--undefined-only".as_ref(), path.as_os_str()])?;
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    Ok(v)
}

/// One Rust module of a folder: its name and how many symbols it imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The `.ko`'s file name.
    pub name: String,
    /// Its undefined symbols.
    pub imports: usize,
}

/// Checks every Rust module built in `dir` (each `NAME.ko` with a
/// `NAME_rust.o`); returns the modules seen, or an error that lists every
/// import no use accounts for.
pub fn check_dir(dir: &Path) -> Result<Vec<Module>> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ko"))
        .collect();
    entries.sort();
    let mut seen = Vec::new();
    let mut bad = Vec::new();
    for ko in entries {
        let stem = ko
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let rust_o = dir.join(format!("{stem}_rust.o"));
        if !rust_o.is_file() {
            continue; // a C module (a twin), which Kbuild links alone
        }
        let name = format!("{stem}.ko");
        let imports = undefined(&ko)?;
        bad.extend(check(&name, &imports, &undefined(&rust_o)?));
        seen.push(Module {
            name,
            imports: imports.len(),
        });
    }
    if !bad.is_empty() {
        let lines: Vec<String> = bad.iter().map(|u| format!("  {u}")).collect();
        anyhow::bail!(
            "{}: a module imports what it does not use (kernel-crate/kbuild/helpers.sh \
             links only the helpers a module calls):\n{}",
            dir.display(),
            lines.join("\n")
        );
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn an_import_needs_a_use_of_its_subsystem() {
        // hello.ko as it was linked before the helpers were selected: every
        // helper of every subsystem, for a module that only prints.
        let imports = v(&[
            "_printk",
            "security_binder_transaction",
            "blk_mq_start_request",
            "dma_set_mask",
            "register_shrinker",
            "__mmap_lock_do_trace_acquire_returned",
        ]);
        let rust = v(&["_printk", "rust_helper_unload_lock", "rust_helper_dma_rmb"]);
        let bad = check("hello.ko", &imports, &rust);
        let names: Vec<_> = bad.iter().map(|u| u.subsystem).collect();
        assert_eq!(
            names,
            [
                "Binder LSM hooks",
                "block layer (blk-mq)",
                "DMA",
                "shrinkers",
                "memory maps and the mmap lock"
            ]
        );
        assert_eq!(
            bad[0].to_string(),
            "hello.ko imports security_binder_transaction (Binder LSM hooks), \
             a subsystem its Rust code does not use"
        );
        // Used directly or through a helper: accounted for.
        let rust = v(&[
            "rust_helper_security_binder_transaction",
            "rust_helper_blk_rq_pos",
            "dma_alloc_attrs",
            "rust_helper_register_shrinker",
            "rust_helper_mmap_read_lock",
        ]);
        assert!(check("binder.ko", &imports, &rust).is_empty());
        // A module that imports nothing of a subsystem passes, used or not.
        assert!(check("x.ko", &v(&["_printk"]), &v(&["_printk"])).is_empty());
    }

    #[test]
    fn patterns() {
        assert!(matches("blk_*", "blk_mq_end_request"));
        assert!(!matches("blk_*", "xblk_"));
        assert!(matches("mmput", "mmput"));
        assert!(!matches("mmput", "mmput_async"));
        let dma = &SUBSYSTEMS[2];
        assert_eq!(dma.name, "DMA");
        assert!(!dma.used_by("rust_helper_dma_rmb"));
        assert!(dma.used_by("rust_helper_dma_set_mask_and_coherent"));
    }
}
