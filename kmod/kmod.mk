# torus.ko, built out of tree with the top-level Kbuild (object list there).
#   KDIR     kernel build tree; default the running kernel's, else the newest
#            Debian linux-headers-*-amd64 installed under /usr/src (the version
#            is read from /usr/src, never hard-coded). Override: make KDIR=...
#   TORUS_KO where the built module is copied (default build/torus.ko).
# `make` (all) builds the module only when a kernel build tree exists and the
# driver sources are present; otherwise it says so and goes on, so the library
# and tools still build on machines without kernel headers.
KDIR_RUNNING := /lib/modules/$(shell uname -r)/build
KDIR_DEBIAN := $(lastword $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V))
KDIR ?= $(or $(patsubst %/Makefile,%,$(wildcard $(KDIR_RUNNING)/Makefile)),$(KDIR_DEBIAN))
TORUS_KO ?= $(O)/torus.ko
KMOD_SRCS := $(wildcard kmod/*.c kmod/*.h include/uapi/*.h)
KMOD_READY := $(and $(KDIR),$(wildcard $(KDIR)/Makefile),$(wildcard Kbuild),$(wildcard kmod/*.c))

.PHONY: modules clean-kmod kmod-info
ifneq ($(KMOD_READY),)
all: $(TORUS_KO)
modules: $(TORUS_KO)
# Kbuild writes its objects next to the sources (M= builds have no separate
# output directory on 6.1); the finished module is copied to $(TORUS_KO).
# Several people may run make in one tree at once: kbuild runs under a lock.
$(TORUS_KO): $(KMOD_SRCS) Kbuild dkms.conf
	@mkdir -p $(@D)
	+MAKEFLAGS= flock $(O)/.kbuild.lock sh -c '$(MAKE) $(DRYRUN) -C $(KDIR) M=$(CURDIR) modules && $(if $(DRYRUN),echo )cp torus.ko $@'

else
all: kmod-info
modules:
	@echo "modules: cannot build torus.ko: $(if $(KDIR),$(if $(wildcard $(KDIR)/Makefile),no Kbuild or kmod/*.c yet,KDIR=$(KDIR) has no Makefile),no kernel build tree (install linux-headers-amd64 or set KDIR))" >&2
	@false
kmod-info:
	@echo "note: torus.ko not built: $(if $(KDIR),$(if $(wildcard $(KDIR)/Makefile),no Kbuild or kmod/*.c yet,KDIR=$(KDIR) has no Makefile),no kernel build tree (install linux-headers-amd64 or set KDIR))"
endif

clean-kmod:
	$(if $(KDIR),$(if $(wildcard $(KDIR)/Makefile),-MAKEFLAGS= $(MAKE) $(DRYRUN) -C $(KDIR) M=$(CURDIR) clean))
	rm -f $(TORUS_KO)
