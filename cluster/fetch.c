/* fetch.c - reading the log: the fetchers (one per stream) and the catch-up worker
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A fetcher reads its stream in order by sequence with JetStream direct get (any
 * replica answers, no consumer state lives on the servers, so losing a server or the meta
 * leader does not stall it) and decides, record by record, under cl->mu: a record of a
 * namespace live here whose predecessor (the Nats-Expected-Last-Subject-Sequence header
 * JetStream stored with it) is at or below what was already applied or handed to the store
 * is handed to the store (pipelined, completed in order on the writer thread); a record
 * already applied is passed over; a record whose predecessor is missing sends its
 * namespace to the catch-up worker; records of namespaces not placed here are passed over
 * unread beyond their headers. When the next sequence does not exist yet the fetcher
 * sleeps until a wake-up (an empty core-NATS message on mnemod.wake.<i>, published by the
 * origin after each acknowledged write) or CL_IDLE_POLL_MS. Reads ask for the next record at
 * or after a sequence (next by subject over the whole stream), so the holes trimming leaves
 * cost one read, not one per missing record.
 *
 * The catch-up worker brings one namespace at a time up to date by reading only its
 * subject (direct get next-by-subject from its position + 1). When the next record's
 * predecessor is missing from the log (trimmed), or the namespace is joining this node,
 * it restores the namespace's snapshot first (snap.c). At the end of the subject it marks
 * the namespace live, then checks once more with the stream leader that no record slipped
 * past the fetcher in between (the fetcher decided about it before the namespace was live);
 * only then does the stream's position count for the namespace ("verified").
 */
#ifdef MNEMOD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cluster/cluster_int.h"

#define CU_WINDOW      64   /* records of one namespace in flight during a catch-up */
#define CU_RETRY_MS    2000 /* a namespace whose catch-up failed is tried again after this */
#define SUBMIT_BACKOFF 5    /* ms: the store's write queue is full */

uint64_t mem_cluster__prev_of(natsMsg *m)
{
    const char *v = NULL;
    if (natsMsgHeader_Get(m, "Nats-Expected-Last-Subject-Sequence", &v) != NATS_OK || !v) return 0;
    return strtoull(v, NULL, 10);
}

