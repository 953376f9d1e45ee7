/* placemap.c - the placement map and the node registry, cached; routing decisions
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Both live in JetStream KV buckets; two watcher threads keep a copy in memory
 * (cl->ht, cl->nodes), so mem_cluster_route answers from memory on the loop thread. A
 * namespace's entry, key ns.<hex(name)>:
 *   {"ns": name, "stream": i, "nodes": [primary, ...], "join": id|null, "drop": id|null,
 *    "pinned": bool, "epoch": n}
 * is created with the namespace's first write (the least loaded eligible nodes, rendezvous
 * hashing for ties: placement.c; kvStore_Create: of concurrent creators exactly one wins,
 * the others read its entry) and
 * changed only by compare-and-set on its revision (moves). Keys drain.<id> mark nodes for
 * removal; key lease names the node that runs the rebalancer and the trim cycle.
 *
 * When an entry places a namespace on this node, the namespace goes to the catch-up worker
 * (fetch.c) before it is served; when an entry stops placing it here it is LEAVING: still
 * applied for a grace period (answers to this node's own writes), then forgotten.
 */
#ifdef MNEMOD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cluster/cluster_int.h"

#define LEAVE_GRACE_MS 5000 /* after the write timeout: a LEAVING namespace is forgotten */

/* ---- the namespace table (mu held) ---- */

static size_t bucket_of(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h % CL_NS_BUCKETS;
}

cl_ns_t *mem_cluster__ns_find(mem_cluster_t *cl, const char *name)
{
    for (cl_ns_t *ns = cl->ht[bucket_of(name)]; ns; ns = ns->hnext)
        if (strcmp(ns->name, name) == 0) return ns;
    return NULL;
}

cl_ns_t *mem_cluster__ns_get(mem_cluster_t *cl, const char *name)
{
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    if (ns) return ns;
    if (strlen(name) > MEM_STORE_NS_MAX) return NULL;
    ns = calloc(1, sizeof(*ns));
    if (!ns) return NULL;
    snprintf(ns->name, sizeof(ns->name), "%s", name);
    ns->stream = mem_cluster__stream_of(cl, name);
    int n = snprintf(ns->subject, sizeof(ns->subject), "mnemod.%zu.", ns->stream);
    mem_cluster__hex(name, ns->subject + n, sizeof(ns->subject) - (size_t)n);
    size_t b = bucket_of(name);
    ns->hnext = cl->ht[b];
    cl->ht[b] = ns;
    cl->n_ns++;
    return ns;
}

bool mem_cluster__ns_holds(const mem_cluster_t *cl, const cl_ns_t *ns, const char *node)
{
    for (size_t i = 0; i < ns->n_nodes; i++)
        if (strcmp(ns->nodes[i], node) == 0) return true;
    return false;
}

uint64_t mem_cluster__ns_pos(const mem_cluster_t *cl, const cl_ns_t *ns)
{
    uint64_t pos = ns->applied;
    /* A record of ns still with the store (the origin's own apply is not counted by the
     * fetcher, which passed it over) keeps ns at what is committed. */
    if (ns->state == CL_NS_LIVE && ns->verified && ns->submitted <= ns->applied &&
        cl->streams[ns->stream].applied > pos)
        pos = cl->streams[ns->stream].applied;
    return pos;
}

void mem_cluster__ns_catchup(mem_cluster_t *cl, cl_ns_t *ns, const char *why)
{
    if (ns->state == CL_NS_LIVE || ns->state == CL_NS_NONE || ns->state == CL_NS_LEAVING)
        ns->state = CL_NS_CATCHUP;
    ns->verified = false;
    if (why) snprintf(ns->why, sizeof(ns->why), "%s", why);
    if (ns->cu_queued || cl->cu_current == ns) {
        ns->cu_again = true;
        return;
    }
    ns->cu_queued = true;
    ns->cu_next = NULL;
    if (cl->cu_tail)
        cl->cu_tail->cu_next = ns;
    else
        cl->cu_head = ns;
    cl->cu_tail = ns;
    pthread_cond_signal(&cl->cu_cv);
}

/* ---- nodes (mu held) ---- */

const cl_node_t *mem_cluster__node_find(const mem_cluster_t *cl, const char *id)
{
    for (size_t i = 0; i < cl->n_nodes; i++)
        if (!cl->nodes[i].deleted && strcmp(cl->nodes[i].id, id) == 0) return &cl->nodes[i];
    return NULL;
}

bool mem_cluster__node_alive(const cl_node_t *n, int64_t now_wall)
{
    return n && !n->deleted && n->ready && now_wall - n->heartbeat_ms <= CL_ALIVE_MS;
}

