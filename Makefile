# netswap: safe swap over NBD for Debian's linux-source-6.1.
#
#   make demo     install what is missing, build, boot, swap over NBD, summarise
#   make test     the test suite (what CI runs); ends with "N passed, N failed"
#
# Other targets: deps, tools, initramfs, kernel VARIANT=..., kernels, test-long, lint,
# experiment, need, mutate, bench, bench-icount, bench-swap, bench-swap-profile, check-patches,
# clean, distclean, help.
#   check-build  gcc W=1, sparse, clang builds of what the series touches, after each patch
# Settings (environment or make VAR=...):
#   NETSWAP_CACHE  where the kernel tree, builds and ccache live (~/.cache/netswap)
#   VARIANT        kernel variant for demo/kernel (series; see rig/variants/)
#   SCENARIO       scenario for demo (seed; see rig/scenarios/)
#   RUNS           runs per configuration for `make experiment` and `make need` (5)

SHELL := /bin/bash
VARIANT ?= series
SCENARIO ?= seed
RUNS ?= 5
RUN := rig/netswap-run

.PHONY: help deps tools initramfs kernel kernels demo test test-long lint experiment need mutate bench bench-icount bench-swap bench-swap-profile check-patches clean distclean

help:
	@sed -n '2,15p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@scripts/deps.sh

tools: deps
	@$(MAKE) -s -C tools

initramfs: tools
	@guest/build-initramfs.sh >/dev/null

kernel: deps
	@rig/kernel.sh $(VARIANT)

kernels: deps
	@for v in stock baseline series; do rig/kernel.sh $$v || exit 1; done

demo: deps
	@$(RUN) run $(SCENARIO) --set variant=$(VARIANT) --summary

test: deps
	@test/run.sh

# Cases kept out of make test's 60-minute budget (test/long/; ~5 min each)
test-long: deps
	@test/run.sh --long

# shellcheck on every shell file, flake8 on the rig (test/cases/00-lint.sh runs it first in make test)
lint: deps
	@scripts/lint.sh

# The seed experiment A/B: baseline, stock and series on virtio-net and e1000.
# A fresh seed-ab.jsonl each time (the previous one is kept under out/); the
# tables go to seed-ab-tables.md, the prose of seed-ab.md is written by hand.
experiment: deps
	@mkdir -p docs/results out
	@[ ! -f docs/results/seed-ab.jsonl ] || mv docs/results/seed-ab.jsonl out/seed-ab.$$(date +%Y%m%d-%H%M%S).jsonl
	@$(RUN) run seed --matrix variant=baseline,stock,series --matrix nic=virtio-net,e1000 \
		--runs $(RUNS) --results docs/results/seed-ab.jsonl
	@$(RUN) report docs/results/seed-ab.jsonl --runs > docs/results/seed-ab-tables.md
	@echo "tables: docs/results/seed-ab-tables.md (update the prose in docs/results/seed-ab.md)"

# The need on unmodified 6.1, no test fixture (~5 min per run): the seed
# workload while the host floods an ordinary guest UDP socket with a 64 MB
# receive buffer that nobody reads; stock vs series, virtio-net and e1000
# -> docs/results/need.jsonl, need-tables.md
need: deps
	@mkdir -p docs/results out
	@[ ! -f docs/results/need.jsonl ] || mv docs/results/need.jsonl out/need.$$(date +%Y%m%d-%H%M%S).jsonl
	@$(RUN) run seed-flood --matrix variant=stock,series --matrix nic=virtio-net,e1000 \
		--runs $(RUNS) --results docs/results/need.jsonl
	@$(RUN) report docs/results/need.jsonl --runs > docs/results/need-tables.md
	@echo "tables: docs/results/need-tables.md (update the prose in docs/results/need.md)"

# Network overhead, swap cost, scaling (~1 h; BENCH_QUICK=1: minutes)
bench: deps
	@$(RUN) bench $(if $(filter 1,$(BENCH_QUICK)),--quick,)

# The network table and the fast paths' per-call costs under instruction
# counting, stock vs series, and the same network runs on TCG wall clock
# (~2 h; BENCH_QUICK=1: ~15 min; BENCH_BOOTS, BENCH_FASTPATH_BOOTS,
# BENCH_WALL_BOOTS) -> docs/results/bench-icount.*
bench-icount: deps
	@$(RUN) bench --icount $(if $(filter 1,$(BENCH_QUICK)),--quick,)

# Where an NBD-swapped page's time goes: local disk vs NBD on user networking
# and the tap, -C 1/2/4, page-cluster 0; guest CPU, block-layer latency, host
# CPU (~8 min measured; BENCH_REPS, default 3) -> docs/results/bench-swap.*
bench-swap: deps
	@$(RUN) bench --swap

# Where that page's guest CPU goes, per function and layer (tools/kprof in the
# guest): local disk vs NBD on the tap, -C 1, profiler on and off (BENCH_REPS,
# default 3) -> docs/results/swap-profile.*
bench-swap-profile: deps
	@$(RUN) bench --swap-profile

# Remove each mechanism in turn, show that its test fails (~40 min).
mutate: deps
	@test/mutations/run.sh

check-patches: deps
	@scripts/check-patches.sh

# gcc W=1, sparse (C=1) and clang W=1 under allmodconfig for x86_64, i386 and
# arm64: the objects and directories the series touches, after each patch, no
# warning that pristine 6.1 lacks (PATCHES=DIR for another series)
# -> docs/results/check-build.md
.PHONY: check-build
check-build: deps
	@scripts/check-build.sh $(if $(PATCHES),--patches $(PATCHES),)

clean:
	rm -rf out
	$(MAKE) -s -C tools clean

distclean: clean
	@echo "removing $${NETSWAP_CACHE:-$$HOME/.cache/netswap}"
	rm -rf "$${NETSWAP_CACHE:-$$HOME/.cache/netswap}"
