# The verbs suite: libtoruscoll over RDMA verbs, run in a guest over soft-RoCE
# (utils/torus-vm --rxe) with ranks started by mpirun. Built only when the
# library has the verbs transport (lib/lib.mk: TC_HAVE_VERBS).
# bench_mpi, overlap_mpi and oob_mpi are MPI programs: built with $(MPICC) when it exists
# (mpi/mpi.mk sets MPICC and HAVE_MPICC and says what it skips without).
VERBS_MPI_SRCS := tests/verbs/bench_mpi.c tests/verbs/overlap_mpi.c tests/verbs/oob_mpi.c
VERBS_SRCS := $(filter-out $(VERBS_MPI_SRCS),$(wildcard tests/verbs/*.c))
VERBS_BINS := $(patsubst tests/verbs/%.c,$(O)/tests/verbs/%,$(VERBS_SRCS))

.PHONY: check-verbs
ifeq ($(TC_HAVE_VERBS),1)
all: $(VERBS_BINS)
endif
ifneq ($(HAVE_MPICC),)
all: $(O)/tests/verbs/bench_mpi $(O)/tests/verbs/overlap_mpi
ifeq ($(TC_HAVE_VERBS),1)
all: $(O)/tests/verbs/oob_mpi
endif
endif
$(O)/tests/verbs/bench_mpi: tests/verbs/bench_mpi.c tests/verbs/perf_ctl.h
	@mkdir -p $(@D); rm -f $@
	$(MPICC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(TC_LDFLAGS) -o $@ $<
$(O)/tests/verbs/overlap_mpi: tests/verbs/overlap_mpi.c tests/vm/bench_data.h tests/unit/tbyte.h
	@mkdir -p $(@D); rm -f $@
	$(MPICC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(TC_LDFLAGS) -o $@ $<
$(O)/tests/verbs/oob_mpi: tests/verbs/oob_mpi.c $(LIB_A)
	@mkdir -p $(@D); rm -f $@
	$(MPICC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(TC_LDFLAGS) -Iinclude -o $@ $< $(LIB_A) $(LDLIBS_TC)
$(VERBS_BINS): $(O)/tests/verbs/%: tests/verbs/%.c $(LIB_A) $(wildcard tests/unit/*.h tests/verbs/*.h)
	@mkdir -p $(@D); rm -f $@
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)

# build/results/verbs always ends up written; a guest that could not run, or
# whose kernel log shows a problem, adds a failure.
check-verbs:
	-@$(MAKE) -k --no-print-directory $(VERBS_BINS) $(if $(HAVE_MPICC),$(O)/tests/verbs/oob_mpi) 2>&1 | grep -v 'is up to date' || true
	@mkdir -p $(O)/results; rm -f $(O)/results/verbs; \
	 if [ "$(TC_HAVE_VERBS)" != 1 ]; then \
		echo "check-verbs: libtoruscoll built without verbs (libibverbs-dev librdmacm-dev libpmix-dev): one failure"; \
		echo "0 1 0" >$(O)/results/verbs; exit 0; \
	 fi; \
	 utils/torus-vm --rxe --no-module --timeout $(or $(VERBS_TIMEOUT),1800) -- tests/verbs/run-guest $(O)/results/verbs; rc=$$?; \
	 if [ ! -s $(O)/results/verbs ]; then \
		echo "check-verbs: the guest wrote no result (torus-vm status $$rc): counted as one failure"; \
		echo "0 1 0" >$(O)/results/verbs; \
	 elif [ $$rc -ne 0 ]; then \
		read -r p f s <$(O)/results/verbs; \
		[ "$$f" -gt 0 ] || { echo "check-verbs: torus-vm status $$rc with no failing test: counted as one failure"; \
			echo "$$p 1 $$s" >$(O)/results/verbs; }; \
	 fi; \
	 read -r p f s <$(O)/results/verbs; echo "verbs: $$p passed, $$f failed, $$s skipped"; [ "$$f" -eq 0 ]
