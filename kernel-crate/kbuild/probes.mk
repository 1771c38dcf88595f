# SPDX-License-Identifier: GPL-2.0
#
# Kbuild's compiler probes, remembered: `make KBUILD_PROBE_CACHE=<dir>`
# (module.mk) reads this file into the kernel's make (`--eval`) before
# its Makefile, and it replaces try-run, the probe behind cc-option,
# cc-disable-warning, as-instr and ld-option. Every build of a module runs
# the kernel Makefile's probes again, some 30 compiler runs of /dev/null:
# 0.7-1.3 s of each build on two cores, the same answers every time. Here
# each probe's command is looked up in a file of earlier answers, in make
# itself, and run only if it is not there.
#
# The file is named after the compiler and linker binaries (inode, size,
# time; an upgrade makes a new file) and the kernel tree, so an answer is
# only reused for the same tools and tree; the command itself holds the
# flags. The checker sets KBUILD_PROBE_CACHE for `checker lab` and
# `watch` only (under the workspace's target/): never for grading, where
# one submission's build must not answer for another's.

# The file, decided at the first probe (CC and LD are set by then), once.
kbuild-probe-file = $(eval kbuild-probe-file := $(KBUILD_PROBE_CACHE)/probes-$(firstword $(shell \
	{ ls -lLi --time-style=+%s $$(command -v $(firstword $(CC)) $(firstword $(LD))); \
	echo '$(CC) $(LD) $(abspath $(srctree))'; } 2>/dev/null | cksum)))$(kbuild-probe-file)

# Its answers, read once: one word a line (`y^COMMAND`, the command's
# spaces made `^`), looked up with filter, no process started.
kbuild-probe-words = $(eval kbuild-probe-words := $$(strip $$(if $$(wildcard $(kbuild-probe-file)),$\
	$$(file <$(kbuild-probe-file)))))$(kbuild-probe-words)

# Whether new answers can be written there (else they are not kept).
kbuild-probe-writable = $(eval kbuild-probe-writable := $(shell mkdir -p $(KBUILD_PROBE_CACHE) \
	2>/dev/null && test -w $(KBUILD_PROBE_CACHE) && echo y))$(kbuild-probe-writable)

kbuild-probe-empty :=
kbuild-probe-space := $(kbuild-probe-empty) $(kbuild-probe-empty)

# $(call kbuild-probe,COMMAND,KEY): y or n, the answer kept for KEY, else
# COMMAND's, run now (as try-run does) and kept.
kbuild-probe = $(or $(firstword $(subst ^, ,$(firstword $(filter \
	y^$(subst %,\%,$(2)) n^$(subst %,\%,$(2)),$(kbuild-probe-words))))),$\
	$(call kbuild-probe-keep,$(call kbuild-probe-run,$(1)),$(2)))

kbuild-probe-run = $(shell set -e;		\
	TMP=$(TMPOUT)/tmp;			\
	trap "rm -rf $(TMPOUT)" EXIT;		\
	mkdir -p $(TMPOUT);			\
	if ($(1)) >/dev/null 2>&1; then echo y; else echo n; fi)

kbuild-probe-keep = $(if $(kbuild-probe-writable),$(file >>$(kbuild-probe-file),$(1)^$(2)))$(1)

override try-run = $(if $(filter y,$(call kbuild-probe,$(1),$\
	$(subst $(kbuild-probe-space),^,$(strip $(1))))),$(2),$(3))
