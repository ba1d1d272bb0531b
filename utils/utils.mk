# Command-line tools: one C file each. Tools that use the library link it
# statically; those that speak only the ioctl ABI (UTIL_NOLIB) link nothing.
UTIL_SRCS := $(wildcard utils/*.c)
UTIL_BINS := $(patsubst utils/%.c,$(O)/bin/%,$(UTIL_SRCS))
UTIL_NOLIB := $(O)/bin/torusctl $(O)/bin/torusrun
all: $(UTIL_BINS)
$(filter-out $(UTIL_NOLIB),$(UTIL_BINS)): $(O)/bin/%: utils/%.c $(LIB_A) include/toruscoll.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TC_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)
$(filter $(UTIL_NOLIB),$(UTIL_BINS)): $(O)/bin/%: utils/%.c include/uapi/torus.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TC_CFLAGS) $(LDFLAGS) -o $@ $<
