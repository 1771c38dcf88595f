# The front door. Every target calls into the checker (checker/), which
# installs what is missing first; see README.md.
#
#   make lab-01               build, boot and grade your lab 01
#   make lab-01 SOLUTION=1    the same for the reference solution
#   make test                 everything CI runs
#   make setup                install what the labs and the book need
#   make book                 build the book to book/build/html

export PATH := $(HOME)/.cargo/bin:$(PATH)

CHECKER := cargo run --quiet --package checker --
LABS := $(sort $(notdir $(wildcard labs/lab-[0-9]*)))

.PHONY: all setup book test host-test clippy fmt-check kernel-clippy verify clean

all:
	@echo "usage: make lab-NN [SOLUTION=1] | make test | make book | make setup"

setup:
	$(CHECKER) setup

lab-%:
	$(CHECKER) lab $@ $(if $(SOLUTION),--solution)

book:
	$(CHECKER) setup
	mdbook build

test: setup host-test clippy fmt-check book kernel-clippy verify

host-test:
	cargo test --quiet

clippy:
	cargo clippy --all-targets --quiet -- -D warnings

fmt-check:
	cargo fmt --all --check

# The kernel crate and every lab's solution, through Kbuild with clippy.
kernel-clippy:
	$(CHECKER) setup --no-book
	@set -e; for lab in $(LABS); do \
		echo "clippy: $$lab (solution)"; \
		$(MAKE) --no-print-directory -s -C labs/$$lab SOLUTION=1 CLIPPY=1; \
	done

# Every lab's reference solution must pass and its skeleton must fail.
verify:
	$(CHECKER) verify

clean:
	cargo clean
	rm -rf book/build
	@for lab in $(LABS); do $(MAKE) -s -C labs/$$lab clean; done