/* "mnemod.<i>.<hex>" -> the namespace name; false when the subject is not one of ours. */
static bool ns_of_subject(const char *subject, char *out, size_t cap)
{
    const char *p = subject ? strrchr(subject, '.') : NULL;
    if (!p) return false;
    p++;
    size_t n = 0, len = strlen(p);
    if (len == 0 || len % 2 || len / 2 >= cap) return false;
    for (size_t i = 0; i < len; i += 2) {
        unsigned int c = 0;
        for (int d = 0; d < 2; d++) {
            char h = p[i + (size_t)d];
            c = c * 16 + (unsigned int)(h >= '0' && h <= '9'   ? h - '0'
                                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                               : 255);
        }
        if (c == 0 || c > 255) return false;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return true;
}

void mem_cluster__wake(mem_cluster_t *cl, cl_stream_t *s)
{
    pthread_mutex_lock(&cl->mu);
    s->wake = true;
    pthread_cond_signal(&s->wake_cv);
    pthread_mutex_unlock(&cl->mu);
}

/* A wake-up: "SEQ HEX(NAMESPACE)" from the origin of a new record (empty from old nodes). */
static void on_wake(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    cl_stream_t *s = closure;
    mem_cluster_t *cl = s->cl;
    char buf[200], name[MEM_STORE_NS_MAX + 1];
    int len = natsMsg_GetDataLength(msg);
    unsigned long long seq = 0;
    bool hint = false;
    if (len > 0 && len < (int)sizeof(buf)) {
        memcpy(buf, natsMsg_GetData(msg), (size_t)len);
        buf[len] = '\0';
        char *sp = strchr(buf, ' ');
        if (sp) {
            *sp = '\0';
            seq = strtoull(buf, NULL, 10);
            hint = seq > 0 && ns_of_subject(sp + 1, name, sizeof(name));
        }
    }
    natsMsg_Destroy(msg);
    pthread_mutex_lock(&cl->mu);
    if (hint && s->hints) {
        struct cl_hint *h = &s->hints[seq % CL_HINTS];
        h->seq = seq;
        snprintf(h->ns, sizeof(h->ns), "%s", name);
    }
    s->wake = true;
    pthread_cond_signal(&s->wake_cv);
    pthread_mutex_unlock(&cl->mu);
}

/* mu held: the hint says record seq belongs to a namespace not placed here. */
static bool hinted_elsewhere(mem_cluster_t *cl, cl_stream_t *s, uint64_t seq)
{
    if (!s->hints || s->hints[seq % CL_HINTS].seq != seq) return false;
    cl_ns_t *ns = mem_cluster__ns_find(cl, s->hints[seq % CL_HINTS].ns);
    return !ns || ns->state == CL_NS_NONE || ns->state == CL_NS_CATCHUP ||
           ns->state == CL_NS_BOOTSTRAP;
}

/* mu held: every record up to seq was decided about; pass seq over. */
static void pass_over(cl_stream_t *s, uint64_t seq)
{
    if (s->n_inflight == 0) {
        if (seq > s->applied) s->applied = seq;
    } else if (seq > s->pass_pos) {
        s->pass_pos = seq;
    }
}

/* Whether the store now holds ns at or beyond seq (the record was applied or skipped as a
 * replay: both leave the position there). mu may be held. */
static bool stored(mem_cluster_t *cl, const char *ns, uint64_t seq)
{
    return mem_store_log_ns_applied(cl->st, ns) >= seq;
}

/* Writer thread: a record handed over by a fetcher completed. */
static void on_fetched(mem_store_op_t *op, void *ud)
{
    mem_cluster_rec_t *rec = (mem_cluster_rec_t *)op;
    cl_stream_t *s = ud;
    mem_cluster_t *cl = s->cl;
    cl_job_t *job = NULL;
    pthread_mutex_lock(&cl->mu);
    bool ok = stored(cl, op->ns, op->log_seq);
    cl_ns_t *ns = mem_cluster__ns_find(cl, op->ns);
    if (ok) {
        if (ns && op->log_seq > ns->applied) ns->applied = op->log_seq;
        if (!op->log_skipped) cl->n_applied++;
        job = mem_cluster__job_applied(cl, rec->msgid, op->log_seq, op->log_skipped ? NULL : op);
    } else {
        cl->n_apply_failures++;
        mem_cluster__log("warn", "apply_failed", "stream=%s ns=%s seq=%llu err=\"%s\"", s->name,
                         op->ns, (unsigned long long)op->log_seq, op->err.msg);
        if (ns) {
            ns->submitted = ns->applied; /* the catch-up re-reads from what is stored */
            if (ns->state == CL_NS_LIVE) mem_cluster__ns_catchup(cl, ns, op->err.msg);
        }
    }
    if (s->n_inflight) s->n_inflight--;
    if (op->log_seq > s->applied) s->applied = op->log_seq;
    if (s->n_inflight == 0 && s->pass_pos > s->applied) s->applied = s->pass_pos;
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    if (job) mem_cluster__job_finish(cl, job);
    mem_cluster_rec_free(rec);
}

/* A record that cannot be decoded (not ours, or corrupt) is applied as an empty insert:
 * it fails validation everywhere alike and moves the position on. NULL when out of memory
 * (the record too: taken for a bad one it would be skipped here and applied elsewhere):
 * the caller reads it again later. */
static mem_cluster_rec_t *decode_or_empty(natsMsg *m, const char *ns, const char *stream,
                                          uint64_t seq)
{
    mem_cluster_rec_t *rec = NULL;
    int rc = mem_cluster_rec_read(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), &rec);
    if (rc == MEM_ENOMEM) return NULL;
    if (!rec) {
        rec = calloc(1, sizeof(*rec));
        if (!rec) return NULL;
        rec->op.kind = MEM_STORE_OP_INSERT;
        snprintf(rec->op.ns, sizeof(rec->op.ns), "%s", ns);
        mem_cluster__log("warn", "bad_record", "stream=%s seq=%llu", stream,
                         (unsigned long long)seq);
    }
    if (strcmp(rec->op.ns, ns) != 0) { /* a record must belong to its subject's namespace */
        mem_cluster_rec_free(rec);
        rec = calloc(1, sizeof(*rec));
        if (!rec) return NULL;
        rec->op.kind = MEM_STORE_OP_INSERT;
        snprintf(rec->op.ns, sizeof(rec->op.ns), "%s", ns);
    }
    return rec;
}

