# mnemod - build, test, bench.  `make run` and `make test` install what they need first.
FLAVOR ?= release
B      := build/$(FLAVOR)
CC     ?= cc
PKGS   := libuv libmicrohttpd jansson sqlite3 libutf8proc
VERSION := 0.1.0

CSTD := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN := -Wall -Wextra -Werror -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wundef -Wvla -Wimplicit-fallthrough -Wno-unused-parameter
OPT_release := -O2 -g -fno-omit-frame-pointer -D_FORTIFY_SOURCE=2 -fstack-protector-strong
OPT_asan    := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
OPT_tsan    := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
LDOPT_asan  := -fsanitize=address,undefined
LDOPT_tsan  := -fsanitize=thread

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  += -I. $(CSTD) $(WARN) $(OPT_$(FLAVOR)) -DMNEMOD_VERSION='"$(VERSION)"' -MMD -MP
LDFLAGS += $(LDOPT_$(FLAVOR))
LDLIBS  += -lstemmer -lpthread -lm   # libstemmer ships no .pc file

LIB_SRCS   := $(wildcard core/*.c config/*.c storage/*.c api/*.c)
SRV_SRCS   := $(wildcard server/*.c)
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
BENCH_SRCS := $(wildcard bench/bench_*.c)
LIB_OBJS   := $(LIB_SRCS:%.c=$(B)/%.o)
SRV_OBJS   := $(SRV_SRCS:%.c=$(B)/%.o)
UNIT_BINS  := $(UNIT_SRCS:%.c=$(B)/%)
BENCH_BINS := $(BENCH_SRCS:%.c=$(B)/%)

.PHONY: all deps run test unit e2e asan tsan bench clean format format-check check-deps check-headers
all: $(B)/mnemod $(UNIT_BINS) $(BENCH_BINS)

deps:
	@sh scripts/deps.sh

# No silent double math in the kernels; each ISA file gets its own -m flags, nobody else does.
$(B)/core/%.o: WARN += -Wdouble-promotion
$(B)/core/vec_avx2.o:   ISA := -mavx2 -mfma
$(B)/core/vec_avx512.o: ISA := -mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma
$(B)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(ISA) -c $< -o $@

$(B)/libmnemod.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	@echo "  AR  $@"
	@rm -f $@ && ar rcs $@ $^

$(B)/mnemod: $(SRV_OBJS) $(B)/libmnemod.a
	@echo "  LD  $@"
	@$(CC) $(LDFLAGS) -o $@ $(SRV_OBJS) $(B)/libmnemod.a $(PKG_LIBS) $(LDLIBS)

$(B)/tests/unit/%: tests/unit/%.c $(B)/libmnemod.a
	@mkdir -p $(@D)
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libmnemod.a $(PKG_LIBS) -lcmocka $(LDLIBS)

# test_config_config checks etc/mnemod.conf.sample as it was when the test was built: a copy
# compiled in (one byte list), so a tree rewritten while the suites run cannot fail it.
$(B)/tests/unit/sample_conf.inc: etc/mnemod.conf.sample
	@mkdir -p $(@D)
	@od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g' > $@
$(B)/tests/unit/test_config_config: $(B)/tests/unit/sample_conf.inc
$(B)/tests/unit/test_config_config: CFLAGS += -I$(B)/tests/unit

$(B)/bench/%: bench/%.c $(B)/libmnemod.a
	@mkdir -p $(@D)
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libmnemod.a $(PKG_LIBS) $(LDLIBS)

run: deps
	@$(MAKE) --no-print-directory $(B)/mnemod
	./$(B)/mnemod $(ARGS)

test: deps
	@$(MAKE) --no-print-directory all
	sh scripts/run-tests.sh $(B)

unit: all
	sh scripts/run-tests.sh $(B) unit

e2e: all
	sh scripts/run-tests.sh $(B) e2e

asan: deps
	@$(MAKE) --no-print-directory FLAVOR=asan all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    sh scripts/run-tests.sh build/asan

tsan: deps
	@$(MAKE) --no-print-directory FLAVOR=tsan all
	sh scripts/run-tests.sh build/tsan

bench: deps
	@sh scripts/deps.sh --bench
	@$(MAKE) --no-print-directory all
	sh bench/run.sh $(B)

FORMAT_SRCS = $(LIB_SRCS) $(SRV_SRCS) $(UNIT_SRCS) $(BENCH_SRCS) $(wildcard */*.h tests/*/*.h \
              cluster/*.c tests/api/*.c tests/fuzz/*.c)
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	clang-format --dry-run -Werror $(FORMAT_SRCS)

# Includes point down only: server -> api -> storage -> core, config -> core.
check-deps:
	@sh scripts/check-deps.sh

# Every header compiles on its own.
check-headers:
	@CC="$(CC)" sh scripts/check-headers.sh

clean:
	rm -rf build

-include $(wildcard mk/*.mk)
-include $(shell find build -name '*.d' 2>/dev/null)
