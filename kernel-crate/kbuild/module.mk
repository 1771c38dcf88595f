# SPDX-License-Identifier: GPL-2.0
#
# The `make` side of a Rust module directory: `make` builds the module the
# ordinary Kbuild way, against the headers of Debian's current kernel ABI
# (the one linux-headers-amd64 points at, as `make setup` installs).
#
#   make                    build the module (the exercise)
#   make SOLUTION=1         build the reference solution instead
#   make CLIPPY=1           build with clippy, warnings denied
#   make clean

KDIR ?= /usr/src/linux-headers-$(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null \
	| sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')

all:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

.PHONY: all clean
