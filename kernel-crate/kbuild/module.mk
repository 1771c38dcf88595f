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

ifndef KDIR
WORKBOOK := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
KDIR := $(shell cargo run --quiet --manifest-path $(WORKBOOK)/Cargo.toml --package checker -- kdir)
endif

all:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

.PHONY: all clean