size_t mem_cluster__eligible(mem_cluster_t *cl, const char **ids, size_t cap)
{
    size_t n = 0;
    int64_t now = mem_cluster__wall_ms();
    for (size_t i = 0; i < cl->n_nodes && n < cap; i++) {
        const cl_node_t *nd = &cl->nodes[i];
        bool self = strcmp(nd->id, cl->cfg->node_id) == 0;
        if (nd->deleted || nd->draining) continue;
        if (!self && !mem_cluster__node_alive(nd, now)) continue;
        ids[n++] = nd->id;
    }
    return n;
}

/* The table entry of node id, added when new. A full table reuses the entry of a node
 * deleted from the registry. MEM_OK; MEM_ELIMIT when every entry holds a registered node
 * (the caller logs it: that node is left out); MEM_ENOMEM (nothing changed: try again).
 * Under cl->mu. */
static int node_slot(mem_cluster_t *cl, const char *id, cl_node_t **out)
{
    for (size_t i = 0; i < cl->n_nodes; i++)
        if (strcmp(cl->nodes[i].id, id) == 0) {
            *out = &cl->nodes[i];
            return MEM_OK;
        }
    cl_node_t *n = NULL;
    if (cl->n_nodes < CL_NODE_MAX) {
        n = &cl->nodes[cl->n_nodes];
    } else {
        for (size_t i = 0; i < cl->n_nodes && !n; i++)
            if (cl->nodes[i].deleted) n = &cl->nodes[i];
        if (!n) return MEM_ELIMIT;
    }
    /* its stream positions decide how far the log may be trimmed: a node without them
     * would read as having applied nothing, or be skipped */
    uint64_t *applied = calloc(cl->k ? cl->k : 1, sizeof(uint64_t));
    if (!applied) return MEM_ENOMEM;
    if (n == &cl->nodes[cl->n_nodes]) cl->n_nodes++;
    free(n->applied);
    memset(n, 0, sizeof(*n));
    snprintf(n->id, sizeof(n->id), "%s", id);
    n->applied = applied;
    *out = n;
    return MEM_OK;
}

/* A registry record. MEM_ENOMEM when it could not be read or kept (nothing changed: the
 * watcher tries it again); a record that is not JSON is taken for the node leaving, as a
 * delete. */
static int apply_node(mem_cluster_t *cl, const char *id, const char *val, int len, bool deleted)
{
    json_t *o = NULL;
    if (!deleted && mem_cluster__json_parse(val, (size_t)len, &o) == MEM_ENOMEM) return MEM_ENOMEM;
    pthread_mutex_lock(&cl->mu);
    cl_node_t *n = NULL;
    int rc = MEM_OK;
    if (deleted)
        n = (cl_node_t *)mem_cluster__node_find(cl, id);
    else
        rc = node_slot(cl, id, &n);
    bool left_out = rc == MEM_ELIMIT;
    int64_t now = mem_cluster__mono_ms();
    bool say = left_out && now - cl->node_limit_logged_ms >= 60000;
    if (say) cl->node_limit_logged_ms = now;
    if (n) {
        bool draining = n->draining;
        if (deleted || !json_is_object(o)) {
            n->deleted = true;
        } else {
            n->deleted = false;
            n->draining = draining;
            snprintf(n->addr, sizeof(n->addr), "%s",
                     json_string_value(json_object_get(o, "address"))
                         ? json_string_value(json_object_get(o, "address"))
                         : "");
            n->heartbeat_ms = json_integer_value(json_object_get(o, "heartbeat_ms"));
            n->started_ms = json_integer_value(json_object_get(o, "started_ms"));
            n->ready = json_is_true(json_object_get(o, "ready"));
            const char *h = json_string_value(json_object_get(o, "health"));
            snprintf(n->health, sizeof(n->health), "%s", h ? h : "");
            json_t *ap = json_object_get(o, "applied");
            for (size_t i = 0; n->applied && i < cl->k; i++) {
                json_t *v = json_object_get(ap, cl->streams[i].name);
                n->applied[i] = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
            }
        }
    }
    pthread_mutex_unlock(&cl->mu);
    json_decref(o);
    if (say) /* at most once a minute: every heartbeat of that node comes here */
        mem_cluster__log("error", "node_limit",
                         "node=%.63s msg=\"left out: this node keeps track of at most %d nodes "
                         "(remove stopped ones with DELETE /v1/cluster/nodes/ID)\"",
                         id, CL_NODE_MAX);
    return rc == MEM_ENOMEM ? MEM_ENOMEM : MEM_OK;
}

/* ---- map entries ---- */