static bool stopping(mem_cluster_t *cl)
{
    pthread_mutex_lock(&cl->mu);
    bool stop = cl->stop;
    pthread_mutex_unlock(&cl->mu);
    return stop;
}

/* Hand op to the store, waiting while its write queue is full. false: stopping. */
static bool submit(mem_cluster_t *cl, mem_store_op_t *op, mem_store_done_fn done, void *ud)
{
    for (;;) {
        if (mem_store_submit(cl->st, op, done, ud) == MEM_OK) return true;
        if (stopping(cl)) return false;
        mem_cluster__sleep_ms(SUBMIT_BACKOFF);
    }
}

static void *fetch_main(void *arg)
{
    cl_stream_t *s = arg;
    mem_cluster_t *cl = s->cl;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 1000;
    pthread_mutex_lock(&cl->mu);
    uint64_t next = s->applied + 1;
    pthread_mutex_unlock(&cl->mu);
    while (!stopping(cl)) {
        pthread_mutex_lock(&cl->mu);
        if (hinted_elsewhere(cl, s, next)) { /* not ours: no need to read it */
            pass_over(s, next);
            s->seen = next;
            s->hint_skips++;
            next++;
            pthread_mutex_unlock(&cl->mu);
            continue;
        }
        pthread_mutex_unlock(&cl->mu);
        natsMsg *m = NULL;
        jsDirectGetMsgOptions dg;
        jsDirectGetMsgOptions_Init(&dg);
        dg.Sequence = next;
        dg.NextBySubject = s->filter; /* the next record there is: trimmed holes are skipped */
        natsStatus st = js_DirectGetMsg(&m, cl->js, s->name, &jo, &dg);
        if (st == NATS_OK) {
            uint64_t seq = natsMsg_GetSequence(m);
            if (seq < next) { /* cannot happen: ask again */
                natsMsg_Destroy(m);
                continue;
            }
            char name[MEM_STORE_NS_MAX + 1];
            bool ours = ns_of_subject(natsMsg_GetSubject(m), name, sizeof(name));
            uint64_t prev = mem_cluster__prev_of(m);
            mem_cluster_rec_t *rec = NULL;
            pthread_mutex_lock(&cl->mu);
            cl_ns_t *ns = ours ? mem_cluster__ns_find(cl, name) : NULL;
            bool take = false;
            if (ns && (ns->state == CL_NS_LIVE || ns->state == CL_NS_LEAVING)) {
                uint64_t head = ns->applied > ns->submitted ? ns->applied : ns->submitted;
                if (seq > head && prev <= head) {
                    take = true;
                    ns->submitted = seq;
                    s->n_inflight++;
                    s->unqueued++;
                } else if (seq > head && ns->state == CL_NS_LIVE) {
                    mem_cluster__ns_catchup(cl, ns, "a record is missing");
                }
                if (seq > ns->last) ns->last = seq;
            }
            if (!take) pass_over(s, seq);
            s->seen = seq;
            pthread_mutex_unlock(&cl->mu);
            if (take) {
                rec = decode_or_empty(m, name, s->name, seq);
                if (rec) {
                    rec->op.log_stream = s->name;
                    rec->op.log_seq = seq;
                    rec->op.log_chain = true;
                    rec->op.log_prev = prev;
                }
                bool queued = rec && submit(cl, &rec->op, on_fetched, s);
                pthread_mutex_lock(&cl->mu);
                s->unqueued--;
                pthread_mutex_unlock(&cl->mu);
                if (!queued) {
                    /* out of memory or stopping: the namespace catches up later */
                    mem_cluster_rec_free(rec);
                    pthread_mutex_lock(&cl->mu);
                    if (s->n_inflight) s->n_inflight--;
                    if (ns) {
                        ns->submitted = ns->applied;
                        if (ns->state == CL_NS_LIVE) mem_cluster__ns_catchup(cl, ns, NULL);
                    }
                    pass_over(s, seq);
                    pthread_mutex_unlock(&cl->mu);
                }
            }
            natsMsg_Destroy(m);
            next = seq + 1;
            continue;
        }
        /* js_DirectGetMsg has no JetStream error code out-parameter (unlike js_GetMsg): the
         * server's 404 for "no message" comes back as the status NATS_NOT_FOUND itself */
        if (st == NATS_NOT_FOUND) { /* nothing at or after next yet */
            pthread_mutex_lock(&cl->mu);
            if (!s->wake && !cl->stop) {
                struct timespec ts;
                mem_cluster__deadline(&ts, CL_IDLE_POLL_MS);
                pthread_cond_timedwait(&s->wake_cv, &cl->mu, &ts);
            }
            s->wake = false;
            pthread_mutex_unlock(&cl->mu);
            continue;
        }
        mem_cluster__sleep_ms(50); /* no replica answers right now (failover, reconnect) */
    }
    return NULL;
}

