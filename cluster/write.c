/* write.c - replicated writes: queued, published by a few threads, answered on apply
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. mem_cluster_write (any thread, never blocks) checks the record's size against the
 * NATS server's max_payload, then appends a job to its namespace's queue. --cluster-publishers
 * threads take namespaces from a ready list, one job per namespace at a time: the record
 * is published with a message id and the expected last sequence of the namespace's
 * subject (known from the previous acknowledgement, else read from JetStream), so a
 * node's own writes to one namespace follow each other without conflicts, while different
 * namespaces are published in parallel. After the acknowledgement the origin applies the
 * op itself (it is the record: no need to read it back) when every earlier record of the
 * namespace is already with the store; the claim (the namespace's submitted position) and
 * the submit happen under cl->mu, so the fetchers pass the record over and no copy of it
 * can get ahead in the store's queue. Otherwise the job waits, holding no thread, until a
 * fetcher or the catch-up worker applies the record (mem_cluster__job_applied, matched by
 * message id) or its deadline passes (the maintenance thread answers 504 write_timeout: the
 * record is in the log and will be applied, so a client must not send it again; a 503, which
 * clients retry, is kept for writes that surely were not stored). Waiting threads
 * are the publishers only; the libuv pool is never held, so reads stay fast while NATS is
 * slow or gone.
 */
#ifdef MNEMOD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_int.h"

#define CONFLICT_RETRIES 10
#define PUB_WAIT_MS      2000 /* one publish attempt waits this long for its ack */
#define HEADER_ROOM      512  /* bytes of NATS headers a record carries, at most */
#define MAX_PENDING      4096 /* writes accepted and not answered; beyond: 503 */
#define DOWN_REFUSE_MS   2000 /* NATS unreachable this long: refuse new writes at once */

/* Last sequence of subject in stream as JetStream's leader knows it: 0 when none; -1 on
 * error. */
static int last_subject_seq(mem_cluster_t *cl, const cl_ns_t *ns, uint64_t *seq)
{
    natsMsg *m = NULL;
    jsErrCode ec = 0;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = PUB_WAIT_MS;
    natsStatus s = js_GetLastMsg(&m, cl->js, cl->streams[ns->stream].name, ns->subject, &jo, &ec);
    if (s == NATS_OK) {
        *seq = natsMsg_GetSequence(m);
        natsMsg_Destroy(m);
        return 0;
    }
    if (s == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) {
        *seq = 0;
        return 0;
    }
    return -1;
}

static void copy_results(mem_store_op_t *dst, const mem_store_op_t *src)
{
    dst->rc = src->rc;
    dst->err = src->err;
    dst->created = src->created;
    dst->n_applied = src->n_applied;
    dst->n_imported = src->n_imported;
    dst->n_skipped = src->n_skipped;
    if (dst->kind == MEM_STORE_OP_INSERT && dst->outs && src->outs && dst->n_segs == src->n_segs)
        memcpy(dst->outs, src->outs, src->n_segs * sizeof(*src->outs));
}

static void waiter_unlink(mem_cluster_t *cl, cl_job_t *j);

/* Writer thread: the origin's own apply of its record completed. */
static void on_origin_applied(mem_store_op_t *op, void *ud)
{
    cl_job_t *j = ud;
    mem_cluster_t *cl = j->cl;
    cl_job_t *finish = NULL;
    pthread_mutex_lock(&cl->mu);
    j->direct = false;
    cl_ns_t *ns = j->ns;
    if (mem_store_log_ns_applied(cl->st, op->ns) >= op->log_seq) {
        if (op->log_seq > ns->applied) ns->applied = op->log_seq;
        if (!op->log_skipped) cl->n_applied++;
        j->rc = op->rc;
        j->err = op->err;
        j->applied = true;
        if (j->waiting) waiter_unlink(cl, j);
        finish = j;
    } else { /* not applied (a storage error): the catch-up repairs, the job keeps waiting */
        ns->submitted = ns->applied;
        if (ns->state == CL_NS_LIVE) mem_cluster__ns_catchup(cl, ns, op->err.msg);
    }
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    if (finish) mem_cluster__job_finish(cl, finish);
}

