/* cluster.h - replicated namespaces on NATS JetStream (issue 7), between server/ and storage/
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Single-node mode (no MNEMOD_NATS_URL) never calls into this module. In cluster
 * mode a namespace is the unit of placement: it hashes (FNV-1a) onto one of K JetStream
 * streams MNEMOD_0..K-1 (replicas R) and owns one subject there, mnemod.<i>.<hex(name)>.
 * A write op built by api/ is not submitted to the local writer: the origin node, whose
 * api/ already fixed ids, dimension and now_ms (the clock a missing timestamp resolves
 * against), serializes it into a binary record (record.c), publishes it with a message id
 * (de-duplication of retries) and the expected last sequence of the namespace's subject
 * (Nats-Expected-Last-Subject-Sequence; a stale expectation is re-read from JetStream and
 * retried a bounded number of times, then MEM_CLUSTER_CONFLICT -> 409), and returns only
 * once JetStream acknowledged it AND this node applied it. Every node, the origin
 * included, reads every stream in order from its applied position + 1 (JetStream direct
 * get by sequence, so no consumer state lives on the servers) and submits each record to
 * the store with (stream, sequence): the writer stores
 * that position in the same transaction as the rows and skips replays, so apply is
 * idempotent and, the log being totally ordered per stream, deterministic: validation
 * outcomes (monotonic timestamps, duplicate ids) are identical on every node and the
 * origin answers with its own apply result.
 *
 * Sequences. A write's "log_seq" is the JetStream stream sequence of its record. All the
 * records of a namespace live in one stream, so log_seq increases with every write to the
 * namespace (not densely: other namespaces share the stream). A read with "min_seq": S
 * waits (at most 5 s, then 503) until this node applied its namespace's stream up to S,
 * which includes the write that returned log_seq S: read-your-writes on any node.
 *
 * Threads: open/close on one thread; write/wait/status/metrics from worker threads (they
 * block); records are applied on NATS delivery threads and the store's writer thread.
 */
#ifndef MEM_CLUSTER_CLUSTER_H
#define MEM_CLUSTER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "storage/store.h"

typedef struct mem_cluster mem_cluster_t;

/* mem_cluster_write's answer when the expected-sequence retries are exhausted (HTTP 409). */
#define MEM_CLUSTER_CONFLICT 1

/* Connect, create the streams and the node registry (KV bucket mnemod_nodes) when missing,
 * subscribe after the applied positions. Blocks (bounded). MEM_OK or MEM_E* with err. log is
 * the server's logger (borrowed for the cluster's life; NULL: no lines). */
int mem_cluster_open(const mem_cfg_t *cfg, const mem_log_t *log, mem_store_t *st,
                     mem_cluster_t **out, mem_err_t *err);
/* Stop consuming, wait for queued applies, remove this node from the registry. NULL-safe. */
void mem_cluster_close(mem_cluster_t *cl);

/* Replicate op and wait until it is applied here; op's results (rc, err, outs, created,
 * n_applied) are then those of the local apply. Returns op->rc, MEM_EBUSY (log unavailable
 * or apply too slow; err says which, a retry is safe), or MEM_CLUSTER_CONFLICT. */
int mem_cluster_write(mem_cluster_t *cl, mem_store_op_t *op, uint64_t *log_seq, mem_err_t *err);
/* Wait until ns's stream is applied up to min_seq: MEM_OK, or MEM_EBUSY after timeout_ms. */
int mem_cluster_wait(mem_cluster_t *cl, const char *ns, uint64_t min_seq, int timeout_ms);
/* GET /v1/cluster body: nodes, streams, per-namespace positions. malloc'd JSON or NULL. */
char *mem_cluster_status_json(mem_cluster_t *cl, size_t *len);
/* Prometheus lines (mnemod_cluster_*), malloc'd, or NULL. */
char *mem_cluster_metrics(mem_cluster_t *cl, size_t *len);

/* Snapshots (bootstrap and log trimming). A snapshot is a consistent copy of this node's
 * whole database (every namespace and the applied position of every stream), published in
 * 512 KiB chunks to the stream MNEMOD_SNAP (subjects mnemod.snap.<id>.<i>) with a manifest
 * on mnemod.snap.latest; the previous snapshot's chunks are then purged. With trim, each
 * stream is purged below min(the snapshot's position, every live node's applied position)
 * + 1, so no live node loses a record it still needs. Blocks. *json is the answer body. */
int mem_cluster_snapshot(mem_cluster_t *cl, bool trim, char **json, mem_err_t *err);
/* Before the store opens: when cfg->data_path does not exist yet and a snapshot was
 * published, restore it there (*restored = true); the node then replays the log after the
 * snapshot's positions. No snapshot: nothing to do. Blocks (bounded). */
int mem_cluster_bootstrap(const mem_cfg_t *cfg, const mem_log_t *log, bool *restored,
                          mem_err_t *err);

#endif
