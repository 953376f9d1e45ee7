# cli.mk - the client commands (`mnemod ns|add|search|list|export|import|...`, cli/): linked
# into the one binary, talking HTTP to a running server through libcurl.
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(B)/%.o)
SRV_OBJS += $(CLI_OBJS)
FORMAT_SRCS += $(CLI_SRCS)
$(B)/mnemod: $(CLI_OBJS)
$(B)/mnemod: LDLIBS += $(shell pkg-config --libs libcurl 2>/dev/null)
$(B)/cli/%.o: PKG_CFLAGS += $(shell pkg-config --cflags libcurl 2>/dev/null)
