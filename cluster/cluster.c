/* cluster.c - cluster mode: connection, streams, node registry, maintenance, health
 * SPDX-License-Identifier: MIT
 *
 * The design is in cluster.h. This file opens and closes everything, writes this node's
 * heartbeat into the node registry, and runs the maintenance thread: write timeouts, stream
 * state, the maintenance lease, placement changes (move.c) and, on the lease holder, the
 * rebalancer and the snapshot + trim cycle (snap.c).
 */
#include "cluster/cluster.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef MNEMOD_HAVE_NATS

static int unavailable(mem_err_t *err)
{
    return mem_err_set(err, MEM_EBUSY, "cluster mode unavailable");
}
int mem_cluster_open(const mem_cfg_t *cfg, const mem_log_t *log, mem_store_t *st,
                     mem_cluster_t **out, mem_err_t *err)
{
    *out = NULL;
    return mem_err_set(err, MEM_EINVAL,
                       "--nats-url is set but this mnemod was built without libnats "
                       "(install libnats-dev and rebuild)");
}
void mem_cluster_close(mem_cluster_t *cl)
{
}
int mem_cluster_write(mem_cluster_t *cl, mem_store_op_t *op, mem_cluster_done_fn done, void *ud,
                      mem_err_t *err)
{
    return unavailable(err);
}
mem_cluster_route_t mem_cluster_route(mem_cluster_t *cl, const char *ns, bool write, bool forwarded,
                                      const char *avoid, char *addr, size_t addr_cap, char *why,
                                      size_t why_cap)
{
    return MEM_CLUSTER_LOCAL;
}
int mem_cluster_resolve(mem_cluster_t *cl, const char *ns, bool create, mem_err_t *err)
{
    return unavailable(err);
}
int mem_cluster_resolve_start(mem_cluster_t *cl, const char *ns, bool create,
                              mem_cluster_resolved_fn fn, void *ud)
{
    return MEM_EBUSY;
}
bool mem_cluster_serves(mem_cluster_t *cl, const char *ns)
{
    return true;
}
size_t mem_cluster_peers(mem_cluster_t *cl, char (*addrs)[300], size_t cap)
{
    return 0;
}
uint64_t mem_cluster_position(mem_cluster_t *cl, const char *ns)
{
    return 0;
}
const char *mem_cluster_address(const mem_cluster_t *cl)
{
    return "";
}
int mem_cluster_wait_start(mem_cluster_t *cl, const char *ns, uint64_t min_seq, int timeout_ms,
                           mem_cluster_waited_fn fn, void *ud)
{
    return MEM_EBUSY;
}
bool mem_cluster_reached(mem_cluster_t *cl, const char *ns, uint64_t min_seq)
{
    return false;
}
bool mem_cluster_healthy(mem_cluster_t *cl, char *why, size_t cap)
{
    return true;
}
char *mem_cluster_status_json(mem_cluster_t *cl, size_t *len)
{
    return NULL;
}
char *mem_cluster_metrics(mem_cluster_t *cl, size_t *len)
{
    return NULL;
}
int mem_cluster_snapshot(mem_cluster_t *cl, bool trim, char **json, mem_err_t *err)
{
    return unavailable(err);
}
int mem_cluster_move(mem_cluster_t *cl, const char *ns, const char *from, const char *to,
                     char **json, mem_err_t *err)
{
    return unavailable(err);
}
int mem_cluster_drain(mem_cluster_t *cl, const char *node, bool drain, char **json, mem_err_t *err)
{
    return unavailable(err);
}
int mem_cluster_forget_node(mem_cluster_t *cl, const char *node, char **json, mem_err_t *err)
{
    return unavailable(err);
}

#else

#include <jansson.h>

#include "cluster/cluster_int.h"

#define CATCHUP_MS 60000 /* at start, wait at most this long for placed namespaces */

/* ---- small utilities ---- */

int64_t mem_cluster__wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mem_cluster__mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mem_cluster__sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

