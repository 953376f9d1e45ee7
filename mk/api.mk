# api.mk - the API tests that need the real store (tests/api/), built once storage/ is in
# the tree. The binary lands next to the unit tests so scripts/run-tests.sh runs it.
ifneq ($(wildcard storage/writer.c),)
API_STORE_TEST := $(B)/tests/unit/test_api_store
all: $(API_STORE_TEST)
$(API_STORE_TEST): tests/api/test_api_store.c $(B)/libmnemod.a
	@mkdir -p $(@D)
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libmnemod.a $(PKG_LIBS) -lcmocka $(LDLIBS)
endif

# make fuzz-api [FUZZ_TIME=30]: libFuzzer over request bodies, MCP messages and paths.
FUZZ_TIME ?= 30
FUZZ_API_SRCS := $(wildcard core/*.c api/*.c)
build/fuzz/fuzz_api: tests/fuzz/fuzz_api.c $(FUZZ_API_SRCS) tests/unit/api_fake.h
	@mkdir -p $(@D)
	clang -I. $(CSTD) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -DMNEMOD_VERSION='"fuzz"' \
	    -o $@ tests/fuzz/fuzz_api.c $(FUZZ_API_SRCS) $(PKG_CFLAGS) -ljansson -lcmocka -lm
.PHONY: fuzz-api
fuzz-api: build/fuzz/fuzz_api
	@mkdir -p build/fuzz/corpus-api
	build/fuzz/fuzz_api -max_total_time=$(FUZZ_TIME) -max_len=4096 build/fuzz/corpus-api \
	    tests/fuzz/corpus-api