natsStatus mem_cluster__stream_start(mem_cluster_t *cl, cl_stream_t *s)
{
    natsStatus ns = natsConnection_Subscribe(&s->wake_sub, cl->nc, s->wake_subject, on_wake, s);
    if (ns != NATS_OK) return ns;
    if (pthread_create(&s->fetcher, NULL, fetch_main, s) != 0) return NATS_NO_MEMORY;
    s->fetcher_started = true;
    return NATS_OK;
}

/* ---- the catch-up worker ---- */

typedef struct cu_ctx {
    mem_cluster_t *cl;
    cl_ns_t *ns;
    size_t inflight; /* mu */
    bool failed;     /* mu: a record was not applied: re-read from the stored position */
} cu_ctx_t;

static void on_caught(mem_store_op_t *op, void *ud)
{
    mem_cluster_rec_t *rec = (mem_cluster_rec_t *)op;
    cu_ctx_t *cx = ud;
    mem_cluster_t *cl = cx->cl;
    cl_job_t *job = NULL;
    pthread_mutex_lock(&cl->mu);
    if (stored(cl, op->ns, op->log_seq)) {
        if (op->log_seq > cx->ns->applied) cx->ns->applied = op->log_seq;
        if (op->log_seq > cx->ns->submitted) cx->ns->submitted = op->log_seq;
        if (!op->log_skipped) cl->n_applied++;
        job = mem_cluster__job_applied(cl, rec->msgid, op->log_seq, op->log_skipped ? NULL : op);
    } else {
        cx->failed = true;
        snprintf(cx->ns->why, sizeof(cx->ns->why), "%s", op->err.msg);
    }
    cx->inflight--;
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    if (job) mem_cluster__job_finish(cl, job);
    mem_cluster_rec_free(rec);
}

static void cu_drain(cu_ctx_t *cx)
{
    mem_cluster_t *cl = cx->cl;
    pthread_mutex_lock(&cl->mu);
    while (cx->inflight)
        pthread_cond_wait(&cl->cv, &cl->mu);
    pthread_mutex_unlock(&cl->mu);
}

/* Restore ns from a snapshot covering at least need (its latest one, or a fresh one asked
 * of a live holder). MEM_OK: ns->applied is the snapshot's position. */
static int bootstrap(mem_cluster_t *cl, cl_ns_t *ns, uint64_t need, mem_err_t *err)
{
    uint64_t covered = 0, pos = 0;
    int rc = mem_cluster__snap_covered(cl, ns->name, &covered, err);
    if (rc != MEM_OK || covered < need) {
        mem_err_clear(err);
        rc = mem_cluster__snap_request(cl, ns->name, need, &covered, err);
    }
    if (rc != MEM_OK) return rc;
    rc = mem_cluster__snap_restore(cl, ns->name, need, &pos, err);
    if (rc != MEM_OK) return rc;
    pthread_mutex_lock(&cl->mu);
    ns->applied = ns->submitted = pos;
    cl->n_bootstraps++;
    pthread_mutex_unlock(&cl->mu);
    mem_cluster__log("info", "bootstrapped", "ns=%s pos=%llu", ns->name, (unsigned long long)pos);
    return MEM_OK;
}

/* The record after `from` of ns, by direct get: MEM_OK with *m (NULL when none). */
static int next_record(mem_cluster_t *cl, const cl_ns_t *ns, uint64_t from, natsMsg **m)
{
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 2000;
    jsDirectGetMsgOptions dg;
    jsDirectGetMsgOptions_Init(&dg);
    dg.Sequence = from;
    dg.NextBySubject = ns->subject;
    *m = NULL;
    natsStatus st = js_DirectGetMsg(m, cl->js, cl->streams[ns->stream].name, &jo, &dg);
    if (st == NATS_OK) return MEM_OK;
    if (st == NATS_NOT_FOUND) {
        *m = NULL;
        return MEM_OK;
    }
    return MEM_EBUSY;
}

