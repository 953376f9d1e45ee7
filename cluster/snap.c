/* snap.c - per-namespace snapshots in JetStream, and trimming the log below them
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A snapshot of namespace X is the file of mem_store_ns_export (storage/nssnap.c)
 * published in chunks of at most max_payload to MNEMOD_SNAP, subjects
 * mnemod.snap.c.<hex(X)>.<id>.<i>, then a manifest on mnemod.snap.m.<hex(X)>:
 *   {"ns", "id", "chunks", "bytes", "pos", "covered", "node", "created_ms"}
 * pos is the chain position of the exported state; covered >= pos is a position below
 * which X has no record the snapshot lacks (the exporting node's stream position when the
 * namespace was live and verified there). Older chunks and manifests of X are purged once
 * a new manifest is in.
 *
 * Trimming (the lease holder, on --log-trim-interval, when a stream exceeds
 * --log-trim-size, or on POST /v1/cluster/snapshot {"trim": true}): for each stream, the
 * floor F is the lowest position any live node reports + 1 (a node reports what it
 * applied, lowered to what its catching-up namespaces still need). Every namespace of the
 * stream with a record below F must be covered up to F - 1: if the stream leader shows no
 * record of it between its snapshot's covered position and F, the manifest's covered
 * position is simply raised; otherwise a live holder is asked (mnemod.ctl.<node>) for a
 * fresh snapshot. A namespace that cannot be covered lowers F to its first uncovered
 * record. Then each namespace's records below F are purged, its last record always kept:
 * JetStream checks a new record's expected predecessor against the subject's last
 * sequence, so a subject purged empty would let the next record claim to have none, and a
 * stale copy could take it. With the last record kept the chain stays whole, and a node
 * that was down meanwhile meets a predecessor it does not have: it restores the snapshot
 * (fetch.c) instead of serving stale data.
 */
#ifdef MNEMOD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cluster/cluster_int.h"

#define CHUNK_ROOM     1024   /* max_payload minus this is a chunk's size */
#define CTL_TIMEOUT_MS 120000 /* a snapshot asked of another node */

int mem_cluster__snap_ensure_stream(mem_cluster_t *cl, mem_err_t *err)
{
    jsStreamInfo *si = NULL;
    jsErrCode ec = 0;
    if (js_GetStreamInfo(&si, cl->js, CL_SNAP_STREAM, NULL, &ec) == NATS_OK) {
        jsStreamInfo_Destroy(si);
        return MEM_OK;
    }
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    const char *subjects[1] = {"mnemod.snap.>"};
    sc.Name = CL_SNAP_STREAM;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Replicas = cl->cfg->replicas;
    natsStatus ns = js_AddStream(&si, cl->js, &sc, NULL, &ec);
    jsStreamInfo_Destroy(si);
    if (ns == NATS_OK || ec == JSStreamNameExistErr) return MEM_OK;
    return mem_err_set(err, MEM_EBUSY, "cannot create stream %s: %s", CL_SNAP_STREAM,
                       nats_GetLastError(NULL));
}

static void subj_manifest(const char *ns, char *out, size_t cap)
{
    int n = snprintf(out, cap, "mnemod.snap.m.");
    mem_cluster__hex(ns, out + n, cap - (size_t)n);
}

static void subj_chunk(const char *ns, const char *id, size_t i, char *out, size_t cap)
{
    char hex[2 * MEM_STORE_NS_MAX + 1];
    mem_cluster__hex(ns, hex, sizeof(hex));
    snprintf(out, cap, "mnemod.snap.c.%s.%s.%zu", hex, id, i);
}

static natsStatus publish_bytes(mem_cluster_t *cl, const char *subject, const void *data, int len)
{
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 10000;
    jsPubAck *pa = NULL;
    jsErrCode ec = 0;
    natsStatus ns = js_Publish(&pa, cl->js, subject, data, len, &po, &ec);
    jsPubAck_Destroy(pa);
    return ns;
}

/* ns's latest manifest (leader read), or NULL: *missing tells none from unreachable (and
 * from a manifest that could not be read for want of memory: never taken for none, which
 * would restore from the log alone or snapshot again). */
