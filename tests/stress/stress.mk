# Reliability lane (issue 7): fuzzer, stress tests, debug-kernel lane (check-debug).
# The fuzzer and the stress test run inside the guest with the other guest
# tests: they are built into $(O)/tests/vm/, where tests/vm/run-guest runs
# every executable.
STRESS_BINS := $(O)/tests/vm/fuzz $(O)/tests/vm/stress
STRESS_CFLAGS := $(TC_CFLAGS) -Itests/vm

all: $(STRESS_BINS)

$(O)/tests/vm/fuzz: tests/stress/fuzz.c include/uapi/torus.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(STRESS_CFLAGS) -o $@ $< $(LDLIBS_TC)

$(O)/tests/vm/stress: tests/stress/stress.c tests/vm/torus_util.h include/uapi/torus.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(STRESS_CFLAGS) -o $@ $< $(LDLIBS_TC)

.PHONY: check-debug
