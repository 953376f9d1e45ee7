/* status.c - GET /v1/cluster and the mnemod_cluster_* metrics
 * SPDX-License-Identifier: MIT
 */
#ifdef MNEMOD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cluster/cluster_int.h"

static const char *state_name(int s)
{
    switch (s) {
    case CL_NS_CATCHUP:
        return "catching_up";
    case CL_NS_BOOTSTRAP:
        return "needs_bootstrap";
    case CL_NS_LIVE:
        return "live";
    case CL_NS_LEAVING:
        return "leaving";
    default:
        return "none";
    }
}

static json_t *strings(const char (*a)[64], size_t n)
{
    const char *v[MEM_CLUSTER_PLACE_MAX];
    for (size_t i = 0; i < n && i < MEM_CLUSTER_PLACE_MAX; i++)
        v[i] = a[i];
    return mem_cluster__json_strings(v, n < MEM_CLUSTER_PLACE_MAX ? n : MEM_CLUSTER_PLACE_MAX);
}

/* Set o[k] = v (taken) and array appends; a failure clears *ok: the document is then out of
 * memory as a whole, never one with a node or a namespace missing. */
static void put(json_t *o, const char *k, json_t *v, bool *ok)
{
    if (json_object_set_new(o, k, v) != 0) *ok = false;
}

static void add(json_t *arr, json_t *v, bool *ok)
{
    if (json_array_append_new(arr, v) != 0) *ok = false;
}

/* The node's event counters, in the order both the status document and /metrics list
 * them; one table so the two can never disagree. Called with cl->mu held. */
enum { CL_COUNTERS_MAX = 14 };
typedef struct {
    const char *name;
    uint64_t v;
} cl_counter_t;

static size_t counters_read(const mem_cluster_t *cl, cl_counter_t out[CL_COUNTERS_MAX])
{
    const cl_counter_t all[CL_COUNTERS_MAX] = {
        {"writes", cl->n_writes},
        {"conflicts", cl->n_conflicts},
        {"publish_retries", cl->n_pub_retries},
        {"publish_failures", cl->n_pub_failures},
        {"apply_timeouts", cl->n_apply_timeouts},
        {"records_applied", cl->n_applied},
        {"apply_failures", cl->n_apply_failures},
        {"too_big", cl->n_too_big},
        {"catchups", cl->n_catchups},
        {"bootstraps", cl->n_bootstraps},
        {"snapshots", cl->n_snapshots},
        {"trims", cl->n_trims},
        {"moves_started", cl->n_moves_started},
        {"moves_done", cl->n_moves_done},
    };
    memcpy(out, all, sizeof(all));
    return CL_COUNTERS_MAX;
}

char *mem_cluster_status_json(mem_cluster_t *cl, size_t *len)
{
    char why[200] = "";
    bool healthy = mem_cluster_healthy(cl, why, sizeof(why));
    char url[256] = "";
    bool connected = mem_cluster__connected(cl);
    if (connected) natsConnection_GetConnectedUrl(cl->nc, url, sizeof(url));
    json_t *root = json_object();
    bool ok = true;
    put(root, "node", json_string(cl->cfg->node_id), &ok);
    put(root, "address", json_string(cl->advertise), &ok);
    put(root, "healthy", json_boolean(healthy), &ok);
    if (!healthy) put(root, "reason", mem_cluster__json_text(why), &ok);
    put(root, "nats_connected", json_boolean(connected), &ok);
    put(root, "nats_url", json_string(url), &ok);
    put(root, "max_payload", json_integer((json_int_t)cl->max_payload), &ok);
    put(root, "namespace_replicas", json_integer((json_int_t)cl->cfg->ns_replicas), &ok);
    int64_t now = mem_cluster__wall_ms();
    json_t *nodes = json_array(), *streams = json_array(), *nss = json_array();
    pthread_mutex_lock(&cl->mu);
    put(root, "lease", json_boolean(cl->lease_mine), &ok);
    for (size_t i = 0; i < cl->n_nodes; i++) {
        const cl_node_t *n = &cl->nodes[i];
        if (n->deleted) continue;
        size_t holds = 0;
        for (size_t b = 0; b < CL_NS_BUCKETS; b++)
            for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext)
                holds += ns->in_map && mem_cluster__ns_holds(cl, ns, n->id);
        json_t *o = json_pack("{s:s,s:s,s:I,s:b,s:b,s:b,s:I,s:b}", "id", n->id, "address", n->addr,
                              "age_ms", (json_int_t)(now - n->heartbeat_ms), "alive",
                              mem_cluster__node_alive(n, now), "ready", n->ready, "draining",
                              n->draining, "namespaces", (json_int_t)holds, "self",
                              strcmp(n->id, cl->cfg->node_id) == 0);
        if (n->health[0]) put(o, "health", mem_cluster__json_text(n->health), &ok);
        json_t *ap = json_object();
        for (size_t k = 0; n->applied && k < cl->k; k++)
            put(ap, cl->streams[k].name, json_integer((json_int_t)n->applied[k]), &ok);
        put(o, "applied", ap, &ok);
        add(nodes, o, &ok);
    }
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:i}", "name", s->name, "first_seq",
                              (json_int_t)s->first_seq, "last_seq", (json_int_t)s->last_seq,
                              "applied_seq", (json_int_t)s->applied, "lag",
                              (json_int_t)(s->last_seq > s->applied ? s->last_seq - s->applied : 0),
                              "messages", (json_int_t)s->msgs, "bytes", (json_int_t)s->bytes,
                              "leader", s->leader, "replicas", cl->cfg->replicas);
        put(o, "skipped_unread", json_integer((json_int_t)s->hint_skips), &ok);
        if (s->trimmed_below) /* this node's last trim of it (each namespace keeps its last) */
            put(o, "trimmed_below", json_integer((json_int_t)s->trimmed_below), &ok);
        add(streams, o, &ok);
    }
    size_t moving = 0;
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext) {
            if (!ns->in_map && ns->state == CL_NS_NONE) continue;
            moving += ns->join[0] != 0;
            json_t *o = json_pack(
                "{s:s,s:s,s:o,s:s,s:I}", "name", ns->name, "stream", cl->streams[ns->stream].name,
                "nodes", strings((const char(*)[64])ns->nodes, ns->n_nodes), "state",
                state_name(ns->state), "applied_seq", (json_int_t)mem_cluster__ns_pos(cl, ns));
            if (ns->join[0]) put(o, "join", json_string(ns->join), &ok);
            if (ns->drop[0]) put(o, "drop", json_string(ns->drop), &ok);
            if (ns->pinned) put(o, "pinned", json_true(), &ok);
            if (ns->why[0] && ns->state != CL_NS_LIVE)
                put(o, "reason", mem_cluster__json_text(ns->why), &ok);
            add(nss, o, &ok);
        }
    json_t *c = json_object();
    cl_counter_t counters[CL_COUNTERS_MAX];
    size_t n_counters = counters_read(cl, counters);
    for (size_t i = 0; i < n_counters; i++)
        put(c, counters[i].name, json_integer((json_int_t)counters[i].v), &ok);
    put(c, "forgotten", json_integer((json_int_t)cl->n_forgotten), &ok);
    put(c, "pending_writes", json_integer((json_int_t)cl->n_jobs), &ok);
    put(c, "pending_reads", json_integer((json_int_t)cl->n_seq_waits), &ok);
    put(c, "pending_resolves", json_integer((json_int_t)cl->n_resolves), &ok);
    pthread_mutex_unlock(&cl->mu);
    put(root, "moving", json_integer((json_int_t)moving), &ok);
    put(root, "nodes", nodes, &ok);
    put(root, "streams", streams, &ok);
    put(root, "namespaces", nss, &ok);
    put(root, "counters", c, &ok);
    char *out = ok ? mem_cluster__json_dump(root) : NULL;
    json_decref(root);
    if (out) *len = strlen(out);
    return out;
}

