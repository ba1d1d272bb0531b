# libtoruscoll: shared (soname libtoruscoll.so.1, symbol versions from
# lib/libtoruscoll.map) and static libraries, pkg-config file, install.
TC_VERSION := 1.0.0
# lib/ is a tree of layers (docs/library.md, "The source: layers";
# tests/unit/check-layers checks the includes); every .c below it is built.
LIB_SRCS := $(shell find lib -name '*.c' | LC_ALL=C sort)
LIB_HDRS := $(shell find lib -name '*.h') $(wildcard include/*.h include/uapi/*.h)
# The verbs transport: built only when libibverbs, librdmacm and pmix are installed.
TC_VERBS_PKGS := libibverbs librdmacm pmix
TC_VERBS_SRCS := $(wildcard lib/transport/verbs/*.c) lib/transport/bootstrap.c
TC_HAVE_VERBS := $(shell pkg-config --exists $(TC_VERBS_PKGS) 2>/dev/null && echo 1)
ifeq ($(TC_HAVE_VERBS),1)
$(O)/lib/api/comm.o $(O)/pic/lib/api/comm.o: TC_CFLAGS += -DTC_HAVE_VERBS
$(patsubst %.c,$(O)/%.o,$(TC_VERBS_SRCS)) $(patsubst %.c,$(O)/pic/%.o,$(TC_VERBS_SRCS)): \
	TC_CFLAGS += $(shell pkg-config --cflags $(TC_VERBS_PKGS))
# libpmix is not linked: bootstrap.c opens it (dlopen) when a verbs
# communicator first needs the launcher, at the path found here.
TC_PMIX_LIBDIR := $(shell pkg-config --variable=libdir pmix)
TC_PMIX_SONAME := $(shell objdump -p $(TC_PMIX_LIBDIR)/libpmix.so 2>/dev/null | sed -n 's/^ *SONAME *//p')
ifneq ($(TC_PMIX_SONAME),)
$(O)/lib/transport/bootstrap.o $(O)/pic/lib/transport/bootstrap.o: \
	TC_CFLAGS += -DTC_PMIX_LIB='"$(TC_PMIX_LIBDIR)/$(TC_PMIX_SONAME)"' -DTC_PMIX_SONAME='"$(TC_PMIX_SONAME)"'
endif
LDLIBS_TC += $(shell pkg-config --libs libibverbs librdmacm)
TC_PC_REQUIRES := libibverbs librdmacm
else
LIB_SRCS := $(filter-out $(TC_VERBS_SRCS),$(LIB_SRCS))
endif
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS))
LIB_PIC_OBJS := $(patsubst %.c,$(O)/pic/%.o,$(LIB_SRCS))
# The real file carries the full version; the soname (.so.1) the ABI version.
LIB_SO_REAL := $(O)/lib/libtoruscoll.so.$(TC_VERSION)
LIB_SO := $(O)/lib/libtoruscoll.so.1
LIB_A := $(O)/lib/libtoruscoll.a
LIB_PC := $(O)/lib/pkgconfig/toruscoll.pc
LIB_PC_UNINST := $(O)/lib/pkgconfig/toruscoll-uninstalled.pc

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
# Where the dynamic linker looks without help: its default directories and
# those listed in /etc/ld.so.conf.d (make install says what to do otherwise).
TC_LD_DIRS = /lib /usr/lib /lib64 /usr/lib64 /lib/$(shell $(CC) -dumpmachine 2>/dev/null) \
	/usr/lib/$(shell $(CC) -dumpmachine 2>/dev/null) $(shell cat /etc/ld.so.conf.d/*.conf 2>/dev/null | grep '^/')
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

all: $(LIB_A) $(LIB_SO) $(LIB_PC) $(LIB_PC_UNINST)

$(O)/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(O)/pic/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar qcs $@ $^

$(LIB_SO_REAL): $(LIB_PIC_OBJS) lib/libtoruscoll.map
	@mkdir -p $(@D)
	$(CC) $(TC_LDFLAGS) -shared -Wl,-soname,libtoruscoll.so.1 -Wl,--version-script=lib/libtoruscoll.map -Wl,-z,defs \
		-o $@ $(LIB_PIC_OBJS) $(LDLIBS_TC)

$(LIB_SO): $(LIB_SO_REAL)
	ln -sf libtoruscoll.so.$(TC_VERSION) $@
	ln -sf libtoruscoll.so.1 $(O)/lib/libtoruscoll.so

TC_PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	-e 's|@VERSION@|$(TC_VERSION)|' -e 's|@REQUIRES_PRIVATE@|$(TC_PC_REQUIRES)|'
$(LIB_PC): lib/toruscoll.pc.in lib/lib.mk
	@mkdir -p $(@D)
	$(TC_PC_SED) $< >$@

# The build tree's own .pc: PKG_CONFIG_PATH=build/lib/pkgconfig builds a
# program against build/lib and include/ (absolute paths), before any install.
$(LIB_PC_UNINST): lib/toruscoll-uninstalled.pc.in lib/lib.mk
	@mkdir -p $(@D)
	sed -e 's|@LIBDIR@|$(abspath $(O)/lib)|' -e 's|@INCLUDEDIR@|$(abspath include)|' \
		-e 's|@VERSION@|$(TC_VERSION)|' -e 's|@REQUIRES_PRIVATE@|$(TC_PC_REQUIRES)|' $< >$@

.PHONY: install-lib
install: install-lib
install-lib: $(LIB_A) $(LIB_SO) $(LIB_PC)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/uapi
	install -m 0755 $(LIB_SO_REAL) $(DESTDIR)$(LIBDIR)/libtoruscoll.so.$(TC_VERSION)
	ln -sf libtoruscoll.so.$(TC_VERSION) $(DESTDIR)$(LIBDIR)/libtoruscoll.so.1
	ln -sf libtoruscoll.so.1 $(DESTDIR)$(LIBDIR)/libtoruscoll.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libtoruscoll.a
	$(TC_PC_SED) lib/toruscoll.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/toruscoll.pc
	install -m 0644 include/toruscoll.h $(DESTDIR)$(INCLUDEDIR)/toruscoll.h
	install -m 0644 include/uapi/torus.h $(DESTDIR)$(INCLUDEDIR)/uapi/torus.h
	install -d $(DESTDIR)$(MANDIR)/man3
	install -m 0644 $(wildcard man/man3/*.3) $(DESTDIR)$(MANDIR)/man3/
	@if [ -z "$(DESTDIR)" ] && ! echo " $(TC_LD_DIRS) " | grep -qF " $(LIBDIR) "; then \
		echo "note: $(LIBDIR) is not in the dynamic linker's path: add it to /etc/ld.so.conf.d/ and run ldconfig," \
			"or link with -Wl,-rpath,$(LIBDIR) (docs/library.md, \"Building against the library\")"; \
	elif [ -z "$(DESTDIR)" ]; then \
		echo "note: run ldconfig (as root) so that programs find libtoruscoll.so.1 in $(LIBDIR)"; \
	fi

.PHONY: uninstall-lib
uninstall: uninstall-lib
uninstall-lib:
	rm -f $(DESTDIR)$(LIBDIR)/libtoruscoll.so.$(TC_VERSION) $(DESTDIR)$(LIBDIR)/libtoruscoll.so.1 $(DESTDIR)$(LIBDIR)/libtoruscoll.so \
		$(DESTDIR)$(LIBDIR)/libtoruscoll.a $(DESTDIR)$(LIBDIR)/pkgconfig/toruscoll.pc \
		$(DESTDIR)$(INCLUDEDIR)/toruscoll.h $(DESTDIR)$(INCLUDEDIR)/uapi/torus.h \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(wildcard man/man3/*.3)))