static int set_drain(mem_cluster_t *cl, const char *id, bool on)
{
    pthread_mutex_lock(&cl->mu);
    cl_node_t *n = NULL;
    int rc = node_slot(cl, id, &n);
    if (n) {
        n->draining = on;
        if (!n->heartbeat_ms) n->deleted = !on; /* known only by its mark so far */
    }
    pthread_mutex_unlock(&cl->mu);
    return rc == MEM_ENOMEM ? MEM_ENOMEM : MEM_OK;
}

/* mu held: the entry of ns changed (or went away: o NULL). */
static void entry_update(mem_cluster_t *cl, cl_ns_t *ns, const json_t *o, uint64_t rev)
{
    const char *me = cl->cfg->node_id;
    bool was_placed = ns->in_map && (mem_cluster__ns_holds(cl, ns, me) || !strcmp(ns->join, me));
    ns->in_map = o != NULL;
    ns->map_rev = rev;
    ns->n_nodes = 0;
    ns->join[0] = ns->drop[0] = '\0';
    ns->pinned = false;
    if (o) {
        json_t *arr = json_object_get(o, "nodes"), *v;
        size_t i;
        json_array_foreach(arr, i, v)
        {
            if (ns->n_nodes < MEM_CLUSTER_PLACE_MAX && json_is_string(v))
                snprintf(ns->nodes[ns->n_nodes++], sizeof(ns->nodes[0]), "%s",
                         json_string_value(v));
        }
        const char *j = json_string_value(json_object_get(o, "join"));
        const char *d = json_string_value(json_object_get(o, "drop"));
        snprintf(ns->join, sizeof(ns->join), "%s", j ? j : "");
        snprintf(ns->drop, sizeof(ns->drop), "%s", d ? d : "");
        ns->pinned = json_is_true(json_object_get(o, "pinned"));
        ns->epoch = (uint64_t)json_integer_value(json_object_get(o, "epoch"));
    }
    bool placed = ns->in_map && (mem_cluster__ns_holds(cl, ns, me) || !strcmp(ns->join, me));
    if (placed && (ns->state == CL_NS_NONE || ns->state == CL_NS_LEAVING)) {
        /* placed here (again): bring our copy up to date before serving it */
        uint64_t have = mem_store_log_ns_applied(cl->st, ns->name);
        ns->applied = have;
        ns->submitted = have;
        ns->state = CL_NS_CATCHUP;
        ns->bootstrap_first = strcmp(ns->join, me) == 0 && !mem_cluster__ns_holds(cl, ns, me);
        mem_cluster__ns_catchup(cl, ns, NULL);
        mem_cluster__log("info", "placed_here", "ns=%s nodes=%zu join=%s applied=%llu", ns->name,
                         ns->n_nodes, ns->join, (unsigned long long)have);
    } else if (!placed && was_placed && ns->state != CL_NS_NONE && ns->state != CL_NS_LEAVING) {
        bool served = ns->state == CL_NS_LIVE;
        ns->state = CL_NS_LEAVING;
        ns->verified = false;
        /* this node's own writes in flight still get their answers from the local apply */
        ns->leave_at_ms =
            mem_cluster__mono_ms() +
            (served ? (int64_t)(cl->cfg->cluster_write_timeout_s * 1000.0) + LEAVE_GRACE_MS : 0);
        mem_cluster__log("info", "placed_elsewhere", "ns=%s", ns->name);
    }
    pthread_cond_broadcast(&cl->cv);
}

/* A map entry (or a drain mark). MEM_ENOMEM when it could not be read or kept: nothing
 * changed, the caller tries again (read as "no entry" it would take the namespace off this
 * node, or its nodes). An entry that is not JSON is taken for a delete. */
static int apply_entry(mem_cluster_t *cl, const char *key, const char *val, int len, uint64_t rev,
                       bool deleted)
{
    if (strncmp(key, "drain.", 6) == 0) return set_drain(cl, key + 6, !deleted);
    if (strncmp(key, "ns.", 3) != 0) return MEM_OK; /* the lease, or something newer */
    json_t *o = NULL;
    if (!deleted && mem_cluster__json_parse(val, (size_t)len, &o) == MEM_ENOMEM) return MEM_ENOMEM;
    const char *name = json_string_value(json_object_get(o, "ns"));
    char decoded[MEM_STORE_NS_MAX + 1];
    if (!name) { /* a delete carries no value: the key names the namespace */
        size_t n = 0;
        for (const char *p = key + 3; p[0] && p[1] && n < MEM_STORE_NS_MAX; p += 2) {
            unsigned int c;
            if (sscanf(p, "%2x", &c) != 1) break;
            decoded[n++] = (char)c;
        }
        decoded[n] = '\0';
        name = decoded;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        o = NULL;
    }
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_get(cl, name);
    if (ns && rev >= ns->map_rev) entry_update(cl, ns, o, rev);
    pthread_mutex_unlock(&cl->mu);
    /* (a name too long for the table is no namespace of ours) */
    int rc = ns || strlen(name) > MEM_STORE_NS_MAX ? MEM_OK : MEM_ENOMEM;
    json_decref(o); /* name may be o's */
    return rc;
}

