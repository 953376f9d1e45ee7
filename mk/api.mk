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

# The fake-store fuzz target (tests/fuzz/fuzz_api.c) is built by mk/reliability.mk as
# build/fuzz/fuzz_apifake, against the sanitized library with the kernels' ISA flags.