static json_t *manifest(mem_cluster_t *cl, const char *ns, bool *missing)
{
    char subject[200];
    subj_manifest(ns, subject, sizeof(subject));
    natsMsg *m = NULL;
    jsErrCode ec = 0;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 2000;
    natsStatus s = js_GetLastMsg(&m, cl->js, CL_SNAP_STREAM, subject, &jo, &ec);
    *missing = s == NATS_NOT_FOUND || ec == JSNoMessageFoundErr;
    if (s != NATS_OK) return NULL;
    json_t *o = NULL;
    int rc = mem_cluster__json_parse(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), &o);
    natsMsg_Destroy(m);
    if (rc == MEM_ENOMEM) return NULL;
    if (!json_is_object(o) || !json_is_string(json_object_get(o, "id"))) {
        json_decref(o);
        *missing = true;
        return NULL;
    }
    return o;
}

static int publish_manifest(mem_cluster_t *cl, const char *ns, json_t *man, mem_err_t *err)
{
    char subject[200];
    subj_manifest(ns, subject, sizeof(subject));
    char *text = mem_cluster__json_dump(man);
    if (!text) return mem_err_set(err, MEM_ENOMEM, "snapshot manifest of %s: out of memory", ns);
    natsStatus s = publish_bytes(cl, subject, text, (int)strlen(text));
    free(text);
    if (s != NATS_OK)
        return mem_err_set(err, MEM_EBUSY, "snapshot manifest of %s: %s", ns,
                           natsStatus_GetText(s));
    jsOptions jo; /* keep only the newest manifest */
    jsOptions_Init(&jo);
    jo.Stream.Purge.Subject = subject;
    jo.Stream.Purge.Keep = 1;
    jsErrCode ec = 0;
    js_PurgeStream(cl->js, CL_SNAP_STREAM, &jo, &ec);
    return MEM_OK;
}

int mem_cluster__snap_covered(mem_cluster_t *cl, const char *ns, uint64_t *covered, mem_err_t *err)
{
    bool missing = false;
    json_t *m = manifest(cl, ns, &missing);
    if (!m)
        return missing ? mem_err_set(err, MEM_ENOTFOUND, "no snapshot of %s", ns)
                       : mem_err_set(err, MEM_EBUSY, "cannot read the snapshot of %s", ns);
    *covered = (uint64_t)json_integer_value(json_object_get(m, "covered"));
    json_decref(m);
    return MEM_OK;
}

int mem_cluster__snap_publish(mem_cluster_t *cl, const char *name, uint64_t *covered,
                              mem_err_t *err)
{
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    bool live = ns && ns->state == CL_NS_LIVE;
    /* read before the export: everything at or below it is committed by then (the stream's
     * position only when no record of ns is still with the store: the fetcher passes over
     * the origin's own records before they commit) */
    uint64_t base = live ? mem_cluster__ns_pos(cl, ns) : 0;
    uint64_t ctr = ++cl->n_snapshots;
    pthread_mutex_unlock(&cl->mu);
    if (!live) return mem_err_set(err, MEM_EBUSY, "namespace %s is not live on this node", name);
    char hex[2 * MEM_STORE_NS_MAX + 1];
    mem_cluster__hex(name, hex, sizeof(hex));
    char path[sizeof(cl->cfg->data_path) + 400], id[128];
    snprintf(id, sizeof(id), "%s-%lld-%llu", cl->cfg->node_id, (long long)mem_cluster__wall_ms(),
             (unsigned long long)ctr);
    snprintf(path, sizeof(path), "%s.nssnap-%s-%s", cl->cfg->data_path, hex, id);
    uint64_t pos = 0, bytes = 0;
    int rc = mem_store_ns_export(cl->st, name, path, &pos, &bytes, err);
    if (rc != MEM_OK) {
        unlink(path);
        return rc;
    }
    bool missing = false;
    json_t *old = manifest(cl, name, &missing);
    size_t chunk_len = cl->max_payload > 2 * CHUNK_ROOM ? cl->max_payload - CHUNK_ROOM : 65536;
    FILE *f = fopen(path, "rb");
    char *chunk = malloc(chunk_len);
    size_t chunks = 0, sent = 0;
    natsStatus s = NATS_OK;
    while (f && chunk && s == NATS_OK) {
        size_t n = fread(chunk, 1, chunk_len, f);
        if (n == 0) break;
        char subject[300];
        subj_chunk(name, id, chunks, subject, sizeof(subject));
        s = publish_bytes(cl, subject, chunk, (int)n);
        chunks++;
        sent += n;
    }
    bool read_ok = f && chunk && !ferror(f);
    if (f) fclose(f);
    free(chunk);
    unlink(path);
    if (!read_ok || s != NATS_OK || sent != bytes) {
        json_decref(old);
        return mem_err_set(err, read_ok ? MEM_EBUSY : MEM_ESTORAGE, "snapshot of %s: %s", name,
                           read_ok ? natsStatus_GetText(s) : "cannot read the export");
    }
    uint64_t cov = base > pos ? base : pos;
    json_t *man = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:s,s:I}", "ns", name, "id", id, "chunks",
                            (json_int_t)chunks, "bytes", (json_int_t)bytes, "pos", (json_int_t)pos,
                            "covered", (json_int_t)cov, "node", cl->cfg->node_id, "created_ms",
                            (json_int_t)mem_cluster__wall_ms());
    rc = man ? publish_manifest(cl, name, man, err) : mem_err_set(err, MEM_ENOMEM, "out of memory");
    json_decref(man);
    const char *old_id = json_string_value(json_object_get(old, "id"));
    if (rc == MEM_OK && old_id && strcmp(old_id, id) != 0) { /* its chunks are not needed */
        char filter[300];
        snprintf(filter, sizeof(filter), "mnemod.snap.c.%s.%s.>", hex, old_id);
        jsOptions jo;
        jsOptions_Init(&jo);
        jo.Stream.Purge.Subject = filter;
        jsErrCode ec = 0;
        js_PurgeStream(cl->js, CL_SNAP_STREAM, &jo, &ec);
    }
    json_decref(old);
    if (rc != MEM_OK) return rc;
    *covered = cov;
    mem_cluster__log("info", "snapshot", "ns=%s id=%s chunks=%zu bytes=%llu pos=%llu covered=%llu",
                     name, id, chunks, (unsigned long long)bytes, (unsigned long long)pos,
                     (unsigned long long)cov);
    return MEM_OK;
}