static void watch_loop(mem_cluster_t *cl, bool map)
{
    kvWatcher *w = map ? cl->w_map : cl->w_nodes;
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        bool stop = cl->stop;
        pthread_mutex_unlock(&cl->mu);
        if (stop) break;
        kvEntry *e = NULL;
        natsStatus s = kvWatcher_Next(&e, w, 500);
        if (s == NATS_TIMEOUT) continue;
        if (s != NATS_OK) {
            if (s == NATS_ILLEGAL_STATE) break; /* stopped */
            mem_cluster__sleep_ms(100);
            continue;
        }
        if (!e) { /* every existing entry has been delivered */
            pthread_mutex_lock(&cl->mu);
            if (map)
                cl->map_loaded = true;
            else
                cl->nodes_loaded = true;
            pthread_cond_broadcast(&cl->cv);
            pthread_mutex_unlock(&cl->mu);
            continue;
        }
        bool deleted = kvEntry_Operation(e) != kvOp_Put;
        /* out of memory: the same entry again, until it is in or the cluster stops (the
         * next one may be a later revision of the same key, but this one must not be lost
         * meanwhile: a node would drop out of a namespace or the registry) */
        for (int tries = 0;; tries++) {
            int rc = map ? apply_entry(cl, kvEntry_Key(e), kvEntry_Value(e), kvEntry_ValueLen(e),
                                       kvEntry_Revision(e), deleted)
                         : apply_node(cl, kvEntry_Key(e), kvEntry_Value(e), kvEntry_ValueLen(e),
                                      deleted);
            if (rc == MEM_OK) break;
            if (tries == 0)
                mem_cluster__log("warn", "out_of_memory", "bucket=%s key=%s msg=\"retrying\"",
                                 map ? CL_KV_MAP : CL_KV_NODES, kvEntry_Key(e));
            pthread_mutex_lock(&cl->mu);
            bool stop_now = cl->stop;
            pthread_mutex_unlock(&cl->mu);
            if (stop_now) break;
            mem_cluster__sleep_ms(100);
        }
        kvEntry_Destroy(e);
    }
}

static void *watch_nodes_main(void *arg)
{
    watch_loop(arg, false);
    return NULL;
}

static void *watch_map_main(void *arg)
{
    watch_loop(arg, true);
    return NULL;
}

int mem_cluster__map_start(mem_cluster_t *cl, mem_err_t *err)
{
    kvWatchOptions wo;
    kvWatchOptions_Init(&wo);
    int64_t deadline = mem_cluster__mono_ms() + 60000;
    while (kvStore_WatchAll(&cl->w_nodes, cl->kv_nodes, &wo) != NATS_OK) {
        if (mem_cluster__mono_ms() > deadline)
            return mem_err_set(err, MEM_EBUSY, "cannot watch %s: %s", CL_KV_NODES,
                               nats_GetLastError(NULL));
        mem_cluster__sleep_ms(250);
    }
    while (kvStore_WatchAll(&cl->w_map, cl->kv_map, &wo) != NATS_OK) {
        if (mem_cluster__mono_ms() > deadline)
            return mem_err_set(err, MEM_EBUSY, "cannot watch %s: %s", CL_KV_MAP,
                               nats_GetLastError(NULL));
        mem_cluster__sleep_ms(250);
    }
    if (pthread_create(&cl->t_wnodes, NULL, watch_nodes_main, cl) != 0)
        return mem_err_set(err, MEM_ENOMEM, "cannot start a watcher thread");
    cl->s_wnodes = true;
    if (pthread_create(&cl->t_wmap, NULL, watch_map_main, cl) != 0)
        return mem_err_set(err, MEM_ENOMEM, "cannot start a watcher thread");
    cl->s_wmap = true;
    struct timespec dl;
    mem_cluster__deadline(&dl, 30000);
    pthread_mutex_lock(&cl->mu);
    while (!(cl->map_loaded && cl->nodes_loaded) && !cl->stop)
        if (pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) != 0) break;
    bool ok = cl->map_loaded && cl->nodes_loaded;
    /* One node more than the table holds would be left out by every other node: refuse
     * to start rather than run unseen. A node already registered (a restart) is in it. */
    size_t others = 0;
    for (size_t i = 0; i < cl->n_nodes; i++)
        others += !cl->nodes[i].deleted && strcmp(cl->nodes[i].id, cl->cfg->node_id) != 0;
    bool full = others >= CL_NODE_MAX && !mem_cluster__node_find(cl, cl->cfg->node_id);
    pthread_mutex_unlock(&cl->mu);
    if (full)
        return mem_err_set(err, MEM_EINVAL,
                           "the cluster already has %d nodes, the most one holds: remove a "
                           "stopped one first (DELETE /v1/cluster/nodes/ID)",
                           CL_NODE_MAX);
    return ok ? MEM_OK : mem_err_set(err, MEM_EBUSY, "cannot read the placement map");
}

