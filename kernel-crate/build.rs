//! Generates the raw bindings with bindgen, from the installed kernel headers.
//!
//! The compiler flags are not written here: Kbuild passes the ones it uses for
//! C in `KERNEL_CFLAGS`, and `KERNEL_OBJTREE` names the directory they are
//! relative to (see `kbuild/rust-module.mk`). Of those flags, clang gets the
//! ones that change what the headers declare; gcc-only code generation flags
//! are dropped.
//!
//! Each Kbuild build records the flags in `target/kbuild-flags`; a build
//! outside Kbuild (`cargo check --target x86_64-unknown-none`, which is what
//! rust-analyzer runs, or `cargo doc`) uses them, so it sees the same
//! bindings.

use std::env;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=KERNEL_CFLAGS");
    println!("cargo:rerun-if-env-changed=KERNEL_OBJTREE");
    println!("cargo:rerun-if-changed=src/bindings_helper.h");
    println!("cargo:rerun-if-changed=helpers/helpers.h");

    let recorded = recorded_flags_file();
    let (cflags, objtree) = match (env::var("KERNEL_CFLAGS"), env::var("KERNEL_OBJTREE")) {
        (Ok(cflags), Ok(objtree)) => {
            record_flags(&recorded, &cflags, &objtree);
            (cflags, objtree)
        }
        // Outside Kbuild (`cargo check`, rust-analyzer, `cargo doc`): the
        // flags of the last Kbuild build, so the bindings are the same.
        _ => {
            println!("cargo:rerun-if-changed={}", recorded.display());
            match read_flags(&recorded) {
                Some(flags) => flags,
                None => {
                    eprintln!(
                        "error: KERNEL_CFLAGS and KERNEL_OBJTREE are not set, and no Kbuild build \
                         has recorded them in {} yet.\n\
                         The kernel crate is built by Kbuild: run `make` in a module directory \
                         (for example labs/lab-01), or `make lab-01` at the top of the repository; \
                         after that, `cargo check --target x86_64-unknown-none` works too.",
                        recorded.display()
                    );
                    std::process::exit(1);
                }
            }
        }
    };

    let objtree = PathBuf::from(objtree);
    kernel_cfgs(&objtree);
    config_cfgs(&objtree);
    let mut args = clang_args(&cflags, &objtree);
    args.extend([
        "--target=x86_64-linux-gnu".to_owned(),
        "-D__BINDGEN__".to_owned(),
        "-Wno-unknown-warning-option".to_owned(),
    ]);

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let bindings = bindgen::Builder::default()
        .header("src/bindings_helper.h")
        .clang_args(&args)
        .use_core()
        .ctypes_prefix("core::ffi")
        .layout_tests(false)
        .generate_comments(false)
        .prepend_enum_name(false)
        // Only pointers to `struct module` cross the boundary so far.
        .opaque_type("module")
        .allowlist_type("module")
        .allowlist_function("_printk")
        .allowlist_function("rust_helper_.*")
        .allowlist_var("rust_unload_mutex")
        .allowlist_var("E[A-Z0-9]+")
        .allowlist_var("MAX_ERRNO")
        .allowlist_var("O_(NONBLOCK|APPEND|TRUNC)")
        .allowlist_var("SEEK_(SET|CUR|END|DATA|HOLE)")
        .allowlist_var("_IOC_(NR|TYPE|SIZE|DIR)(SHIFT|MASK)")
        .allowlist_var("_IOC_(NONE|READ|WRITE)")
        .allowlist_type("kernel_param")
        .allowlist_type("kernel_param_ops")
        .allowlist_function("kernel_param_(un)?lock")
        .allowlist_var("KERNEL_PARAM_OPS_FL_NOARG")
        // 6.10 made `krealloc` a macro over `krealloc_noprof` (allocation
        // profiling); the one that exists is bound.
        .allowlist_function("krealloc(_noprof)?")
        .allowlist_function("kfree")
        .allowlist_var("RUST_CONST_HELPER_.*")
        // Synchronisation and kernel threads (src/sync, task.rs, kthread.rs).
        .opaque_type("mutex")
        .opaque_type("spinlock")
        .opaque_type("wait_queue_head")
        .opaque_type("wait_queue_entry")
        .opaque_type("lock_class_key")
        .opaque_type("refcount_struct")
        .opaque_type("task_struct")
        .allowlist_type("mutex")
        .allowlist_type("spinlock_t")
        .allowlist_type("wait_queue_head")
        .allowlist_type("wait_queue_entry")
        .allowlist_type("refcount_t")
        .allowlist_function("__mutex_init")
        .allowlist_function("mutex_lock")
        .allowlist_function("mutex_unlock")
        .allowlist_function("mutex_trylock")
        .allowlist_function("__init_waitqueue_head")
        .allowlist_function("init_wait_entry")
        .allowlist_function("prepare_to_wait_exclusive")
        .allowlist_function("finish_wait")
        .allowlist_function("__wake_up")
        .allowlist_function("synchronize_rcu")
        .allowlist_function("schedule")
        .allowlist_function("schedule_timeout_uninterruptible")
        .allowlist_function("flush_signals")
        .allowlist_function("kthread_create_on_node")
        .allowlist_function("kthread_stop")
        .allowlist_function("kthread_should_stop")
        .allowlist_function("kthread_func")
        .allowlist_function("__module_put_and_kthread_exit")
        .allowlist_function("module_put")
        .allowlist_function("wake_up_process")
        // Files and devices (src/file.rs, miscdev.rs, chrdev.rs, user.rs).
        .opaque_type("cdev")
        .opaque_type("poll_table_struct")
        .opaque_type("device")
        .allowlist_type("file")
        .allowlist_type("file_operations")
        .allowlist_type("miscdevice")
        .allowlist_type("cdev")
        .allowlist_function("misc_register")
        .allowlist_function("misc_deregister")
        .allowlist_function("alloc_chrdev_region")
        .allowlist_function("unregister_chrdev_region")
        .allowlist_function("cdev_add")
        .allowlist_function("cdev_del")
        .allowlist_function("noop_llseek")
        .allowlist_function("stream_open")
        // Completions: no abstraction in this crate on purpose, lab 09's
        // student writes it (labs/lab-09/solution/src/completion.rs).
        .allowlist_type("completion")
        .allowlist_function("complete")
        .allowlist_function("complete_all")
        .allowlist_function("wait_for_completion")
        .allowlist_function("wait_for_completion_interruptible")
        .allowlist_function("try_wait_for_completion")
        .allowlist_function("completion_done")
        // Memory maps, pages and file descriptors (src/mm.rs, page.rs, fd.rs).
        .opaque_type("vm_area_struct")
        .opaque_type("page")
        .allowlist_type("vm_area_struct")
        .allowlist_function("vm_insert_page")
        .opaque_type("vm_fault")
        .allowlist_type("vm_operations_struct")
        .opaque_type("mm_struct")
        .allowlist_type("mm_struct")
        .allowlist_function("mmput")
        .allowlist_function("mmput_async")
        // 6.3 replaced `zap_page_range` by `zap_page_range_single`.
        .allowlist_function("zap_page_range(_single)?")
        // Shrinkers (src/shrinker.rs); registering (6.1) and allocating
        // (6.7+) are helpers (variadic).
        .allowlist_type("shrinker")
        .allowlist_type("shrink_control")
        .allowlist_function("unregister_shrinker")
        .allowlist_function("shrinker_(register|free)")
        // Credentials (src/cred.rs); the LSM hooks are helpers (security.rs).
        .opaque_type("cred")
        .allowlist_type("cred")
        // Tasks and work items (src/task.rs, workqueue.rs).
        .allowlist_function("get_task_cred")
        .opaque_type("work_struct")
        .allowlist_type("work_struct")
        .allowlist_function("__free_pages")
        .allowlist_function("fget")
        .allowlist_function("fput")
        .allowlist_function("get_unused_fd_flags")
        .allowlist_function("put_unused_fd")
        .allowlist_function("fd_install")
        // The Binder uapi (src/uapi.rs): the structs, whose sizes make the
        // ioctl and command numbers, and the enum constants of binder.h.
        .allowlist_type("binder_write_read")
        .allowlist_type("binder_version")
        .allowlist_type("binder_node_info_for_ref")
        .allowlist_type("binder_transaction_data")
        .allowlist_type("flat_binder_object")
        .allowlist_type("binder_fd_object")
        .allowlist_type("binder_driver_return_protocol")
        .allowlist_type("binder_driver_command_protocol")
        .allowlist_var("BINDER_CURRENT_PROTOCOL_VERSION")
        .allowlist_var("BINDER_TYPE_.*")
        .allowlist_var("FLAT_BINDER_FLAG_.*")
        .allowlist_type("transaction_flags")
        .allowlist_var("B[RC]_.*")
        // PCI, MMIO, DMA, interrupts, delays and ids (src/pci.rs, io.rs,
        // dma.rs, irq.rs, delay.rs, ida.rs, device.rs).
        .opaque_type("pci_dev")
        .opaque_type("dma_pool")
        .opaque_type("ida")
        .opaque_type("device_driver")
        .opaque_type("pci_dynids")
        .allowlist_type("pci_driver")
        .allowlist_type("pci_device_id")
        .allowlist_type("ida")
        .allowlist_type("irqreturn")
        .allowlist_type("irq_affinity")
        .allowlist_type("dma_data_direction")
        .allowlist_function("__pci_register_driver")
        .allowlist_function("pci_unregister_driver")
        .allowlist_function("pcim_enable_device")
        .allowlist_function("pci_set_master")
        .allowlist_function("pci_clear_master")
        .allowlist_function("pci_request_region")
        .allowlist_function("pci_release_region")
        .allowlist_function("pci_iomap")
        .allowlist_function("pci_iounmap")
        .allowlist_function("pci_alloc_irq_vectors_affinity")
        .allowlist_function("pci_free_irq_vectors")
        .allowlist_function("pci_irq_vector")
        .allowlist_function("pci_irq_get_affinity")
        .opaque_type("cpumask")
        .allowlist_function("pci_dev_get")
        .allowlist_function("pci_dev_put")
        .allowlist_function("get_device")
        .allowlist_function("put_device")
        .allowlist_function("dma_set_mask")
        .allowlist_function("dma_alloc_attrs")
        .allowlist_function("dma_free_attrs")
        .allowlist_function("dma_pool_(create|alloc|free|destroy)")
        .allowlist_function("dma_(un)?map_sg_attrs")
        .allowlist_function("request_threaded_irq")
        .allowlist_function("free_irq")
        .allowlist_function("msleep")
        .allowlist_function("ida_(alloc_range|free|destroy)")
        // The block layer (src/block, src/scatterlist.rs): the tag set and
        // the ops tables are built in Rust; the rest is reached through
        // helpers (helpers/block.c).
        .opaque_type("request")
        .opaque_type("request_queue")
        .opaque_type("gendisk")
        .opaque_type("blk_mq_hw_ctx")
        .opaque_type("blk_mq_tags")
        .opaque_type("bio")
        .opaque_type("io_comp_batch")
        .allowlist_type("blk_mq_tag_set")
        .allowlist_type("blk_mq_ops")
        .allowlist_type("blk_mq_queue_data")
        .allowlist_type("block_device_operations")
        .allowlist_type("blk_eh_timer_return")
        .allowlist_type("scatterlist")
        .allowlist_type("rust_rq_seg_iter")
        .allowlist_function("blk_mq_alloc_tag_set")
        .allowlist_function("blk_mq_free_tag_set")
        .allowlist_function("blk_mq_tagset_busy_iter")
        .allowlist_function("blk_mq_start_request")
        .allowlist_function("blk_mq_end_request")
        .allowlist_function("blk_mq_complete_request")
        .allowlist_function("blk_mq_requeue_request")
        .allowlist_function("errno_to_blk_status")
        .allowlist_function("__blk_mq_alloc_disk")
        .allowlist_function("del_gendisk")
        .allowlist_function("put_disk")
        .allowlist_function("set_capacity")
        // 6.1 sets the limits on the queue after allocating it; 6.9+ passes
        // a `struct queue_limits` to `__blk_mq_alloc_disk`.
        .allowlist_type("queue_limits")
        .allowlist_var("RUST_CONST_HELPER_BLK_FEAT_.*")
        .allowlist_function("blk_queue_(logical|physical)_block_size")
        .allowlist_function("blk_queue_max_(hw_sectors|segments)")
        .allowlist_function("blk_queue_(virt_boundary|dma_alignment|write_cache)")
        .allowlist_function("blk_mq_(un)?freeze_queue")
        .allowlist_function("blk_mq_(un)?quiesce_queue")
        .allowlist_function("blk_mark_disk_dead")
        .allowlist_function("blk_queue_io_(min|opt)")
        .allowlist_function("blk_queue_max_discard_(sectors|segments)")
        .allowlist_function("blk_queue_max_write_zeroes_sectors")
        .allowlist_function("blkdev_compat_ptr_ioctl")
        .opaque_type("block_device")
        // Capabilities (src/cred.rs) and NVMe's passthrough uapi (src/uapi.rs).
        .allowlist_function("capable")
        .allowlist_var("CAP_SYS_ADMIN")
        .allowlist_type("nvme_passthru_cmd")
        .allowlist_function("sg_init_table")
        .allowlist_function("blk_mq_map_queues")
        .allowlist_type("hctx_type")
        // Red-black trees (src/rbtree.rs); rb_link_node is inline (a helper).
        .allowlist_type("rb_root")
        .allowlist_type("rb_node")
        .allowlist_function("rb_(insert_color|erase|first|next)")
        .generate()
        .unwrap_or_else(|e| {
            eprintln!("error: bindgen failed on src/bindings_helper.h: {e}");
            std::process::exit(1);
        });
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("OUT_DIR is writable");
}

