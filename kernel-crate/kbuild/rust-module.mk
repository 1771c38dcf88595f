# SPDX-License-Identifier: GPL-2.0
#
# Kbuild fragment that links a Rust crate into a loadable module.
#
# A module directory's Kbuild file sets two variables and includes this file:
#
#   obj-m        := hello.o
#   rust-module  := hello          # the .ko name, as in obj-m
#   rust-package := lab-01         # the Cargo package holding the module's code
#   include $(src)/../../kernel-crate/kbuild/rust-module.mk
#
# A driver outside this repository (drivers/template, `checker new-driver`)
# has a Cargo workspace of its own: its Kbuild also sets
#
#   rust-workspace := $(src)       # the folder of its Cargo.toml
#
# The package is built as a staticlib for x86_64-unknown-none with the
# kernel's code model and the mitigations this kernel is built with
# (retpolines, return thunks). Fat LTO leaves one object holding the crate
# graph; it is linked into <name>.ko with the C helpers it calls. The archive's
# compiler_builtins objects are left out: memcpy and friends come from the
# kernel, and any other builtin the code needs (128-bit division, floats)
# is an undefined symbol that modpost reports at build time.
#
# `make CLIPPY=1` runs clippy first, with warnings denied.

kernel-crate := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
# The Cargo workspace that holds the module's package: this repository's,
# unless the module's Kbuild names its own.
rust-workspace ?= $(abspath $(kernel-crate)/..)
workspace := $(abspath $(rust-workspace))

rust-target := x86_64-unknown-none
rust-profile := kernel
# Each kernel tree gets its own cargo target folder: the kernel crate's
# bindings follow the tree's configuration (the debug kernel's KASAN and
# lockdep change struct layouts), so objects built for one tree must never be
# linked against another. The checker sets `RUST_TARGET_DIR` for the debug
# kernel (target/kernel-debug-<series>, see book/src/debug-kernel.md).
RUST_TARGET_DIR ?= $(workspace)/target
rust-staticlib := $(RUST_TARGET_DIR)/$(rust-target)/$(rust-profile)/lib$(subst -,_,$(rust-package)).a

# Code generation that the kernel requires of every object (see
# arch/x86/Makefile: CONFIG_RETPOLINE, CONFIG_RETHUNK, since 6.9
# CONFIG_MITIGATION_RETPOLINE, CONFIG_MITIGATION_RETHUNK). The -Z flags are
# unstable, hence RUSTC_BOOTSTRAP below; rust-toolchain.toml pins the
# compiler they were checked with. They change the ABI, so `core` is built
# from rust-src with the same flags (-Zbuild-std) rather than taken
# prebuilt; `compiler_builtins` without its `mem` feature leaves memcpy and
# friends to the kernel's own.
# ANCHOR: flags
rust-flags := -Crelocation-model=static -Ccode-model=kernel
# Calls to memcpy and friends that LLVM emits must be direct: module
# relocation does not handle GOT-relative ones (R_X86_64_GOTPCREL).
rust-flags += -Zplt=yes
# Only when the tree is built with them: the debug kernel is not, and has no
# thunks to call. 6.9 renamed the options CONFIG_MITIGATION_*.
rust-flags += $(if $(CONFIG_RETPOLINE)$(CONFIG_MITIGATION_RETPOLINE),-Zretpoline-external-thunk)
rust-flags += $(if $(CONFIG_RETHUNK)$(CONFIG_MITIGATION_RETHUNK),-Zfunction-return=thunk-extern)
# Indirect branch tracking (Debian's 6.12 has it, 6.1 not): every function
# that may be called indirectly starts with ENDBR64, or the CPU faults on
# the call (a file operation, on a CPU with IBT); no jump tables, whose
# NOTRACK jumps kernel IBT refuses.
rust-flags += $(if $(CONFIG_X86_KERNEL_IBT),-Zcf-protection=branch -Cjump-tables=n)
# ANCHOR_END: flags