void mem_cluster__map_stop(mem_cluster_t *cl)
{
    if (cl->w_nodes) kvWatcher_Stop(cl->w_nodes);
    if (cl->w_map) kvWatcher_Stop(cl->w_map);
    if (cl->s_wnodes) pthread_join(cl->t_wnodes, NULL);
    if (cl->s_wmap) pthread_join(cl->t_wmap, NULL);
    kvWatcher_Destroy(cl->w_nodes);
    kvWatcher_Destroy(cl->w_map);
    cl->w_nodes = cl->w_map = NULL;
}

static void ns_key(const char *ns, char *out, size_t cap)
{
    int n = snprintf(out, cap, "ns.");
    mem_cluster__hex(ns, out + n, cap - (size_t)n);
}

/* The entry of key from the bucket's stream leader (a replica may lag a fresh create). */
static int leader_get(mem_cluster_t *cl, const char *key, char **val, int *len, uint64_t *rev,
                      bool *found)
{
    char subject[300];
    snprintf(subject, sizeof(subject), "$KV.%s.%s", CL_KV_MAP, key);
    natsMsg *m = NULL;
    jsErrCode ec = 0;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 2000;
    natsStatus s = js_GetLastMsg(&m, cl->js, "KV_" CL_KV_MAP, subject, &jo, &ec);
    *found = false;
    if (s == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) return MEM_OK;
    if (s != NATS_OK) return MEM_EBUSY;
    const char *op = NULL;
    bool deleted = natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op &&
                   (strcmp(op, "DEL") == 0 || strcmp(op, "PURGE") == 0);
    if (!deleted) {
        *len = natsMsg_GetDataLength(m);
        *val = malloc((size_t)*len + 1);
        if (*val) {
            memcpy(*val, natsMsg_GetData(m), (size_t)*len);
            (*val)[*len] = '\0';
            *found = true;
        }
    }
    *rev = natsMsg_GetSequence(m);
    natsMsg_Destroy(m);
    return deleted || *val ? MEM_OK : MEM_ENOMEM;
}

int mem_cluster__map_fetch(mem_cluster_t *cl, const char *name, bool create, mem_err_t *err)
{
    char key[200];
    ns_key(name, key, sizeof(key));
    for (int attempt = 0; attempt < 5; attempt++) {
        char *val = NULL;
        int len = 0;
        uint64_t rev = 0;
        bool found = false;
        if (leader_get(cl, key, &val, &len, &rev, &found) != MEM_OK)
            return mem_err_set(err, MEM_EBUSY, "cannot read the placement of %s", name);
        if (found) {
            int rc = apply_entry(cl, key, val, len, rev, false);
            free(val);
            return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "out of memory");
        }
        if (!create) return mem_err_set(err, MEM_ENOTFOUND, "namespace not found: %s", name);
        const char *ids[CL_NODE_MAX];
        size_t idx[MEM_CLUSTER_PLACE_MAX], loads[CL_NODE_MAX];
        pthread_mutex_lock(&cl->mu);
        size_t n = mem_cluster__eligible(cl, ids, CL_NODE_MAX);
        for (size_t i = 0; i < n; i++)
            loads[i] = 0;
        for (size_t b = 0; b < CL_NS_BUCKETS; b++) /* namespaces on each, joins included */
            for (cl_ns_t *e = cl->ht[b]; e; e = e->hnext) {
                if (!e->in_map) continue;
                for (size_t i = 0; i < n; i++)
                    loads[i] += mem_cluster__ns_holds(cl, e, ids[i]) || !strcmp(e->join, ids[i]);
            }
        size_t r = cl->cfg->ns_replicas;
        size_t got = mem_cluster_place_least(name, ids, loads, n, r, idx);
        const char *chosen[MEM_CLUSTER_PLACE_MAX];
        char copy[MEM_CLUSTER_PLACE_MAX][64];
        for (size_t i = 0; i < got; i++) {
            snprintf(copy[i], sizeof(copy[i]), "%s", ids[idx[i]]);
            chosen[i] = copy[i];
        }
        pthread_mutex_unlock(&cl->mu);
        if (got == 0) return mem_err_set(err, MEM_EBUSY, "no node can hold %s now", name);
        char *text = mem_cluster__entry_json(name, mem_cluster__stream_of(cl, name), chosen, got,
                                             NULL, NULL, false, 1);
        if (!text) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        uint64_t nrev = 0;
        natsStatus s = kvStore_Create(&nrev, cl->kv_map, key, text, (int)strlen(text));
        if (s == NATS_OK) {
            /* placed; when this node's copy of it could not be kept, the watcher brings it */
            int rc = apply_entry(cl, key, text, (int)strlen(text), nrev, false);
            mem_cluster__log("info", "placed", "ns=%s nodes=%s%s%s", name, chosen[0],
                             got > 1 ? "," : "", got > 1 ? chosen[1] : "");
            free(text);
            return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "out of memory");
        }
        free(text);
        /* somebody else created it first (or a transient failure): read it again */
        mem_cluster__sleep_ms(20);
    }
    return mem_err_set(err, MEM_EBUSY, "cannot place %s now", name);
}

