# SPDX-License-Identifier: GPL-2.0
#
# The `make` side of a Rust module directory: `make` builds the module the
# ordinary Kbuild way, against the headers of Debian's current kernel ABI
# (the one linux-headers-amd64 points at, as `make setup` installs). The
# checker passes KDIR; without it, the checker is asked (`checker kdir`).
#
#   make                    build the module (the exercise)
#   make SOLUTION=1         build the reference solution instead
#   make CLIPPY=1           build with clippy, warnings denied
#   make clean

WORKBOOK := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
ifndef KDIR
KDIR := $(shell cargo run --quiet --manifest-path $(WORKBOOK)/Cargo.toml --package checker -- kdir $(if $(GUEST),--guest $(GUEST)))
endif
# `make GUEST=6.12`: another guest kernel series (see the checker's
# `--guest`), whose Rust objects go to a cargo target folder of their own.
ifneq ($(filter-out 6.1,$(GUEST)),)
RUST_TARGET_DIR ?= $(WORKBOOK)/target/guest-$(GUEST)
export RUST_TARGET_DIR
endif

# BTF for modules (6.12's CONFIG_DEBUG_INFO_BTF_MODULES, whose headers
# ship the vmlinux it needs) would need pahole on the host; nothing here
# reads a module's BTF.
kbuild-args := M=$(CURDIR) CONFIG_DEBUG_INFO_BTF_MODULES=
# `make KBUILD_PROBE_CACHE=<dir>`: the kernel Makefile's compiler probes
# answered from <dir> (probes.mk; the checker's lab and watch runs).
ifneq ($(KBUILD_PROBE_CACHE),)
kbuild-args += --eval='include $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/probes.mk'
endif

all:
	$(MAKE) -C $(KDIR) $(kbuild-args) modules

clean:
	$(MAKE) -C $(KDIR) $(kbuild-args) clean

.PHONY: all clean