void mem_cluster__deadline(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* The server's logger, set once by mem_cluster_open before any cluster thread starts and
 * kept for the process's life (the lines of every cluster thread go through it). */
static const mem_log_t *cluster_log;

void mem_cluster__log(const char *level, const char *event, const char *fmt, ...)
{
    mem_log_level_t lv = strcmp(level, "warn") == 0    ? MEM_LOG_WARN
                         : strcmp(level, "error") == 0 ? MEM_LOG_ERROR
                         : strcmp(level, "debug") == 0 ? MEM_LOG_DEBUG
                                                       : MEM_LOG_INFO;
    if (!mem_log_enabled(cluster_log, lv)) return;
    char name[64];
    snprintf(name, sizeof(name), "cluster_%s", event);
    va_list ap;
    va_start(ap, fmt);
    mem_log_v(cluster_log, lv, name, fmt, ap);
    va_end(ap);
}

size_t mem_cluster__stream_of(const mem_cluster_t *cl, const char *ns)
{
    uint32_t h = 2166136261u;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h % cl->k;
}

void mem_cluster__hex(const char *ns, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = ns; *p && n + 3 <= cap; p++)
        n += (size_t)snprintf(out + n, cap - n, "%02x", (unsigned char)*p);
    if (cap) out[n < cap ? n : cap - 1] = '\0';
}

bool mem_cluster__connected(mem_cluster_t *cl)
{
    return cl->nc && natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CONNECTED;
}

static void on_disconnected(natsConnection *nc, void *closure)
{
    mem_cluster_t *cl = closure;
    pthread_mutex_lock(&cl->mu);
    if (!cl->disconnected_ms) cl->disconnected_ms = mem_cluster__mono_ms();
    pthread_mutex_unlock(&cl->mu);
    mem_cluster__log("warn", "nats_disconnected", "node=%s", cl->cfg->node_id);
}

static void on_reconnected(natsConnection *nc, void *closure)
{
    mem_cluster_t *cl = closure;
    pthread_mutex_lock(&cl->mu);
    cl->disconnected_ms = 0;
    pthread_mutex_unlock(&cl->mu);
    mem_cluster__log("info", "nats_reconnected", "node=%s", cl->cfg->node_id);
}

static natsStatus connect_nats(mem_cluster_t *cl, mem_err_t *err)
{
    char urls[sizeof(cl->cfg->nats_url)];
    snprintf(urls, sizeof(urls), "%s", cl->cfg->nats_url);
    const char *list[32];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(urls, ",", &save); t && n < 32;
         t = strtok_r(NULL, ",", &save))
        list[n++] = t;
    natsStatus ns = natsOptions_Create(&cl->nopts);
    if (ns == NATS_OK) ns = natsOptions_SetServers(cl->nopts, list, n);
    if (ns == NATS_OK) ns = natsOptions_SetMaxReconnect(cl->nopts, -1);
    if (ns == NATS_OK) ns = natsOptions_SetReconnectWait(cl->nopts, 100);
    if (ns == NATS_OK) ns = natsOptions_SetTimeout(cl->nopts, 1000);
    if (ns == NATS_OK) ns = natsOptions_SetName(cl->nopts, cl->cfg->node_id);
    if (ns == NATS_OK) ns = natsOptions_SetRetryOnFailedConnect(cl->nopts, true, NULL, NULL);
    if (ns == NATS_OK) ns = natsOptions_SetDisconnectedCB(cl->nopts, on_disconnected, cl);
    if (ns == NATS_OK) ns = natsOptions_SetReconnectedCB(cl->nopts, on_reconnected, cl);
    if (ns != NATS_OK) {
        mem_err_set(err, MEM_EINVAL, "--nats-url: %s", nats_GetLastError(NULL));
        return ns;
    }
    ns = natsConnection_Connect(&cl->nc, cl->nopts);
    if (ns != NATS_OK && ns != NATS_NOT_YET_CONNECTED) {
        mem_err_set(err, MEM_EBUSY, "cannot connect to %s: %s", cl->cfg->nats_url,
                    natsStatus_GetText(ns));
        return ns;
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 2000;
    ns = natsConnection_JetStream(&cl->js, cl->nc, &jo);
    if (ns != NATS_OK)
        mem_err_set(err, MEM_ENOMEM, "jetstream context: %s", natsStatus_GetText(ns));
    return ns;
}

