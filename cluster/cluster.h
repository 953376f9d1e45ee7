/* cluster.h - namespaces placed on replica groups of nodes, over NATS JetStream
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Single-node mode (no --nats-url) never calls into this module. In cluster mode
 * every write is a record in a JetStream stream: a namespace hashes (FNV-1a) onto one of K
 * streams MNEMOD_0..K-1 and owns one subject there, mnemod.<i>.<hex(name)>. JetStream is
 * the only source of order and agreement: no consensus of our own.
 *
 * Placement. Each namespace lives on a replica group of R nodes (--namespace-replicas),
 * recorded in the KV bucket mnemod_placement (one key per namespace). The entry is created
 * with the first write, by rendezvous hashing over the live nodes (placement.c), with a
 * compare-and-set create so concurrent first writes agree; afterwards only moves change it.
 * A node applies only the records of namespaces placed on it: total capacity grows with the
 * number of nodes. Every node watches the map and the node registry (bucket mnemod_nodes,
 * heartbeats) and keeps both in memory, so routing decisions never wait.
 *
 * Records and chains. A record is published with a message id (retries are de-duplicated)
 * and Nats-Expected-Last-Subject-Sequence = the namespace's previous record, which
 * JetStream checks and stores: each record names its predecessor, so the records of a
 * namespace form a chain a node can verify. A node keeps, per namespace, a position such
 * that every record at or below it is applied here (stored with the rows, storage's
 * applied_ns). Its fetchers read each stream in order by sequence (direct get: any replica
 * answers, no consumer state on the servers) and apply the records of its live namespaces
 * whose predecessor is at or below that position; a namespace that falls out of step (it
 * just arrived, a record is missing) is brought up to date by the catch-up worker, which
 * reads only that subject (next by subject) and, when the records it needs were trimmed,
 * restores the namespace's latest snapshot first.
 *
 * Writes. mem_cluster_write never blocks: the op joins its namespace's queue; publisher
 * threads publish one record per namespace at a time (the next expects the previous one's
 * sequence, so one node's writes never conflict with each other); another node's write
 * that came first makes the expectation stale: re-read and retry a bounded number of times,
 * then 409. The answer is given once JetStream acknowledged the record AND this node
 * applied it, so it is the local apply's result and a read here sees the write. The whole
 * write is bounded by --cluster-write-timeout: not logged by then, 503 (nothing written);
 * logged but not applied here by then, 504 write_timeout (it will be; a client must not
 * send it again); a record larger than
 * the NATS server's max_payload is refused at once (413 naming the limit).
 *
 * Sequences. A write's "log_seq" is its record's stream sequence; the namespace's records
 * grow in it. A read with min_seq S waits (at most 5 s, then 503) until this node's
 * position for the namespace reaches S: read-your-writes on any holder.
 *
 * Moves, snapshots and trimming: see move.c and snap.c. Threads: open/close on one thread;
 * mem_cluster_route, _write, _wait_start, _resolve_start, _serves, _healthy, _peers never block
 * (loop thread allowed); everything else blocks (bounded) and runs on worker threads.
 */
#ifndef MEM_CLUSTER_CLUSTER_H
#define MEM_CLUSTER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "core/log.h"
#include "storage/store.h"

typedef struct mem_cluster mem_cluster_t;

/* Nodes one cluster holds: every node keeps each registered node (heartbeats, positions,
 * loads) in a table of this size. A node that would be one more refuses to start; the
 * others log it and leave it out (never routed to, never placed on). */
#define MEM_CLUSTER_NODES_MAX 64

/* A write's answer when the expected-sequence retries are exhausted (HTTP 409). */
#define MEM_CLUSTER_CONFLICT 1

/* Connect, create the streams and buckets when missing, load the placement map, start the
 * fetchers and wait (bounded) until every namespace placed here is caught up. Blocks. */
int mem_cluster_open(const mem_cfg_t *cfg, const mem_log_t *log, mem_store_t *st,
                     mem_cluster_t **out, mem_err_t *err);
/* Stop everything, wait for queued applies, mark this node stopped in the registry (its
 * namespaces stay placed on it). NULL-safe. */
void mem_cluster_close(mem_cluster_t *cl);

/* ---- writes ---- */

/* rc: op->rc of the local apply, MEM_EBUSY (the log unavailable: nothing written, err says
 * why), MEM_EWRITETIME (logged, not applied here in time), or MEM_CLUSTER_CONFLICT. Runs on a
 * cluster or store thread, once. */
typedef void (*mem_cluster_done_fn)(mem_store_op_t *op, int rc, uint64_t log_seq,
                                    const mem_err_t *err, void *ud);
/* Queue op for replication; never blocks. MEM_OK: done will be called (op and what it
 * points to stay untouched by the caller until then). Otherwise done is never called:
 * MEM_ETOOBIG (the record exceeds the NATS max_payload; err names both sizes), MEM_EBUSY
 * (too many writes pending, or NATS unreachable for a while). */
int mem_cluster_write(mem_cluster_t *cl, mem_store_op_t *op, mem_cluster_done_fn done, void *ud,
                      mem_err_t *err);

/* ---- routing (never block) ---- */

