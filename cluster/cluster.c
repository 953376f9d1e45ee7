/* cluster.c - replicated namespaces on NATS JetStream (see cluster.h for the design)
 * SPDX-License-Identifier: MIT
 *
 * Reading the log. Each stream has a fetcher thread that reads records by sequence with
 * JetStream direct get (stream option AllowDirect: any replica answers, no consumer state
 * lives on the servers, so losing a server or the meta leader does not stall it) and
 * submits them to the store in order, pipelined; the store's writer thread completes them
 * (on_applied). When the next sequence does not exist yet the fetcher sleeps until a
 * wake-up (an empty core-NATS message on mnemod.wake.<i>, published by the origin after
 * each acknowledged write) or 250 ms. An apply that failed (storage error, or a gap) makes
 * the fetcher wait for the queue and restart after the stored position.
 *
 * Threads and locks. cl->mu (leaf) guards the per-stream positions, the per-namespace
 * last record sequences, the waiters and the counters; cl->cv is broadcast whenever a
 * record is applied. A maintenance thread refreshes stream info and writes this node's
 * heartbeat into the KV bucket.
 */
#include "cluster/cluster.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster/record.h"

#ifndef MNEMOD_HAVE_NATS

int mem_cluster_open(const mem_cfg_t *cfg, const mem_log_t *log, mem_store_t *st,
                     mem_cluster_t **out, mem_err_t *err)
{
    *out = NULL;
    return mem_err_set(err, MEM_EINVAL,
                       "MNEMOD_NATS_URL is set but this mnemod was built without libnats "
                       "(install libnats-dev and rebuild)");
}
void mem_cluster_close(mem_cluster_t *cl)
{
}
int mem_cluster_write(mem_cluster_t *cl, mem_store_op_t *op, uint64_t *log_seq, mem_err_t *err)
{
    return mem_err_set(err, MEM_EBUSY, "cluster mode unavailable");
}
int mem_cluster_wait(mem_cluster_t *cl, const char *ns, uint64_t min_seq, int timeout_ms)
{
    return MEM_EBUSY;
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
    return mem_err_set(err, MEM_EBUSY, "cluster mode unavailable");
}
int mem_cluster_bootstrap(const mem_cfg_t *cfg, const mem_log_t *log, bool *restored,
                          mem_err_t *err)
{
    *restored = false;
    return MEM_OK;
}

#else

#include <jansson.h>
#include <nats/nats.h>

#define PUBLISH_DEADLINE_MS 15000 /* keep retrying the publish (same message id) this long */
#define APPLY_DEADLINE_MS   15000 /* then wait this long for the local apply */
#define CONFLICT_RETRIES    10
#define HEARTBEAT_MS        1000
#define NODE_DEAD_MS        5000
#define IDLE_POLL_MS        250   /* no wake-up: look for a new record this often */
#define CATCHUP_MS          60000 /* at start, wait at most this long per stream to catch up */
#define KV_BUCKET           "mnemod_nodes"
#define SNAP_STREAM         "MNEMOD_SNAP"
#define SNAP_LATEST         "mnemod.snap.latest"
#define SNAP_CHUNK          (512 * 1024)

typedef struct cl_stream {
    struct mem_cluster *cl;
    int idx;
    char name[32];         /* MNEMOD_<i> */
    char filter[32];       /* mnemod.<i>.* */
    char wake_subject[48]; /* mnemod.wake.<i> */
    natsSubscription *wake_sub;
    pthread_t fetcher;
    bool fetcher_started;
    pthread_cond_t wake_cv; /* with mu */
    bool wake;              /* mu */
    uint64_t applied;       /* mu: last sequence applied here */
    uint64_t last_seq;      /* mu: the stream's last sequence (refreshed) */
    uint64_t first_seq;     /* mu: the stream's first sequence (refreshed; > 1 when trimmed) */
    bool behind_trim;       /* mu: the records this node needs were trimmed: re-bootstrap */
    uint64_t msgs;          /* mu */
    char leader[64];        /* mu */
    bool broken;            /* mu: an apply failed; restart after the stored position */
    uint64_t resubscribes;  /* mu: restarts */
} cl_stream_t;

typedef struct cl_nspos {
    char ns[MEM_STORE_NS_MAX + 1];
    uint64_t last; /* sequence of the namespace's last record applied here */
} cl_nspos_t;

typedef struct cl_waiter {
    char msgid[MEM_CLUSTER_MSGID_MAX];
    mem_store_op_t *op;
    bool done;
    uint64_t seq;
    struct cl_waiter *next;
} cl_waiter_t;

