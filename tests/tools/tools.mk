# The tools' tests: no module, no VM. Each tests/tools/test-* is a TAP script
# run against the tools built in build/bin (tests/tools/guest-tools runs in
# the guest, from tests/vm/run-guest).
TOOLS_TESTS := $(sort $(wildcard tests/tools/test-*))
.PHONY: check-tools
check-tools: $(UTIL_BINS) $(EXAMPLE_BINS)
	@tests/run-suite $(O)/results/tools $(TOOLS_TESTS)

# torus-bench linked with a tc_alltoall that gets one byte wrong
# (tests/tools/bench-corrupt.c): test-bench shows the bench's own byte check
# finds it in any call and reports it without the library.
BENCH_CORRUPT := $(O)/tests/tools/torus-bench-corrupt
$(BENCH_CORRUPT): $(wildcard utils/torus-bench/*.c utils/torus-bench/*.h) tests/tools/bench-corrupt.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -Wl,--wrap=tc_alltoall -o $@ $(wildcard utils/torus-bench/*.c) \
		tests/tools/bench-corrupt.c $(LIB_A) $(LDLIBS_TC)
check-tools: $(BENCH_CORRUPT)