static natsStatus ensure_stream(mem_cluster_t *cl, cl_stream_t *s, mem_err_t *err)
{
    jsStreamInfo *si = NULL;
    jsErrCode ec = 0;
    natsStatus ns = js_GetStreamInfo(&si, cl->js, s->name, NULL, &ec);
    if (ns == NATS_OK && si->Config && !si->Config->AllowDirect) {
        /* made by something else: the fetchers need reads by sequence from any replica */
        mem_err_set(err, MEM_EINVAL,
                    "stream %s exists without allow_direct (made by another tool?): set it or "
                    "delete the stream",
                    s->name);
        jsStreamInfo_Destroy(si);
        return NATS_INVALID_ARG;
    }
    if (ns == NATS_OK) {
        jsStreamInfo_Destroy(si);
        return NATS_OK;
    }
    if (ns != NATS_NOT_FOUND && ec != JSStreamNotFoundErr) {
        mem_err_set(err, MEM_EBUSY, "stream %s: %s", s->name, natsStatus_GetText(ns));
        return ns;
    }
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    const char *subjects[1] = {s->filter};
    sc.Name = s->name;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Replicas = cl->cfg->replicas;
    sc.Duplicates = (int64_t)120 * 1000000000; /* de-duplication window: 2 min */
    sc.AllowDirect = true; /* replicas answer reads by sequence (the fetchers) */
    ns = js_AddStream(&si, cl->js, &sc, NULL, &ec);
    if (ns == NATS_OK || ec == JSStreamNameExistErr) {
        jsStreamInfo_Destroy(si);
        mem_cluster__log("info", "stream", "name=%s replicas=%d created=%d", s->name,
                         cl->cfg->replicas, ns == NATS_OK);
        return NATS_OK;
    }
    mem_err_set(err, MEM_EBUSY, "cannot create stream %s (replicas %d): %s (%d)", s->name,
                cl->cfg->replicas, nats_GetLastError(NULL), (int)ec);
    return ns;
}

static int open_bucket(mem_cluster_t *cl, const char *name, kvStore **out, int64_t deadline,
                       mem_err_t *err)
{
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = name;
    kc.History = 1;
    kc.Replicas = cl->cfg->replicas;
    while (js_CreateKeyValue(out, cl->js, &kc) != NATS_OK &&
           js_KeyValue(out, cl->js, name) != NATS_OK) {
        if (mem_cluster__mono_ms() > deadline)
            return mem_err_set(err, MEM_EBUSY, "cannot open the KV bucket %s: %s", name,
                               nats_GetLastError(NULL));
        mem_cluster__sleep_ms(250);
    }
    return MEM_OK;
}

/* ---- heartbeat and stream state ---- */

/* The position this node reports per stream for trimming: what it applied, lowered to what
 * its catching-up namespaces of that stream still need from the log and to the last
 * committed record of a namespace whose next record is still with the store. */
static uint64_t report_pos(mem_cluster_t *cl, size_t i)
{
    uint64_t pos = cl->streams[i].applied;
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext)
            if (ns->stream == i && ns->applied < pos &&
                (ns->state == CL_NS_CATCHUP || ns->submitted > ns->applied))
                pos = ns->applied; /* catching up, or a record of it still with the store */
    return pos;
}

static void heartbeat(mem_cluster_t *cl, bool ready)
{
    char why[160] = "";
    bool healthy = mem_cluster_healthy(cl, why, sizeof(why));
    json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:b,s:o}", "id", cl->cfg->node_id, "address",
                          cl->advertise, "heartbeat_ms", (json_int_t)mem_cluster__wall_ms(),
                          "started_ms", (json_int_t)cl->started_ms, "ready", ready, "health",
                          mem_cluster__json_text(healthy ? "" : why));
    json_t *ap = json_object();
    size_t live = 0;
    /* a record with a stream position missing would tell the trimmer this node applied
     * nothing of it: out of memory skips the beat instead (the next one is on time) */
    bool ok = o && ap;
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; ok && i < cl->k; i++)
        ok = json_object_set_new(ap, cl->streams[i].name,
                                 json_integer((json_int_t)report_pos(cl, i))) == 0;
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext)
            live += ns->state == CL_NS_LIVE;
    pthread_mutex_unlock(&cl->mu);
    ok = ok && json_object_set(o, "applied", ap) == 0 &&
         json_object_set_new(o, "namespaces", json_integer((json_int_t)live)) == 0;
    char *val = ok ? mem_cluster__json_dump(o) : NULL;
    json_decref(ap);
    json_decref(o);
    if (!val) return;
    uint64_t rev = 0;
    kvStore_Put(&rev, cl->kv_nodes, cl->cfg->node_id, val, (int)strlen(val));
    free(val);
}