struct mem_cluster {
    const mem_cfg_t *cfg;
    const mem_log_t *log; /* the server's logger */
    mem_store_t *st;
    natsOptions *nopts;
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
    size_t k;
    cl_stream_t *streams;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cl_nspos_t *nspos; /* mu */
    size_t n_nspos, cap_nspos;
    cl_waiter_t *waiters; /* mu */
    pthread_t maint;
    bool maint_started;
    bool stop; /* mu */
    char advertise[300];
    int64_t started_ms;
    uint64_t msg_ctr; /* atomic */
    uint64_t boot;
    /* counters, mu */
    uint64_t n_writes, n_conflicts, n_pub_retries, n_pub_failures, n_apply_timeouts, n_applied,
        n_apply_failures;
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static void deadline_ts(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* One line through the server's logger, as event cluster_<event> (every value escaped). */
static void logf_(const mem_log_t *lg, mem_log_level_t level, const char *event, const char *fmt,
                  ...) __attribute__((format(printf, 4, 5)));
static void logf_(const mem_log_t *lg, mem_log_level_t level, const char *event, const char *fmt,
                  ...)
{
    if (!mem_log_enabled(lg, level)) return;
    char name[64];
    snprintf(name, sizeof(name), "cluster_%s", event);
    va_list ap;
    va_start(ap, fmt);
    mem_log_v(lg, level, name, fmt, ap);
    va_end(ap);
}

/* ---- placement ---- */

static size_t stream_of(const mem_cluster_t *cl, const char *ns)
{
    uint32_t h = 2166136261u;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h % cl->k;
}

static void subject_of(const mem_cluster_t *cl, const char *ns, char *out, size_t cap)
{
    int n = snprintf(out, cap, "mnemod.%zu.", stream_of(cl, ns));
    for (const char *p = ns; *p && (size_t)n + 3 < cap; p++)
        n += snprintf(out + n, cap - (size_t)n, "%02x", (unsigned char)*p);
}

/* ---- per-namespace positions (mu held) ---- */

static cl_nspos_t *nspos_find(mem_cluster_t *cl, const char *ns)
{
    for (size_t i = 0; i < cl->n_nspos; i++)
        if (strcmp(cl->nspos[i].ns, ns) == 0) return &cl->nspos[i];
    return NULL;
}

static void nspos_set(mem_cluster_t *cl, const char *ns, uint64_t seq)
{
    cl_nspos_t *p = nspos_find(cl, ns);
    if (!p) {
        if (cl->n_nspos == cl->cap_nspos) {
            size_t cap = cl->cap_nspos ? cl->cap_nspos * 2 : 16;
            cl_nspos_t *n = realloc(cl->nspos, cap * sizeof(*n));
            if (!n) return; /* only an optimisation: the next write re-reads JetStream */
            cl->nspos = n;
            cl->cap_nspos = cap;
        }
        p = &cl->nspos[cl->n_nspos++];
        snprintf(p->ns, sizeof(p->ns), "%s", ns);
        p->last = 0;
    }
    if (seq > p->last) p->last = seq;
}

/* ---- applying records ---- */

static void copy_results(mem_store_op_t *dst, const mem_store_op_t *src)
{
    dst->rc = src->rc;
    dst->err = src->err;
    dst->created = src->created;
    dst->n_applied = src->n_applied;
    if (dst->kind == MEM_STORE_OP_INSERT && dst->outs && src->outs && dst->n_segs == src->n_segs)
        memcpy(dst->outs, src->outs, src->n_segs * sizeof(*src->outs));
}

/* Writer thread: the record is committed (or failed). */
static void on_applied(mem_store_op_t *op, void *ud)
{
    mem_cluster_rec_t *rec = (mem_cluster_rec_t *)op;
    cl_stream_t *s = ud;
    mem_cluster_t *cl = s->cl;
    uint64_t pos = mem_store_log_applied(cl->st, s->name);
    pthread_mutex_lock(&cl->mu);
    if (pos >= op->log_seq) {
        if (op->log_seq > s->applied) s->applied = op->log_seq;
        if (!op->log_skipped) {
            cl->n_applied++;
            nspos_set(cl, op->ns, op->log_seq);
        }
        for (cl_waiter_t *w = cl->waiters; w; w = w->next)
            if (!w->done && strcmp(w->msgid, rec->msgid) == 0) {
                if (!op->log_skipped) copy_results(w->op, op);
                w->seq = op->log_seq;
                w->done = true;
            }
    } else if (!s->broken) {
        s->broken = true;
        cl->n_apply_failures++;
        logf_(cl->log, MEM_LOG_WARN, "apply_failed", "stream=%s seq=%llu applied=%llu err=\"%s\"",
              s->name, (unsigned long long)op->log_seq, (unsigned long long)pos, op->err.msg);
    }
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    mem_cluster_rec_free(rec);
}

static void wake_stream(mem_cluster_t *cl, cl_stream_t *s)
{
    pthread_mutex_lock(&cl->mu);
    s->wake = true;
    pthread_cond_signal(&s->wake_cv);
    pthread_mutex_unlock(&cl->mu);
}

static void on_wake(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    cl_stream_t *s = closure;
    natsMsg_Destroy(msg);
    wake_stream(s->cl, s);
}

/* Hand one record to the store (waits while the write queue is full). false: stopping. */
static bool submit_record(mem_cluster_t *cl, cl_stream_t *s, natsMsg *msg, uint64_t seq)
{
    mem_cluster_rec_t *rec =
        mem_cluster_rec_decode(natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg));
    if (!rec) {
        /* Not ours or corrupt: apply an empty insert, which fails validation everywhere
         * alike and moves the position on. */
        rec = calloc(1, sizeof(*rec));
        if (!rec) return true; /* retried: the position did not move */
        rec->op.kind = MEM_STORE_OP_INSERT;
        snprintf(rec->op.ns, sizeof(rec->op.ns), "invalid");
        logf_(cl->log, MEM_LOG_WARN, "bad_record", "stream=%s seq=%llu", s->name,
              (unsigned long long)seq);
    }
    rec->op.log_stream = s->name;
    rec->op.log_seq = seq;
    for (;;) {
        if (mem_store_submit(cl->st, &rec->op, on_applied, s) == MEM_OK) return true;
        pthread_mutex_lock(&cl->mu);
        bool stop = cl->stop;
        pthread_mutex_unlock(&cl->mu);
        if (stop) {
            mem_cluster_rec_free(rec);
            return false;
        }
        sleep_ms(5); /* the write queue is full: back-pressure */
    }
}

/* Fetcher thread of stream s: read records by sequence, apply them in order. */
static void *fetch_main(void *arg)
{
    cl_stream_t *s = arg;
    mem_cluster_t *cl = s->cl;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 1000;
    uint64_t next = mem_store_log_applied(cl->st, s->name) + 1;
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        bool stop = cl->stop, broken = s->broken;
        pthread_mutex_unlock(&cl->mu);
        if (stop) break;
        if (broken) { /* an apply failed: settle the queue, restart after what is stored */
            mem_store_sync(cl->st);
            next = mem_store_log_applied(cl->st, s->name) + 1;
            pthread_mutex_lock(&cl->mu);
            s->broken = false;
            s->resubscribes++;
            pthread_mutex_unlock(&cl->mu);
            logf_(cl->log, MEM_LOG_INFO, "restart", "stream=%s from=%llu", s->name,
                  (unsigned long long)next);
            sleep_ms(200); /* a local storage error would otherwise spin */
        }
        natsMsg *m = NULL;
        jsErrCode ec = 0;
        jsDirectGetMsgOptions dg;
        jsDirectGetMsgOptions_Init(&dg);
        dg.Sequence = next;
        natsStatus ns = js_DirectGetMsg(&m, cl->js, s->name, &jo, &dg);
        if (ns == NATS_OK) {
            uint64_t seq = natsMsg_GetSequence(m);
            if (seq == 0) seq = next;
            bool go = seq == next ? submit_record(cl, s, m, seq) : true;
            natsMsg_Destroy(m);
            if (!go) break;
            if (seq == next) next++;
            continue;
        }
        if (ns == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) {
            pthread_mutex_lock(&cl->mu);
            if (s->first_seq > next && s->last_seq >= s->first_seq && !s->behind_trim) {
                s->behind_trim = true; /* shown by /v1/cluster */
                logf_(cl->log, MEM_LOG_ERROR, "behind_trimmed_log",
                      "stream=%s next=%llu first=%llu msg=\"the records this node needs were "
                      "trimmed: restart it with an empty data file to bootstrap from the "
                      "snapshot\"",
                      s->name, (unsigned long long)next, (unsigned long long)s->first_seq);
            }
            if (!s->wake && !cl->stop) {
                struct timespec ts;
                deadline_ts(&ts, IDLE_POLL_MS);
                pthread_cond_timedwait(&s->wake_cv, &cl->mu, &ts);
            }
            s->wake = false;
            pthread_mutex_unlock(&cl->mu);
            continue;
        }
        sleep_ms(50); /* no replica answers right now (failover, reconnect): retry */
    }
    return NULL;
}