int mem_cluster__map_put(mem_cluster_t *cl, const char *ns, const char *const *nodes, size_t n,
                         const char *join, const char *drop, bool pinned, uint64_t rev,
                         mem_err_t *err)
{
    char key[200];
    ns_key(ns, key, sizeof(key));
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *e = mem_cluster__ns_find(cl, ns);
    uint64_t epoch = e ? e->epoch + 1 : 1;
    pthread_mutex_unlock(&cl->mu);
    char *text = mem_cluster__entry_json(ns, mem_cluster__stream_of(cl, ns), nodes, n, join, drop,
                                         pinned, epoch);
    if (!text) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    uint64_t nrev = 0;
    natsStatus s = kvStore_Update(&nrev, cl->kv_map, key, text, (int)strlen(text), rev);
    int rc = s == NATS_OK ? apply_entry(cl, key, text, (int)strlen(text), nrev, false) : MEM_OK;
    free(text);
    if (s != NATS_OK)
        return mem_err_set(err, MEM_EEXISTS, "the placement of %s changed meanwhile", ns);
    /* written; this node's copy follows with the watcher */
    return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "out of memory");
}

bool mem_cluster__lease(mem_cluster_t *cl)
{
    const char *me = cl->cfg->node_id;
    int64_t now = mem_cluster__wall_ms();
    char *val = NULL;
    int len = 0;
    uint64_t rev = 0;
    bool found = false, mine = false;
    if (leader_get(cl, "lease", &val, &len, &rev, &found) != MEM_OK) goto out;
    char text[200];
    snprintf(text, sizeof(text), "{\"node\":\"%s\",\"until_ms\":%lld}", me,
             (long long)(now + CL_LEASE_MS));
    uint64_t nrev = 0;
    if (!found) {
        mine = kvStore_Create(&nrev, cl->kv_map, "lease", text, (int)strlen(text)) == NATS_OK;
        goto out;
    }
    json_t *o = NULL;
    /* unread for want of memory it is not free: this round takes nothing */
    if (mem_cluster__json_parse(val, (size_t)len, &o) == MEM_ENOMEM) goto out;
    const char *holder = json_string_value(json_object_get(o, "node"));
    json_int_t until = json_integer_value(json_object_get(o, "until_ms"));
    bool take = !holder || strcmp(holder, me) == 0 || until < now;
    json_decref(o);
    if (take)
        mine = kvStore_Update(&nrev, cl->kv_map, "lease", text, (int)strlen(text), rev) == NATS_OK;
out:
    free(val);
    pthread_mutex_lock(&cl->mu);
    if (mine != cl->lease_mine)
        mem_cluster__log("info", "lease", "node=%s holds=%d", me, mine ? 1 : 0);
    cl->lease_mine = mine;
    pthread_mutex_unlock(&cl->mu);
    return mine;
}

/* ---- routing (public; never block) ---- */

