# The examples, built here against the in-tree library for the guest tests
# (build/examples/); examples/Makefile builds them against an installed tree.
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(O)/examples/%,$(EXAMPLE_SRCS))
all: $(EXAMPLE_BINS)
$(O)/examples/%: examples/%.c $(LIB_A) include/toruscoll.h
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) $(TC_LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_TC)
