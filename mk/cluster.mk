# cluster.mk - cluster mode (issue 7): cluster/ is linked into the server binary only, and
# talks to NATS JetStream only when libnats is installed (scripts/deps.sh installs it);
# without it cluster/ builds as stubs and MNEMOD_NATS_URL is refused at start-up.
HAVE_NATS    := $(shell pkg-config --exists libnats 2>/dev/null && echo 1)
CLUSTER_SRCS := $(wildcard cluster/*.c)
CLUSTER_OBJS := $(CLUSTER_SRCS:%.c=$(B)/%.o)
SRV_OBJS     += $(CLUSTER_OBJS)
$(B)/mnemod: $(CLUSTER_OBJS)
ifeq ($(HAVE_NATS),1)
$(B)/cluster/%.o: CFLAGS += -DMNEMOD_HAVE_NATS
$(B)/mnemod: LDLIBS += $(shell pkg-config --libs libnats)
endif

.PHONY: cluster-test
# Three nats-server processes + three mnemod nodes on loopback (leader kill, node kill,
# rejoin, read-your-writes, snapshot bootstrap), then a partition in a network namespace
# (skipped unless root with ip and iptables), then the single-node durability suite (restarts,
# SIGKILL mid-stream) through the cluster write path. Not part of `make test`.
cluster-test: deps
	@$(MAKE) --no-print-directory $(B)/mnemod
	python3 tests/cluster/test_cluster.py $(B)/mnemod
	python3 tests/cluster/test_partition.py $(B)/mnemod
	WRAPPED_MNEMOD=$(abspath $(B)/mnemod) python3 tests/e2e/test_durability.py tests/cluster/mnemod-on-nats