/* ---- streams, registry, heartbeat ---- */

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
        logf_(cl->log, MEM_LOG_INFO, "stream", "name=%s replicas=%d created=%d", s->name,
              cl->cfg->replicas, ns == NATS_OK);
        return NATS_OK;
    }
    mem_err_set(err, MEM_EBUSY, "cannot create stream %s (replicas %d): %s (%d)", s->name,
                cl->cfg->replicas, nats_GetLastError(NULL), (int)ec);
    return ns;
}

static natsStatus ensure_snap_stream(mem_cluster_t *cl, mem_err_t *err)
{
    jsStreamInfo *si = NULL;
    jsErrCode ec = 0;
    if (js_GetStreamInfo(&si, cl->js, SNAP_STREAM, NULL, &ec) == NATS_OK) {
        jsStreamInfo_Destroy(si);
        return NATS_OK;
    }
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    const char *subjects[1] = {"mnemod.snap.>"};
    sc.Name = SNAP_STREAM;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Replicas = cl->cfg->replicas;
    natsStatus ns = js_AddStream(&si, cl->js, &sc, NULL, &ec);
    jsStreamInfo_Destroy(si);
    if (ns == NATS_OK || ec == JSStreamNameExistErr) return NATS_OK;
    mem_err_set(err, MEM_EBUSY, "cannot create stream %s: %s", SNAP_STREAM,
                nats_GetLastError(NULL));
    return ns;
}

static void heartbeat(mem_cluster_t *cl)
{
    if (!cl->kv) return;
    json_t *o =
        json_pack("{s:s,s:s,s:I,s:I}", "id", cl->cfg->node_id, "address", cl->advertise,
                  "heartbeat_ms", (json_int_t)wall_ms(), "started_ms", (json_int_t)cl->started_ms);
    json_t *ap = json_object();
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; i < cl->k; i++)
        json_object_set_new(ap, cl->streams[i].name,
                            json_integer((json_int_t)cl->streams[i].applied));
    pthread_mutex_unlock(&cl->mu);
    json_object_set_new(o, "applied", ap);
    char *val = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!val) return;
    uint64_t rev = 0;
    kvStore_Put(&rev, cl->kv, cl->cfg->node_id, val, (int)strlen(val));
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
        snprintf(s->leader, sizeof(s->leader), "%s",
                 si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "");
        pthread_mutex_unlock(&cl->mu);
        jsStreamInfo_Destroy(si);
    }
}

static natsStatus start_stream(mem_cluster_t *cl, cl_stream_t *s)
{
    uint64_t pos = mem_store_log_applied(cl->st, s->name);
    pthread_mutex_lock(&cl->mu);
    if (pos > s->applied) s->applied = pos;
    pthread_mutex_unlock(&cl->mu);
    natsStatus ns = natsConnection_Subscribe(&s->wake_sub, cl->nc, s->wake_subject, on_wake, s);
    if (ns != NATS_OK) return ns;
    if (pthread_create(&s->fetcher, NULL, fetch_main, s) != 0) return NATS_NO_MEMORY;
    s->fetcher_started = true;
    return NATS_OK;
}

static void *maint_main(void *arg)
{
    mem_cluster_t *cl = arg;
    int64_t last_beat = 0;
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        if (!cl->stop) {
            struct timespec ts;
            deadline_ts(&ts, 200);
            pthread_cond_timedwait(&cl->cv, &cl->mu, &ts);
        }
        bool stop = cl->stop; /* cv is broadcast on every apply: pace the heartbeat below */
        pthread_mutex_unlock(&cl->mu);
        if (stop) break;
        if (mono_ms() - last_beat >= HEARTBEAT_MS &&
            natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CONNECTED) {
            last_beat = mono_ms();
            heartbeat(cl);
            refresh_streams(cl);
        }
    }
    return NULL;
}