static void refresh_streams(mem_cluster_t *cl)
{
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 1000;
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        jsStreamInfo *si = NULL;
        jsErrCode ec = 0;
        if (js_GetStreamInfo(&si, cl->js, s->name, &jo, &ec) != NATS_OK) continue;
        pthread_mutex_lock(&cl->mu);
        s->last_seq = si->State.LastSeq;
        s->first_seq = si->State.FirstSeq;
        s->msgs = si->State.Msgs;
        s->bytes = si->State.Bytes;
        snprintf(s->leader, sizeof(s->leader), "%s",
                 si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "");
        if (cl->cfg->trim_bytes && s->bytes > cl->cfg->trim_bytes) cl->trim_wanted++;
        pthread_mutex_unlock(&cl->mu);
        jsStreamInfo_Destroy(si);
    }
}

static void *maint_main(void *arg)
{
    mem_cluster_t *cl = arg;
    int64_t last_beat = 0;
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        if (!cl->stop) {
            struct timespec ts;
            mem_cluster__deadline(&ts, 200);
            pthread_cond_timedwait(&cl->cv, &cl->mu, &ts);
        }
        bool stop = cl->stop; /* cv is broadcast on every apply: pace the work below */
        cl_job_t *expired = stop ? NULL : mem_cluster__jobs_expired(cl, mem_cluster__mono_ms());
        pthread_mutex_unlock(&cl->mu);
        while (expired) {
            cl_job_t *next = expired->wnext;
            mem_cluster__job_finish(cl, expired);
            expired = next;
        }
        if (stop) break;
        int64_t now = mem_cluster__mono_ms();
        if (now - last_beat < CL_HEARTBEAT_MS || !mem_cluster__connected(cl)) continue;
        last_beat = now;
        heartbeat(cl, true);
        refresh_streams(cl);
        mem_cluster__placement_tick(cl);
        if (!mem_cluster__lease(cl)) continue;
        if (cl->cfg->rebalance && now - cl->last_rebalance_ms >= 2000) {
            cl->last_rebalance_ms = now;
            mem_cluster__rebalance(cl);
        }
        pthread_mutex_lock(&cl->mu);
        bool by_size = cl->trim_wanted > 0;
        cl->trim_wanted = 0;
        pthread_mutex_unlock(&cl->mu);
        bool by_time = cl->cfg->trim_interval_s > 0 &&
                       now - cl->last_trim_ms >= (int64_t)(cl->cfg->trim_interval_s * 1000.0);
        if ((by_size || by_time) && now - cl->last_trim_ms >= 5000) {
            cl->last_trim_ms = now;
            mem_err_t err;
            mem_err_clear(&err);
            char *summary = mem_cluster__trim_cycle(cl, &err);
            mem_cluster__log(summary ? "info" : "warn", "auto_trim", "reason=%s result=\"%s\"",
                             by_size ? "size" : "interval", summary ? summary : err.msg);
            free(summary);
        }
    }
    return NULL;
}

/* ---- open / close ---- */

static void stream_init(mem_cluster_t *cl, size_t i)
{
    cl_stream_t *s = &cl->streams[i];
    s->cl = cl;
    s->idx = i;
    snprintf(s->name, sizeof(s->name), "MNEMOD_%zu", i);
    snprintf(s->filter, sizeof(s->filter), "mnemod.%zu.*", i);
    snprintf(s->wake_subject, sizeof(s->wake_subject), "mnemod.wake.%zu", i);
    pthread_cond_init(&s->wake_cv, NULL);
    s->hints = calloc(CL_HINTS, sizeof(*s->hints)); /* NULL: every record is read */
}

/* Every namespace placed here caught up (or given up on: it keeps trying in the
 * background), or the deadline. */
static void wait_placed(mem_cluster_t *cl, int ms)
{
    struct timespec dl;
    mem_cluster__deadline(&dl, ms);
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        bool busy = cl->cu_head || cl->cu_current;
        if (!busy || cl->stop) break;
        if (pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&cl->mu);
}