/// The kernel releases whose interfaces the crate follows, as cfgs named
/// after the change (`cargo:rustc-cfg`), from the tree's
/// `LINUX_VERSION_CODE`. Version differences live only in this crate and
/// its C helpers (`helpers/`, which test `LINUX_VERSION_CODE` themselves);
/// see the crate's README, "Kernels".
const KERNEL_CFGS: &[(&str, (u32, u32), &str)] = &[
    (
        "kernel_zap_page_range_single",
        (6, 3),
        "zap_page_range is gone, zap_page_range_single is exported",
    ),
    (
        "kernel_blk_mode",
        (6, 5),
        "a disk's open takes the gendisk and a blk_mode_t, release only the gendisk",
    ),
    (
        "kernel_shrinker_alloc",
        (6, 7),
        "shrinkers are allocated by the kernel (shrinker_alloc/register/free)",
    ),
    (
        "kernel_krealloc_noprof",
        (6, 10),
        "krealloc is a macro over krealloc_noprof",
    ),
    // Limits at allocation came in 6.9, the feature flags (write cache,
    // FUA, rotational) in 6.11: the crate uses both together.
    (
        "kernel_queue_limits",
        (6, 11),
        "queue limits and features are given to __blk_mq_alloc_disk",
    ),
];

/// The kernel series the crate is tested on (6.1: Debian 12; 6.12: Debian
/// 13 and bookworm-backports); others get a warning.
const TESTED_SERIES: &[(u32, u32)] = &[(6, 1), (6, 12)];

