# cluster.mk - cluster mode (docs/cluster.md): cluster/ is linked into the server binary only,
# and talks to NATS JetStream only when libnats is installed (scripts/deps.sh installs it);
# without it cluster/ builds as stubs and --nats-url is refused at start-up.
HAVE_NATS    := $(shell pkg-config --exists libnats 2>/dev/null && echo 1)
CLUSTER_SRCS := $(wildcard cluster/*.c)
CLUSTER_OBJS := $(CLUSTER_SRCS:%.c=$(B)/%.o)
SRV_OBJS     += $(CLUSTER_OBJS)
$(B)/mnemod: $(CLUSTER_OBJS)
ifeq ($(HAVE_NATS),1)
$(B)/cluster/%.o: CFLAGS += -DMNEMOD_HAVE_NATS
$(B)/mnemod: LDLIBS += $(shell pkg-config --libs libnats)
# the unit test that compiles the whole of cluster/ in (it makes no connection)
$(B)/tests/unit/test_cluster_move: CFLAGS += -DMNEMOD_HAVE_NATS
$(B)/tests/unit/test_cluster_move: LDLIBS += $(shell pkg-config --libs libnats)
endif

.PHONY: cluster-test bench-cluster bench-cluster-scale
# Not part of `make test` (about 3 minutes on 2 cores; run under nice):
#  - test_cluster.py: 3 nats-server + 3 nodes holding every namespace: NATS leader kill, node
#    kill, rejoin, read-your-writes, concurrent writers, snapshot + trim + re-bootstrap;
#  - test_placement.py: 4-5 nodes, 2 per namespace: placement and routing, a holder killed
#    mid-write, a move under load, node add / drain / remove, automatic trim while a node is
#    down and its re-bootstrap;
#  - test_outage.py: NATS frozen then killed (reads stay fast, honest /healthz), payload limit;
#  - test_import.py: NDJSON import through a non-holder, all or nothing on both holders, the
#    payload limit, a duplicate key relayed (also run by `make test`, with test_outage.py);
#  - test_upgrade.py: a namespace copy an older mnemod made, listing cursors across it and a
#    re-creation (also run by `make test`);
#  - test_partition.py: a network partition (skipped unless root with ip and iptables);
#  - the single-node durability suite through the cluster write path.
cluster-test: deps
	@$(MAKE) --no-print-directory $(B)/mnemod
	nice python3 tests/cluster/test_cluster.py $(B)/mnemod
	nice python3 tests/cluster/test_placement.py $(B)/mnemod
	nice python3 tests/cluster/test_outage.py $(B)/mnemod
	nice python3 tests/cluster/test_import.py $(B)/mnemod
	nice python3 tests/cluster/test_upgrade.py $(B)/mnemod
	nice python3 tests/cluster/test_partition.py $(B)/mnemod
	WRAPPED_MNEMOD=$(abspath $(B)/mnemod) nice python3 tests/e2e/test_durability.py tests/cluster/mnemod-on-nats

# The cluster suite of `make bench` (bench/run.sh calls it too): 3 nats-server + 6 nodes on
# loopback, 2 nodes per namespace; capacity, write throughput spread over the nodes against
# one node, the cost of a relayed retrieve, a move of a 100k-segment namespace under write
# load. Writes bench/results/cluster.json; measures only, never fails the build.
bench-cluster: deps
	@$(MAKE) --no-print-directory $(B)/mnemod
	nice python3 bench/cluster/run.py $(B)/mnemod bench/results/cluster.json

# Write and read throughput of 1, 2 and 3 nodes (through one node and spread over all)
# against one server in single-node mode, in the same run: bench/results/cluster_scale.json
# (about 4 minutes; measures only).
bench-cluster-scale: deps
	@$(MAKE) --no-print-directory $(B)/mnemod
	nice python3 bench/cluster/scale.py $(B)/mnemod bench/results/cluster_scale.json