int mem_cluster_open(const mem_cfg_t *cfg, const mem_log_t *log, mem_store_t *st,
                     mem_cluster_t **out, mem_err_t *err)
{
    *out = NULL;
    cluster_log = log;
    if (nats_Open(-1) != NATS_OK)
        return mem_err_set(err, MEM_ENOMEM, "cannot initialise the NATS library");
    mem_cluster_t *cl = calloc(1, sizeof(*cl));
    if (!cl) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    cl->cfg = cfg;
    cl->st = st;
    cl->k = cfg->streams ? cfg->streams : 4;
    cl->started_ms = mem_cluster__wall_ms();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    cl->boot = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    mem_cfg_advertise(cfg, cl->advertise, sizeof(cl->advertise));
    pthread_mutex_init(&cl->mu, NULL);
    pthread_cond_init(&cl->cv, NULL);
    pthread_cond_init(&cl->pub_cv, NULL);
    pthread_cond_init(&cl->cu_cv, NULL);
    pthread_cond_init(&cl->waits_cv, NULL);
    pthread_cond_init(&cl->res_cv, NULL);
    cl->streams = calloc(cl->k, sizeof(*cl->streams));
    if (!cl->streams) {
        mem_cluster_close(cl);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cl->k; i++)
        stream_init(cl, i);
    int rc = MEM_OK;
    if (connect_nats(cl, err) != NATS_OK) {
        rc = err->code ? err->code : MEM_EBUSY;
        goto fail;
    }
    /* The JetStream cluster may still be electing its meta leader: retry for a while. */
    int64_t deadline = mem_cluster__mono_ms() + 60000;
    for (size_t i = 0; i < cl->k; i++) {
        natsStatus ns;
        while ((ns = ensure_stream(cl, &cl->streams[i], err)) != NATS_OK) {
            if (ns == NATS_INVALID_ARG || mem_cluster__mono_ms() > deadline) {
                rc = err->code ? err->code : MEM_EBUSY;
                goto fail;
            }
            mem_cluster__sleep_ms(250);
        }
    }
    while ((rc = mem_cluster__snap_ensure_stream(cl, err)) != MEM_OK) {
        if (mem_cluster__mono_ms() > deadline) goto fail;
        mem_cluster__sleep_ms(250);
    }
    if ((rc = open_bucket(cl, CL_KV_NODES, &cl->kv_nodes, deadline, err)) != MEM_OK ||
        (rc = open_bucket(cl, CL_KV_MAP, &cl->kv_map, deadline, err)) != MEM_OK)
        goto fail;
    cl->max_payload = (size_t)natsConnection_GetMaxPayload(cl->nc);
    /* A data file that applied more of a stream than the stream holds followed another log
     * (a NATS cluster that was reset or replaced): replaying this one would skip records. */
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        uint64_t pos = mem_store_log_applied(st, s->name);
        jsStreamInfo *si = NULL;
        jsErrCode ec = 0;
        while (js_GetStreamInfo(&si, cl->js, s->name, NULL, &ec) != NATS_OK) {
            if (mem_cluster__mono_ms() > deadline) {
                rc = mem_err_set(err, MEM_EBUSY, "cannot read stream %s", s->name);
                goto fail;
            }
            mem_cluster__sleep_ms(250);
        }
        s->last_seq = si->State.LastSeq;
        s->first_seq = si->State.FirstSeq;
        jsStreamInfo_Destroy(si);
        if (pos > s->last_seq) {
            rc = mem_err_set(err, MEM_EINVAL,
                             "%s: this data file applied up to %llu but the stream ends at %llu: "
                             "it followed another NATS cluster (start with no data file)",
                             s->name, (unsigned long long)pos, (unsigned long long)s->last_seq);
            goto fail;
        }
        s->applied = pos;
    }
    /* the placement map and the registry first: the fetchers decide with them */
    if ((rc = mem_cluster__map_start(cl, err)) != MEM_OK) goto fail;
    if ((rc = mem_cluster__ctl_start(cl, err)) != MEM_OK) goto fail;
    if (pthread_create(&cl->t_catchup, NULL, mem_cluster__catchup_main, cl) != 0) {
        rc = mem_err_set(err, MEM_ENOMEM, "cannot start the catch-up thread");
        goto fail;
    }
    cl->s_catchup = true;
    if (pthread_create(&cl->t_waits, NULL, mem_cluster__waits_main, cl) != 0) {
        rc = mem_err_set(err, MEM_ENOMEM, "cannot start the min_seq thread");
        goto fail;
    }
    cl->s_waits = true;
    for (size_t i = 0; i < MEM_CLUSTER_RESOLVERS; i++) {
        if (pthread_create(&cl->t_res[i], NULL, mem_cluster__resolver_main, cl) != 0) {
            rc = mem_err_set(err, MEM_ENOMEM, "cannot start the resolver threads");
            goto fail;
        }
        cl->s_res[i] = true;
    }
    for (size_t i = 0; i < cl->k; i++) {
        natsStatus ns = mem_cluster__stream_start(cl, &cl->streams[i]);
        if (ns != NATS_OK) {
            rc = mem_err_set(err, MEM_EBUSY, "cannot start reading %s: %s", cl->streams[i].name,
                             natsStatus_GetText(ns));
            goto fail;
        }
    }
    for (size_t i = 0; i < cfg->publishers && i < MEM_CFG_PUBLISHERS_MAX; i++) {
        if (pthread_create(&cl->t_pub[i], NULL, mem_cluster__pub_main, cl) != 0) {
            rc = mem_err_set(err, MEM_ENOMEM, "cannot start the publisher threads");
            goto fail;
        }
        cl->s_pub[i] = true;
    }
    /* Ready once the namespaces placed here caught up with the log (bounded: a huge
     * backlog keeps replaying after; /healthz says so meanwhile). */
    int64_t t0 = mem_cluster__mono_ms();
    wait_placed(cl, CATCHUP_MS);
    size_t placed = 0;
    pthread_mutex_lock(&cl->mu);
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext)
            placed += ns->state != CL_NS_NONE;
    pthread_mutex_unlock(&cl->mu);
    mem_cluster__log("info", "caught_up", "node=%s namespaces=%zu ms=%lld max_payload=%zu",
                     cfg->node_id, placed, (long long)(mem_cluster__mono_ms() - t0),
                     cl->max_payload);
    heartbeat(cl, true);
    refresh_streams(cl);
    if (pthread_create(&cl->t_maint, NULL, maint_main, cl) != 0) {
        rc = mem_err_set(err, MEM_ENOMEM, "cannot start the cluster thread");
        goto fail;
    }
    cl->s_maint = true;
    *out = cl;
    return MEM_OK;
