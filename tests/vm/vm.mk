# Guest tests: kselftest-harness programs (tests/vm/test_*.c) and the
# library's device test (tests/vm/coll_dev.c) run inside utils/torus-vm with
# torus.ko loaded; bench_*.c are benchmarks, built but not run by check.
# The harness headers come from Debian's linux-source package at build time
# (never committed): extracted once into build/ksft/.
KSFT_TAR ?= $(lastword $(sort $(wildcard /usr/src/linux-source-*.tar.xz)))
KSFT_DIR := $(O)/ksft
KSFT_HDRS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
VM_SRCS := $(wildcard tests/vm/*.c)
VM_BINS := $(patsubst tests/vm/%.c,$(O)/tests/vm/%,$(VM_SRCS))
VM_CFLAGS := $(TC_CFLAGS) -isystem $(KSFT_DIR) -Itests/vm

.PHONY: check-vm ksft-headers
ifneq ($(KSFT_TAR),)
all: $(VM_BINS)
else
all: ksft-headers
endif

ksft-headers: $(KSFT_HDRS)
$(KSFT_HDRS):
	@if [ -z "$(KSFT_TAR)" ]; then echo "note: no /usr/src/linux-source-*.tar.xz (install linux-source-6.1): guest tests not built"; exit 0; fi; \
	 mkdir -p $(KSFT_DIR) && top=$$(basename $(KSFT_TAR) .tar.xz) && \
	 echo "extracting the kselftest harness from $(KSFT_TAR)" && \
	 tar -xJf $(KSFT_TAR) -C $(KSFT_DIR) --strip-components=4 \
		$$top/tools/testing/selftests/kselftest_harness.h $$top/tools/testing/selftests/kselftest.h && \
	 touch $(KSFT_HDRS)

# The driver's own tests, benchmark and demo need only the ABI header (so a
# library build error cannot hide them); other programs (coll_dev) link the
# library. A failed build leaves no stale program behind.
VM_LIBFREE := $(filter $(O)/tests/vm/test_% $(O)/tests/vm/bench_% $(O)/tests/vm/demo_%,$(VM_BINS))
# bench_allgather times tc_allgather: it links the library (added by ag-bench).
# bench_scale is the rank of tests/vm/scale-run: it reads the library's own counters (linked statically).
# bench_overlap and bench_offload_time (tests/vm/bench-offload) time the library's calls.
VM_LIBFREE := $(filter-out $(O)/tests/vm/bench_allgather $(O)/tests/vm/bench_overlap $(O)/tests/vm/bench_offload_time \
	$(O)/tests/vm/bench_scale,$(VM_LIBFREE))
VM_EXPECT := $(O)/tests/vm/.expected
all: $(VM_EXPECT)
$(VM_LIBFREE): $(O)/tests/vm/%: tests/vm/%.c $(wildcard tests/vm/*.h) tests/unit/tbyte.h $(KSFT_HDRS) include/uapi/torus.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(VM_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LDLIBS_TC)

$(filter-out $(VM_LIBFREE),$(VM_BINS)): $(O)/tests/vm/%: tests/vm/%.c $(wildcard tests/vm/*.h) tests/unit/tbyte.h $(KSFT_HDRS) $(LIB_A) include/uapi/torus.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(VM_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)

# The programs run-guest must find (a missing one is a failure there): the
# tests built from tests/vm/*.c and those other fragments add to VM_TESTS
# (tests/stress: fuzz, stress, faults). The list is kept when a program does
# not compile, so run-guest reports it missing instead of running less.
VM_TESTS := $(filter-out $(O)/tests/vm/bench_% $(O)/tests/vm/demo_%,$(VM_BINS))
$(VM_EXPECT): $(VM_SRCS) tests/vm/vm.mk
	@mkdir -p $(@D)
	@echo $(sort $(notdir $(VM_TESTS))) >$@

# The guest run: build/results/vm always ends up written. 2 GiB: tests/vm/scale-run
# runs 256 ranks (about 550 MB of the guest at the peak). When the guest could
# not run, or its kernel log shows a problem, a failure is added to it.
check-vm:
	-@$(MAKE) -k --no-print-directory $(VM_BINS) $(VM_TESTS) $(VM_EXPECT) $(if $(KMOD_READY),$(TORUS_KO)) 2>&1 | grep -v 'is up to date' || true
	@mkdir -p $(O)/results; rm -f $(O)/results/vm; \
	 utils/torus-vm --mem 2048 --timeout $(or $(VM_TIMEOUT),1200) -- tests/vm/run-guest $(O)/results/vm; rc=$$?; \
	 if [ ! -s $(O)/results/vm ]; then \
		echo "check-vm: the guest wrote no result (torus-vm status $$rc): counted as one failure"; \
		echo "0 1 0" >$(O)/results/vm; \
	 elif [ $$rc -ne 0 ]; then \
		read -r p f s <$(O)/results/vm; \
		if [ "$$f" -eq 0 ]; then \
			echo "check-vm: torus-vm failed (status $$rc: kernel log or guest problem): counted as one failure"; \
			echo "$$p 1 $$s" >$(O)/results/vm; \
		fi; \
	 fi; \
	 read -r p f s <$(O)/results/vm; echo "vm: $$p passed, $$f failed, $$s skipped"; [ "$$f" -eq 0 ]