# ANCHOR: kasan
# KASAN for the Rust code as well, when the tree has it (the debug kernel,
# book/src/debug-kernel.md): what mainline's scripts/Makefile.kasan gives
# rustc, following the tree's options as its C flags do. Inline shadow
# checks (CONFIG_KASAN_INLINE, else calls to __asan_load8 and friends) call
# the kernel's __asan_report_*; stack variables get redzones
# (CONFIG_KASAN_STACK); globals get redzones registered by a module
# constructor (.init_array, which the module loader runs). Aggregate copies
# (`let a: [u8; 64] = *p`) are memcpy intrinsics, which ASan leaves alone
# in kernel mode unless told to call __asan_memcpy & co.
# (-asan-kernel-mem-intrinsic-prefix, as mainline does since 6.3): LLVM
# would otherwise inline them as plain moves, unchecked. A 6.1 kernel has
# no __asan_mem*; the kernel crate's helpers (helpers/kasan.c) define them
# on its checked memcpy. `core` is built with the same flags
# (-Zbuild-std), hence the ABI-mismatch allowance only for
# compiler_builtins, which cargo builds without sanitizers.
rust-kasan-flags := -Zsanitizer=kernel-address -Zsanitizer-recover=kernel-address \
	-Cunsafe-allow-abi-mismatch=sanitizer \
	-Cllvm-args=-asan-mapping-offset=$(CONFIG_KASAN_SHADOW_OFFSET) \
	-Cllvm-args=-asan-instrumentation-with-call-threshold=$(if $(CONFIG_KASAN_INLINE),10000,0) \
	-Cllvm-args=-asan-stack=$(if $(CONFIG_KASAN_STACK),1,0) \
	-Cllvm-args=-asan-globals=1 \
	-Cllvm-args=-asan-kernel-mem-intrinsic-prefix=1
# ANCHOR_END: kasan
rust-flags += $(if $(CONFIG_KASAN_GENERIC),$(rust-kasan-flags))

# The flags Kbuild gives the C compiler for this object; the kernel crate's
# build.rs hands the relevant ones to bindgen. The dependency-file and
# KBUILD_* name flags are per object and would only force rebuilds: the
# crate's build script reruns when KERNEL_CFLAGS changes, so a module's
# name in it (-D__KBUILD_MODNAME=kmod_hello_rust; only init.h's initcall
# names use it, which bindgen does not translate) made every switch to
# another lab run bindgen and rebuild the kernel crate, 8-13 s here.
rust-bindgen-cflags = $(filter-out -Wp% -DKBUILD_% -D__KBUILD_MODNAME=%,$(c_flags))

# The modinfo strings come out of rustc in a `.modinfo` section marked
# SHF_GNU_RETAIN (from `#[used]`), which ld will not merge with the C one
# that holds vermagic; the kernel reads only the first `.modinfo`. The
# strings are therefore moved into a plain `.modinfo` section, after one
# NUL byte: busybox's modinfo only sees a string that follows a NUL, and
# the byte before the section belongs to whatever precedes it in the file.

rust-cargo-args := --quiet --package $(rust-package) \
	--target $(rust-target) --profile $(rust-profile) \
	-Zbuild-std=core,compiler_builtins --target-dir $(RUST_TARGET_DIR)
# `make COMPILE_FAIL=/abs/case.rs`: build the crate with its `compile-fail`
# feature, which includes the case (a lab's compile-fail step, see
# checker/src/run/compilefail.rs); the build is expected to fail.
rust-cargo-args += $(if $(COMPILE_FAIL),--features compile-fail)
# clippy only checks; the build that follows produces the library.
rust-clippy := $(if $(CLIPPY),cargo clippy $(rust-cargo-args) -- -D warnings &&)

