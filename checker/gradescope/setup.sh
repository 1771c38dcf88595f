#!/usr/bin/env bash
# Gradescope's image set-up (it runs /autograder/setup.sh once, as root,
# when the autograder is built). The workbook needs Debian 12 (its kernel
# headers and guest kernel): use a Debian 12 based image. The autograder
# zip holds this file, run_autograder, and the workbook in source/.
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends ca-certificates curl git make gcc libc6-dev
curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain none
export PATH="$HOME/.cargo/bin:$PATH"
cd /autograder/source
# Everything a lab run needs, built once so each submission only builds itself.
cargo run --quiet --package checker -- setup --no-book
cargo build --quiet --package checker