char *mem_cluster_metrics(mem_cluster_t *cl, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    char why[200];
    bool healthy = mem_cluster_healthy(cl, why, sizeof(why));
    bool connected = mem_cluster__connected(cl);
    pthread_mutex_lock(&cl->mu);
    size_t live = 0, catching = 0, boot = 0;
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext) {
            live += ns->state == CL_NS_LIVE;
            catching += ns->state == CL_NS_CATCHUP;
            boot += ns->state == CL_NS_BOOTSTRAP;
        }
    fprintf(f,
            "# HELP mnemod_cluster_connected 1 when connected to a NATS server\n"
            "# TYPE mnemod_cluster_connected gauge\nmnemod_cluster_connected %d\n"
            "# HELP mnemod_cluster_healthy 0 when /healthz answers 503 (see /v1/cluster)\n"
            "# TYPE mnemod_cluster_healthy gauge\nmnemod_cluster_healthy %d\n"
            "# HELP mnemod_cluster_namespaces namespaces placed on this node, by state\n"
            "# TYPE mnemod_cluster_namespaces gauge\n"
            "mnemod_cluster_namespaces{state=\"live\"} %zu\n"
            "mnemod_cluster_namespaces{state=\"catching_up\"} %zu\n"
            "mnemod_cluster_namespaces{state=\"needs_bootstrap\"} %zu\n",
            connected ? 1 : 0, healthy ? 1 : 0, live, catching, boot);
    fprintf(f, "# HELP mnemod_cluster_stream_last_seq last sequence of the stream (JetStream)\n"
               "# TYPE mnemod_cluster_stream_last_seq gauge\n");
    for (size_t i = 0; i < cl->k; i++)
        fprintf(f, "mnemod_cluster_stream_last_seq{stream=\"%s\"} %llu\n", cl->streams[i].name,
                (unsigned long long)cl->streams[i].last_seq);
    fprintf(f, "# HELP mnemod_cluster_stream_applied_seq position this node reached\n"
               "# TYPE mnemod_cluster_stream_applied_seq gauge\n");
    for (size_t i = 0; i < cl->k; i++)
        fprintf(f, "mnemod_cluster_stream_applied_seq{stream=\"%s\"} %llu\n", cl->streams[i].name,
                (unsigned long long)cl->streams[i].applied);
    fprintf(f, "# HELP mnemod_cluster_stream_lag records of the stream not yet read here\n"
               "# TYPE mnemod_cluster_stream_lag gauge\n");
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        fprintf(f, "mnemod_cluster_stream_lag{stream=\"%s\"} %llu\n", s->name,
                (unsigned long long)(s->last_seq > s->applied ? s->last_seq - s->applied : 0));
    }
    cl_counter_t counters[CL_COUNTERS_MAX];
    size_t n_counters = counters_read(cl, counters);
    for (size_t i = 0; i < n_counters; i++)
        fprintf(f, "# TYPE mnemod_cluster_%s_total counter\nmnemod_cluster_%s_total %llu\n",
                counters[i].name, counters[i].name, (unsigned long long)counters[i].v);
    fprintf(f, "# TYPE mnemod_cluster_pending_writes gauge\nmnemod_cluster_pending_writes %zu\n",
            cl->n_jobs);
    fprintf(f, "# TYPE mnemod_cluster_pending_reads gauge\nmnemod_cluster_pending_reads %zu\n",
            cl->n_seq_waits);
    pthread_mutex_unlock(&cl->mu);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

#endif /* MNEMOD_HAVE_NATS */