mem_cluster_route_t mem_cluster_route(mem_cluster_t *cl, const char *name, bool write,
                                      bool forwarded, const char *avoid, char *addr,
                                      size_t addr_cap, char *why, size_t why_cap)
{
    const char *me = cl->cfg->node_id;
    mem_cluster_route_t out;
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    if (!ns || !ns->in_map) {
        out = MEM_CLUSTER_RESOLVE;
        goto done;
    }
    bool holder = mem_cluster__ns_holds(cl, ns, me);
    if (holder && ns->state == CL_NS_LIVE) {
        out = MEM_CLUSTER_LOCAL;
        goto done;
    }
    if (forwarded) { /* a holder catching up waits for it (on a worker): RESOLVE */
        out = holder ? MEM_CLUSTER_RESOLVE : MEM_CLUSTER_MISDIRECTED;
        snprintf(why, why_cap, "namespace %s is %s on node %s", name,
                 holder ? "still catching up" : "not placed", me);
        goto done;
    }
    int64_t now = mem_cluster__wall_ms();
    size_t n = ns->n_nodes;
    size_t start =
        write || n == 0 ? 0 : (size_t)(__atomic_add_fetch(&cl->route_ctr, 1, __ATOMIC_RELAXED) % n);
    out = MEM_CLUSTER_UNAVAILABLE;
    snprintf(why, why_cap, "no live node holds namespace %s now", name);
    for (size_t k = 0; k < n; k++) {
        const char *id = ns->nodes[(start + k) % n];
        if (strcmp(id, me) == 0) continue;
        const cl_node_t *nd = mem_cluster__node_find(cl, id);
        if (!mem_cluster__node_alive(nd, now) || !nd->addr[0]) continue;
        if (avoid && *avoid && strcmp(avoid, nd->addr) == 0) continue;
        snprintf(addr, addr_cap, "%s", nd->addr);
        out = MEM_CLUSTER_FORWARD;
        break;
    }
    if (out == MEM_CLUSTER_UNAVAILABLE && holder) out = MEM_CLUSTER_RESOLVE; /* wait for ours */
done:
    pthread_mutex_unlock(&cl->mu);
    return out;
}

int mem_cluster_resolve(mem_cluster_t *cl, const char *name, bool create, mem_err_t *err)
{
    int rc = mem_cluster__map_fetch(cl, name, create, err);
    if (rc != MEM_OK) return rc;
    /* placed here: a fresh namespace is caught up within milliseconds; wait for that */
    struct timespec dl;
    mem_cluster__deadline(&dl, 3000);
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        cl_ns_t *ns = mem_cluster__ns_find(cl, name);
        if (!ns || !mem_cluster__ns_holds(cl, ns, cl->cfg->node_id) || ns->state == CL_NS_LIVE ||
            cl->stop)
            break;
        if (pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) != 0) break;
    }
    pthread_mutex_unlock(&cl->mu);
    return MEM_OK;
}

/* Routing's placement reads run here, not on the server's threads: they wait for NATS (a
 * KV read, up to its timeout when NATS is slow or gone) and for a copy to catch up, and on
 * libuv's pool they held the threads the namespace listing and the relay's name lookups
 * need. */
int mem_cluster_resolve_start(mem_cluster_t *cl, const char *name, bool create,
                              mem_cluster_resolved_fn fn, void *ud)
{
    if (strlen(name) > MEM_STORE_NS_MAX) return MEM_EINVAL;
    cl_resolve_t *q = calloc(1, sizeof(*q));
    if (!q) return MEM_ENOMEM;
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->create = create;
    q->fn = fn;
    q->ud = ud;
    pthread_mutex_lock(&cl->mu);
    bool stop = cl->stop;
    if (!stop) {
        if (cl->res_tail)
            cl->res_tail->next = q;
        else
            cl->res_head = q;
        cl->res_tail = q;
        cl->n_resolves++;
        pthread_cond_signal(&cl->res_cv);
    }
    pthread_mutex_unlock(&cl->mu);
    if (stop) {
        free(q);
        return MEM_EBUSY;
    }
    return MEM_OK;
}

void *mem_cluster__resolver_main(void *arg)
{
    mem_cluster_t *cl = arg;
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        while (!cl->res_head && !cl->stop)
            pthread_cond_wait(&cl->res_cv, &cl->mu);
        cl_resolve_t *q = cl->res_head;
        if (!q) break; /* stopping, nothing left */
        cl->res_head = q->next;
        if (!cl->res_head) cl->res_tail = NULL;
        bool stop = cl->stop;
        pthread_mutex_unlock(&cl->mu);
        mem_err_t err;
        mem_err_clear(&err);
        int rc = stop ? mem_err_set(&err, MEM_EBUSY, "the server is shutting down")
                      : mem_cluster_resolve(cl, q->name, q->create, &err);
        q->fn(q->ud, rc, &err);
        free(q);
        pthread_mutex_lock(&cl->mu);
        cl->n_resolves--;
    }
    pthread_mutex_unlock(&cl->mu);
    return NULL;
}

bool mem_cluster_serves(mem_cluster_t *cl, const char *name)
{
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    bool yes = ns && ns->state == CL_NS_LIVE && mem_cluster__ns_holds(cl, ns, cl->cfg->node_id);
    pthread_mutex_unlock(&cl->mu);
    return yes;
}

