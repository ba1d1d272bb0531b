# Command-line tools. A small tool is one C file (utils/NAME.c); a larger one
# is a directory of C files, one per job, with a main.c (utils/NAME/*.c and
# its own headers), built into one program. Tools that use the library link
# it statically; those that speak only the ioctl ABI (UTIL_NOLIB) link nothing.
UTIL_ONEFILE := $(patsubst utils/%.c,%,$(wildcard utils/*.c))
UTIL_DIRS := $(patsubst utils/%/main.c,%,$(wildcard utils/*/main.c))
UTIL_NAMES := $(sort $(UTIL_ONEFILE) $(UTIL_DIRS))
UTIL_BINS := $(addprefix $(O)/bin/,$(UTIL_NAMES))
UTIL_NOLIB := $(O)/bin/torusctl $(O)/bin/torusrun
all: $(UTIL_BINS)
$(filter-out $(UTIL_NOLIB),$(addprefix $(O)/bin/,$(UTIL_ONEFILE))): $(O)/bin/%: utils/%.c utils/tool.h $(LIB_A) include/toruscoll.h
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)
$(filter $(UTIL_NOLIB),$(UTIL_BINS)): $(O)/bin/%: utils/%.c utils/tool.h include/uapi/torus.h
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $<
define UTIL_DIR_RULE
$(O)/bin/$(1): $(wildcard utils/$(1)/*.c utils/$(1)/*.h) utils/tool.h $(LIB_A) include/toruscoll.h
	@mkdir -p $$(@D)
	$$(CC) $$(TC_CFLAGS) $$(TC_LDFLAGS) -o $$@ $(wildcard utils/$(1)/*.c) $$(LIB_A) $$(LDLIBS_TC)
endef
$(foreach t,$(UTIL_DIRS),$(eval $(call UTIL_DIR_RULE,$(t))))

# Install: the compiled tools, their man pages (man1), the device's (man4),
# the udev rule. The development scripts (torus-vm, torus-demo, torus-deps,
# torus-kbuild) work on the source tree and are not installed.
BINDIR ?= $(PREFIX)/bin
UDEVRULESDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/udev/rules.d,/etc/udev/rules.d)
UTIL_MAN1 := $(patsubst %,man/man1/%.1,$(UTIL_NAMES))
.PHONY: install-utils uninstall-utils
install: install-utils
install-utils: $(UTIL_BINS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man4 $(DESTDIR)$(UDEVRULESDIR)
	install -m 0755 $(UTIL_BINS) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(UTIL_MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/man4/torus.4 $(DESTDIR)$(MANDIR)/man4/
	install -m 0644 utils/60-torus.rules $(DESTDIR)$(UDEVRULESDIR)/
uninstall: uninstall-utils
uninstall-utils:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(UTIL_BINS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(UTIL_MAN1))) \
		$(DESTDIR)$(MANDIR)/man4/torus.4 $(DESTDIR)$(UDEVRULESDIR)/60-torus.rules