/* ---- open / close ---- */

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
    if (ns != NATS_OK) {
        mem_err_set(err, MEM_EINVAL, "MNEMOD_NATS_URL: %s", nats_GetLastError(NULL));
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

int mem_cluster_open(const mem_cfg_t *cfg, const mem_log_t *log, mem_store_t *st,
                     mem_cluster_t **out, mem_err_t *err)
{
    *out = NULL;
    if (nats_Open(-1) != NATS_OK)
        return mem_err_set(err, MEM_ENOMEM, "cannot initialise the NATS library");
    mem_cluster_t *cl = calloc(1, sizeof(*cl));
    if (!cl) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    cl->cfg = cfg;
    cl->log = log;
    cl->st = st;
    cl->k = cfg->streams ? cfg->streams : 4;
    cl->started_ms = wall_ms();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    cl->boot = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (cfg->advertise[0])
        snprintf(cl->advertise, sizeof(cl->advertise), "%s", cfg->advertise);
    else
        snprintf(cl->advertise, sizeof(cl->advertise), "%s:%d", cfg->listen_host, cfg->listen_port);
    pthread_mutex_init(&cl->mu, NULL);
    pthread_cond_init(&cl->cv, NULL);
    cl->streams = calloc(cl->k, sizeof(*cl->streams));
    if (!cl->streams) {
        mem_cluster_close(cl);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        s->cl = cl;
        s->idx = (int)i;
        snprintf(s->name, sizeof(s->name), "MNEMOD_%zu", i);
        snprintf(s->filter, sizeof(s->filter), "mnemod.%zu.*", i);
        snprintf(s->wake_subject, sizeof(s->wake_subject), "mnemod.wake.%zu", i);
        pthread_cond_init(&s->wake_cv, NULL);
    }
    int rc = MEM_OK;
    if (connect_nats(cl, err) != NATS_OK) {
        rc = err->code ? err->code : MEM_EBUSY;
        goto fail;
    }
    /* The JetStream cluster may still be electing its meta leader: retry for a while. */
    int64_t deadline = mono_ms() + 60000;
    for (size_t i = 0; i < cl->k; i++) {
        natsStatus ns;
        while ((ns = ensure_stream(cl, &cl->streams[i], err)) != NATS_OK) {
            if (ns == NATS_INVALID_ARG || mono_ms() > deadline) {
                rc = err->code ? err->code : MEM_EBUSY;
                goto fail;
            }
            sleep_ms(250);
        }
    }
    while (ensure_snap_stream(cl, err) != NATS_OK) {
        if (mono_ms() > deadline) {
            rc = MEM_EBUSY;
            goto fail;
        }
        sleep_ms(250);
    }
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = KV_BUCKET;
    kc.History = 1;
    kc.Replicas = cfg->replicas;
    while (js_CreateKeyValue(&cl->kv, cl->js, &kc) != NATS_OK &&
           js_KeyValue(&cl->kv, cl->js, KV_BUCKET) != NATS_OK) {
        if (mono_ms() > deadline) {
            mem_err_set(err, MEM_EBUSY, "cannot open the KV bucket %s: %s", KV_BUCKET,
                        nats_GetLastError(NULL));
            rc = MEM_EBUSY;
            goto fail;
        }
        sleep_ms(250);
    }
    /* A data file that applied more of a stream than the stream holds followed another log
     * (a NATS cluster that was reset or replaced): replaying this one would skip records. */
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        uint64_t pos = mem_store_log_applied(st, s->name);
        jsStreamInfo *si = NULL;
        jsErrCode ec = 0;
        while (js_GetStreamInfo(&si, cl->js, s->name, NULL, &ec) != NATS_OK) {
            if (mono_ms() > deadline) {
                rc = mem_err_set(err, MEM_EBUSY, "cannot read stream %s", s->name);
                goto fail;
            }
            sleep_ms(250);
        }
        uint64_t last = si ? si->State.LastSeq : 0;
        s->last_seq = last; /* the catch-up target below (no other thread runs yet) */
        jsStreamInfo_Destroy(si);
        if (pos > last) {
            rc = mem_err_set(err, MEM_EINVAL,
                             "%s: this data file applied up to %llu but the stream ends at %llu: "
                             "it followed another NATS cluster (start with no data file to "
                             "bootstrap)",
                             s->name, (unsigned long long)pos, (unsigned long long)last);
            goto fail;
        }
    }
    for (size_t i = 0; i < cl->k; i++) {
        natsStatus ns = start_stream(cl, &cl->streams[i]);
        if (ns != NATS_OK) {
            mem_err_set(err, MEM_EBUSY, "cannot start reading %s: %s", cl->streams[i].name,
                        natsStatus_GetText(ns));
            rc = MEM_EBUSY;
            goto fail;
        }
    }
    /* Ready only once caught up with what the log held at start: a restarted node then
     * serves what it acknowledged before (bounded: a huge backlog keeps replaying after). */
    uint64_t *target = calloc(cl->k, sizeof(*target));
    for (size_t i = 0; target && i < cl->k; i++)
        target[i] = cl->streams[i].last_seq;
    int64_t t0 = mono_ms();
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; target && i < cl->k; i++) {
        struct timespec dl;
        deadline_ts(&dl, CATCHUP_MS);
        while (cl->streams[i].applied < target[i])
            if (pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&cl->mu);
    free(target);
    logf_(log, MEM_LOG_INFO, "caught_up", "node=%s ms=%lld", cfg->node_id,
          (long long)(mono_ms() - t0));
    heartbeat(cl);
    refresh_streams(cl);
    if (pthread_create(&cl->maint, NULL, maint_main, cl) != 0) {
        rc = mem_err_set(err, MEM_ENOMEM, "cannot start the cluster thread");
        goto fail;
    }
    cl->maint_started = true;
    for (size_t i = 0; i < cl->k; i++)
        logf_(log, MEM_LOG_INFO, "subscribed", "node=%s stream=%s applied=%llu last=%llu",
              cfg->node_id, cl->streams[i].name, (unsigned long long)cl->streams[i].applied,
              (unsigned long long)cl->streams[i].last_seq);
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
    pthread_mutex_unlock(&cl->mu);
    if (cl->maint_started) pthread_join(cl->maint, NULL);
    for (size_t i = 0; cl->streams && i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        pthread_cond_broadcast(&s->wake_cv);
        if (s->fetcher_started)
            pthread_join(s->fetcher, NULL); /* it stops submitting before it returns */
        if (s->wake_sub) {
            natsSubscription_Unsubscribe(s->wake_sub);
            natsSubscription_Destroy(s->wake_sub);
        }
    }
    if (cl->kv && natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CONNECTED)
        kvStore_Delete(cl->kv, cl->cfg->node_id); /* leave the registry */
    kvStore_Destroy(cl->kv);
    jsCtx_Destroy(cl->js);
    if (cl->nc) {
        natsConnection_Close(cl->nc);
        natsConnection_Destroy(cl->nc);
    }
    natsOptions_Destroy(cl->nopts);
    nats_CloseAndWait(5000);            /* delivery threads have ended: nothing submits any more */
    if (cl->st) mem_store_sync(cl->st); /* every submitted record completes (on_applied frees it) */
    for (size_t i = 0; cl->streams && i < cl->k; i++)
        pthread_cond_destroy(&cl->streams[i].wake_cv);
    free(cl->streams);
    free(cl->nspos);
    pthread_mutex_destroy(&cl->mu);
    pthread_cond_destroy(&cl->cv);
    free(cl);
}

/* ---- writes ---- */