/// Reads `LINUX_VERSION_CODE` from the tree and emits [`KERNEL_CFGS`].
fn kernel_cfgs(objtree: &Path) {
    for (name, _, _) in KERNEL_CFGS {
        println!("cargo:rustc-check-cfg=cfg({name})");
    }
    let header = objtree.join("include/generated/uapi/linux/version.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let Some(code) = std::fs::read_to_string(&header)
        .ok()
        .and_then(|text| linux_version_code(&text))
    else {
        eprintln!(
            "error: no LINUX_VERSION_CODE in {}: is {} a kernel tree after `modules_prepare`?",
            header.display(),
            objtree.display()
        );
        std::process::exit(1);
    };
    let (major, minor) = (code >> 16, (code >> 8) & 0xff);
    if !TESTED_SERIES.contains(&(major, minor)) {
        println!(
            "cargo:warning=the kernel crate is tested on Linux 6.1 and 6.12, not {major}.{minor}"
        );
    }
    for (name, since, _) in KERNEL_CFGS {
        if (major, minor) >= *since {
            println!("cargo:rustc-cfg={name}");
        }
    }
}

/// The tree's configuration options that the crate's code follows, as
/// cfgs of the same name (`#[cfg(CONFIG_DEBUG_KMEMLEAK)]`, as mainline
/// writes them), set when the tree's `include/config/auto.conf` has them
/// `=y`. Each skips a call into a C helper that does nothing on a tree
/// without the option (Debian's kernels): the call, and the helper linked
/// into every module that makes it, cost size for nothing. The debug
/// kernel has all four.
const CONFIG_CFGS: &[(&str, &str)] = &[
    (
        "CONFIG_FAULT_INJECTION",
        "the allocator's fault-injection site (`rust_helper_alloc_should_fail`)",
    ),
    (
        "CONFIG_DEBUG_ATOMIC_SLEEP",
        "a condition variable's check before it sleeps (`rust_helper_might_sleep_prepared`)",
    ),
    (
        "CONFIG_DEBUG_KMEMLEAK",
        "the unload registry's `kmemleak_not_leak` for a leaked registration",
    ),
    (
        "CONFIG_DEBUG_LOCK_ALLOC",
        "`mutex_lock` is a macro over `mutex_lock_nested` (lockdep), so a helper",
    ),
];

/// Reads the tree's `include/config/auto.conf` and emits [`CONFIG_CFGS`].
fn config_cfgs(objtree: &Path) {
    for (name, _) in CONFIG_CFGS {
        println!("cargo:rustc-check-cfg=cfg({name})");
    }
    let auto_conf = objtree.join("include/config/auto.conf");
    println!("cargo:rerun-if-changed={}", auto_conf.display());
    let Ok(text) = std::fs::read_to_string(&auto_conf) else {
        eprintln!(
            "error: no {}: is {} a kernel tree after `modules_prepare`?",
            auto_conf.display(),
            objtree.display()
        );
        std::process::exit(1);
    };
    for name in config_enabled(&text, CONFIG_CFGS.iter().map(|(name, _)| *name)) {
        println!("cargo:rustc-cfg={name}");
    }
}

/// Which of `names` `auto.conf`'s `text` sets to `y` (`CONFIG_X=y`).
fn config_enabled<'a>(text: &str, names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    names
        .filter(|name| {
            text.lines()
                .any(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix('=')) == Some("y"))
        })
        .collect()
}