static void set_state(mem_cluster_t *cl, cl_ns_t *ns, int state, const char *why)
{
    pthread_mutex_lock(&cl->mu);
    if (ns->state != CL_NS_LEAVING && ns->state != CL_NS_NONE) ns->state = state;
    if (why) snprintf(ns->why, sizeof(ns->why), "%s", why);
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
}

/* Bring ns up to date. true: done (live, or no longer placed here); false: try later. */
static bool catch_up(mem_cluster_t *cl, cl_ns_t *ns)
{
    cu_ctx_t cx = {.cl = cl, .ns = ns};
    mem_err_t err;
    mem_err_clear(&err);
    pthread_mutex_lock(&cl->mu);
    cl->n_catchups++;
    bool fresh = ns->bootstrap_first;
    ns->bootstrap_first = false;
    uint64_t head = ns->applied > ns->submitted ? ns->applied : ns->submitted;
    pthread_mutex_unlock(&cl->mu);
    if (fresh) { /* joining: a fresh snapshot is much faster than replaying the history */
        int rc = bootstrap(cl, ns, 0, &err);
        if (rc != MEM_OK && rc != MEM_ENOTFOUND)
            mem_cluster__log("info", "join_without_snapshot", "ns=%s why=\"%s\"", ns->name,
                             err.msg);
        pthread_mutex_lock(&cl->mu);
        head = ns->applied;
        pthread_mutex_unlock(&cl->mu);
    }
    int64_t give_up = mem_cluster__mono_ms() + 30000; /* let other namespaces have a turn */
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        int state = ns->state;
        bool failed = cx.failed, stop = cl->stop;
        pthread_mutex_unlock(&cl->mu);
        if (stop || state == CL_NS_NONE || state == CL_NS_LEAVING) {
            cu_drain(&cx);
            return true;
        }
        if (failed) {
            cu_drain(&cx);
            pthread_mutex_lock(&cl->mu);
            cx.failed = false;
            ns->submitted = ns->applied;
            head = ns->applied;
            pthread_mutex_unlock(&cl->mu);
            return false;
        }
        if (mem_cluster__mono_ms() > give_up) {
            cu_drain(&cx);
            return false;
        }
        natsMsg *m = NULL;
        if (next_record(cl, ns, head + 1, &m) != MEM_OK) {
            mem_cluster__sleep_ms(100);
            continue;
        }
        if (m) {
            uint64_t seq = natsMsg_GetSequence(m), prev = mem_cluster__prev_of(m);
            if (prev > head) {
                natsMsg_Destroy(m);
                cu_drain(&cx);
                pthread_mutex_lock(&cl->mu);
                head = ns->applied;
                pthread_mutex_unlock(&cl->mu);
                if (prev <= head) continue; /* it was in flight */
                /* the records between head and prev are gone from the log: snapshot */
                set_state(cl, ns, CL_NS_BOOTSTRAP, NULL);
                if (bootstrap(cl, ns, prev, &err) != MEM_OK) {
                    set_state(cl, ns, CL_NS_BOOTSTRAP, err.msg);
                    mem_cluster__log("warn", "bootstrap_failed", "ns=%s need=%llu why=\"%s\"",
                                     ns->name, (unsigned long long)prev, err.msg);
                    return false;
                }
                set_state(cl, ns, CL_NS_CATCHUP, "");
                pthread_mutex_lock(&cl->mu);
                head = ns->applied;
                pthread_mutex_unlock(&cl->mu);
                continue;
            }
            mem_cluster_rec_t *rec =
                decode_or_empty(m, ns->name, cl->streams[ns->stream].name, seq);
            natsMsg_Destroy(m);
            if (!rec) {
                mem_cluster__sleep_ms(100);
                continue;
            }
            rec->op.log_stream = cl->streams[ns->stream].name;
            rec->op.log_seq = seq;
            rec->op.log_chain = true;
            rec->op.log_prev = prev;
            pthread_mutex_lock(&cl->mu);
            while (cx.inflight >= CU_WINDOW && !cl->stop)
                pthread_cond_wait(&cl->cv, &cl->mu);
            cx.inflight++;
            pthread_mutex_unlock(&cl->mu);
            if (!submit(cl, &rec->op, on_caught, &cx)) {
                mem_cluster_rec_free(rec);
                pthread_mutex_lock(&cl->mu);
                cx.inflight--;
                pthread_mutex_unlock(&cl->mu);
                continue; /* stopping */
            }
            head = seq;
            continue;
        }
        /* the end of the subject: live, then make sure nothing slipped past the fetcher */
        cu_drain(&cx);
        pthread_mutex_lock(&cl->mu);
        if (cx.failed) {
            pthread_mutex_unlock(&cl->mu);
            continue;
        }
        head = ns->applied;
        if (ns->state == CL_NS_CATCHUP || ns->state == CL_NS_BOOTSTRAP) ns->state = CL_NS_LIVE;
        ns->submitted = head;
        ns->verified = false;
        ns->why[0] = '\0';
        uint64_t fence = cl->streams[ns->stream].seen;
        pthread_cond_broadcast(&cl->cv);
        pthread_mutex_unlock(&cl->mu);
        uint64_t after = 0;
        if (mem_cluster__next_by_subject(cl, cl->streams[ns->stream].name, ns->subject, head + 1,
                                         &after) != 0) {
            set_state(cl, ns, CL_NS_CATCHUP, "cannot verify with the stream leader");
            mem_cluster__sleep_ms(100);
            continue;
        }
        pthread_mutex_lock(&cl->mu);
        bool missed = after && after <= fence && after > ns->applied && after > ns->submitted;
        if (!missed && ns->state == CL_NS_LIVE) ns->verified = true;
        if (missed && ns->state == CL_NS_LIVE) ns->state = CL_NS_CATCHUP;
        if (ns->last < head) ns->last = head;
        pthread_cond_broadcast(&cl->cv);
        pthread_mutex_unlock(&cl->mu);
        if (!missed) return true;
    }
}

