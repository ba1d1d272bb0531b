# The cluster suite: two guests (utils/torus-vm --cluster 2) on one virtual
# Ethernet segment with soft-RoCE and Slurm; jobs through srun --mpi=pmix and
# mpirun. Needs the verbs transport (lib/lib.mk: TC_HAVE_VERBS) and the
# verbs suite's programs.
CLUSTER_BINS := $(O)/tests/cluster/cluster_fail

.PHONY: check-cluster
ifeq ($(TC_HAVE_VERBS),1)
all: $(CLUSTER_BINS)
endif
$(CLUSTER_BINS): $(O)/tests/cluster/%: tests/cluster/%.c $(LIB_A) include/toruscoll.h
	@mkdir -p $(@D); rm -f $@
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)

# build/results/cluster always ends up written; a cluster that could not
# start, or a guest whose kernel log shows a problem, adds a failure.
check-cluster:
	-@$(MAKE) -k --no-print-directory $(CLUSTER_BINS) $(VERBS_BINS) 2>&1 | grep -v 'is up to date' || true
	@mkdir -p $(O)/results; rm -f $(O)/results/cluster; \
	 if [ "$(TC_HAVE_VERBS)" != 1 ]; then \
		echo "check-cluster: libtoruscoll built without verbs: one failure"; \
		echo "0 1 0" >$(O)/results/cluster; exit 0; \
	 fi; \
	 utils/torus-vm --cluster 2 --no-module --timeout $(or $(CLUSTER_TIMEOUT),900) -- \
		tests/cluster/run-cluster $(O)/results/cluster; rc=$$?; \
	 if [ ! -s $(O)/results/cluster ]; then \
		echo "check-cluster: the cluster wrote no result (torus-vm status $$rc): counted as one failure"; \
		echo "0 1 0" >$(O)/results/cluster; \
	 elif [ $$rc -ne 0 ]; then \
		read -r p f s <$(O)/results/cluster; \
		[ "$$f" -gt 0 ] || { echo "check-cluster: torus-vm status $$rc with no failing test: counted as one failure"; \
			echo "$$p 1 $$s" >$(O)/results/cluster; }; \
	 fi; \
	 read -r p f s <$(O)/results/cluster; echo "cluster: $$p passed, $$f failed, $$s skipped"; [ "$$f" -eq 0 ]