/* Last sequence of subject in stream as JetStream knows it: 0 when none; -1 on error. */
static int last_subject_seq(mem_cluster_t *cl, const char *stream, const char *subject,
                            uint64_t *seq)
{
    natsMsg *m = NULL;
    jsErrCode ec = 0;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 2000;
    natsStatus ns = js_GetLastMsg(&m, cl->js, stream, subject, &jo, &ec);
    if (ns == NATS_OK) {
        *seq = natsMsg_GetSequence(m);
        natsMsg_Destroy(m);
        return 0;
    }
    if (ns == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) {
        *seq = 0;
        return 0;
    }
    return -1;
}

static void waiter_remove(mem_cluster_t *cl, cl_waiter_t *w)
{
    for (cl_waiter_t **pp = &cl->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

int mem_cluster_write(mem_cluster_t *cl, mem_store_op_t *op, uint64_t *log_seq, mem_err_t *err)
{
    size_t si = stream_of(cl, op->ns);
    cl_stream_t *s = &cl->streams[si];
    char subject[200];
    subject_of(cl, op->ns, subject, sizeof(subject));
    cl_waiter_t w;
    memset(&w, 0, sizeof(w));
    w.op = op;
    snprintf(w.msgid, sizeof(w.msgid), "%s-%llx-%llu", cl->cfg->node_id,
             (unsigned long long)cl->boot,
             (unsigned long long)__atomic_add_fetch(&cl->msg_ctr, 1, __ATOMIC_RELAXED));
    size_t len = 0;
    unsigned char *buf = mem_cluster_rec_encode(op, w.msgid, &len);
    if (!buf) {
        op->rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        op->err = *err;
        return op->rc;
    }

    pthread_mutex_lock(&cl->mu);
    cl->n_writes++;
    w.next = cl->waiters;
    cl->waiters = &w;
    cl_nspos_t *p = nspos_find(cl, op->ns);
    bool known = p != NULL;
    uint64_t expect = p ? p->last : 0;
    pthread_mutex_unlock(&cl->mu);

    int rc = MEM_OK;
    int conflicts = 0;
    uint64_t seq = 0;
    int64_t deadline = mono_ms() + PUBLISH_DEADLINE_MS;
    const char *why = "";
    for (;;) {
        if (!known) {
            if (last_subject_seq(cl, s->name, subject, &expect) == 0) {
                known = true;
            } else {
                why = "cannot read the namespace's last sequence";
                goto retry;
            }
        }
        natsMsg *m = NULL;
        char hv[32];
        snprintf(hv, sizeof(hv), "%llu", (unsigned long long)expect);
        if (natsMsg_Create(&m, subject, NULL, (const char *)buf, (int)len) != NATS_OK) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            break;
        }
        natsMsgHeader_Set(m, "Nats-Msg-Id", w.msgid);
        natsMsgHeader_Set(m, "Nats-Expected-Last-Subject-Sequence", hv);
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = 2000;
        jsPubAck *pa = NULL;
        jsErrCode ec = 0;
        natsStatus ns = js_PublishMsg(&pa, cl->js, m, &po, &ec);
        natsMsg_Destroy(m);
        if (ns == NATS_OK) {
            seq = pa->Sequence;
            jsPubAck_Destroy(pa);
            wake_stream(cl, s);
            natsConnection_Publish(cl->nc, s->wake_subject, NULL, 0); /* the other nodes */
            break;
        }
        if (ec == JSStreamWrongLastSequenceErr) {
            /* A write from another node came first: re-read and retry, bounded. */
            pthread_mutex_lock(&cl->mu);
            cl->n_conflicts++;
            pthread_mutex_unlock(&cl->mu);
            if (++conflicts > CONFLICT_RETRIES) {
                rc = MEM_CLUSTER_CONFLICT;
                mem_err_set(err, MEM_EEXISTS,
                            "concurrent writes to namespace %s from other nodes; retry", op->ns);
                break;
            }
            known = false;
            sleep_ms(1 + (int)(w.msgid[strlen(w.msgid) - 1] % 4) * conflicts);
            continue;
        }
        why = natsStatus_GetText(ns);
    retry:
        if (mono_ms() > deadline) {
            pthread_mutex_lock(&cl->mu);
            cl->n_pub_failures++;
            pthread_mutex_unlock(&cl->mu);
            rc = mem_err_set(err, MEM_EBUSY, "the cluster log is unavailable (%s); retry", why);
            err->retry_after_s = 1;
            break;
        }
        pthread_mutex_lock(&cl->mu);
        cl->n_pub_retries++;
        pthread_mutex_unlock(&cl->mu);
        sleep_ms(100);
    }
    free(buf);

    pthread_mutex_lock(&cl->mu);
    if (rc == MEM_OK) {
        struct timespec ts;
        deadline_ts(&ts, APPLY_DEADLINE_MS);
        while (!w.done && !cl->stop)
            if (pthread_cond_timedwait(&cl->cv, &cl->mu, &ts) == ETIMEDOUT) break;
        if (w.done) {
            *log_seq = w.seq ? w.seq : seq;
            rc = op->rc;
            if (rc != MEM_OK) *err = op->err;
        } else {
            cl->n_apply_timeouts++;
            rc = mem_err_set(err, MEM_EBUSY,
                             "written to the cluster log (seq %llu) but not applied on this "
                             "node in time; a retry is safe",
                             (unsigned long long)seq);
            err->retry_after_s = 1;
        }
    }
    bool applied = w.done;
    waiter_remove(cl, &w);
    pthread_mutex_unlock(&cl->mu);
    if (!applied && rc != MEM_CLUSTER_CONFLICT) { /* not applied here: the cluster error */
        op->rc = rc;
        op->err = *err;
    }
    return rc;
}

int mem_cluster_wait(mem_cluster_t *cl, const char *ns, uint64_t min_seq, int timeout_ms)
{
    cl_stream_t *s = &cl->streams[stream_of(cl, ns)];
    struct timespec ts;
    deadline_ts(&ts, timeout_ms);
    pthread_mutex_lock(&cl->mu);
    while (s->applied < min_seq && !cl->stop)
        if (pthread_cond_timedwait(&cl->cv, &cl->mu, &ts) == ETIMEDOUT) break;
    bool ok = s->applied >= min_seq;
    pthread_mutex_unlock(&cl->mu);
    return ok ? MEM_OK : MEM_EBUSY;
}

/* ---- status ---- */

static json_t *nodes_json(mem_cluster_t *cl)
{
    json_t *arr = json_array();
    kvKeysList keys = {0};
    if (!cl->kv || kvStore_Keys(&keys, cl->kv, NULL) != NATS_OK) return arr;
    int64_t now = wall_ms();
    for (int i = 0; i < keys.Count; i++) {
        kvEntry *e = NULL;
        if (kvStore_Get(&e, cl->kv, keys.Keys[i]) != NATS_OK) continue;
        json_t *o = json_loadb(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, NULL);
        kvEntry_Destroy(e);
        if (!json_is_object(o)) {
            json_decref(o);
            continue;
        }
        json_int_t hb = json_integer_value(json_object_get(o, "heartbeat_ms"));
        json_object_set_new(o, "age_ms", json_integer(now - hb));
        json_object_set_new(o, "alive", json_boolean(now - hb <= NODE_DEAD_MS));
        json_object_set_new(o, "self", json_boolean(strcmp(keys.Keys[i], cl->cfg->node_id) == 0));
        json_array_append_new(arr, o);
    }
    kvKeysList_Destroy(&keys);
    return arr;
}

char *mem_cluster_status_json(mem_cluster_t *cl, size_t *len)
{
    bool up = natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CONNECTED;
    if (up) refresh_streams(cl); /* fresh last sequences: lag is what it is now */
    json_t *root = json_object();
    json_object_set_new(root, "node", json_string(cl->cfg->node_id));
    json_object_set_new(root, "address", json_string(cl->advertise));
    char url[256] = "";
    bool connected = natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CONNECTED;
    if (connected) natsConnection_GetConnectedUrl(cl->nc, url, sizeof(url));
    json_object_set_new(root, "nats_connected", json_boolean(connected));
    json_object_set_new(root, "nats_url", json_string(url));
    json_object_set_new(root, "nodes", up ? nodes_json(cl) : json_array());
    json_t *streams = json_array();
    mem_store_ns_stats_t *list = NULL;
    size_t n = 0;
    mem_err_t e;
    mem_store_ns_list(cl->st, &list, &n, &e);
    /* per-namespace last sequences from JetStream, outside the lock */
    uint64_t *ns_last = calloc(n ? n : 1, sizeof(*ns_last));
    int64_t until = mono_ms() + 2000; /* the status answers even when JetStream is slow */
    for (size_t i = 0; ns_last && i < n && i < 256; i++) {
        if (!up || mono_ms() > until) {
            ns_last[i] = UINT64_MAX;
            continue;
        }
        char subject[200];
        subject_of(cl, list[i].name, subject, sizeof(subject));
        if (last_subject_seq(cl, cl->streams[stream_of(cl, list[i].name)].name, subject,
                             &ns_last[i]) != 0)
            ns_last[i] = UINT64_MAX;
    }
    json_t *nss = json_array();
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(s->name));
        json_object_set_new(o, "first_seq", json_integer((json_int_t)s->first_seq));
        json_object_set_new(o, "last_seq", json_integer((json_int_t)s->last_seq));
        json_object_set_new(o, "applied_seq", json_integer((json_int_t)s->applied));
        if (s->behind_trim) json_object_set_new(o, "needs_bootstrap", json_true());
        json_object_set_new(
            o, "lag",
            json_integer(s->last_seq > s->applied ? (json_int_t)(s->last_seq - s->applied) : 0));
        json_object_set_new(o, "messages", json_integer((json_int_t)s->msgs));
        json_object_set_new(o, "leader", json_string(s->leader));
        json_object_set_new(o, "replicas", json_integer(cl->cfg->replicas));
        json_object_set_new(o, "restarts", json_integer((json_int_t)s->resubscribes));
        json_array_append_new(streams, o);
    }
    for (size_t i = 0; i < n; i++) {
        cl_stream_t *s = &cl->streams[stream_of(cl, list[i].name)];
        cl_nspos_t *p = nspos_find(cl, list[i].name);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(list[i].name));
        json_object_set_new(o, "stream", json_string(s->name));
        json_object_set_new(o, "applied_seq", json_integer((json_int_t)s->applied));
        if (p) json_object_set_new(o, "last_applied_record", json_integer((json_int_t)p->last));
        if (ns_last && i < 256 && ns_last[i] != UINT64_MAX) {
            json_object_set_new(o, "last_seq", json_integer((json_int_t)ns_last[i]));
            json_object_set_new(
                o, "lag",
                json_integer(ns_last[i] > s->applied ? (json_int_t)(ns_last[i] - s->applied) : 0));
        }
        json_array_append_new(nss, o);
    }
    json_t *c = json_object();
    json_object_set_new(c, "writes", json_integer((json_int_t)cl->n_writes));
    json_object_set_new(c, "conflicts", json_integer((json_int_t)cl->n_conflicts));
    json_object_set_new(c, "publish_retries", json_integer((json_int_t)cl->n_pub_retries));
    json_object_set_new(c, "publish_failures", json_integer((json_int_t)cl->n_pub_failures));
    json_object_set_new(c, "apply_timeouts", json_integer((json_int_t)cl->n_apply_timeouts));
    json_object_set_new(c, "records_applied", json_integer((json_int_t)cl->n_applied));
    json_object_set_new(c, "apply_failures", json_integer((json_int_t)cl->n_apply_failures));
    pthread_mutex_unlock(&cl->mu);
    free(ns_last);
    free(list);
    json_object_set_new(root, "streams", streams);
    json_object_set_new(root, "namespaces", nss);
    json_object_set_new(root, "counters", c);
    char *out = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (out) *len = strlen(out);
    return out;
}

