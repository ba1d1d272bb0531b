# SPDX-License-Identifier: GPL-2.0
# torus: torus.ko, libtoruscoll, tools and tests.
#   make            build everything buildable here (module if kernel headers exist)
#   make check      install dependencies, build, run every suite, print one summary line
#   make demo       install dependencies, build, load the module (in a VM if needed), run collectives
# Each directory owns a fragment: lib/lib.mk, utils/utils.mk, kmod/kmod.mk,
# tests/unit/unit.mk, tests/vm/vm.mk, tests/stress/stress.mk, tests/tools/tools.mk,
# tests/lint/lint.mk,
# examples/examples.mk, mpi/mpi.mk, tests/mpi/mpi.mk, tests/sanitize/sanitize.mk,
# tests/coverage/coverage.mk.
#   make install    PREFIX (default /usr/local) and DESTDIR as usual; make uninstall

CC ?= gcc
O := build
WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# Private headers are named by their path below lib/ ("core/sched.h"); -iquote keeps
# them out of the way of system headers.
# CPPFLAGS and LDFLAGS (distribution hardening) reach every compile and link line.
TC_CFLAGS := $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -iquote lib -pthread
TC_LDFLAGS := $(LDFLAGS)
LDLIBS_TC := -pthread -lm
# make -n: recipe lines that run $(MAKE) execute even under -n; those that
# call another make with MAKEFLAGS cleared pass this on so they stay dry.
DRYRUN := $(if $(findstring n,$(firstword -$(MAKEFLAGS))),-n)

.PHONY: all check demo clean deps install uninstall
all:

deps:
	@utils/torus-deps

include lib/lib.mk
include utils/utils.mk
include kmod/kmod.mk
include tests/unit/unit.mk
include tests/vm/vm.mk
include tests/stress/stress.mk
include tests/tools/tools.mk
include tests/lint/lint.mk
include examples/examples.mk
include mpi/mpi.mk
include tests/mpi/mpi.mk
include tests/verbs/verbs.mk
include tests/cluster/cluster.mk
include tests/sanitize/sanitize.mk
include tests/coverage/coverage.mk

# check: every suite runs even if an earlier one fails; the last line sums them.
# Each suite's output is kept in build/results/SUITE.log, and the failing test
# points are printed again above the last line, so the tail of a long run
# names what failed.
# A build error in one file must not hide the other suites: build what
# builds (-k); a suite whose programs did not build reports failures.
check: deps
	-@$(MAKE) -k --no-print-directory all
	@rm -rf $(O)/results && mkdir -p $(O)/results
	-@for s in unit tools lint sanitize-quick vm verbs mpi cluster debug-warm; do \
		$(MAKE) --no-print-directory check-$$s 2>&1 | tee $(O)/results/$${s%-warm}.log; \
	 done
	@tests/summarize --logs $(O)/results unit tools lint sanitize-quick vm verbs mpi cluster debug

# demo: deps, a quiet build (build/demo/build.log), load torus.ko with a 4x4
# torus (in a guest when this host cannot load modules), messages on every
# port, then torus-bench under torusrun for alltoall and allgather: one table,
# two plots in build/demo/, one closing line (utils/torus-demo --help).
demo:
	@utils/torus-demo

clean:
	rm -rf $(O)
	-$(MAKE) --no-print-directory clean-kmod