static void waiter_unlink(mem_cluster_t *cl, cl_job_t *j)
{
    for (cl_job_t **pp = &cl->waiters; *pp; pp = &(*pp)->wnext)
        if (*pp == j) {
            *pp = j->wnext;
            j->waiting = false;
            return;
        }
}

cl_job_t *mem_cluster__job_applied(mem_cluster_t *cl, const char *msgid, uint64_t seq,
                                   const mem_store_op_t *applied_op)
{
    for (cl_job_t *j = cl->waiters; j; j = j->wnext) {
        if (strcmp(j->msgid, msgid) != 0) continue;
        if (j->direct) return NULL; /* the origin's own apply is ahead in the queue: it answers */
        if (applied_op) {
            copy_results(j->op, applied_op);
            j->rc = applied_op->rc;
            j->err = applied_op->err;
        } else { /* a replay of a record this node applied before: rare (a retry) */
            j->rc = MEM_OK;
        }
        j->seq = seq;
        j->applied = true;
        if (j->acked) { /* the publisher is done with it: answer now */
            waiter_unlink(cl, j);
            j->wnext = NULL;
            return j;
        }
        return NULL; /* the publisher answers it when the acknowledgement arrives */
    }
    return NULL;
}

void mem_cluster__job_finish(mem_cluster_t *cl, cl_job_t *j)
{
    pthread_mutex_lock(&cl->mu);
    if (cl->n_jobs) cl->n_jobs--;
    pthread_mutex_unlock(&cl->mu);
    if (j->rc != MEM_OK && j->rc != MEM_CLUSTER_CONFLICT && !j->applied) {
        j->op->rc = j->rc; /* not applied here: the cluster's error is the answer */
        j->op->err = j->err;
    }
    j->done(j->op, j->rc, j->applied ? j->seq : 0, &j->err, j->ud);
    free(j);
}

cl_job_t *mem_cluster__jobs_expired(mem_cluster_t *cl, int64_t now)
{
    cl_job_t *out = NULL;
    for (cl_job_t **pp = &cl->waiters; *pp;) {
        cl_job_t *j = *pp;
        /* a job being published belongs to its publisher, which keeps its own deadline */
        if (now < j->deadline_ms || (!j->acked && now != INT64_MAX)) {
            pp = &j->wnext;
            continue;
        }
        *pp = j->wnext;
        j->waiting = false;
        if (!j->applied) {
            /* Not a 503: a client retries those, and this write is in the log and will be
             * applied; sent again, an insert without ids would be stored twice and a
             * compaction by ratio would run twice. */
            cl->n_apply_timeouts++;
            j->rc = mem_err_set(&j->err, MEM_EWRITETIME,
                                "written to the cluster log (seq %llu) but not applied on this "
                                "node within --cluster-write-timeout: it will be, do not send it "
                                "again (a read with min_seq=%llu waits for it)",
                                (unsigned long long)j->seq, (unsigned long long)j->seq);
        }
        j->wnext = out;
        out = j;
    }
    if (now == INT64_MAX) { /* closing: the queued ones too */
        for (size_t b = 0; b < CL_NS_BUCKETS; b++)
            for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext)
                while (ns->wq_head) {
                    cl_job_t *j = ns->wq_head;
                    ns->wq_head = j->next;
                    j->rc = mem_err_set(&j->err, MEM_EBUSY, "the server is shutting down");
                    j->err.retry_after_s = 1;
                    j->wnext = out;
                    out = j;
                }
    }
    return out;
}

/* Under cl->mu: ns (with writes queued, none being published) joins the publisher's ready
 * queue, and the publisher is woken. */
static void ready_push(mem_cluster_t *cl, cl_ns_t *ns)
{
    ns->wready = true;
    ns->rnext = NULL;
    if (cl->ready_tail)
        cl->ready_tail->rnext = ns;
    else
        cl->ready_head = ns;
    cl->ready_tail = ns;
    pthread_cond_signal(&cl->pub_cv);
}

