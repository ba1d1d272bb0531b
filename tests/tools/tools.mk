# The tools' tests: no module, no VM. Each tests/tools/test-* is a TAP script
# run against the tools built in build/bin (tests/tools/guest-tools runs in
# the guest, from tests/vm/run-guest).
TOOLS_TESTS := $(sort $(wildcard tests/tools/test-*))
.PHONY: check-tools
check-tools: $(UTIL_BINS) $(EXAMPLE_BINS)
	@tests/run-suite $(O)/results/tools $(TOOLS_TESTS)