/// `LINUX_VERSION_CODE` of `version.h`: `#define LINUX_VERSION_CODE 395520`.
fn linux_version_code(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("#define LINUX_VERSION_CODE "))
        .and_then(|v| v.trim().parse().ok())
}

/// Where a Kbuild build records its flags for builds outside Kbuild:
/// `<workspace>/target/kbuild-flags` (the last build wins).
fn recorded_flags_file() -> PathBuf {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    manifest
        .parent()
        .unwrap_or(&manifest)
        .join("target")
        .join("kbuild-flags")
}

/// Writes `objtree` and `cflags`, one line each, unless the file already
/// holds them (an unchanged file keeps `cargo check` from regenerating).
fn record_flags(file: &Path, cflags: &str, objtree: &str) {
    let text = format!("{objtree}\n{cflags}\n");
    if std::fs::read_to_string(file).is_ok_and(|old| old == text) {
        return;
    }
    let tmp = file.with_extension("tmp");
    // Best effort: only editors and `cargo doc` read it.
    let _ = std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))
        .and_then(|()| std::fs::write(&tmp, &text))
        .and_then(|()| std::fs::rename(&tmp, file));
}

fn read_flags(file: &Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut lines = text.lines();
    let objtree = lines.next()?.to_owned();
    let cflags = lines.next()?.to_owned();
    Some((cflags, objtree))
}

