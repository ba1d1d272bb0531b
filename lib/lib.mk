# libtoruscoll: shared (soname libtoruscoll.so.1) and static libraries.
LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS))
LIB_PIC_OBJS := $(patsubst %.c,$(O)/pic/%.o,$(LIB_SRCS))
LIB_SO := $(O)/lib/libtoruscoll.so.1
LIB_A := $(O)/lib/libtoruscoll.a

all: $(LIB_A) $(LIB_SO)

$(O)/lib/%.o: lib/%.c $(wildcard lib/*.h include/*.h include/uapi/*.h)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(O)/pic/lib/%.o: lib/%.c $(wildcard lib/*.h include/*.h include/uapi/*.h)
	@mkdir -p $(@D)
	$(CC) $(TC_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_PIC_OBJS) $(wildcard lib/libtoruscoll.map)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libtoruscoll.so.1 $(if $(wildcard lib/libtoruscoll.map),-Wl$(comma)--version-script=lib/libtoruscoll.map) -o $@ $(LIB_PIC_OBJS) $(LDLIBS_TC)
	ln -sf libtoruscoll.so.1 $(O)/lib/libtoruscoll.so
comma := ,