# Every input of the crate graph, as cargo's own dep-info file lists it
# after a build: the sources of every crate the module uses, wherever its
# package lives, build scripts and the headers they watch, generated
# bindings. Manifests and the lock file are not in it, so they are added.
# Before the first build there is no list, and no object either. Kbuild
# rebuilds when one of these changes, and cargo decides what to recompile.
rust-dep-info := $(patsubst %.a,%.d,$(rust-staticlib))
rust-sources := $(wildcard $(filter-out %:,$(shell cat $(rust-dep-info) 2>/dev/null)) \
	$(workspace)/Cargo.lock $(workspace)/Cargo.toml \
	$(workspace)/*/Cargo.toml $(workspace)/*/*/Cargo.toml $(workspace)/*/*/*/Cargo.toml)

# Kbuild runs a command under `set -e` and then records it as done, but
# `set -e` ignores a failure inside an `&&` chain: the parentheses and
# `exit 1` make a failed step fail the rule (and remove a stale object).
# ANCHOR: recipe
quiet_cmd_cargo = CARGO   $@
      cmd_cargo = (cd $(workspace) && \
	export RUSTC_BOOTSTRAP=1 \
	CARGO_TARGET_X86_64_UNKNOWN_NONE_RUSTFLAGS="$(rust-flags)" \
	KERNEL_CFLAGS="$(rust-bindgen-cflags)" \
	KERNEL_OBJTREE="$(abspath $(objtree))" \
	COMPILE_FAIL_CASE="$(COMPILE_FAIL)" && \
	$(rust-clippy) cargo build $(rust-cargo-args) && \
	rm -rf $@.objs && mkdir $@.objs && (cd $@.objs && $(AR) x $(rust-staticlib)) && \
	$(LD) -r -o $@.tmp $$(ls $@.objs/*.o | grep -v '/compiler_builtins-') && \
	$(OBJCOPY) -O binary --only-section=.modinfo $@.tmp $@.modinfo.raw && \
	(printf '\0'; cat $@.modinfo.raw) > $@.modinfo && \
	$(OBJCOPY) --remove-section=.llvmbc --remove-section=.llvmcmd \
		--remove-section=.modinfo --add-section .modinfo=$@.modinfo \
		--set-section-flags .modinfo=alloc,readonly,contents $@.tmp $@ && \
	rm -rf $@.tmp $@.objs $@.modinfo $@.modinfo.raw) || \
	{ rm -f $@; exit 1; }
# ANCHOR_END: recipe

$(obj)/$(rust-module)_rust.o: $(rust-sources) FORCE
	$(call if_changed,cargo)

# The C helpers, compiled into the module like any C file of it: only the
# files of helpers/ that define a symbol the Rust object calls
# (kbuild/helpers.sh), so that a module imports only what it uses. The
# file is replaced only when the list changes, which then recompiles it;
# a failure fails the rule, as for cmd_cargo.
quiet_cmd_helpers = GEN     $@
      cmd_helpers = ($(CONFIG_SHELL) $(kernel-crate)/kbuild/helpers.sh "$(NM)" \
	$(obj)/$(rust-module)_rust.o $(kernel-crate)/helpers > $@.tmp && \
	{ cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@; }) || \
	{ rm -f $@ $@.tmp; exit 1; }

$(obj)/kernel_helpers.c: $(obj)/$(rust-module)_rust.o $(kernel-crate)/kbuild/helpers.sh \
		$(wildcard $(kernel-crate)/helpers/*.c) FORCE
	$(call if_changed,helpers)

# Every helper the Rust object does not call is dropped (helpers.sh).
CFLAGS_kernel_helpers.o += $(call cc-option,-fwhole-program)

$(rust-module)-y += $(rust-module)_rust.o kernel_helpers.o
targets += $(rust-module)_rust.o kernel_helpers.c

# objtool cannot follow Rust's code layout; the kernel's own Rust build
# makes the same exception for objects it did not compile as C.
OBJECT_FILES_NON_STANDARD_$(rust-module)_rust.o := y
