# Command-line tools: one C file each. Tools that use the library link it
# statically; those that speak only the ioctl ABI (UTIL_NOLIB) link nothing.
UTIL_SRCS := $(wildcard utils/*.c)
UTIL_BINS := $(patsubst utils/%.c,$(O)/bin/%,$(UTIL_SRCS))
UTIL_NOLIB := $(O)/bin/torusctl $(O)/bin/torusrun
all: $(UTIL_BINS)
$(filter-out $(UTIL_NOLIB),$(UTIL_BINS)): $(O)/bin/%: utils/%.c utils/tool.h $(LIB_A) include/toruscoll.h
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)
$(filter $(UTIL_NOLIB),$(UTIL_BINS)): $(O)/bin/%: utils/%.c utils/tool.h include/uapi/torus.h
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $<

# Install: the compiled tools, their man pages (man1), the device's (man4),
# the udev rule. The development scripts (torus-vm, torus-demo, torus-deps,
# torus-kbuild) work on the source tree and are not installed.
BINDIR ?= $(PREFIX)/bin
UDEVRULESDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/udev/rules.d,/etc/udev/rules.d)
UTIL_MAN1 := $(patsubst utils/%.c,man/man1/%.1,$(UTIL_SRCS))
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