/// Keeps the flags that affect what the headers declare, with paths made
/// absolute: Kbuild runs the compiler from the kernel's object tree.
fn clang_args(cflags: &str, objtree: &Path) -> Vec<String> {
    let absolute = |path: &str| -> String {
        let path = Path::new(path);
        if path.is_absolute() {
            path.display().to_string()
        } else {
            objtree.join(path).display().to_string()
        }
    };
    let mut args = Vec::new();
    let mut words = cflags.split_whitespace();
    while let Some(word) = words.next() {
        if word == "-include" {
            if let Some(file) = words.next() {
                args.push("-include".to_owned());
                args.push(absolute(file));
            }
        } else if let Some(dir) = word.strip_prefix("-I") {
            args.push(format!("-I{}", absolute(dir)));
        } else if word.starts_with("-D")
            || word.starts_with("-U")
            || word.starts_with("-std=")
            || KEPT_FLAGS.contains(&word)
        {
            args.push(word.to_owned());
        }
    }
    args
}

/// Flags that change predefined macros or type layout, and that clang accepts.
const KEPT_FLAGS: &[&str] = &[
    "-nostdinc",
    "-m64",
    "-fshort-wchar",
    "-mno-sse",
    "-mno-sse2",
    "-mno-mmx",
    "-mno-3dnow",
    "-mno-avx",
    "-mno-80387",
    "-mno-red-zone",
    "-mcmodel=kernel",
    "-fno-PIE",
];
