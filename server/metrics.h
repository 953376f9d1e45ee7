/* metrics.h - Prometheus counters and histograms of the HTTP layer
 * SPDX-License-Identifier: MIT
 *
 * Observations come from the loop thread; rendering may happen on a worker. A leaf mutex
 * guards the tables.
 */
#ifndef MEM_SERVER_METRICS_H
#define MEM_SERVER_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "server/pool.h"
#include "storage/store.h"

/* Count one finished request: route label, HTTP status, seconds from arrival to reply. */
void mem_srv_metrics_observe(const char *route, int status, double seconds);
/* Count one retrieve's scanned fraction (scanned / segments in the namespace). */
void mem_srv_metrics_observe_scan(double fraction);
/* Count one request's provider job (--embedder openai:URL): its outcome (a MEM_E* code or
 * MEM_OK), the calls it made (retries included), its retries, and its seconds. Any thread. */
void mem_srv_metrics_observe_embedder(int rc, size_t calls, size_t retries, double seconds);
/* Count one answer by where it was made (server/loop.c): kind "retrieve", "segment" (a GET of
 * one) or "write_ack",
 * on_loop true when the event loop answered it (no pool round trip). */
void mem_srv_metrics_observe_answer(const char *kind, bool on_loop);
/* Count one read tried on the event loop that went to the pool after all: reason "locked",
 * "graph", "budget", "sqlite" or "embedder". */
void mem_srv_metrics_observe_fallback(const char *reason);
/* Event loop: a spin after an answer caught the next request line, or ran out. */
void mem_srv_metrics_observe_spin(bool caught);
/* Event loop: a spin lost the CPU to another task (and stopped). */
void mem_srv_metrics_observe_spin_preempted(void);
/* Render everything (HTTP tables, the request pool's counters, store metrics, namespaces,
 * kernel) as Prometheus text. st may be NULL while loading, pool when there is none. Any
 * thread. Returns a malloc'd NUL-terminated string, or NULL. */
char *mem_srv_metrics_render(mem_store_t *st, const mem_srv_pool_t *pool, const char *kernel,
                             size_t *len);

#endif