/* ---- restoring ---- */

typedef struct import_wait {
    mem_cluster_t *cl;
    bool done;
    int rc;
    mem_err_t err;
} import_wait_t;

static void on_imported(mem_store_op_t *op, void *ud)
{
    import_wait_t *w = ud;
    pthread_mutex_lock(&w->cl->mu);
    w->done = true;
    w->rc = op->rc;
    w->err = op->err;
    pthread_cond_broadcast(&w->cl->cv);
    pthread_mutex_unlock(&w->cl->mu);
}

/* Hand op to the store and wait for it (local ops: import, forget). */
int mem_cluster__run_local(mem_cluster_t *cl, mem_store_op_t *op, mem_err_t *err)
{
    import_wait_t w = {.cl = cl};
    int64_t until = mem_cluster__mono_ms() + 60000;
    while (mem_store_submit(cl->st, op, on_imported, &w) != MEM_OK) {
        if (mem_cluster__mono_ms() > until)
            return mem_err_set(err, MEM_EBUSY, "the write queue stays full");
        mem_cluster__sleep_ms(10);
    }
    pthread_mutex_lock(&cl->mu);
    while (!w.done)
        pthread_cond_wait(&cl->cv, &cl->mu);
    pthread_mutex_unlock(&cl->mu);
    if (w.rc != MEM_OK) *err = w.err;
    return w.rc;
}