uint64_t mem_cluster_position(mem_cluster_t *cl, const char *name)
{
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    bool live = ns && ns->state == CL_NS_LIVE;
    pthread_mutex_unlock(&cl->mu);
    /* its last record applied here: the same on every holder up to date, whatever else the
     * stream carries or when a snapshot was taken */
    return live ? mem_store_log_ns_applied(cl->st, name) : 0;
}

size_t mem_cluster_peers(mem_cluster_t *cl, char (*addrs)[300], size_t cap)
{
    size_t n = 0;
    int64_t now = mem_cluster__wall_ms();
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; i < cl->n_nodes && n < cap; i++) {
        const cl_node_t *nd = &cl->nodes[i];
        if (strcmp(nd->id, cl->cfg->node_id) == 0 || !mem_cluster__node_alive(nd, now) ||
            !nd->addr[0])
            continue;
        snprintf(addrs[n++], 300, "%s", nd->addr);
    }
    pthread_mutex_unlock(&cl->mu);
    return n;
}

bool mem_cluster_reached(mem_cluster_t *cl, const char *name, uint64_t min_seq)
{
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    bool ok = ns && ns->state == CL_NS_LIVE && mem_cluster__ns_pos(cl, ns) >= min_seq;
    pthread_mutex_unlock(&cl->mu);
    return ok;
}

/* ---- min_seq waits that hold no thread ----
 * A read with min_seq used to wait on a request worker, and a few of them (a lagging
 * namespace, NATS slow or gone, a min_seq from another node's future) held every worker, so
 * the node's other reads queued behind them for the whole wait. A wait is a list entry
 * instead: the thread below completes each once its namespace reaches the sequence (cv is
 * broadcast on every apply and state change; it also looks every WAIT_POLL_MS, as positions
 * a passed-over record moves are not broadcast) or once its deadline passes. */

#define WAIT_POLL_MS 200

int mem_cluster_wait_start(mem_cluster_t *cl, const char *name, uint64_t min_seq, int timeout_ms,
                           mem_cluster_waited_fn fn, void *ud)
{
    if (strlen(name) > MEM_STORE_NS_MAX) return MEM_EINVAL;
    cl_wait_t *w = calloc(1, sizeof(*w));
    if (!w) return MEM_ENOMEM;
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->seq = min_seq;
    w->deadline_ms = mem_cluster__mono_ms() + timeout_ms;
    w->fn = fn;
    w->ud = ud;
    pthread_mutex_lock(&cl->mu);
    bool stop = cl->stop;
    if (!stop) {
        w->next = cl->seq_waits;
        cl->seq_waits = w;
        cl->n_seq_waits++;
        pthread_cond_signal(&cl->waits_cv);
    }
    pthread_mutex_unlock(&cl->mu);
    if (stop) {
        free(w);
        return MEM_EBUSY;
    }
    return MEM_OK;
}

void *mem_cluster__waits_main(void *arg)
{
    mem_cluster_t *cl = arg;
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        int64_t now = mem_cluster__mono_ms(), next_ms = INT64_MAX;
        cl_wait_t *done = NULL;
        for (cl_wait_t **pp = &cl->seq_waits; *pp;) {
            cl_wait_t *w = *pp;
            cl_ns_t *ns = mem_cluster__ns_find(cl, w->name);
            w->reached = ns && ns->state == CL_NS_LIVE && mem_cluster__ns_pos(cl, ns) >= w->seq;
            if (w->reached || cl->stop || now >= w->deadline_ms) {
                *pp = w->next;
                cl->n_seq_waits--;
                w->next = done;
                done = w;
                continue;
            }
            if (w->deadline_ms < next_ms) next_ms = w->deadline_ms;
            pp = &w->next;
        }
        if (done) { /* the callbacks run without mu (they may take the caller's locks) */
            pthread_mutex_unlock(&cl->mu);
            while (done) {
                cl_wait_t *next = done->next;
                done->fn(done->ud, done->reached);
                free(done);
                done = next;
            }
            pthread_mutex_lock(&cl->mu);
            continue;
        }
        if (cl->stop) break;
        struct timespec ts;
        if (!cl->seq_waits) { /* nothing to look at until a wait begins */
            mem_cluster__deadline(&ts, 1000);
            pthread_cond_timedwait(&cl->waits_cv, &cl->mu, &ts);
        } else {
            int64_t ms = next_ms - now;
            mem_cluster__deadline(&ts, (int)(ms < WAIT_POLL_MS ? ms : WAIT_POLL_MS));
            pthread_cond_timedwait(&cl->cv, &cl->mu, &ts);
        }
    }
    pthread_mutex_unlock(&cl->mu);
    return NULL;
}

#endif /* MNEMOD_HAVE_NATS */
