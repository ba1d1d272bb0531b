# MPI guest tests: plain MPI programs (tests/mpi/*.c, built with mpicc, no
# torus header), run inside utils/torus-vm --rxe by tests/mpi/run-guest at 4
# and 16 ranks with and without LD_PRELOAD=libtorusmpi.so, on the device and
# over verbs; the results file build/results/mpi holds "passed failed
# skipped" like the other suites.
MPI_TEST_SRCS := $(wildcard tests/mpi/*.c)
MPI_TEST_BINS := $(patsubst tests/mpi/%.c,$(O)/tests/mpi/%,$(MPI_TEST_SRCS))

.PHONY: check-mpi
ifneq ($(HAVE_MPICC),)
all: $(MPI_TEST_BINS)
endif

$(O)/tests/mpi/%: tests/mpi/%.c
	@mkdir -p $(@D); rm -f $@
	$(MPICC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -o $@ $<

# The guest run (module: a 4x4 torus, 4 MiB matrices; soft-RoCE rxe0 for the
# verbs cases). build/results/mpi is always written; a guest that did not
# run, or whose kernel log shows a problem, adds a failure.
check-mpi:
	-@$(MAKE) -k --no-print-directory $(MPI_TEST_BINS) $(TM_SO) $(if $(KMOD_READY),$(TORUS_KO)) 2>&1 | grep -v 'is up to date' || true
	@mkdir -p $(O)/results; rm -f $(O)/results/mpi; \
	 if [ -z "$(HAVE_MPICC)" ]; then echo "check-mpi: no $(MPICC): one skip"; echo "0 0 1" >$(O)/results/mpi; exit 0; fi; \
	 utils/torus-vm --rxe --timeout $(or $(MPI_TIMEOUT),1800) --module-args "dims=4,4 matrix_bytes=4194304" -- \
		env MPI_VERBS=$(if $(filter 1,$(TC_HAVE_VERBS)),1,0) tests/mpi/run-guest $(O)/results/mpi; rc=$$?; \
	 if [ ! -s $(O)/results/mpi ]; then \
		echo "check-mpi: the guest wrote no result (torus-vm status $$rc): counted as one failure"; \
		echo "0 1 0" >$(O)/results/mpi; \
	 elif [ $$rc -ne 0 ]; then \
		read -r p f s <$(O)/results/mpi; \
		if [ "$$f" -eq 0 ]; then \
			echo "check-mpi: torus-vm failed (status $$rc): counted as one failure"; \
			echo "$$p 1 $$s" >$(O)/results/mpi; \
		fi; \
	 fi; \
	 read -r p f s <$(O)/results/mpi; echo "mpi: $$p passed, $$f failed, $$s skipped"; [ "$$f" -eq 0 ]