int mem_cluster__snap_restore(mem_cluster_t *cl, const char *name, uint64_t min_covered,
                              uint64_t *pos, mem_err_t *err)
{
    bool missing = false;
    json_t *man = manifest(cl, name, &missing);
    if (!man)
        return missing ? mem_err_set(err, MEM_ENOTFOUND, "no snapshot of %s", name)
                       : mem_err_set(err, MEM_EBUSY, "cannot read the snapshot of %s", name);
    const char *id = json_string_value(json_object_get(man, "id"));
    json_int_t chunks = json_integer_value(json_object_get(man, "chunks"));
    json_int_t bytes = json_integer_value(json_object_get(man, "bytes"));
    uint64_t covered = (uint64_t)json_integer_value(json_object_get(man, "covered"));
    int rc = MEM_OK;
    char path[sizeof(cl->cfg->data_path) + 400];
    char hex[2 * MEM_STORE_NS_MAX + 1];
    mem_cluster__hex(name, hex, sizeof(hex));
    snprintf(path, sizeof(path), "%s.nsrestore-%s-%s", cl->cfg->data_path, hex, id);
    FILE *f = NULL;
    if (covered < min_covered || chunks <= 0 || bytes <= 0) {
        rc = mem_err_set(err, MEM_ENOTFOUND, "the snapshot of %s covers %llu, %llu needed", name,
                         (unsigned long long)covered, (unsigned long long)min_covered);
        goto out;
    }
    f = fopen(path, "wb");
    if (!f) {
        rc = mem_err_set(err, MEM_ESTORAGE, "cannot create %s", path);
        goto out;
    }
    json_int_t got = 0;
    for (json_int_t i = 0; i < chunks; i++) {
        char subject[300];
        subj_chunk(name, id, (size_t)i, subject, sizeof(subject));
        natsMsg *m = NULL;
        jsErrCode ec = 0;
        jsOptions jo;
        jsOptions_Init(&jo);
        jo.Wait = 5000;
        natsStatus s = NATS_OK;
        for (int attempt = 0; attempt < 20; attempt++) {
            s = js_GetLastMsg(&m, cl->js, CL_SNAP_STREAM, subject, &jo, &ec);
            if (s == NATS_OK || s == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) break;
            mem_cluster__sleep_ms(250);
        }
        if (s != NATS_OK) {
            rc = mem_err_set(err, MEM_EBUSY, "snapshot %s of %s: chunk %lld: %s", id, name,
                             (long long)i, natsStatus_GetText(s));
            goto out;
        }
        size_t n = (size_t)natsMsg_GetDataLength(m);
        bool ok = fwrite(natsMsg_GetData(m), 1, n, f) == n;
        natsMsg_Destroy(m);
        if (!ok) {
            rc = mem_err_set(err, MEM_EFULL, "cannot write %s", path);
            goto out;
        }
        got += (json_int_t)n;
    }
    if (fclose(f) != 0) {
        f = NULL;
        rc = mem_err_set(err, MEM_EFULL, "cannot write %s", path);
        goto out;
    }
    f = NULL;
    if (got != bytes) {
        rc = mem_err_set(err, MEM_ECORRUPT, "snapshot %s of %s: %lld bytes, %lld expected", id,
                         name, (long long)got, (long long)bytes);
        goto out;
    }
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_NS_IMPORT;
    snprintf(op.ns, sizeof(op.ns), "%s", name);
    op.import_path = path;
    op.log_seq = covered;
    rc = mem_cluster__run_local(cl, &op, err);
    if (rc == MEM_OK) *pos = covered;
out:
    if (f) fclose(f);
    unlink(path);
    json_decref(man);
    return rc;
}

/* ---- asking other nodes ---- */

static void on_ctl(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    mem_cluster_t *cl = closure;
    json_t *req = NULL;
    int prc =
        mem_cluster__json_parse(natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg), &req);
    const char *op = json_string_value(json_object_get(req, "op"));
    const char *name = json_string_value(json_object_get(req, "ns"));
    uint64_t need = (uint64_t)json_integer_value(json_object_get(req, "need"));
    json_t *ans = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    if (op && name && strcmp(op, "snapshot") == 0 && strlen(name) <= MEM_STORE_NS_MAX) {
        /* the asker saw records up to need: this live holder applies them soon */
        struct timespec dl;
        mem_cluster__deadline(&dl, 10000);
        pthread_mutex_lock(&cl->mu);
        for (;;) {
            cl_ns_t *ns = mem_cluster__ns_find(cl, name);
            if (!ns || ns->state != CL_NS_LIVE || mem_cluster__ns_pos(cl, ns) >= need || cl->stop)
                break;
            if (pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) != 0) break;
        }
        pthread_mutex_unlock(&cl->mu);
        uint64_t covered = 0;
        if (mem_cluster__snap_publish(cl, name, &covered, &err) == MEM_OK)
            ans = json_pack("{s:I}", "covered", (json_int_t)covered);
        else
            ans = json_pack("{s:o}", "error", mem_cluster__json_text(err.msg));
    } else {
        ans = json_pack("{s:s}", "error", prc == MEM_ENOMEM ? "out of memory" : "unknown request");
    }
    /* an answer in any case: the asker would wait CTL_TIMEOUT_MS for none */
    char *text = mem_cluster__json_dump(ans);
    if (natsMsg_GetReply(msg))
        natsConnection_PublishString(cl->nc, natsMsg_GetReply(msg),
                                     text ? text : "{\"error\":\"out of memory\"}");
    free(text);
    json_decref(ans);
    json_decref(req);
    natsMsg_Destroy(msg);
}

