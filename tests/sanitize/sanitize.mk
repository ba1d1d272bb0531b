# check-sanitize: the library, the tools and the unit suite built again with
# AddressSanitizer + UndefinedBehaviorSanitizer in $(O)/asan, and the
# simulator tests (every rank a thread) with ThreadSanitizer in $(O)/tsan;
# then the unit suite, the simulator-driven tools' tests and the simulator
# tests run on those builds (tests/sanitize/run). Any sanitizer report fails
# the lane. Result: $(O)/results/sanitize.
SAN_ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_TSAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
# The simulator tests: the unit programs that run ranks as threads (tc_sim_launch).
SAN_TSAN_TESTS := $(patsubst tests/unit/%.c,%,$(shell grep -l tc_sim_launch tests/unit/test_*.c))

.PHONY: check-sanitize san-build san-build-tsan
check-sanitize:
	@tests/sanitize/run $(O)

# Built by tests/sanitize/run in a sub-make with O=$(O)/asan or $(O)/tsan
# and the flags above; LIB_A, UNIT_BINS, ... are then that tree's.
san-build: $(LIB_A) $(LIB_SO) $(UTIL_BINS) $(UNIT_BINS)
san-build-tsan: $(LIB_A) \
	$(addprefix $(O)/tests/unit/,$(SAN_TSAN_TESTS))
