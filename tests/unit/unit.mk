# Userspace tests: no module, no VM. Each tests/unit/test_*.c is one TAP program.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRCS))
all: $(UNIT_BINS)
$(O)/tests/unit/%: tests/unit/%.c $(LIB_A) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -Itests/unit -o $@ $< $(LIB_A) $(LDLIBS_TC)
.PHONY: check-unit
# The simulator matches receives as the device does, by (arrival port, tag)
# alone (TC_SIM_MATCH=device; lib/transport/sim.c), so a tag that only its
# source told apart fails here as it would on torus.ko.
check-unit: $(UNIT_BINS) $(LIB_SO)
	@TC_SIM_MATCH=device tests/run-suite $(O)/results/unit $(UNIT_BINS) tests/unit/check-layers tests/unit/check-exports tests/unit/check-algos
# The full opt2d sweep: every r x c torus, 2 <= r, c <= 32, at the bound and
# verified (check-unit runs 2..16 and a spread of larger shapes).
.PHONY: check-opt2d-sweep
check-opt2d-sweep: $(O)/tests/unit/test_opt2d_bound
	@TC_OPT2D_SWEEP=all tests/run-suite $(O)/results/opt2d-sweep $<