int mem_cluster__ctl_start(mem_cluster_t *cl, mem_err_t *err)
{
    char subject[128];
    snprintf(subject, sizeof(subject), "mnemod.ctl.%s", cl->cfg->node_id);
    if (natsConnection_Subscribe(&cl->ctl_sub, cl->nc, subject, on_ctl, cl) != NATS_OK)
        return mem_err_set(err, MEM_EBUSY, "cannot subscribe to %s", subject);
    return MEM_OK;
}

int mem_cluster__snap_request(mem_cluster_t *cl, const char *name, uint64_t need, uint64_t *covered,
                              mem_err_t *err)
{
    const char *me = cl->cfg->node_id;
    char ids[MEM_CLUSTER_PLACE_MAX][64];
    size_t n = 0;
    bool self = false;
    int64_t now = mem_cluster__wall_ms();
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    for (size_t i = 0; ns && i < ns->n_nodes; i++) {
        if (strcmp(ns->nodes[i], me) == 0) {
            self = ns->state == CL_NS_LIVE;
            continue;
        }
        if (mem_cluster__node_alive(mem_cluster__node_find(cl, ns->nodes[i]), now))
            snprintf(ids[n++], sizeof(ids[0]), "%s", ns->nodes[i]);
    }
    pthread_mutex_unlock(&cl->mu);
    if (self) return mem_cluster__snap_publish(cl, name, covered, err);
    if (n == 0) return mem_err_set(err, MEM_EBUSY, "no live holder of %s to snapshot it", name);
    char req[400];
    int len = snprintf(req, sizeof(req), "{\"op\":\"snapshot\",\"ns\":\"%s\",\"need\":%llu}", name,
                       (unsigned long long)need);
    for (size_t i = 0; i < n; i++) {
        char subject[128];
        snprintf(subject, sizeof(subject), "mnemod.ctl.%s", ids[i]);
        natsMsg *r = NULL;
        if (natsConnection_Request(&r, cl->nc, subject, req, len, CTL_TIMEOUT_MS) != NATS_OK) {
            mem_err_set(err, MEM_EBUSY, "node %s did not answer a snapshot request", ids[i]);
            continue;
        }
        json_t *o = NULL;
        int prc = mem_cluster__json_parse(natsMsg_GetData(r), (size_t)natsMsg_GetDataLength(r), &o);
        natsMsg_Destroy(r);
        if (prc == MEM_ENOMEM) {
            mem_err_set(err, MEM_ENOMEM, "node %s: its answer could not be read: out of memory",
                        ids[i]);
            continue;
        }
        json_t *c = json_object_get(o, "covered");
        if (json_is_integer(c)) {
            *covered = (uint64_t)json_integer_value(c);
            json_decref(o);
            return MEM_OK;
        }
        const char *e = json_string_value(json_object_get(o, "error"));
        mem_err_set(err, MEM_EBUSY, "node %s: %s", ids[i], e ? e : "no snapshot");
        json_decref(o);
    }
    return err->code ? err->code : MEM_EBUSY;
}

/* ---- trimming ---- */

/* Make ns covered up to need (raise its manifest, or a fresh snapshot). MEM_OK, or the
 * first record that stays uncovered in *stuck. */
static int cover(mem_cluster_t *cl, const char *name, size_t stream, const char *subject,
                 uint64_t first, uint64_t need, uint64_t *stuck, size_t *fresh, mem_err_t *err)
{
    bool missing = false;
    json_t *man = manifest(cl, name, &missing);
    if (!man && !missing) return mem_err_set(err, MEM_EBUSY, "cannot read snapshots");
    uint64_t covered = man ? (uint64_t)json_integer_value(json_object_get(man, "covered")) : 0;
    if (covered >= need) {
        json_decref(man);
        return MEM_OK;
    }
    uint64_t from = covered + 1 > first ? covered + 1 : first, rec = 0;
    if (mem_cluster__next_by_subject(cl, cl->streams[stream].name, subject, from, &rec) != 0) {
        json_decref(man);
        *stuck = from;
        return mem_err_set(err, MEM_EBUSY, "the stream leader does not answer");
    }
    if (rec == 0 || rec > need) { /* nothing of ns in (covered, need]: no new data needed */
        int rc = MEM_OK;
        if (man) { /* the manifest as it was would not cover need: the trim must not go on */
            rc = json_object_set_new(man, "covered", json_integer((json_int_t)need)) == 0
                     ? publish_manifest(cl, name, man, err)
                     : mem_err_set(err, MEM_ENOMEM, "out of memory");
        }
        json_decref(man);
        if (rc != MEM_OK) *stuck = from;
        return rc;
    }
    json_decref(man);
    uint64_t got = 0;
    int rc = mem_cluster__snap_request(cl, name, need, &got, err);
    if (rc == MEM_OK && got >= need) {
        (*fresh)++;
        return MEM_OK;
    }
    *stuck = rec;
    return rc != MEM_OK ? rc : mem_err_set(err, MEM_EBUSY, "snapshot of %s too old", name);
}