fail:
    mem_cluster_close(cl);
    return rc;
}

void mem_cluster_close(mem_cluster_t *cl)
{
    if (!cl) return;
    pthread_mutex_lock(&cl->mu);
    cl->stop = true;
    pthread_cond_broadcast(&cl->cv);
    pthread_cond_broadcast(&cl->pub_cv);
    pthread_cond_broadcast(&cl->cu_cv);
    pthread_cond_broadcast(&cl->waits_cv);
    pthread_cond_broadcast(&cl->res_cv);
    for (size_t i = 0; cl->streams && i < cl->k; i++)
        pthread_cond_broadcast(&cl->streams[i].wake_cv);
    pthread_mutex_unlock(&cl->mu);
    if (cl->s_waits) pthread_join(cl->t_waits, NULL);  /* every wait answered (not reached) */
    for (size_t i = 0; i < MEM_CLUSTER_RESOLVERS; i++) /* every resolve answered */
        if (cl->s_res[i]) pthread_join(cl->t_res[i], NULL);
    if (cl->s_maint) pthread_join(cl->t_maint, NULL);
    for (size_t i = 0; i < MEM_CFG_PUBLISHERS_MAX; i++)
        if (cl->s_pub[i]) pthread_join(cl->t_pub[i], NULL);
    if (cl->s_catchup) pthread_join(cl->t_catchup, NULL);
    for (size_t i = 0; cl->streams && i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        if (s->fetcher_started)
            pthread_join(s->fetcher, NULL); /* it stops submitting before it returns */
        if (s->wake_sub) {
            natsSubscription_Unsubscribe(s->wake_sub);
            natsSubscription_Destroy(s->wake_sub);
        }
    }
    if (cl->ctl_sub) {
        natsSubscription_Unsubscribe(cl->ctl_sub);
        natsSubscription_Destroy(cl->ctl_sub);
    }
    mem_cluster__map_stop(cl);
    if (cl->kv_nodes && mem_cluster__connected(cl))
        heartbeat(cl, false); /* stopped: not routed to; its namespaces stay placed here */
    kvStore_Destroy(cl->kv_nodes);
    kvStore_Destroy(cl->kv_map);
    jsCtx_Destroy(cl->js);
    if (cl->nc) {
        natsConnection_Close(cl->nc);
        natsConnection_Destroy(cl->nc);
    }
    natsOptions_Destroy(cl->nopts);
    nats_CloseAndWait(5000);            /* delivery threads have ended: nothing submits any more */
    if (cl->st) mem_store_sync(cl->st); /* every submitted record completes (frees itself) */
    /* writes still queued or waiting: answer them (the connection is gone) */
    pthread_mutex_lock(&cl->mu);
    cl_job_t *left = mem_cluster__jobs_expired(cl, INT64_MAX);
    pthread_mutex_unlock(&cl->mu);
    while (left) {
        cl_job_t *next = left->wnext;
        mem_cluster__job_finish(cl, left);
        left = next;
    }
    for (size_t i = 0; cl->streams && i < cl->k; i++) {
        pthread_cond_destroy(&cl->streams[i].wake_cv);
        free(cl->streams[i].hints);
    }
    free(cl->streams);
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns;) {
            cl_ns_t *next = ns->hnext;
            free(ns);
            ns = next;
        }
    for (size_t i = 0; i < cl->n_nodes; i++)
        free(cl->nodes[i].applied);
    pthread_mutex_destroy(&cl->mu);
    pthread_cond_destroy(&cl->cv);
    pthread_cond_destroy(&cl->pub_cv);
    pthread_cond_destroy(&cl->cu_cv);
    pthread_cond_destroy(&cl->waits_cv);
    pthread_cond_destroy(&cl->res_cv);
    free(cl);
}

