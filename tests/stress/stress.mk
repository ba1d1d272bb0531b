# Reliability lane: fuzzer, stress tests, debug-kernel lane (check-debug).
# The fuzzer and the stress test run inside the guest with the other guest
# tests: they are built into $(O)/tests/vm/, where tests/vm/run-guest runs
# every executable.
STRESS_BINS := $(O)/tests/vm/fuzz $(O)/tests/vm/stress $(O)/tests/vm/faults
STRESS_CFLAGS := $(TC_CFLAGS) -Itests/vm

all: $(STRESS_BINS)
# run-guest must find them (tests/vm/vm.mk): one that did not build is a failure.
VM_TESTS += $(STRESS_BINS)
$(VM_EXPECT): tests/stress/stress.mk

$(O)/tests/vm/fuzz: tests/stress/fuzz.c include/uapi/torus.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(STRESS_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LDLIBS_TC)

$(O)/tests/vm/stress: tests/stress/stress.c tests/vm/torus_util.h include/uapi/torus.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(STRESS_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LDLIBS_TC)

# faults drives the library over the device: it links libtoruscoll.
$(O)/tests/vm/faults: tests/stress/faults.c tests/vm/torus_util.h tests/unit/tbyte.h include/uapi/torus.h $(LIB_A)
	@mkdir -p $(@D); rm -f $@
	$(CC) $(STRESS_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)

.PHONY: check-debug check-debug-warm debug-kernel fuzz-campaign

# A fuzzing campaign in one guest: make fuzz-campaign SEEDS=500 MINUTES=60
# [FIRST_SEED=1] [CALLS=20000] [KERNEL=debug]. Each seed runs the fuzzer
# (programs included) for CALLS calls; the campaign stops after SEEDS seeds
# or MINUTES minutes, whichever comes first, and says how many ran. With
# KERNEL=debug it runs on the cached debug kernel (make debug-kernel builds
# it). Not part of make check: a campaign is hundreds of seeds.
SEEDS ?= 500
MINUTES ?= 60
FIRST_SEED ?= 1
CALLS ?= 20000
fuzz-campaign: $(O)/tests/vm/fuzz
	@if [ "$(KERNEL)" = debug ]; then \
		paths=$$(utils/torus-kbuild --print) || { echo "fuzz-campaign: no debug kernel (make debug-kernel)" >&2; exit 1; }; \
		eval "$$paths"; \
		utils/torus-vm --kernel "$$KERNEL" --modules "$$MODULES" --kdir "$$KDIR" --mem 2048 \
			--timeout $$(( $(MINUTES) * 60 + 600 )) \
			-- tests/stress/fuzz-campaign $(FIRST_SEED) $(SEEDS) $(MINUTES) $(CALLS); \
	else \
		utils/torus-vm --timeout $$(( $(MINUTES) * 60 + 300 )) \
			-- tests/stress/fuzz-campaign $(FIRST_SEED) $(SEEDS) $(MINUTES) $(CALLS); \
	fi

# The debug-kernel lane: build (once; cached under /var/cache/torus-kbuild,
# keyed by the linux-source version and the option list) a KASAN + lockdep +
# kmemleak + failslab kernel, build torus.ko against it (torus-vm --kdir puts
# it in build/kmod-<release>/), and run the whole guest suite on it, then a
# kmemleak scan. Any KASAN/lockdep/kmemleak/WARN/BUG report fails the run.
# DEBUG_TIMEOUT bounds the guest (seconds); DEBUG_PROGS="build/tests/vm/fuzz
# build/tests/vm/stress" runs only those programs instead of the whole suite.
# check-debug installs what the debug kernel's build needs first
# (utils/torus-deps --debug-kernel: flex, bison, libelf-dev, ...).
debug-kernel:
	@utils/torus-deps --debug-kernel
	@utils/torus-kbuild

# What `make check` runs on the debug kernel when its cache is warm: the
# driver's reliability programs (kselftest ABI, traffic and unload tests, the
# fuzzer, the stress tests with failslab, the fault knobs through the
# library, the library's zero-copy collectives pinning user memory), then the
# kmemleak scan. test_fabric and the other collectives over the device run in
# the stock-kernel guest suite; `make check-debug` runs the whole guest suite
# on the debug kernel.
DEBUG_CHECK_PROGS := $(addprefix $(O)/tests/vm/,test_abi test_traffic test_mr test_prog test_unload fuzz stress faults zcopy_dev)

check-debug-warm:
	@if utils/torus-kbuild --check; then \
		$(MAKE) --no-print-directory check-debug DEBUG_PROGS="$(DEBUG_CHECK_PROGS)" DEBUG_TIMEOUT=1500; \
	else \
		echo "check-debug: skipped: no debug kernel is cached (make debug-kernel builds one, about 10 min; .ci/run does when time allows)"; \
		mkdir -p $(O)/results; echo "0 0 1" >$(O)/results/debug; \
	fi

check-debug:
	@utils/torus-deps --debug-kernel
	-@$(MAKE) -k --no-print-directory $(VM_BINS) $(VM_EXPECT) $(STRESS_BINS)
	@mkdir -p $(O)/results; rm -f $(O)/results/debug; \
	 t0=$$(date +%s); \
	 paths=$$(utils/torus-kbuild --print) || { echo "check-debug: utils/torus-kbuild failed"; echo "0 1 0" >$(O)/results/debug; }; \
	 t1=$$(date +%s); \
	 if [ -n "$$paths" ]; then \
		eval "$$paths"; \
		echo "check-debug: debug kernel $$KERNEL (ready in $$((t1 - t0)) s)"; \
		TORUS_VM_ALLOW_ALLOC_FAIL=1 utils/torus-vm --kernel "$$KERNEL" --modules "$$MODULES" --kdir "$$KDIR" \
			--mem 2048 --timeout $(or $(DEBUG_TIMEOUT),3600) \
			-- tests/stress/debug-guest $(O)/results/debug $(DEBUG_PROGS); rc=$$?; \
		echo "check-debug: guest run $$(( $$(date +%s) - t1 )) s, torus-vm status $$rc"; \
		if [ ! -s $(O)/results/debug ]; then \
			echo "check-debug: the guest wrote no result: counted as one failure"; \
			echo "0 1 0" >$(O)/results/debug; \
		elif [ $$rc -ne 0 ]; then \
			read -r p f s <$(O)/results/debug; \
			if [ "$$f" -eq 0 ]; then \
				echo "check-debug: torus-vm failed (status $$rc: the kernel log shows a KASAN/lockdep/kmemleak/WARN/BUG report, or the guest failed): counted as one failure"; \
				echo "$$p 1 $$s" >$(O)/results/debug; \
			fi; \
		fi; \
	 fi
	@tests/summarize $(O)/results debug