typedef enum mem_cluster_route {
    MEM_CLUSTER_LOCAL,       /* serve it here */
    MEM_CLUSTER_FORWARD,     /* send it to addr (a holder) and relay the answer */
    MEM_CLUSTER_RESOLVE,     /* no entry here yet, or our copy is catching up:
                                mem_cluster_resolve_start, then route again */
    MEM_CLUSTER_UNAVAILABLE, /* placed, but no holder can serve it now (why says why) */
    MEM_CLUSTER_MISDIRECTED, /* a forwarded request for a namespace not placed here */
} mem_cluster_route_t;

/* Where a request for namespace ns goes. write: it changes the namespace (writes prefer
 * the primary). forwarded: it came from another node (never forwarded again). avoid: an
 * address that just failed ("" for none). */
mem_cluster_route_t mem_cluster_route(mem_cluster_t *cl, const char *ns, bool write, bool forwarded,
                                      const char *avoid, char *addr, size_t addr_cap, char *why,
                                      size_t why_cap);
/* Read (create: or create) ns's placement entry from JetStream itself, and when ns is placed
 * here wait (at most 3 s) for its copy to catch up; blocks (bounded).
 * MEM_OK (route again), MEM_ENOTFOUND (no such namespace anywhere), MEM_EBUSY. */
int mem_cluster_resolve(mem_cluster_t *cl, const char *ns, bool create, mem_err_t *err);
/* The same on one of the cluster's resolver threads (MEM_CLUSTER_RESOLVERS of them), so no
 * thread of the caller's waits for NATS: fn(ud, rc, err) is called once, on that thread and
 * never from inside this call, with mem_cluster_resolve's result. Any thread, never blocks.
 * MEM_OK, or MEM_ENOMEM / MEM_EBUSY (closing), and then fn is never called. */
#define MEM_CLUSTER_RESOLVERS 4
typedef void (*mem_cluster_resolved_fn)(void *ud, int rc, const mem_err_t *err);
int mem_cluster_resolve_start(mem_cluster_t *cl, const char *ns, bool create,
                              mem_cluster_resolved_fn fn, void *ud);
/* Is ns live here (listed by GET /v1/namespaces on this node)? */
bool mem_cluster_serves(mem_cluster_t *cl, const char *ns);
/* The log position of the last record of ns applied here (0 when not live here): the same
 * on holders up to date, higher on the fresher of two copies; a valid min_seq for ns. */
uint64_t mem_cluster_position(mem_cluster_t *cl, const char *ns);
/* Addresses of the other live nodes (for merged listings). Returns how many. */
size_t mem_cluster_peers(mem_cluster_t *cl, char (*addrs)[300], size_t cap);
/* This node's advertised address. */
const char *mem_cluster_address(const mem_cluster_t *cl);

/* Wait, holding no thread of the caller's, until ns is applied here up to min_seq:
 * fn(ud, reached) is called once, on a cluster thread and never from inside this call, when
 * it is (reached true), or after timeout_ms or when the cluster closes (false). Any thread,
 * never blocks.
 * MEM_OK, or MEM_ENOMEM / MEM_EBUSY (closing), and then fn is never called. */
typedef void (*mem_cluster_waited_fn)(void *ud, bool reached);
int mem_cluster_wait_start(mem_cluster_t *cl, const char *ns, uint64_t min_seq, int timeout_ms,
                           mem_cluster_waited_fn fn, void *ud);
/* Is min_seq already applied here for ns (never blocks)? */
bool mem_cluster_reached(mem_cluster_t *cl, const char *ns, uint64_t min_seq);

/* ---- health and administration ---- */

/* false when this node should not get traffic: a namespace placed here needs a bootstrap
 * or is far behind (--max-lag), or NATS has been unreachable; why says which. */
bool mem_cluster_healthy(mem_cluster_t *cl, char *why, size_t cap);
/* GET /v1/cluster body: this node, nodes, streams, placement, moves, counters. */
char *mem_cluster_status_json(mem_cluster_t *cl, size_t *len);
/* Prometheus lines (mnemod_cluster_*), malloc'd, or NULL. */
char *mem_cluster_metrics(mem_cluster_t *cl, size_t *len);
/* POST /v1/cluster/snapshot: snapshot every namespace that needs it and, with trim, purge
 * each stream below what every live node and every snapshot covers. *json: the answer. */
int mem_cluster_snapshot(mem_cluster_t *cl, bool trim, char **json, mem_err_t *err);
/* POST /v1/cluster/move: move ns from node `from` to node `to` (pinned: the rebalancer
 * leaves it there). The move runs in the background; *json describes it. MEM_EINVAL,
 * MEM_ENOTFOUND, MEM_EEXISTS (a move of ns is already running). */
int mem_cluster_move(mem_cluster_t *cl, const char *ns, const char *from, const char *to,
                     char **json, mem_err_t *err);
/* POST /v1/cluster/nodes/{id}/drain {"drain": bool}: (un)mark a node for removal; the
 * rebalancer moves its namespaces away. DELETE /v1/cluster/nodes/{id}: forget a drained,
 * stopped node. */
int mem_cluster_drain(mem_cluster_t *cl, const char *node, bool drain, char **json, mem_err_t *err);
int mem_cluster_forget_node(mem_cluster_t *cl, const char *node, char **json, mem_err_t *err);

#endif