char *mem_cluster_metrics(mem_cluster_t *cl, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    bool connected = natsConnection_Status(cl->nc) == NATS_CONN_STATUS_CONNECTED;
    pthread_mutex_lock(&cl->mu);
    fprintf(f,
            "# HELP mnemod_cluster_connected 1 when connected to a NATS server\n"
            "# TYPE mnemod_cluster_connected gauge\nmnemod_cluster_connected %d\n",
            connected ? 1 : 0);
    fprintf(f, "# HELP mnemod_cluster_stream_last_seq last sequence of the stream (JetStream)\n"
               "# TYPE mnemod_cluster_stream_last_seq gauge\n");
    for (size_t i = 0; i < cl->k; i++)
        fprintf(f, "mnemod_cluster_stream_last_seq{stream=\"%s\"} %llu\n", cl->streams[i].name,
                (unsigned long long)cl->streams[i].last_seq);
    fprintf(f, "# HELP mnemod_cluster_stream_applied_seq last sequence applied on this node\n"
               "# TYPE mnemod_cluster_stream_applied_seq gauge\n");
    for (size_t i = 0; i < cl->k; i++)
        fprintf(f, "mnemod_cluster_stream_applied_seq{stream=\"%s\"} %llu\n", cl->streams[i].name,
                (unsigned long long)cl->streams[i].applied);
    fprintf(f, "# HELP mnemod_cluster_stream_lag records of the stream not yet applied here\n"
               "# TYPE mnemod_cluster_stream_lag gauge\n");
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        fprintf(f, "mnemod_cluster_stream_lag{stream=\"%s\"} %llu\n", s->name,
                (unsigned long long)(s->last_seq > s->applied ? s->last_seq - s->applied : 0));
    }
    const struct {
        const char *name;
        uint64_t v;
    } counters[] = {
        {"writes", cl->n_writes},
        {"conflicts", cl->n_conflicts},
        {"publish_retries", cl->n_pub_retries},
        {"publish_failures", cl->n_pub_failures},
        {"apply_timeouts", cl->n_apply_timeouts},
        {"records_applied", cl->n_applied},
        {"apply_failures", cl->n_apply_failures},
    };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        fprintf(f, "# TYPE mnemod_cluster_%s_total counter\nmnemod_cluster_%s_total %llu\n",
                counters[i].name, counters[i].name, (unsigned long long)counters[i].v);
    pthread_mutex_unlock(&cl->mu);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- snapshots ---- */