int mem_cluster_write(mem_cluster_t *cl, mem_store_op_t *op, mem_cluster_done_fn done, void *ud,
                      mem_err_t *err)
{
    cl_job_t *j = calloc(1, sizeof(*j));
    if (!j) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    snprintf(j->msgid, sizeof(j->msgid), "%s-%llx-%llu", cl->cfg->node_id,
             (unsigned long long)cl->boot,
             (unsigned long long)__atomic_add_fetch(&cl->msg_ctr, 1, __ATOMIC_RELAXED));
    /* an import is sized when a publisher encodes it (its segments are staged in a file) */
    size_t size = op->kind == MEM_STORE_OP_IMPORT ? 0 : mem_cluster_rec_size(op, strlen(j->msgid));
    if (cl->max_payload && size + HEADER_ROOM > cl->max_payload) {
        free(j);
        pthread_mutex_lock(&cl->mu);
        cl->n_too_big++;
        pthread_mutex_unlock(&cl->mu);
        return mem_err_set(err, MEM_ETOOBIG,
                           "as a cluster log record this write is %zu bytes, over the NATS "
                           "max_payload of %zu: send smaller batches or raise max_payload",
                           size + HEADER_ROOM, cl->max_payload);
    }
    j->op = op;
    j->done = done;
    j->ud = ud;
    j->cl = cl;
    j->deadline_ms = mem_cluster__mono_ms() + (int64_t)(cl->cfg->cluster_write_timeout_s * 1000.0);
    pthread_mutex_lock(&cl->mu);
    int64_t down = cl->disconnected_ms ? mem_cluster__mono_ms() - cl->disconnected_ms : 0;
    int rc = MEM_OK;
    if (cl->stop) {
        rc = mem_err_set(err, MEM_EBUSY, "the server is shutting down");
    } else if (down > DOWN_REFUSE_MS) {
        rc = mem_err_set(err, MEM_EBUSY, "cannot reach NATS for %.1f s: writes are refused",
                         (double)down / 1e3);
    } else if (cl->n_jobs >= MAX_PENDING) {
        rc = mem_err_set(err, MEM_EBUSY, "too many cluster writes pending (%d)", MAX_PENDING);
    } else if (!(j->ns = mem_cluster__ns_get(cl, op->ns))) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
    } else if (!j->ns->in_map) { /* placed nowhere: no node would apply the record */
        rc = mem_err_set(err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    }
    if (rc != MEM_OK) {
        pthread_mutex_unlock(&cl->mu);
        free(j);
        if (rc == MEM_EBUSY) err->retry_after_s = 1;
        return rc;
    }
    cl->n_jobs++;
    cl->n_writes++;
    cl_ns_t *ns = j->ns;
    if (ns->wq_tail)
        ns->wq_tail->next = j;
    else
        ns->wq_head = j;
    ns->wq_tail = j;
    if (!ns->wbusy && !ns->wready) ready_push(cl, ns);
    pthread_mutex_unlock(&cl->mu);
    return MEM_OK;
}

/* Publish j's record until acknowledged, refused for good, or the deadline. MEM_OK with
 * j->seq and j->prev, MEM_CLUSTER_CONFLICT, or with j->err: MEM_EBUSY (not stored),
 * MEM_EWRITETIME (perhaps stored: an attempt went unanswered) or MEM_ENOMEM. */