/* ---- health ---- */

bool mem_cluster_healthy(mem_cluster_t *cl, char *why, size_t cap)
{
    bool ok = true;
    pthread_mutex_lock(&cl->mu);
    int64_t down = cl->disconnected_ms ? mem_cluster__mono_ms() - cl->disconnected_ms : 0;
    if (down > 2000 || (!cl->nc || natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CLOSED)) {
        snprintf(why, cap, "cannot reach NATS for %.1f s: writes are refused", (double)down / 1e3);
        ok = false;
    }
    for (size_t b = 0; ok && b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ok && ns; ns = ns->hnext) {
            if (ns->state == CL_NS_BOOTSTRAP) {
                snprintf(why, cap, "namespace %s needs a bootstrap: %s", ns->name,
                         ns->why[0] ? ns->why : "the records it needs were trimmed");
                ok = false;
            } else if (ns->state == CL_NS_LIVE && ns->last_known && ns->last > ns->applied &&
                       ns->last - ns->applied > cl->cfg->max_lag &&
                       cl->streams[ns->stream].last_seq > mem_cluster__ns_pos(cl, ns) &&
                       cl->streams[ns->stream].last_seq - mem_cluster__ns_pos(cl, ns) >
                           cl->cfg->max_lag) {
                snprintf(why, cap, "namespace %s is %llu records behind the log (max-lag %zu)",
                         ns->name, (unsigned long long)(ns->last - ns->applied), cl->cfg->max_lag);
                ok = false;
            }
        }
    for (size_t i = 0; ok && i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        if (s->last_seq > s->applied && s->last_seq - s->applied > cl->cfg->max_lag) {
            snprintf(why, cap, "stream %s is %llu records behind (max-lag %zu)", s->name,
                     (unsigned long long)(s->last_seq - s->applied), cl->cfg->max_lag);
            ok = false;
        }
    }
    pthread_mutex_unlock(&cl->mu);
    return ok;
}

const char *mem_cluster_address(const mem_cluster_t *cl)
{
    return cl->advertise;
}

#endif /* MNEMOD_HAVE_NATS */
