# Command-line tools: one C file each, linked statically against libtoruscoll.
UTIL_SRCS := $(wildcard utils/*.c)
UTIL_BINS := $(patsubst utils/%.c,$(O)/bin/%,$(UTIL_SRCS))
all: $(UTIL_BINS)
$(O)/bin/%: utils/%.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)
