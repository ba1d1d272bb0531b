# libtorusmpi: the PMPI drop-in (LD_PRELOAD=libtorusmpi.so or -ltorusmpi) that
# runs an unchanged MPI program's collectives on libtoruscoll. Built when an
# MPI compiler wrapper is present (Debian: libopenmpi-dev). It uses only the
# public include/toruscoll.h and links the shared libtoruscoll, found next to
# it ($ORIGIN) in build/lib and in the installed LIBDIR.
MPICC ?= mpicc
HAVE_MPICC := $(shell command -v $(MPICC) 2>/dev/null)
TM_SRCS := $(wildcard mpi/*.c)
TM_OBJS := $(patsubst mpi/%.c,$(O)/mpi/%.o,$(TM_SRCS))
TM_SO := $(O)/lib/libtorusmpi.so.1
TM_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -fPIC -fvisibility=hidden -pthread

.PHONY: install-mpi
ifneq ($(HAVE_MPICC),)
all: $(TM_SO)
install: install-mpi
else
all:
	@echo "note: no $(MPICC) (install libopenmpi-dev): not built: libtorusmpi, tests/mpi, tests/verbs/bench_mpi and oob_mpi"
endif

$(O)/mpi/%.o: mpi/%.c mpi/torusmpi.h include/toruscoll.h
	@mkdir -p $(@D)
	$(MPICC) $(TM_CFLAGS) -c -o $@ $<

$(TM_SO): $(TM_OBJS) $(LIB_SO)
	@mkdir -p $(@D)
	$(MPICC) -shared -Wl,-soname,libtorusmpi.so.1 -Wl,-z,defs -Wl,-rpath,'$$ORIGIN' -o $@ $(TM_OBJS) \
		-L$(O)/lib -l:libtoruscoll.so.1 -pthread
	ln -sf libtorusmpi.so.1 $(O)/lib/libtorusmpi.so

install-mpi: $(TM_SO) install-lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(TM_SO) $(DESTDIR)$(LIBDIR)/libtorusmpi.so.1
	ln -sf libtorusmpi.so.1 $(DESTDIR)$(LIBDIR)/libtorusmpi.so
	install -m 0644 man/man7/libtorusmpi.7 $(DESTDIR)$(MANDIR)/man7/libtorusmpi.7

.PHONY: uninstall-mpi
uninstall: uninstall-mpi
uninstall-mpi:
	rm -f $(DESTDIR)$(LIBDIR)/libtorusmpi.so.1 $(DESTDIR)$(LIBDIR)/libtorusmpi.so \
		$(DESTDIR)$(MANDIR)/man7/libtorusmpi.7