void *mem_cluster__catchup_main(void *arg)
{
    mem_cluster_t *cl = arg;
    pthread_mutex_lock(&cl->mu);
    while (!cl->stop) {
        cl_ns_t *ns = cl->cu_head;
        if (!ns) {
            struct timespec ts;
            mem_cluster__deadline(&ts, 1000);
            pthread_cond_timedwait(&cl->cu_cv, &cl->mu, &ts);
            continue;
        }
        cl->cu_head = ns->cu_next;
        if (!cl->cu_head) cl->cu_tail = NULL;
        ns->cu_queued = false;
        ns->cu_again = false;
        cl->cu_current = ns;
        pthread_mutex_unlock(&cl->mu);
        bool done = catch_up(cl, ns);
        pthread_mutex_lock(&cl->mu);
        cl->cu_current = NULL;
        if (!done || ns->cu_again) {
            ns->cu_again = false;
            if (!done)
                ns->retry_at_ms = mem_cluster__mono_ms() + CU_RETRY_MS;
            else
                mem_cluster__ns_catchup(cl, ns, NULL);
        }
        pthread_cond_broadcast(&cl->cv);
    }
    pthread_mutex_unlock(&cl->mu);
    return NULL;
}

int mem_cluster__next_by_subject(mem_cluster_t *cl, const char *stream, const char *subject,
                                 uint64_t from, uint64_t *seq)
{
    char api[128], req[400];
    snprintf(api, sizeof(api), "$JS.API.STREAM.MSG.GET.%s", stream);
    int n = snprintf(req, sizeof(req), "{\"seq\":%llu,\"next_by_subj\":\"%s\"}",
                     (unsigned long long)from, subject);
    natsMsg *r = NULL;
    if (natsConnection_Request(&r, cl->nc, api, req, n, 2000) != NATS_OK) return -1;
    json_t *o = NULL; /* out of memory: -1, unknown, like no answer */
    mem_cluster__json_parse(natsMsg_GetData(r), (size_t)natsMsg_GetDataLength(r), &o);
    natsMsg_Destroy(r);
    int out = -1;
    json_t *msg = json_object_get(o, "message"), *e = json_object_get(o, "error");
    if (json_is_object(msg)) {
        *seq = (uint64_t)json_integer_value(json_object_get(msg, "seq"));
        out = 0;
    } else if (json_is_object(e) &&
               json_integer_value(json_object_get(e, "err_code")) == JSNoMessageFoundErr) {
        *seq = 0;
        out = 0;
    }
    json_decref(o);
    return out;
}

#endif /* MNEMOD_HAVE_NATS */
