# SPDX-License-Identifier: GPL-2.0
#
# Kbuild's compiler probes, remembered: `make KBUILD_PROBE_CACHE=<dir>`
# (module.mk) reads this file into the kernel's make (`--eval`) before
# its Makefile, and it replaces try-run, the probe behind cc-option,
# cc-disable-warning, as-instr and ld-option. Every build of a module runs
# the kernel Makefile's probes again, some 30 compiler runs of /dev/null:
# 0.7-1.3 s of each build on two cores, the same answers every time. Here
# each probe's command is looked up in a file of earlier answers (one
# line each, `y COMMAND` or `n COMMAND`) and run only if it is not there.
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

override try-run = $(shell set -e;		\
	file='$(kbuild-probe-file)';		\
	key='$(subst ','\'',$(strip $(1)))';	\
	said=;					\
	if [ -r "$$file" ]; then		\
		while IFS= read -r line; do	\
			if [ "$${line#? }" = "$$key" ]; then said=$${line%% *}; break; fi; \
		done < "$$file";		\
	fi;					\
	if [ -z "$$said" ]; then		\
		TMP=$(TMPOUT)/tmp;		\
		trap "rm -rf $(TMPOUT)" EXIT;	\
		mkdir -p $(TMPOUT);		\
		if ($(1)) >/dev/null 2>&1; then said=y; else said=n; fi; \
		{ mkdir -p "$${file%/*}" && printf '%s %s\n' "$$said" "$$key" >>"$$file"; } 2>/dev/null || :; \
	fi;					\
	if [ "$$said" = y ]; then echo "$(2)"; else echo "$(3)"; fi)
