# num.mk - the long campaign for core/num.c (tests/long/num_check.c), not part of make test
#
#   make num-check [NUM_CHECK_N=10000000] [NUM_CHECK_ALL=all]   N random inputs per kind
#       against glibc; NUM_CHECK_ALL=all then checks every float32 (~15 min on one core)
#   python3 scripts/gen-num-tables.py --check                   the tables are up to date
NUM_CHECK_N   ?= 10000000
NUM_CHECK_ALL ?=
.PHONY: num-check
num-check: $(B)/tests/long/num_check
	$(B)/tests/long/num_check $(NUM_CHECK_N) $(NUM_CHECK_ALL)
	python3 scripts/gen-num-tables.py --check

$(B)/tests/long/num_check: tests/long/num_check.c tests/unit/num_oracle.h $(B)/libmnemod.a
	@mkdir -p $(@D)
	@echo "  LD  $@"
	@$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libmnemod.a $(PKG_LIBS) $(LDLIBS)
