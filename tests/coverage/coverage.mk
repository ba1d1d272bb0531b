# make coverage: line coverage of lib/ under the unit suite (which holds the
# simulator tests: every rank a thread of one process), built again with
# gcc --coverage in $(O)/cov; gcov's JSON read by tests/coverage/run, which
# prints the figure per file and for lib/ and lists the functions of lib/
# that no test reaches ($(O)/cov/report.txt). Not part of make check: a
# figure to read, not a pass/fail line.
COV_CFLAGS := -O0 -g --coverage

.PHONY: coverage cov-build
coverage:
	@tests/coverage/run $(O)

# Built by tests/coverage/run in a sub-make with O=$(O)/cov.
cov-build: $(LIB_A) $(UNIT_BINS)