/* The manifest on mnemod.snap.latest, or NULL (none, or unreachable: *missing says which). */
static json_t *snap_manifest(jsCtx *js, bool *missing)
{
    natsMsg *m = NULL;
    jsErrCode ec = 0;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 2000;
    natsStatus ns = js_GetLastMsg(&m, js, SNAP_STREAM, SNAP_LATEST, &jo, &ec);
    *missing = ns == NATS_NOT_FOUND || ec == JSNoMessageFoundErr || ec == JSStreamNotFoundErr;
    if (ns != NATS_OK) return NULL;
    json_t *o = json_loadb(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), 0, NULL);
    natsMsg_Destroy(m);
    if (!json_is_object(o)) {
        json_decref(o);
        *missing = true;
        return NULL;
    }
    return o;
}

static natsStatus publish_bytes(jsCtx *js, const char *subject, const void *data, int len)
{
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 10000;
    jsPubAck *pa = NULL;
    jsErrCode ec = 0;
    natsStatus ns = js_Publish(&pa, js, subject, data, len, &po, &ec);
    jsPubAck_Destroy(pa);
    return ns;
}

/* Per stream: the lowest applied position among live nodes (heartbeats), capped by cap[i]. */
static void trim_floor(mem_cluster_t *cl, uint64_t *floor)
{
    kvKeysList keys = {0};
    if (kvStore_Keys(&keys, cl->kv, NULL) != NATS_OK) return;
    int64_t now = wall_ms();
    for (int i = 0; i < keys.Count; i++) {
        kvEntry *e = NULL;
        if (kvStore_Get(&e, cl->kv, keys.Keys[i]) != NATS_OK) continue;
        json_t *o = json_loadb(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, NULL);
        kvEntry_Destroy(e);
        json_int_t hb = json_integer_value(json_object_get(o, "heartbeat_ms"));
        json_t *ap = json_object_get(o, "applied");
        if (now - hb <= NODE_DEAD_MS) {
            for (size_t k = 0; k < cl->k; k++) {
                json_t *v = json_object_get(ap, cl->streams[k].name);
                uint64_t a = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
                if (a < floor[k])
                    floor[k] = a; /* a live node without a position keeps everything */
            }
        }
        json_decref(o);
    }
    kvKeysList_Destroy(&keys);
}

