# check-sanitize: the library, the tools and the unit suite built again with
# AddressSanitizer + UndefinedBehaviorSanitizer in $(O)/asan, and the
# simulator tests (every rank a thread) with ThreadSanitizer in $(O)/tsan;
# then the unit suite, the simulator-driven tools' tests and the simulator
# tests run on those builds (tests/sanitize/run). Any sanitizer report fails
# the lane. Result: $(O)/results/sanitize.
SAN_ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_TSAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
# The simulator tests: the unit programs that run ranks as threads (tc_sim_launch),
# and the part cache's race test.
SAN_TSAN_TESTS := $(patsubst tests/unit/%.c,%,$(shell grep -l tc_sim_launch tests/unit/test_*.c)) test_partcache

# check-sanitize-quick, the part of the lane make check runs (its budget
# allows a few minutes here): ASan + UBSan over the library and the unit
# programs of the collectives, communicators, sub-communicators, the core,
# the direct and Calvin schedules, TSan over the collectives and the
# sub-communicators (rank threads, nonblocking progress) and the part
# cache's race test (threads asking for the same parts). docs/testing.md
# gives both lanes' cost. Result: $(O)/results/sanitize-quick.
SAN_QUICK_ASAN_TESTS := test_colls test_comm test_sub test_core test_direct test_calvin test_dev_handshake
SAN_QUICK_TSAN_TESTS := test_colls test_sub test_partcache

.PHONY: check-sanitize check-sanitize-quick san-build san-build-tsan san-build-quick san-build-tsan-quick
check-sanitize:
	@tests/sanitize/run $(O)
check-sanitize-quick:
	@tests/sanitize/run $(O) quick

# Built by tests/sanitize/run in a sub-make with O=$(O)/asan or $(O)/tsan
# and the flags above; LIB_A, UNIT_BINS, ... are then that tree's.
san-build: $(LIB_A) $(LIB_SO) $(UTIL_BINS) $(UNIT_BINS) $(BENCH_CORRUPT)
san-build-tsan: $(LIB_A) \
	$(addprefix $(O)/tests/unit/,$(SAN_TSAN_TESTS))
san-build-quick: $(LIB_A) $(addprefix $(O)/tests/unit/,$(SAN_QUICK_ASAN_TESTS))
san-build-tsan-quick: $(LIB_A) $(addprefix $(O)/tests/unit/,$(SAN_QUICK_TSAN_TESTS))
