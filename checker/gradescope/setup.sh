#!/usr/bin/env bash
# Gradescope's image set-up (it runs /autograder/setup.sh once, as root,
# when the autograder is built). On its Ubuntu base images the set-up takes
# the kernel, its headers and their GCC from Debian's archive into the
# cache (book/src/setup.md, hosts). The
# autograder zip holds this file, run_autograder, and the workbook in
# source/. The set-up is the workbook's one bootstrap script (the
# Containerfile's and `make chroot-check`'s), without the book's tools.
set -euo pipefail
cd /autograder/source
.devcontainer/bootstrap.sh NO_BOOK=1
export PATH="$HOME/.cargo/bin:$PATH"
# Built once so each submission only builds itself.
cargo build --quiet --package checker
