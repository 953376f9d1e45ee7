# reliability.mk - fuzzing (libFuzzer), the soak run and the crash-cycle harness
#
#   make fuzz [FUZZ_TIME=30] [FUZZ_TARGETS="router config"]   build into build/fuzz/, run each
#   make fuzz-build                                           only build the targets
#   make soak [SOAK_SECONDS=300]                              wrk mixed load, RSS series
#   make crash [CRASH_CYCLES=20]                              the crash-cycle harness alone
#
# The fuzz targets link a libmnemod.a compiled by clang with -fsanitize=fuzzer-no-link,
# address,undefined (FLAVOR=fuzz, objects in build/fuzz/); each target is
# tests/fuzz/fuzz_<name>.c with its corpus in tests/fuzz/corpus/<name>/ and its dictionary
# tests/fuzz/<name>.dict. tests/fuzz/run.sh runs them (and replays tests/fuzz/regress/).
FUZZ_TIME    ?= 30
FUZZ_CC      ?= clang
REL_FUZZ     := request decode router timefmt config provider json filter cluster
# tests/fuzz/fuzz_api.c (api/ over the fake store) is built here as fuzz_apifake, linked
# against the same sanitized library (mk/api.mk's fuzz-api compiles core/ without the
# per-file ISA flags the SIMD kernels need)
API_FUZZ     := $(if $(wildcard tests/fuzz/fuzz_api.c),apifake) ndjson
# tests/fuzz/fuzz_http.c runs the whole server loop (server/ without main.c) in-process
SRV_FUZZ     := http
FUZZ_TARGETS ?= $(REL_FUZZ) $(API_FUZZ) $(SRV_FUZZ)
OPT_fuzz     := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=all -Wno-error
LDOPT_fuzz   := -fsanitize=fuzzer,address,undefined

.PHONY: fuzz fuzz-build soak crash
fuzz-build:
	@$(MAKE) --no-print-directory FLAVOR=fuzz CC=$(FUZZ_CC) \
	    $(REL_FUZZ:%=build/fuzz/fuzz_%) $(API_FUZZ:%=build/fuzz/fuzz_%) $(SRV_FUZZ:%=build/fuzz/fuzz_%)

fuzz: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

ifeq ($(FLAVOR),fuzz)
build/fuzz/fuzz_apifake: tests/fuzz/fuzz_api.c tests/unit/api_fake.h build/fuzz/libmnemod.a
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< build/fuzz/libmnemod.a $(PKG_LIBS) -lcmocka $(LDLIBS)
build/fuzz/fuzz_ndjson: tests/fuzz/fuzz_ndjson.c tests/unit/api_fake.h build/fuzz/libmnemod.a
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< build/fuzz/libmnemod.a $(PKG_LIBS) -lcmocka $(LDLIBS)
FUZZ_SRV_OBJS := $(filter-out build/fuzz/server/main.o $(CLI_OBJS),$(SRV_OBJS))
build/fuzz/fuzz_http: LDLIBS += $(if $(HAVE_NATS),$(shell pkg-config --libs libnats))
build/fuzz/fuzz_http: tests/fuzz/fuzz_http.c tests/fuzz/fuzz_common.h $(FUZZ_SRV_OBJS) build/fuzz/libmnemod.a
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(FUZZ_SRV_OBJS) build/fuzz/libmnemod.a $(PKG_LIBS) $(LDLIBS)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h build/fuzz/libmnemod.a
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< build/fuzz/libmnemod.a $(PKG_LIBS) $(LDLIBS)
endif

SOAK_SECONDS ?= 300
soak:
	@$(MAKE) --no-print-directory FLAVOR=release build/release/mnemod
	sh scripts/soak.sh build/release/mnemod $(SOAK_SECONDS)

CRASH_CYCLES ?= 100
crash:
	@$(MAKE) --no-print-directory $(B)/mnemod
	CRASH_CYCLES=$(CRASH_CYCLES) python3 tests/e2e/test_crash_cycles.py $(B)/mnemod
