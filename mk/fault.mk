# fault.mk - allocation-failure injection (tests/fault/): `make fault`
#
#   make fault [FAULT_MAX_RUNS=0] [FAULT_SUITES="test_core_index ..."]   every unit suite with
#        the 1st, 2nd, ... Nth allocation of each test failing, then the daemon under faults
#   make fault-unit / fault-e2e                                            one half alone
#   make fault-quick [FAULT_QUICK_RUNS=100]  what `make test` runs: the API and embedder
#        suites (FAULT_QUICK_SUITES), at most FAULT_QUICK_RUNS failing allocations per test,
#        spread evenly over its allocations (the whole `make fault` takes hours), then the
#        daemon half (tests/fault/test_fault_e2e.py, about 10 s on 2 cores) bounded by
#        FAULT_QUICK_E2E (its rounds, requests a round and start-ups tried)
#
# FLAVOR=fault is the asan flavor plus: our objects compiled with -finstrument-functions
# (the hooks count only allocations made while mnemod's own code is on the stack, so a
# test's fixtures never fail), every binary linked with -Wl,--wrap= of the allocator and
# tests/fault/fault_alloc.o, the unit tests also with tests/fault/fault_cmocka.o (the
# driver, behind MEM_FAULT_UNIT=1). See tests/fault/fault.h.
FAULT_WRAP   := malloc calloc realloc strdup aligned_alloc open_memstream
FAULT_CMOCKA := _cmocka_run_group_tests cmocka_set_test_filter print_error _fail _assert_true \
                _assert_return_code _assert_int_equal _assert_int_not_equal _assert_float_equal \
                _assert_string_equal _assert_string_not_equal _assert_memory_equal \
                _assert_memory_not_equal _assert_in_range _assert_not_in_range _assert_in_set \
                _assert_not_in_set
OPT_fault    := $(OPT_asan) -DMEM_FAULT_BUILD
LDOPT_fault  := $(LDOPT_asan) $(FAULT_WRAP:%=-Wl,--wrap=%)
FAULT_MAX_RUNS ?= 0

ifeq ($(FLAVOR),fault)
FAULT_ALLOC_O  := $(B)/tests/fault/fault_alloc.o
FAULT_CMOCKA_O := $(B)/tests/fault/fault_cmocka.o
# the library, server and client objects count allocations; the runtime itself does not
CFLAGS += $(FAULT_INSTR)
# (embedder/wire.c's and cluster/json.c's jansson allocators are jansson's, called on behalf
# of whoever called it)
$(B)/%.o: FAULT_INSTR = -finstrument-functions -finstrument-functions-exclude-file-list=core/vec_ \
                        -finstrument-functions-exclude-function-list=wire_json_malloc,cl_json_malloc
$(FAULT_ALLOC_O) $(FAULT_CMOCKA_O): FAULT_INSTR =
LDLIBS += $(FAULT_ALLOC_O) -ljansson -lsqlite3
$(B)/mnemod $(BENCH_BINS): $(FAULT_ALLOC_O)
$(UNIT_BINS) $(B)/tests/unit/test_api_store: $(FAULT_ALLOC_O) $(FAULT_CMOCKA_O)
$(UNIT_BINS) $(B)/tests/unit/test_api_store: LDLIBS += $(FAULT_CMOCKA_O) -lcmocka
$(UNIT_BINS) $(B)/tests/unit/test_api_store: LDFLAGS += $(FAULT_CMOCKA:%=-Wl,--wrap=%)

.PHONY: fault-build
fault-build: $(B)/mnemod $(UNIT_BINS) $(API_STORE_TEST)
endif

.PHONY: fault fault-unit fault-e2e
fault: deps
	@$(MAKE) --no-print-directory FLAVOR=fault fault-build
	FAULT_MAX_RUNS=$(FAULT_MAX_RUNS) sh tests/fault/run.sh build/fault all $(FAULT_SUITES)

fault-unit fault-e2e:
	@$(MAKE) --no-print-directory FLAVOR=fault fault-build
	FAULT_MAX_RUNS=$(FAULT_MAX_RUNS) sh tests/fault/run.sh build/fault $(@:fault-%=%) $(FAULT_SUITES)

FAULT_QUICK_SUITES ?= test_api_cluster test_api_decode test_api_edge test_api_json test_api_mcp \
                      test_api_router test_api_store test_embedder_wire
FAULT_QUICK_RUNS   ?= 100
FAULT_QUICK_E2E    ?= FAULT_E2E_EVERY=3,7,19,61 FAULT_E2E_STEPS=150 FAULT_E2E_STARTS=14
.PHONY: fault-quick
fault-quick: deps
	@$(MAKE) --no-print-directory FLAVOR=fault $(FAULT_QUICK_SUITES:%=build/fault/tests/unit/%) \
	    build/fault/mnemod
	FAULT_MAX_RUNS=$(FAULT_QUICK_RUNS) $(FAULT_QUICK_E2E) sh tests/fault/run.sh build/fault all \
	    $(FAULT_QUICK_SUITES)