typedef char ns_name_t[MEM_STORE_NS_MAX + 1];

/* Under cl->mu: a copy of the names of the namespaces for which match(ns, ud) holds (the
 * caller frees it; NULL when memory ran out), their count in *n_out. */
static ns_name_t *ns_names_where(mem_cluster_t *cl, bool (*match)(const cl_ns_t *, const void *),
                                 const void *ud, size_t *n_out)
{
    size_t cap = 64, cnt = 0;
    ns_name_t *names = malloc(cap * sizeof(*names));
    for (size_t b = 0; names && b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; names && ns; ns = ns->hnext) {
            if (!match(ns, ud)) continue;
            if (cnt == cap) {
                void *more = realloc(names, 2 * cap * sizeof(*names));
                if (!more) {
                    free(names);
                    return NULL;
                }
                names = more;
                cap *= 2;
            }
            snprintf(names[cnt++], sizeof(names[0]), "%s", ns->name);
        }
    *n_out = cnt;
    return names;
}

static bool on_stream(const cl_ns_t *ns, const void *stream)
{
    return ns->in_map && ns->stream == *(const size_t *)stream;
}

static bool primary_here(const cl_ns_t *ns, const void *node_id)
{
    return ns->state == CL_NS_LIVE && ns->n_nodes && strcmp(ns->nodes[0], node_id) == 0;
}

/* Every answer of POST /v1/cluster/snapshot names this node and its stream positions.
 * false when out of memory (o may lack some). */
static bool add_node(mem_cluster_t *cl, json_t *o)
{
    json_t *pos = json_object();
    bool ok = o && pos;
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; ok && i < cl->k; i++)
        ok = json_object_set_new(pos, cl->streams[i].name,
                                 json_integer((json_int_t)cl->streams[i].applied)) == 0;
    pthread_mutex_unlock(&cl->mu);
    ok = ok && json_object_set_new(o, "node", json_string(cl->cfg->node_id)) == 0 &&
         json_object_set(o, "positions", pos) == 0;
    json_decref(pos);
    return ok;
}