static int publish(mem_cluster_t *cl, cl_job_t *j)
{
    cl_ns_t *ns = j->ns;
    size_t len = 0;
    unsigned char *buf = mem_cluster_rec_encode(j->op, j->msgid, &len);
    if (!buf)
        return mem_err_set(&j->err, j->op->kind == MEM_STORE_OP_IMPORT ? MEM_ESTORAGE : MEM_ENOMEM,
                           j->op->kind == MEM_STORE_OP_IMPORT
                               ? "cannot read the staged import (or out of memory)"
                               : "out of memory");
    if (cl->max_payload && len + HEADER_ROOM > cl->max_payload) { /* an import, sized now */
        free(buf);
        pthread_mutex_lock(&cl->mu);
        cl->n_too_big++;
        pthread_mutex_unlock(&cl->mu);
        return mem_err_set(&j->err, MEM_ETOOBIG,
                           "as a cluster log record this import is %zu bytes, over the NATS "
                           "max_payload of %zu: import it in smaller files or raise max_payload",
                           len + HEADER_ROOM, cl->max_payload);
    }
    pthread_mutex_lock(&cl->mu);
    bool known = ns->last_known;
    uint64_t expect = ns->last;
    pthread_mutex_unlock(&cl->mu);
    int rc = MEM_OK, conflicts = 0;
    const char *why = "";
    /* an attempt that JetStream may have stored without our hearing of it (a lost ack, a
     * connection lost after the send): the deadline then cannot say "nothing was written",
     * and a client that sent it again would store it twice (its retry has a new msgid) */
    bool maybe_logged = false;
    for (;;) {
        if (!known) {
            if (last_subject_seq(cl, ns, &expect) == 0) {
                known = true;
            } else {
                why = "cannot read the namespace's last sequence";
                goto retry;
            }
        }
        natsMsg *m = NULL;
        char hv[32];
        snprintf(hv, sizeof(hv), "%llu", (unsigned long long)expect);
        if (natsMsg_Create(&m, ns->subject, NULL, (const char *)buf, (int)len) != NATS_OK) {
            rc = mem_err_set(&j->err, MEM_ENOMEM, "out of memory");
            break;
        }
        natsMsgHeader_Set(m, "Nats-Msg-Id", j->msgid);
        natsMsgHeader_Set(m, "Nats-Expected-Last-Subject-Sequence", hv);
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = PUB_WAIT_MS;
        jsPubAck *pa = NULL;
        jsErrCode ec = 0;
        natsStatus s = js_PublishMsg(&pa, cl->js, m, &po, &ec);
        natsMsg_Destroy(m);
        if (s == NATS_OK) {
            j->seq = pa->Sequence;
            j->prev = expect;
            bool dup = pa->Duplicate;
            j->dup = dup;
            jsPubAck_Destroy(pa);
            pthread_mutex_lock(&cl->mu);
            if (!dup || j->seq > ns->last) {
                ns->last = j->seq;
                ns->last_known = true;
            }
            pthread_mutex_unlock(&cl->mu);
            break;
        }
        if (ec == JSStreamWrongLastSequenceErr) {
            /* a write from another node came first: re-read and retry, bounded */
            pthread_mutex_lock(&cl->mu);
            cl->n_conflicts++;
            ns->last_known = false;
            pthread_mutex_unlock(&cl->mu);
            if (++conflicts > CONFLICT_RETRIES) {
                rc = MEM_CLUSTER_CONFLICT;
                mem_err_set(&j->err, MEM_EEXISTS,
                            "concurrent writes to namespace %s from other nodes; retry", ns->name);
                break;
            }
            known = false;
            mem_cluster__sleep_ms(1 + (int)(j->msgid[strlen(j->msgid) - 1] % 4) * conflicts);
            continue;
        }
        if (s == NATS_MAX_PAYLOAD || ec == 10054 /* JSStreamMessageExceedsMaximumErr */) {
            rc = mem_err_set(&j->err, MEM_ETOOBIG,
                             "as a cluster log record this write is %zu bytes, over the NATS "
                             "max_payload: send smaller batches or raise max_payload",
                             len);
            break;
        }
        why = natsStatus_GetText(s);
        /* refused by JetStream (ec) or by no stream at all: not stored */
        if (ec == 0 && s != NATS_NO_RESPONDERS) maybe_logged = true;
    retry:
        if (mem_cluster__mono_ms() > j->deadline_ms) {
            pthread_mutex_lock(&cl->mu);
            cl->n_pub_failures++;
            ns->last_known = false;
            pthread_mutex_unlock(&cl->mu);
            if (maybe_logged) {
                rc = mem_err_set(&j->err, MEM_EWRITETIME,
                                 "the cluster log did not confirm this write within "
                                 "--cluster-write-timeout (%s): it may be stored and applied "
                                 "later; read before sending it again",
                                 why);
            } else {
                rc = mem_err_set(&j->err, MEM_EBUSY,
                                 "the cluster log is unavailable (%s); nothing was written, retry",
                                 why);
                j->err.retry_after_s = 1;
            }
            break;
        }
        pthread_mutex_lock(&cl->mu);
        cl->n_pub_retries++;
        bool stop = cl->stop;
        pthread_mutex_unlock(&cl->mu);
        if (stop && maybe_logged) {
            rc = mem_err_set(&j->err, MEM_EWRITETIME,
                             "the server is shutting down and the cluster log did not confirm "
                             "this write: it may be stored and applied later; read before "
                             "sending it again");
            break;
        }
        if (stop) {
            rc = mem_err_set(&j->err, MEM_EBUSY, "the server is shutting down");
            j->err.retry_after_s = 1;
            break;
        }
        mem_cluster__sleep_ms(100);
    }
    free(buf);
    return rc;
}

