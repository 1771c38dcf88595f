#!/usr/bin/env bash
# The workbook's set-up from nothing on Debian 13 (or 12), or Ubuntu, x86-64: the one
# script behind the Containerfile, the dev container (devcontainer.json),
# Gradescope's setup.sh and `make chroot-check` (which runs it on a fresh
# debootstrap trixie root). Idempotent: a second run only checks.
#
#   .devcontainer/bootstrap.sh            then `make setup`
#   .devcontainer/bootstrap.sh NO_BOOK=1  `make setup NO_BOOK=1`: without the
#                                         book's tools (mdbook, npm tools)
#
# 1. What rustup and make need, with apt-get (sudo when not root).
# 2. rustup, when there is no cargo; rust-toolchain.toml names the toolchain.
# 3. `make setup`: everything else (QEMU, clang, kernel headers, the guest
#    kernel, the toolchain's components, the book's tools).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
sudo=
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi

missing=()
for p in ca-certificates curl git make gcc libc6-dev; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "bootstrap: apt-get install ${missing[*]}"
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
	echo "bootstrap: installing rustup"
	curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
		sh -s -- -y --profile minimal --default-toolchain none
	rustup toolchain install # the toolchain of rust-toolchain.toml
fi
echo "bootstrap: cargo $(cargo --version | cut -d' ' -f2); make setup $*"
make setup "$@"
