# embedder.mk - embedding providers (embedder/): an OpenAI-compatible client on libcurl's
# multi interface, driven by the server's libuv loop. Part of libmnemod.a, so unit tests
# and fuzz targets reach the wire decoder; libcurl (scripts/deps.sh installs
# libcurl4-openssl-dev) is linked wherever the library is.
EMB_SRCS := $(wildcard embedder/*.c)
EMB_OBJS := $(EMB_SRCS:%.c=$(B)/%.o)
PKGS     += libcurl
$(B)/libmnemod.a: $(EMB_OBJS)
FORMAT_SRCS += $(EMB_SRCS)