int mem_cluster_snapshot(mem_cluster_t *cl, bool trim, char **json, mem_err_t *err)
{
    *json = NULL;
    uint64_t *pos = calloc(cl->k, sizeof(*pos));
    if (!pos) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    /* Positions read before the copy are <= the copy's: a safe bound for trimming. */
    for (size_t i = 0; i < cl->k; i++)
        pos[i] = mem_store_log_applied(cl->st, cl->streams[i].name);
    char id[128], path[sizeof(cl->cfg->data_path) + 160];
    snprintf(id, sizeof(id), "%s-%lld", cl->cfg->node_id, (long long)wall_ms());
    snprintf(path, sizeof(path), "%s.snapshot-%s", cl->cfg->data_path, id);
    int rc = mem_store_snapshot(cl->st, path, err);
    if (rc != MEM_OK) {
        free(pos);
        unlink(path);
        return rc;
    }
    bool missing = false;
    json_t *old = snap_manifest(cl->js, &missing);
    FILE *f = fopen(path, "rb");
    char *chunk = malloc(SNAP_CHUNK);
    size_t chunks = 0, bytes = 0;
    natsStatus ns = NATS_OK;
    while (f && chunk && ns == NATS_OK) {
        size_t n = fread(chunk, 1, SNAP_CHUNK, f);
        if (n == 0) break;
        char subject[200];
        snprintf(subject, sizeof(subject), "mnemod.snap.%s.%zu", id, chunks);
        ns = publish_bytes(cl->js, subject, chunk, (int)n);
        chunks++;
        bytes += n;
    }
    bool read_ok = f && chunk && !ferror(f);
    if (f) fclose(f);
    free(chunk);
    unlink(path);
    if (!read_ok || ns != NATS_OK) {
        json_decref(old);
        free(pos);
        rc = read_ok ? MEM_EBUSY : MEM_ESTORAGE;
        return mem_err_set(err, rc, "snapshot: %s",
                           read_ok ? natsStatus_GetText(ns) : "cannot read the copy");
    }
    json_t *man = json_pack("{s:s,s:s,s:I,s:I,s:I}", "id", id, "node", cl->cfg->node_id, "chunks",
                            (json_int_t)chunks, "bytes", (json_int_t)bytes, "created_ms",
                            (json_int_t)wall_ms());
    json_t *jp = json_object();
    for (size_t i = 0; i < cl->k; i++)
        json_object_set_new(jp, cl->streams[i].name, json_integer((json_int_t)pos[i]));
    json_object_set_new(man, "positions", jp);
    char *mtext = json_dumps(man, JSON_COMPACT);
    ns = mtext ? publish_bytes(cl->js, SNAP_LATEST, mtext, (int)strlen(mtext)) : NATS_NO_MEMORY;
    free(mtext);
    if (ns != NATS_OK) {
        json_decref(old);
        json_decref(man);
        free(pos);
        return mem_err_set(err, MEM_EBUSY, "snapshot manifest: %s", natsStatus_GetText(ns));
    }
    const char *old_id = json_string_value(json_object_get(old, "id"));
    if (old_id) { /* the previous snapshot's chunks are no longer needed */
        char filter[200];
        snprintf(filter, sizeof(filter), "mnemod.snap.%s.>", old_id);
        jsOptions jo;
        jsOptions_Init(&jo);
        jo.Stream.Purge.Subject = filter;
        jsErrCode ec = 0;
        js_PurgeStream(cl->js, SNAP_STREAM, &jo, &ec);
    }
    json_decref(old);
    if (trim) {
        trim_floor(cl, pos);
        json_t *tr = json_object();
        for (size_t i = 0; i < cl->k; i++) {
            if (pos[i] == 0) continue;
            jsOptions jo;
            jsOptions_Init(&jo);
            jo.Stream.Purge.Sequence = pos[i] + 1; /* purge below, keep pos + 1 on */
            jsErrCode ec = 0;
            if (js_PurgeStream(cl->js, cl->streams[i].name, &jo, &ec) == NATS_OK)
                json_object_set_new(tr, cl->streams[i].name, json_integer((json_int_t)pos[i] + 1));
        }
        json_object_set_new(man, "trimmed_below", tr);
    }
    free(pos);
    *json = json_dumps(man, JSON_COMPACT);
    json_decref(man);
    logf_(cl->log, MEM_LOG_INFO, "snapshot", "id=%s chunks=%zu bytes=%zu trim=%d", id, chunks,
          bytes, trim);
    return *json ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
}

int mem_cluster_bootstrap(const mem_cfg_t *cfg, const mem_log_t *log, bool *restored,
                          mem_err_t *err)
{
    *restored = false;
    if (access(cfg->data_path, F_OK) == 0)
        return MEM_OK; /* not a fresh node: it resumes from its own positions */
    if (nats_Open(-1) != NATS_OK)
        return mem_err_set(err, MEM_ENOMEM, "cannot initialise the NATS library");
    mem_cluster_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.cfg = cfg;
    int rc = MEM_OK;
    json_t *man = NULL;
    char path[sizeof(cfg->data_path) + 32];
    snprintf(path, sizeof(path), "%s.bootstrap", cfg->data_path);
    FILE *f = NULL;
    if (connect_nats(&tmp, err) != NATS_OK) {
        rc = err->code ? err->code : MEM_EBUSY;
        goto out;
    }
    int64_t deadline = mono_ms() + 60000;
    bool missing = false;
    while (!(man = snap_manifest(tmp.js, &missing)) && !missing) {
        if (mono_ms() > deadline) {
            rc = mem_err_set(err, MEM_EBUSY, "bootstrap: cannot read %s", SNAP_LATEST);
            goto out;
        }
        sleep_ms(250);
    }
    if (!man) goto out; /* no snapshot: replay the log from the start */
    const char *id = json_string_value(json_object_get(man, "id"));
    json_int_t chunks = json_integer_value(json_object_get(man, "chunks"));
    if (!id || chunks <= 0) {
        rc = mem_err_set(err, MEM_ECORRUPT, "bootstrap: malformed snapshot manifest");
        goto out;
    }
    f = fopen(path, "wb");
    if (!f) {
        rc = mem_err_set(err, MEM_ESTORAGE, "bootstrap: cannot create %s", path);
        goto out;
    }
    size_t bytes = 0;
    for (json_int_t i = 0; i < chunks; i++) {
        char subject[200];
        snprintf(subject, sizeof(subject), "mnemod.snap.%s.%lld", id, (long long)i);
        natsMsg *m = NULL;
        jsErrCode ec = 0;
        natsStatus ns;
        while ((ns = js_GetLastMsg(&m, tmp.js, SNAP_STREAM, subject, NULL, &ec)) != NATS_OK) {
            if (mono_ms() > deadline || ns == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) {
                rc = mem_err_set(err, MEM_EBUSY, "bootstrap: chunk %lld of %s: %s", (long long)i,
                                 id, natsStatus_GetText(ns));
                goto out;
            }
            sleep_ms(250);
        }
        size_t n = (size_t)natsMsg_GetDataLength(m);
        bool ok = fwrite(natsMsg_GetData(m), 1, n, f) == n;
        natsMsg_Destroy(m);
        if (!ok) {
            rc = mem_err_set(err, MEM_EFULL, "bootstrap: cannot write %s", path);
            goto out;
        }
        bytes += n;
    }
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        rc = mem_err_set(err, MEM_EFULL, "bootstrap: cannot write %s", path);
        goto out;
    }
    fclose(f);
    f = NULL;
    if (rename(path, cfg->data_path) != 0) {
        rc = mem_err_set(err, MEM_ESTORAGE, "bootstrap: cannot rename to %s", cfg->data_path);
        goto out;
    }
    *restored = true;
    logf_(log, MEM_LOG_INFO, "bootstrap", "snapshot=%s chunks=%lld bytes=%zu data=\"%s\"", id,
          (long long)chunks, bytes, cfg->data_path);
out:
    if (f) {
        fclose(f);
        unlink(path);
    }
    json_decref(man);
    jsCtx_Destroy(tmp.js);
    if (tmp.nc) {
        natsConnection_Close(tmp.nc);
        natsConnection_Destroy(tmp.nc);
    }
    natsOptions_Destroy(tmp.nopts);
    return rc;
}

#endif /* MNEMOD_HAVE_NATS */