void *mem_cluster__pub_main(void *arg)
{
    mem_cluster_t *cl = arg;
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        while (!cl->ready_head && !cl->stop)
            pthread_cond_wait(&cl->pub_cv, &cl->mu);
        if (cl->stop) break;
        cl_ns_t *ns = cl->ready_head;
        cl->ready_head = ns->rnext;
        if (!cl->ready_head) cl->ready_tail = NULL;
        ns->wready = false;
        cl_job_t *j = ns->wq_head;
        if (!j) continue;
        ns->wq_head = j->next;
        if (!ns->wq_head) ns->wq_tail = NULL;
        ns->wbusy = true;
        /* a waiter from now on: a fast apply may come before the acknowledgement */
        j->waiting = true;
        j->wnext = cl->waiters;
        cl->waiters = j;
        pthread_mutex_unlock(&cl->mu);

        int rc = publish(cl, j);
        uint64_t seq = j->seq;

        pthread_mutex_lock(&cl->mu);
        cl_job_t *finish = NULL;
        uint64_t head = ns->applied > ns->submitted ? ns->applied : ns->submitted;
        /* Direct only when the fetcher has decided about every earlier record of the stream
         * and queued those it takes: then the namespace's earlier records are with the store
         * already, whatever the
         * record names as its predecessor (a clustered 2.9 JetStream may accept two
         * records expecting the same one: nats-server issue 4320). */
        if (rc == MEM_OK && !j->applied && !j->dup && ns->state == CL_NS_LIVE && j->prev <= head &&
            j->seq > head && cl->streams[ns->stream].seen + 1 >= j->seq &&
            cl->streams[ns->stream].unqueued == 0) {
            /* apply it here now; claimed and queued under mu (see the top) */
            mem_store_op_t *op = j->op;
            op->log_stream = cl->streams[ns->stream].name;
            op->log_seq = j->seq;
            op->log_chain = true;
            op->log_prev = j->prev;
            ns->submitted = j->seq;
            j->direct = true;
            if (mem_store_submit(cl->st, op, on_origin_applied, j) != MEM_OK) {
                ns->submitted = head; /* the queue is full: the fetcher applies it */
                j->direct = false;
            }
        }
        if (rc != MEM_OK && !j->applied) {
            if (j->waiting) waiter_unlink(cl, j);
            j->rc = rc;
            finish = j;
        } else if (rc != MEM_OK) { /* the ack was lost, but the record was applied here */
            if (j->waiting) waiter_unlink(cl, j);
            j->acked = true;
            finish = j;
        } else {
            j->acked = true;
            if (j->direct) {
                /* on_origin_applied answers it */
            } else if (j->applied) { /* applied before the ack came back */
                if (j->waiting) waiter_unlink(cl, j);
                finish = j;
            } else if (!j->waiting) { /* the deadline passed meanwhile: unreachable */
                finish = NULL;
            }
        }
        ns->wbusy = false;
        if (ns->wq_head && !ns->wready) ready_push(cl, ns);
        pthread_mutex_unlock(&cl->mu);
        if (rc == MEM_OK) { /* every node's fetcher: "SEQ SUBJECT" (fetch.c's hints) */
            char wake[48], hint[240];
            snprintf(wake, sizeof(wake), "mnemod.wake.%zu", ns->stream);
            int n = snprintf(hint, sizeof(hint), "%llu %s", (unsigned long long)seq, ns->subject);
            natsConnection_Publish(cl->nc, wake, hint, n);
        }
        if (finish) mem_cluster__job_finish(cl, finish);
        pthread_mutex_lock(&cl->mu);
    }
    pthread_mutex_unlock(&cl->mu);
    return NULL;
}

#endif /* MNEMOD_HAVE_NATS */