char *mem_cluster__trim_cycle(mem_cluster_t *cl, mem_err_t *err)
{
    json_t *res = json_object(), *trimmed = json_object(), *problems = json_array();
    size_t fresh = 0;
    /* the answer lists what was trimmed and what stopped it: one that cannot say it all is
     * out of memory, not a shorter list (trimming itself goes on: a second cycle is safe) */
    bool whole = res && trimmed && problems;
    if (!whole) {
        json_decref(res);
        json_decref(trimmed);
        json_decref(problems);
        mem_err_set(err, MEM_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < cl->k; i++) {
        cl_stream_t *s = &cl->streams[i];
        int64_t now = mem_cluster__wall_ms();
        pthread_mutex_lock(&cl->mu);
        uint64_t floor = UINT64_MAX, first = s->first_seq, last = s->last_seq;
        for (size_t n = 0; n < cl->n_nodes; n++) {
            const cl_node_t *nd = &cl->nodes[n];
            if (nd->deleted || now - nd->heartbeat_ms > CL_ALIVE_MS || !nd->applied) continue;
            if (nd->applied[i] + 1 < floor) floor = nd->applied[i] + 1;
        }
        /* namespaces of this stream (copied: covering them talks to NATS) */
        size_t cnt = 0;
        ns_name_t *names = ns_names_where(cl, on_stream, &i, &cnt);
        pthread_mutex_unlock(&cl->mu);
        if (!names) {
            json_decref(res);
            json_decref(trimmed);
            json_decref(problems);
            mem_err_set(err, MEM_ENOMEM, "out of memory");
            return NULL;
        }
        if (floor == UINT64_MAX || floor > last + 1) floor = last + 1;
        if (floor <= first || last == 0) {
            free(names);
            continue;
        }
        for (size_t k = 0; k < cnt && floor > first; k++) {
            char subject[CL_SUBJECT_MAX];
            int w = snprintf(subject, sizeof(subject), "mnemod.%zu.", i);
            mem_cluster__hex(names[k], subject + w, sizeof(subject) - (size_t)w);
            uint64_t stuck = 0;
            mem_err_t e;
            mem_err_clear(&e);
            if (cover(cl, names[k], i, subject, first, floor - 1, &stuck, &fresh, &e) != MEM_OK) {
                if (json_array_append_new(problems, json_pack("{s:s,s:o}", "ns", names[k], "error",
                                                              mem_cluster__json_text(e.msg))) != 0)
                    whole = false;
                if (stuck && stuck < floor) floor = stuck;
                if (!stuck) floor = first; /* unknown: trim nothing of this stream */
            }
        }
        size_t purged = 0;
        for (size_t k = 0; k < cnt && floor > first; k++) {
            /* below floor, but never the namespace's last record (see above) */
            char subject[CL_SUBJECT_MAX];
            int w = snprintf(subject, sizeof(subject), "mnemod.%zu.", i);
            mem_cluster__hex(names[k], subject + w, sizeof(subject) - (size_t)w);
            natsMsg *m = NULL;
            jsErrCode ec = 0;
            jsOptions lo;
            jsOptions_Init(&lo);
            lo.Wait = 2000;
            if (js_GetLastMsg(&m, cl->js, s->name, subject, &lo, &ec) != NATS_OK) continue;
            uint64_t last_rec = natsMsg_GetSequence(m);
            natsMsg_Destroy(m);
            uint64_t upto = last_rec < floor ? last_rec : floor;
            if (upto <= first) continue;
            jsOptions jo;
            jsOptions_Init(&jo);
            jo.Stream.Purge.Subject = subject;
            jo.Stream.Purge.Sequence = upto; /* purge below, keep upto on */
            if (js_PurgeStream(cl->js, s->name, &jo, &ec) == NATS_OK) purged++;
        }
        free(names);
        if (purged) {
            if (json_object_set_new(trimmed, s->name, json_integer((json_int_t)floor)) != 0)
                whole = false;
            pthread_mutex_lock(&cl->mu);
            cl->n_trims++;
            if (floor > s->trimmed_below) s->trimmed_below = floor;
            pthread_mutex_unlock(&cl->mu);
        }
    }
    /* (set_new takes the value, on failure too) */
    if (json_object_set_new(res, "trimmed_below", trimmed) != 0) whole = false;
    if (json_object_set_new(res, "snapshots", json_integer((json_int_t)fresh)) != 0) whole = false;
    if (json_object_set_new(res, "problems", problems) != 0) whole = false;
    if (!add_node(cl, res)) whole = false;
    char *out = whole ? mem_cluster__json_dump(res) : NULL;
    json_decref(res);
    if (!out)
        mem_err_set(err, MEM_ENOMEM, "the trim ran; its answer could not be made: out of memory");
    return out;
}

int mem_cluster_snapshot(mem_cluster_t *cl, bool trim, char **json, mem_err_t *err)
{
    *json = NULL;
    if (trim) {
        *json = mem_cluster__trim_cycle(cl, err);
        return *json ? MEM_OK : (err->code ? err->code : MEM_EBUSY);
    }
    /* snapshots of every namespace this node is the primary of, live here */
    size_t cnt = 0;
    pthread_mutex_lock(&cl->mu);
    ns_name_t *names = ns_names_where(cl, primary_here, cl->cfg->node_id, &cnt);
    pthread_mutex_unlock(&cl->mu);
    if (!names) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    json_t *done = json_object();
    int rc = done ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < cnt && rc == MEM_OK; i++) {
        uint64_t covered = 0;
        rc = mem_cluster__snap_publish(cl, names[i], &covered, err);
        /* (an answer without a namespace whose snapshot was made would say it was not) */
        if (rc == MEM_OK &&
            json_object_set_new(done, names[i], json_integer((json_int_t)covered)) != 0)
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    free(names);
    if (rc != MEM_OK) {
        json_decref(done);
        return rc;
    }
    json_t *o = json_pack("{s:o}", "snapshots", done);
    *json = o && add_node(cl, o) ? mem_cluster__json_dump(o) : NULL;
    json_decref(o);
    return *json ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
}

#endif /* MNEMOD_HAVE_NATS */
