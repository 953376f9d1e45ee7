/* loop.c - libuv loop + libmicrohttpd in external epoll mode, suspend/resume, drain
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. MHD runs without threads: a uv_poll_t watches its epoll fd and a uv_timer_t its
 * timeout; both call mhd_run(), which runs MHD and re-arms the timer (a timeout of 0
 * means "run again now": edge-triggered epoll with data still buffered). A request is
 * read on the loop, then its connection is suspended and the handler runs on the request
 * worker pool (server/pool.c). A write record goes from there to the store's writer; the
 * workers' and the writer's completions come back through the pool's completion list, one
 * wake-up for a batch of them. Resuming a connection needs an explicit mhd_run(): in
 * external mode MHD has no wake-up channel; the connections a batch resumes share one.
 * Shutdown: quiesce (stop accepting), wait until no request is in flight (MHD must never
 * be stopped with suspended connections), stop MHD, close the store (flush + checkpoint),
 * close every handle, and uv_loop_close() must then succeed.
 *
 * Text for a remote embedder (server/embedding.c): a handler that returns with resp->embed
 * has its provider calls encoded on the same worker, started on the loop, and continued by
 * a second worker job once the provider has answered, so the request holds no thread while
 * it waits (it stays counted in_flight). SIGTERM ends the jobs still waiting (503).
 *
 * Cluster mode (server/replicate.c): once a request's body is in, replicate.c says whether
 * it is served here (its steps run as above) or relayed to a node holding its namespace
 * (answered on the loop when the holder answers); a write step goes to the cluster log
 * from the loop and comes back through replicate.c's async handle, holding no thread.
 */
#include "server/loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <uv.h>

#include "api/api.h"
#include "cluster/cluster.h"
#include "core/arena.h"
#include "core/spin.h"
#include "server/embedding.h"
#include "server/http.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/notify.h"
#include "server/pool.h"
#include "server/replicate.h"
#include "storage/store.h"

/* A loop whose spin is off (its last spins ran out) still spins after every this many
 * answers, to notice a client that has come closer; and it stops only once this many more
 * spins have run out than caught (see run_loop and mem_spin_gate_t). */
#define LOOP_SPIN_PROBE_EVERY 16
#define LOOP_SPIN_CREDIT      2
/* A pass of a spin that did nothing yet took this long means another task had the core (a
 * timeslice is a millisecond or more; the client itself, woken on this core, runs for tens
 * of microseconds): the machine is busy, and the spin stops (mem_spin_gate_preempted). */
#define LOOP_SPIN_PREEMPTED_NS 500000u

/* An MHD pass that reports "run again now" (timeout 0) without any of our callbacks
 * firing is a pass that did nothing for us; after this many in a row, the next passes back
 * off (1, 2, 4 ... ms, at most BACKOFF_MAX_MS) until something happens. */
#define IDLE_PASSES_MAX 8
#define BACKOFF_MAX_MS  64

typedef struct srv srv_t;

enum conn_phase {
    CP_IDLE,      /* between requests: waiting for the first byte of the next one */
    CP_RECEIVING, /* bytes of a request have arrived: --request-timeout runs */
    CP_WORKING,   /* the request is in full: its work and reply take what they take */
};

/* One per TCP connection (MHD's socket context), so every request, the second one on a
 * kept-alive connection included, must arrive in full within --request-timeout of its
 * first byte. The first byte is seen by the sweep as the socket's received-byte count
 * (TCP_INFO) moving past the count the sweep read first after the previous request ended;
 * the request line's arrival (on_uri) starts the clock too when the sweep has not seen it
 * yet. The count is read by the sweep, not at the end of every request: a TCP_INFO read
 * costs about a microsecond on a VM, as much as the rest of a small request's bookkeeping,
 * and bytes that arrive before that first read are either a request line (on_uri starts
 * its clock) or the start of one that goes on trickling (the next sweep sees it grow); one
 * that pauses has --idle-timeout for the pause, and its clock starts when it goes on, so
 * such a request lasts at most --idle-timeout more than others (operations.md says so). */
typedef struct conn_ctx {
    struct MHD_Connection *conn;
    int fd;
    enum conn_phase phase;
    uint64_t started_ns;     /* CP_RECEIVING: when the request's first byte was seen */
    uint64_t bytes_received; /* CP_IDLE: the received bytes the sweep read first, or UNREAD */
    struct conn_req *req;    /* the request being received or served, NULL between */
    struct conn_ctx *prev, *next;
} conn_ctx_t;

enum req_state {
    RS_READING,  /* head or body arriving */
    RS_ANSWERED, /* the answer was decided on the head: sent when the (empty) body is in */
    RS_WORKING,  /* suspended: a step runs on the pool or the writer */
    RS_READY,    /* resumed: r->ready is queued when MHD calls back */
};

/* What a pool job of a request runs. */
enum req_job {
    JOB_WORK,       /* mem_api_work: the next step of the request */
    JOB_IMPORT_END, /* an import's last piece, then its write record */
    JOB_EMB_RESUME, /* the provider answered: decode, and the handler goes on */
};

typedef struct conn_req {
    mem_arena_t arena; /* the request's strings and header list, freed with it */
    srv_t *srv;
    struct MHD_Connection *conn;
    enum req_state state;
    bool head_done;        /* the head was checked (first access-handler call) */
    bool close_after;      /* send "Connection: close" (framing errors) */
    char *target;          /* raw request target (path and query), from the URI callback */
    const char *target_at; /* where MHD's buffer holds it (for mem_srv_http_check) */
    size_t target_len;
    mem_api_header_t *headers;
    size_t n_headers;
    char *body;
    size_t len, cap;
    bool too_big;
    bool out_of_memory; /* the body could not be kept: read to its end, then answered 503 */
    bool over_budget;   /* keeping it would pass --max-body-memory: read to its end, then 503 */
    size_t charged;     /* bytes of s->body_mem that are this body's (its Content-Length, or cap) */
    char method[16];
    char *url;
    char *query;
    char *ctype;
    char req_id[40];
    uint64_t start_ns;
    mem_store_t *store; /* the store as the loop thread saw it at dispatch (NULL: loading) */
    mem_api_req_t areq;
    mem_api_resp_t aresp;
    mem_srv_pool_job_t job;     /* the request's step on the pool, then its write's completion */
    struct MHD_Response *ready; /* built response, queued when MHD calls back after resume */
    int status;
    enum req_job job_kind;  /* what work_cb runs */
    mem_api_next_t next;    /* what the finished job asks for next */
    mem_emb_job_t *emb_job; /* the provider job the handler waits for (resp->embed) */
    /* a streamed response body (an export): filled a chunk at a time on the pool */
    mem_api_stream_t *stream; /* taken from aresp when the response is built */
    char *chunk;              /* STREAM_CHUNK bytes; chunk_off of chunk_len already sent */
    size_t chunk_len, chunk_off;
    long fill_rc;    /* the last fill: > 0 bytes, 0 end, -1 failed */
    bool stream_end; /* no more data: end (or cut) the body once the chunk is sent */
    bool filling;    /* a fill job runs; the connection is suspended meanwhile */
    mem_srv_pool_job_t fill_job;
    /* an import: its body is handed to api/ a piece at a time, never held whole */
    bool import;
    mem_api_import_t *imp;
    bool imp_failed;    /* the import was refused: drop the rest of the body */
    uint64_t body_seen; /* bytes of body received so far */
    bool feeding;       /* a feed job reads r->body: leave it alone (the connection is suspended) */
    mem_srv_pool_job_t feed_job;
    /* where the answer was made, for /metrics: a retrieve or a write's acknowledgement */
    const char *answer_kind; /* "retrieve", "segment", "write_ack" or NULL (not counted) */
    bool on_loop;            /* the event loop made it, no pool round trip */
} conn_req_t;

struct srv {
    uv_loop_t loop;
    struct MHD_Daemon *mhd;
    uv_poll_t poll;
    uv_timer_t timer;  /* MHD's own timeouts, and the back-off of idle passes */
    uv_idle_t rerun;   /* "run MHD again now", after the loop has polled for I/O once */
    uv_timer_t sweep;  /* drops connections whose request is overdue */
    conn_ctx_t *conns; /* every open connection (loop thread) */
    uint64_t progress; /* bumped by every MHD callback: a pass that did something */
    uint64_t progress_seen;
    unsigned idle_passes; /* consecutive timeout-0 passes without progress */
    /* run_loop: the gaps between requests (on_uri measures them) */
    uint64_t requests;       /* request lines seen */
    uint64_t idle_since_ns;  /* when the last answer was queued; 0 once a request came */
    uint64_t spin_seen_idle; /* the idle_since_ns run_loop last decided a spin for */
    mem_spin_gate_t spin;    /* whether the wait after an answer starts with a spin */
    bool spin_on;            /* the wait for the next request line spins */
    bool spinning;           /* run_loop is inside a spin */
    uv_signal_t sigint, sigterm, sighup;
    mem_srv_pool_t *pool; /* request jobs, and the writer's completions back to the loop */
    bool in_batch;        /* the pool is delivering completions: MHD runs once at its end */
    bool run_owed;        /* a completion of the batch resumed a connection */
    uv_work_t open_work;
    const mem_cfg_t *cfg;
    const mem_vec_ops_t *ops;
    mem_store_t *store;            /* NULL while loading; set on the loop thread */
    mem_store_t *opened;           /* written by the open work, read after it (uv orders the two) */
    mem_cluster_t *cluster;        /* cluster mode only: published with store, on the loop thread */
    mem_cluster_t *opened_cluster; /* written by the open work, like opened */
    mem_srv_repl_t *repl;          /* cluster mode only: routes every request (loop thread) */
    bool loading;
    int open_rc;
    mem_err_t open_err;
    mem_api_ctx_t api;
    mem_cfg_keys_t *keys; /* the keys file read at start-up, until the edge takes it */
    mem_srv_emb_t *emb;   /* --embedder openai:URL only (loop thread) */
    size_t in_flight;     /* suspended connections (loop thread) */
    size_t body_mem;      /* bytes of request bodies held or announced (every r->charged) */
    uint64_t rid_state;   /* request ids (loop thread): seeded at start-up */
    bool draining;
    bool stopped;
    int exit_code;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void mhd_run(srv_t *s);
static void maybe_finish_shutdown(srv_t *s);

#define REQ_OF(job, field) ((conn_req_t *)((char *)(job)-offsetof(conn_req_t, field)))

/* Loop thread: a connection was resumed. Run MHD (in external mode it has no wake-up
 * channel of its own) and see whether a drain can finish; inside a batch of pool
 * completions, once at the batch's end (on_pool_batch) rather than once per request. */
static void after_resume(srv_t *s)
{
    if (s->in_batch) {
        s->run_owed = true;
        return;
    }
    mhd_run(s);
    maybe_finish_shutdown(s);
}

static conn_ctx_t *conn_ctx_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* glibc's struct tcp_info stops before the byte counters Linux added in 4.1; the kernel's
 * layout continues with these (linux/tcp.h, which cannot be included beside glibc's). */
struct tcp_info_counters {
    struct tcp_info base;
    uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
};

/* Bytes the kernel has received on the socket since it opened (0 when unknown). */
static uint64_t tcp_bytes_received(int fd)
{
    struct tcp_info_counters ti;
    socklen_t len = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info_counters, bytes_received) + sizeof(ti.bytes_received))
        return 0;
    return ti.bytes_received;
}

/* conn_ctx_t.bytes_received of a connection idle since the last sweep */
#define UNREAD UINT64_MAX

#define SEND_LOWAT (128 * 1024) /* bytes written but not yet sent, at most, before more */

static void start_receiving(conn_ctx_t *x, uint64_t now_ns)
{
    if (x->phase != CP_IDLE) return;
    x->phase = CP_RECEIVING;
    x->started_ns = now_ns;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    srv_t *s = cls;
    s->progress++;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_ctx_t *x = calloc(1, sizeof(*x));
        if (!x) return; /* this connection only has the idle timeout */
        x->conn = c;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        x->fd = ci ? ci->connect_fd : -1;
        x->phase = CP_IDLE; /* bytes_received 0: the first byte starts the first request */
        /* The socket reports writable once less than SEND_LOWAT of what was written is
         * still unsent, instead of once half its send buffer (which grows to MiBs) is free:
         * so a client that reads an export slowly but steadily lets MHD write again every
         * few moments, and --idle-timeout (which MHD counts from its last write) closes only
         * a client that stopped reading, not one on a slow link. */
        int lowat = SEND_LOWAT;
        if (x->fd >= 0)
            (void)setsockopt(x->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
        x->next = s->conns;
        if (s->conns) s->conns->prev = x;
        s->conns = x;
        *socket_context = x;
        return;
    }
    conn_ctx_t *x = *socket_context;
    if (!x) return;
    if (x->prev)
        x->prev->next = x->next;
    else
        s->conns = x->next;
    if (x->next) x->next->prev = x->prev;
    free(x);
    *socket_context = NULL;
}

static conn_req_t *req_new(srv_t *s, struct MHD_Connection *c, const char *uri);

/* The request line has arrived: the request's clock runs (if the sweep has not started
 * it yet), and the raw target is copied before MHD's argument parser rewrites it. What
 * this returns becomes the request's context (MHD passes it to on_request). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    srv_t *s = cls;
    s->progress++;
    s->requests++;
    uint64_t now = mono_ns();
    if (s->idle_since_ns) { /* a spin that caught it is counted by run_loop */
        if (!s->spinning) mem_spin_gate_waited(&s->spin, now - s->idle_since_ns);
        s->idle_since_ns = 0;
    }
    conn_ctx_t *x = conn_ctx_of(c);
    conn_req_t *r = req_new(s, c, uri); /* NULL on ENOMEM: on_request closes the connection */
    if (x) {
        start_receiving(x, now);
        x->req = r;
    }
    return r;
}

/* Every request must arrive in full within --request-timeout of its first byte: a
 * connection whose request is overdue is shut down (MHD then sees the hang-up and closes
 * it, even when it is waiting on a body it cannot parse). Idle connections are checked for
 * the first byte of their next request. */
static void on_sweep(uv_timer_t *t)
{
    srv_t *s = t->data;
    uint64_t now = mono_ns(), limit = (uint64_t)(s->cfg->request_timeout_s * 1e9);
    bool dropped = false;
    for (conn_ctx_t *x = s->conns; x; x = x->next) {
        if (x->phase == CP_IDLE) {
            uint64_t got = tcp_bytes_received(x->fd);
            if (x->bytes_received == UNREAD)
                x->bytes_received = got;
            else if (got > x->bytes_received)
                start_receiving(x, now);
        }
        if (x->phase != CP_RECEIVING || now < x->started_ns || now - x->started_ns <= limit)
            continue;
        const conn_req_t *r = x->req;
        mem_srv_log(MEM_LOG_INFO, "request_timeout", "id=%s phase=%s seconds=%.1f",
                    r ? r->req_id : "-", r && r->head_done ? "body" : "head",
                    (double)(now - x->started_ns) / 1e9);
        if (x->fd >= 0) shutdown(x->fd, SHUT_RDWR);
        x->phase = CP_WORKING; /* once is enough: MHD closes it on its next pass */
        dropped = true;
    }
    if (dropped) mhd_run(s);
}

/* ---- responses ---- */

static void mhd_run(srv_t *s);

/* ---- streamed bodies ----
 * MHD asks for the next bytes (stream_read, loop thread). When the current chunk is used up,
 * a fill job encodes the next one on the pool while the connection is suspended (the only
 * way MHD allows "no data yet" without busy polling; suspending from a content reader is
 * allowed), and its completion resumes it. A fill job runs only while its connection is
 * suspended, and MHD never ends a suspended connection, so r outlives the job. A drain cuts
 * the body short. */

#define STREAM_CHUNK (256u * 1024u)

static void fill_work_cb(mem_srv_pool_job_t *j)
{
    conn_req_t *r = REQ_OF(j, fill_job);
    r->fill_rc = mem_api_stream_fill(r->stream, r->chunk, STREAM_CHUNK);
}

static void fill_after_cb(mem_srv_pool_job_t *j)
{
    conn_req_t *r = REQ_OF(j, fill_job);
    srv_t *s = r->srv;
    s->in_batch = true;
    r->filling = false;
    r->chunk_off = 0;
    r->chunk_len = r->fill_rc > 0 ? (size_t)r->fill_rc : 0;
    if (r->fill_rc <= 0) r->stream_end = true;
    MHD_resume_connection(r->conn);
    s->in_flight--;
    s->progress++;
    after_resume(s);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    conn_req_t *r = cls;
    srv_t *s = r->srv;
    s->progress++;
    if (s->draining) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (r->chunk_off < r->chunk_len) {
        size_t n = r->chunk_len - r->chunk_off;
        if (n > max) n = max;
        memcpy(buf, r->chunk + r->chunk_off, n);
        r->chunk_off += n;
        return (ssize_t)n;
    }
    if (r->stream_end)
        return r->fill_rc < 0 ? MHD_CONTENT_READER_END_WITH_ERROR
                              : MHD_CONTENT_READER_END_OF_STREAM;
    if (r->filling) return 0; /* the suspended pass asks again: the job already runs */
    if (!r->chunk && !(r->chunk = malloc(STREAM_CHUNK))) return MHD_CONTENT_READER_END_WITH_ERROR;
    r->filling = true;
    r->fill_job.work = fill_work_cb;
    r->fill_job.done = fill_after_cb;
    MHD_suspend_connection(r->conn);
    s->in_flight++;
    mem_srv_pool_submit(s->pool, &r->fill_job);
    return 0;
}

/* ---- streamed request bodies (imports) ----
 * The body gathers in r->body up to IMPORT_PIECE bytes; then the connection is suspended
 * (from the access handler, where MHD allows it) while a pool job hands the piece to api/,
 * and resumed when it is done. Memory: one piece, whatever the body's size. What needs
 * neither body nor store (route, Content-Type, key, size) is answered before the body is
 * read; a bad line found on the way makes the rest of the body be read and dropped (MHD
 * cannot answer in the middle of a body), then answered. An import's body is bounded by
 * --max-import-body and the idle timeout, not by --request-timeout. */

#define IMPORT_PIECE (1u << 20)

static void import_feed(conn_req_t *r)
{
    srv_t *s = r->srv;
    r->areq.method = r->method;
    r->areq.path = r->url;
    r->areq.query = r->query;
    r->areq.content_type = r->ctype;
    r->areq.headers = r->headers;
    r->areq.n_headers = r->n_headers;
    if (!r->imp && !r->imp_failed) {
        r->imp = mem_api_import_begin(&s->api, &r->areq, &r->aresp);
        if (!r->imp) r->imp_failed = true;
    }
    if (r->imp && !mem_api_import_feed(r->imp, r->body, r->len)) {
        mem_api_import_end(r->imp, &r->aresp); /* fills the error */
        r->imp_failed = true;
    }
    r->len = 0;
}

static void feed_work_cb(mem_srv_pool_job_t *j)
{
    import_feed(REQ_OF(j, feed_job));
}

static void feed_after_cb(mem_srv_pool_job_t *j)
{
    conn_req_t *r = REQ_OF(j, feed_job);
    srv_t *s = r->srv;
    s->in_batch = true;
    r->feeding = false;
    MHD_resume_connection(r->conn);
    s->in_flight--;
    s->progress++;
    after_resume(s);
}

static struct MHD_Response *build_response(conn_req_t *r, mem_api_resp_t *resp)
{
    struct MHD_Response *mr;
    bool has_body = resp->body_len > 0 || resp->stream;
    if (resp->stream) {
        r->stream = resp->stream; /* ours now: freed with r */
        resp->stream = NULL;
        mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, r, NULL);
    } else {
        mr = MHD_create_response_from_buffer_with_free_callback(resp->body_len, resp->body, free);
        if (mr) resp->body = NULL; /* MHD frees it now */
    }
    if (!mr) return NULL;
    resp->body_len = 0;
    if (has_body || resp->content_type)
        MHD_add_response_header(mr, "Content-Type",
                                resp->content_type ? resp->content_type : "application/json");
    MHD_add_response_header(mr, "X-Request-Id", r->req_id);
    if (resp->retry_after_s > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", resp->retry_after_s);
        MHD_add_response_header(mr, "Retry-After", ra);
    }
    if (resp->allow) MHD_add_response_header(mr, "Allow", resp->allow);
    for (const char *const *h = resp->headers; h && h[0] && h[1]; h += 2)
        MHD_add_response_header(mr, h[0], h[1]);
    if (resp->status == 401)
        MHD_add_response_header(mr, "WWW-Authenticate", "Bearer realm=\"mnemod\"");
    mem_api_header_t extra[8];
    size_t n = mem_api_resp_headers(resp, extra, 8);
    for (size_t i = 0; i < n; i++) /* the api's views are NUL-terminated strings */
        MHD_add_response_header(mr, extra[i].name, extra[i].value);
    if (r->close_after) MHD_add_response_header(mr, "Connection", "close");
    r->status = resp->status;
    return mr;
}

static void observe(conn_req_t *r, const char *route)
{
    uint64_t now = mono_ns();
    r->srv->idle_since_ns = now; /* the gap to the next request starts (run_loop) */
    double secs = (double)(now - r->start_ns) / 1e9;
    if (r->status == 200 && strcmp(route, "retrieve") == 0)
        mem_srv_metrics_observe_scan(r->aresp.scanned_fraction);
    if (r->answer_kind) mem_srv_metrics_observe_answer(r->answer_kind, r->on_loop);
    mem_srv_metrics_observe(route, r->status, secs);
    mem_log_level_t lvl = r->status >= 500 ? MEM_LOG_WARN : MEM_LOG_DEBUG;
    if (mem_srv_log_enabled(lvl))
        mem_srv_log(lvl, "request", "id=%s method=%s path=%s status=%d ms=%.3f", r->req_id,
                    r->method, r->target ? r->target : "", r->status, secs * 1000.0);
}

/* Reply directly from the access handler (the connection is not suspended). */
static enum MHD_Result reply_now(conn_req_t *r, mem_api_resp_t *resp)
{
    struct MHD_Response *mr = build_response(r, resp);
    if (!mr) return MHD_NO;
    enum MHD_Result ok = MHD_queue_response(r->conn, (unsigned)resp->status, mr);
    MHD_destroy_response(mr);
    observe(r, resp->route[0] ? resp->route : "other");
    return ok;
}

/* An error of the transport itself (framing, 413, overload), answered at once. */
static enum MHD_Result reply_err(conn_req_t *r, const mem_err_t *err, const char *route)
{
    mem_api_error(&r->aresp, err);
    if (err->retry_after_s > 0) r->aresp.retry_after_s = err->retry_after_s;
    if (route) snprintf(r->aresp.route, sizeof(r->aresp.route), "%s", route);
    return reply_now(r, &r->aresp);
}

static enum MHD_Result reply_error(conn_req_t *r, int code, int retry_after, const char *route,
                                   const char *msg)
{
    mem_err_t err;
    mem_err_set(&err, code, "%s", msg);
    err.retry_after_s = retry_after;
    return reply_err(r, &err, route);
}

/* Loop thread: the request's last step is done; resume its connection and run MHD
 * (after_resume). */
static void resume_with(conn_req_t *r)
{
    srv_t *s = r->srv;
    r->ready = build_response(r, &r->aresp);
    r->state = RS_READY;
    MHD_resume_connection(r->conn);
    s->in_flight--;
    s->progress++;
    after_resume(s);
}

/* ---- the request's steps (SPEC sections 3, 8, 9 live in api/; this runs them) ---- */

static void work_cb(mem_srv_pool_job_t *j);
static void after_work_cb(mem_srv_pool_job_t *j);
static void on_write_done(mem_store_op_t *op, void *ud);
static void on_embedded(mem_emb_job_t *job, void *ud);
static void on_repl_done(void *ud);
static void on_waited(void *ud, bool reached);
static void prepare_embed(srv_t *s, conn_req_t *r);

static void queue_job(conn_req_t *r, enum req_job job)
{
    r->job_kind = job;
    r->job.work = work_cb;
    r->job.done = after_work_cb;
    mem_srv_pool_submit(r->srv->pool, &r->job);
}

/* Loop thread, connection suspended: do what the api asks for next. */
static void step(conn_req_t *r, mem_api_next_t next)
{
    srv_t *s = r->srv;
    switch (next) {
    case MEM_API_REPLY:
        resume_with(r);
        return;
    case MEM_API_BODY: /* only mem_api_begin asks for it; the body is in by now */
    case MEM_API_WORK:
        queue_job(r, JOB_WORK);
        return;
    case MEM_API_EMBED:
        if (!r->emb_job) { /* the calls could not be encoded: resp holds the error */
            resume_with(r);
            return;
        }
        mem_srv_emb_start(s->emb, r->emb_job, on_embedded, r);
        return;
    case MEM_API_WAIT:
        if (!s->repl) { /* cannot happen: only cluster mode waits */
            queue_job(r, JOB_WORK);
            return;
        }
        /* no worker waits: the cluster's wait thread ends it, on_waited goes on */
        if (mem_srv_repl_wait(s->repl, r->aresp.wait_ns, r->aresp.wait_seq, on_waited, r) != 0)
            on_waited(r, false);
        return;
    case MEM_API_WRITE:
        if (s->repl) { /* cluster mode: through the log; no thread waits for NATS */
            if (mem_srv_repl_write(s->repl, &r->aresp, on_repl_done, r) != 0)
                resume_with(r); /* refused at once (too large, NATS gone): the answer is set */
            return;
        }
        int rc = mem_store_submit(s->store, r->aresp.pending, on_write_done, r);
        if (rc == MEM_OK) return; /* on_async continues */
        mem_err_t err;
        mem_err_set(&err, rc, "the write queue is full, retry later");
        err.retry_after_s = 1;
        mem_api_error(&r->aresp, &err);
        snprintf(r->aresp.route, sizeof(r->aresp.route), "overload");
        resume_with(r);
        return;
    }
}

/* ---- answers made on the event loop ----
 * A retrieve with a small body, or a GET of one segment, is tried on the loop thread before its
 * connection is suspended, while no other request is in progress (in_flight 0): alone, the hand-off
 * to a sleeping pool thread and back costs more than a small scan; under concurrency the pool's
 * threads are awake, hand-offs are cheap and scans run in parallel, so requests go there.
 * The try never waits (mem_api_work_inline: the namespace's shared lock is only tried, no
 * graph wait, no provider call, the scan bounded by --inline-scan-budget); when it answers,
 * the response is queued from the access handler at once (no suspend, resume, or extra MHD
 * pass); when it gives up, the request goes to the pool and its answer is the same. A
 * write's acknowledgement that is a small encode (mem_api_ack_small) is made on the loop
 * too instead of in a pool job. */

static bool answer_inline(srv_t *s, conn_req_t *r, mem_api_next_t *next)
{
    static const char *const reasons[MEM_API_INLINE_COUNT] = {
        [MEM_API_INLINE_LOCKED] = "locked",     [MEM_API_INLINE_GRAPH] = "graph",
        [MEM_API_INLINE_BUDGET] = "budget",     [MEM_API_INLINE_SQLITE] = "sqlite",
        [MEM_API_INLINE_EMBEDDER] = "embedder",
    };
    const mem_cfg_t *cfg = s->cfg;
    bool segment = strcmp(r->aresp.route, "segment") == 0 && strcmp(r->method, "GET") == 0;
    if ((!segment && strcmp(r->aresp.route, "retrieve") != 0) || s->repl) return false;
    r->answer_kind = segment ? "segment" : "retrieve";
    if (cfg->inline_scan_budget == 0 || s->in_flight > 0 || r->len > cfg->inline_max_body)
        return false;
    mem_api_inline_t why = MEM_API_INLINE_ROUTE;
    *next = mem_api_work_inline(&s->api, &r->areq, &r->aresp, cfg->inline_scan_budget, &why);
    if (why == MEM_API_INLINE_ANSWERED) {
        r->on_loop = true;
        return true;
    }
    if (why < MEM_API_INLINE_COUNT && reasons[why]) mem_srv_metrics_observe_fallback(reasons[why]);
    return false;
}

/* Loop thread: an insert with a small body is decoded here and its record queued for the
 * writer at once, instead of a pool round trip (two wake-ups: a worker's and the loop's
 * again) that costs more CPU than the decode. It never waits: the namespace's shared lock is
 * only tried, a provider call is only encoded here (the loop drives it anyway), and the body
 * is at most --inline-max-write-body; when the try gives up the request goes to the pool. */
static bool write_inline(srv_t *s, conn_req_t *r, mem_api_next_t *next)
{
    if (s->repl || strcmp(r->aresp.route, "segments") != 0 || strcmp(r->method, "POST") != 0)
        return false;
    bool on_loop = false;
    if (r->len <= s->cfg->inline_max_write_body) {
        mem_api_inline_t why = MEM_API_INLINE_ROUTE;
        *next = mem_api_write_inline(&s->api, &r->areq, &r->aresp, &why);
        on_loop = why == MEM_API_INLINE_ANSWERED;
        if (why == MEM_API_INLINE_LOCKED) mem_srv_metrics_observe_fallback("insert_locked");
    }
    mem_srv_metrics_observe_answer("insert_decode", on_loop);
    if (!on_loop) return false;
    r->next = *next;
    prepare_embed(s, r); /* the provider calls, encoded as a worker would */
    return true;
}

/* Loop thread: a write is done; its answer is encoded here when that is small, else on the
 * pool. */
static void acknowledge(srv_t *s, conn_req_t *r)
{
    r->answer_kind = "write_ack";
    if (!mem_api_ack_small(&r->aresp)) {
        step(r, MEM_API_WORK);
        return;
    }
    r->on_loop = true;
    step(r, mem_api_work(&s->api, NULL, &r->aresp));
}

/* Loop thread: the write is durable; acknowledge encodes the answer. */
static void after_write_cb(mem_srv_pool_job_t *j)
{
    conn_req_t *r = REQ_OF(j, job);
    r->srv->in_batch = true;
    acknowledge(r->srv, r);
}

/* Writer thread: hand the request back to the loop through the pool's completion list, so
 * the writer's completions and the workers' share the loop's wake-ups. */
static void on_write_done(mem_store_op_t *op, void *ud)
{
    conn_req_t *r = ud;
    r->job.done = after_write_cb;
    mem_srv_pool_complete(r->srv->pool, &r->job);
}

/* Loop thread: the end of a batch of pool completions: MHD runs once for all the
 * connections they resumed, and a drain may finish. */
static void on_pool_batch(void *ud)
{
    srv_t *s = ud;
    s->in_batch = false;
    if (!s->run_owed) return;
    s->run_owed = false;
    mhd_run(s);
    maybe_finish_shutdown(s);
}

/* Loop thread: the provider job is over; the handler goes on on the pool. */
static void on_embedded(mem_emb_job_t *job, void *ud)
{
    queue_job(ud, JOB_EMB_RESUME);
}

/* Worker: a step asked for embeddings: encode the provider calls here, on the same worker
 * (when that fails, resp holds the error and r->emb_job stays NULL). */
static void prepare_embed(srv_t *s, conn_req_t *r)
{
    if (r->next == MEM_API_EMBED) mem_srv_emb_prepare(s->emb, &s->api, &r->aresp, &r->emb_job);
}

static void work_cb(mem_srv_pool_job_t *j)
{
    conn_req_t *r = REQ_OF(j, job);
    srv_t *s = r->srv;
    switch (r->job_kind) {
    case JOB_WORK:
        r->next = mem_api_work(&s->api, &r->areq, &r->aresp);
        prepare_embed(s, r);
        return;
    case JOB_IMPORT_END: /* the last piece of a streamed import, then its write record */
        import_feed(r);
        if (r->imp && !r->imp_failed) mem_api_import_end(r->imp, &r->aresp);
        r->next = mem_api_next_of(&r->aresp);
        return;
    case JOB_EMB_RESUME:
        mem_srv_emb_resume(&s->api, &r->aresp, &r->emb_job, r->req_id);
        r->next = mem_api_next_of(&r->aresp);
        prepare_embed(s, r);
        return;
    }
}

static void after_work_cb(mem_srv_pool_job_t *j)
{
    conn_req_t *r = REQ_OF(j, job);
    r->srv->in_batch = true;
    step(r, r->next);
}

/* Cluster mode, loop thread: replicate.c answered the request (relayed, merged, written). */
static void on_repl_done(void *ud)
{
    resume_with(ud);
}

/* Cluster mode, loop thread: a min_seq wait ended: the request's steps go on, on a worker. */
static void on_waited(void *ud, bool reached)
{
    conn_req_t *r = ud;
    if (reached) {
        queue_job(r, JOB_WORK);
        return;
    }
    mem_api_wait_failed(&r->aresp);
    resume_with(r);
}

/* Cluster mode, loop thread: replicate.c routed the request here: its steps run as in
 * single-node mode. */
static void on_repl_local(void *ud)
{
    step(ud, MEM_API_WORK);
}

/* What api/ asks of server/ for the routes it does not own (pool threads). */
static char *metrics_hook(void *ud, mem_store_t *st, size_t *len)
{
    srv_t *s = ud;
    char *text = mem_srv_metrics_render(st, s->pool, s->ops->name, len);
    size_t clen = 0;
    /* st is NULL while loading: the cluster is published with the store, not before */
    char *ctext = text && st && s->cluster ? mem_cluster_metrics(s->cluster, &clen) : NULL;
    if (ctext) { /* cluster mode: append the replication lag */
        char *both = realloc(text, *len + clen + 1);
        if (both) {
            memcpy(both + *len, ctext, clen + 1);
            text = both;
            *len += clen;
        }
        free(ctext);
    }
    return text;
}

static char *cluster_status_hook(void *ud, size_t *len)
{
    srv_t *s = ud;
    return mem_cluster_status_json(s->cluster, len);
}

static int cluster_snapshot_hook(void *ud, bool trim, char **body, mem_err_t *err)
{
    srv_t *s = ud;
    return mem_cluster_snapshot(s->cluster, trim, body, err);
}

static int cluster_move_hook(void *ud, const char *ns, const char *from, const char *to,
                             char **body, mem_err_t *err)
{
    srv_t *s = ud;
    return mem_cluster_move(s->cluster, ns, from, to, body, err);
}

static int cluster_drain_hook(void *ud, const char *node, bool drain, char **body, mem_err_t *err)
{
    srv_t *s = ud;
    return mem_cluster_drain(s->cluster, node, drain, body, err);
}

static int cluster_forget_hook(void *ud, const char *node, char **body, mem_err_t *err)
{
    srv_t *s = ud;
    return mem_cluster_forget_node(s->cluster, node, body, err);
}

/* Any thread, the loop's included (it reads state, never waits). */
static bool cluster_healthy_hook(void *ud, char *why, size_t cap)
{
    srv_t *s = ud;
    return !s->cluster || mem_cluster_healthy(s->cluster, why, cap);
}

/* ---- MHD callbacks ---- */

static size_t keep_raw(void *cls, struct MHD_Connection *c, char *s)
{
    /* The router needs the raw path: "a%2Fb" is an invalid namespace, not a sub-path. */
    return strlen(s);
}

static void make_request_id(conn_req_t *r)
{
    size_t len = 0;
    const char *given = mem_srv_http_header(r->headers, r->n_headers, "X-Request-Id", &len);
    if (given && len > 0 && len < sizeof(r->req_id)) {
        bool clean = true;
        for (size_t i = 0; i < len; i++)
            if (given[i] < 0x21 || given[i] > 0x7e || given[i] == '"') clean = false;
        if (clean) {
            memcpy(r->req_id, given, len);
            r->req_id[len] = '\0';
            return;
        }
    }
    /* 16 hex digits of a splitmix64 sequence seeded once from getrandom: unique enough to
     * find a request in the logs, and no system call (nor snprintf) per request */
    uint64_t z = (r->srv->rid_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, z >>= 4)
        r->req_id[i] = hex[z & 15];
    r->req_id[16] = '\0';
}

/* From the URI callback: the raw target (still unmodified by MHD) is copied. */
static conn_req_t *req_new(srv_t *s, struct MHD_Connection *c, const char *uri)
{
    conn_req_t *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->srv = s;
    r->conn = c;
    r->start_ns = mono_ns();
    r->target_at = uri;
    r->target_len = uri ? strlen(uri) : 0;
    r->target = mem_arena_strndup(&r->arena, uri ? uri : "", r->target_len);
    if (!r->target) {
        free(r);
        return NULL;
    }
    return r;
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      size_t key_size, const char *value, size_t value_size)
{
    conn_req_t *r = cls;
    mem_api_header_t *h = &r->headers[r->n_headers++];
    h->name = key;
    h->name_len = key_size;
    h->value = value ? value : "";
    h->value_len = value ? value_size : 0;
    return MHD_YES;
}

/* First access-handler call: the head is complete (no body read yet). Check it and fill
 * r->areq. MEM_OK, or err says what to answer (the connection then closes). */
static int read_head(srv_t *s, conn_req_t *r, struct MHD_Connection *c, const char *method,
                     const char *version, mem_err_t *err)
{
    r->head_done = true;
    r->start_ns = mono_ns();
    snprintf(r->method, sizeof(r->method), "%s", method);
    int n = MHD_get_connection_values_n(c, MHD_HEADER_KIND, NULL, NULL);
    r->headers = mem_arena_alloc(&r->arena, (n > 0 ? (size_t)n : 1) * sizeof(*r->headers));
    if (!r->headers) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, collect_header, r);
    make_request_id(r);
    const union MHD_ConnectionInfo *hs =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    mem_srv_head_t head = {
        .start = method,
        .size = hs ? hs->header_size : 0,
        .method = method,
        .target = r->target,
        .target_len = r->target_len,
        .target_at = r->target_at,
        .version = version,
        .headers = r->headers,
        .n_headers = r->n_headers,
    };
    int rc = mem_srv_http_check(&head, err);
    if (rc != MEM_OK) return rc;
    /* path and query from the raw target: MHD's own view of the query is already decoded
     * ('+' as space) and split */
    const char *q = memchr(r->target, '?', r->target_len);
    size_t pl = q ? (size_t)(q - r->target) : r->target_len;
    r->url = mem_arena_strndup(&r->arena, r->target, pl);
    r->query = q ? mem_arena_strndup(&r->arena, q + 1, r->target_len - pl - 1)
                 : mem_arena_strndup(&r->arena, "", 0);
    size_t ctl = 0;
    const char *ct = mem_srv_http_header(r->headers, r->n_headers, "Content-Type", &ctl);
    r->ctype = ct ? mem_arena_strndup(&r->arena, ct, ctl) : NULL;
    if (!r->url || !r->query || (ct && !r->ctype))
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    size_t cll = 0;
    const char *cl = mem_srv_http_header(r->headers, r->n_headers, "Content-Length", &cll);
    bool chunked = mem_srv_http_header(r->headers, r->n_headers, "Transfer-Encoding", NULL);
    r->areq.method = r->method;
    r->areq.path = r->url;
    r->areq.query = r->query;
    r->areq.content_type = r->ctype;
    r->areq.body = "";
    r->areq.headers = r->headers;
    r->areq.n_headers = r->n_headers;
    r->areq.body_expected = chunked || (cl && !(cll == 1 && cl[0] == '0'));
    /* cluster mode: an import is one log record, its body buffered and routed like any */
    r->import = !s->repl && mem_api_is_import(method, r->url);
    return MEM_OK;
}

static void req_free(conn_req_t *r)
{
    if (!r) return;
    mem_api_stream_free(r->stream);
    free(r->chunk);
    mem_api_import_free(r->imp);
    if (r->ready) MHD_destroy_response(r->ready);
    mem_api_resp_deinit(&r->aresp);
    r->srv->body_mem -= r->charged;
    free(r->body);
    mem_emb_job_free(r->emb_job);
    mem_arena_free(&r->arena);
    free(r);
}

/* The body is in: answer what was decided on the head, or run the request's steps. */
/* When not even a request's own state can be allocated: a static 503 (no allocation of
 * ours), and the request's context marks it answered: on_request skips the rest of it,
 * on_completed has nothing to free. */
static const char OOM_BODY[] =
    "{\"error\":{\"code\":\"unavailable\",\"message\":\"out of memory\"}}";
static char answered_oom;

static enum MHD_Result reply_oom(struct MHD_Connection *c)
{
    struct MHD_Response *mr = MHD_create_response_from_buffer(
        sizeof(OOM_BODY) - 1, (void *)OOM_BODY, MHD_RESPMEM_PERSISTENT);
    if (!mr) return MHD_NO;
    MHD_add_response_header(mr, "Content-Type", "application/json");
    MHD_add_response_header(mr, "Retry-After", "1");
    MHD_add_response_header(mr, "Connection", "close");
    enum MHD_Result ok = MHD_queue_response(c, 503, mr);
    MHD_destroy_response(mr);
    return ok;
}

static enum MHD_Result dispatch(srv_t *s, conn_req_t *r)
{
    if (r->state == RS_ANSWERED) return reply_now(r, &r->aresp);
    if (r->over_budget) {
        char msg[128];
        snprintf(msg, sizeof(msg),
                 "request bodies in memory would pass %zu bytes (max-body-memory), retry later",
                 s->cfg->max_body_memory);
        return reply_error(r, MEM_EBUSY, 1, "overload", msg);
    }
    if (r->out_of_memory)
        return reply_error(r, MEM_ENOMEM, 1, NULL, "out of memory reading the request body");
    if (r->too_big) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%s body over %zu bytes (%s)", r->import ? "import" : "request",
                 r->aresp.max_body, r->import ? "max-import-body" : "max-body");
        return reply_error(r, MEM_ETOOBIG, 0, NULL, msg);
    }
    if (s->in_flight >= s->cfg->max_queue)
        return reply_error(r, MEM_EBUSY, 1, "overload",
                           "too many requests in progress (max-queue), retry later");
    r->areq.body = r->body ? r->body : "";
    r->areq.body_len = r->len;
    mem_api_body_complete(&r->aresp); /* took_ms: from here (a pool queue wait included) */
    mem_api_next_t next = MEM_API_WORK;
    bool answered = !r->import && (answer_inline(s, r, &next) || write_inline(s, r, &next));
    if (answered && next == MEM_API_REPLY) return reply_now(r, &r->aresp);
    r->state = RS_WORKING;
    MHD_suspend_connection(r->conn);
    s->in_flight++;
    if (answered) { /* a next step after all (a retrieve asks for none): as from the pool */
        step(r, next);
    } else if (r->import) {
        queue_job(r, JOB_IMPORT_END);
    } else if (s->repl) { /* cluster mode: served here, or by a node holding the namespace */
        if (mem_srv_repl_dispatch(s->repl, &r->areq, r->req_id, &r->aresp, on_repl_local,
                                  on_repl_done, r) != 0) {
            mem_err_t err;
            mem_err_set(&err, MEM_ENOMEM, "out of memory");
            mem_api_error(&r->aresp, &err);
            resume_with(r);
        }
    } else {
        step(r, MEM_API_WORK);
    }
    return MHD_YES;
}

/* Charge the request's body `bytes` of --max-body-memory (what it already has counts):
 * false (r->over_budget) when the bodies of all connections would pass it. A body alone in
 * memory is always taken, so one request up to --max-body always fits. */
static bool body_charge(conn_req_t *r, size_t bytes)
{
    srv_t *s = r->srv;
    if (bytes <= r->charged) return true;
    size_t limit = s->cfg->max_body_memory, others = s->body_mem - r->charged;
    if (limit && others > 0 && (bytes > limit || others > limit - bytes)) {
        r->over_budget = true;
        return false;
    }
    s->body_mem += bytes - r->charged;
    r->charged = bytes;
    return true;
}

/* Append n bytes to the request's body, its buffer doubling from first_cap (or made the
 * size charged for it, its Content-Length) as needed; false (nothing appended) when memory
 * runs out or --max-body-memory would be passed (r->over_budget). */
static bool body_append(conn_req_t *r, const char *data, size_t n, size_t first_cap)
{
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : r->charged > first_cap ? r->charged : first_cap;
        while (cap < r->len + n)
            cap *= 2;
        if (!body_charge(r, cap)) return false;
        char *b = realloc(r->body, cap);
        if (!b) return false;
        r->body = b;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    srv_t *s = cls;
    s->progress++;
    conn_req_t *r = *con_cls;
    if (r == (void *)&answered_oom) { /* answered 503: the rest of the request is dropped */
        *upload_size = 0;
        return MHD_YES;
    }
    if (!r) { /* the URI callback could not allocate */
        *con_cls = &answered_oom;
        return reply_oom(c);
    }
    conn_ctx_t *x = conn_ctx_of(c);
    if (!r->head_done) {
        mem_err_t err;
        mem_err_clear(&err);
        if (read_head(s, r, c, method, version, &err) != MEM_OK) {
            r->close_after = true; /* never read what follows as another request */
            return reply_err(r, &err, err.code == MEM_ENOMEM ? NULL : "bad_request");
        }
        mem_api_next_t next = mem_api_begin(&s->api, &r->areq, &r->aresp);
        if (next == MEM_API_REPLY) {
            /* Answered on the head (an error, /healthz, a preflight). With a body coming,
             * answer now: MHD then closes the connection instead of reading the body.
             * Without one, answer at the end of the request, so it stays kept alive. */
            if (r->areq.body_expected) return reply_now(r, &r->aresp);
            r->state = RS_ANSWERED;
            return MHD_YES;
        }
        const char *cl = mem_srv_http_header(r->headers, r->n_headers, "Content-Length", NULL);
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno || (*end && *end != ' ' && *end != '\t') || n > r->aresp.max_body)
                r->too_big = true;
            /* the announced body is charged at once, so the bodies admitted are read to
             * their end, and one that does not fit is refused before it is sent */
            else if (!r->import && n > 0)
                body_charge(r, (size_t)n);
        }
        /* Answer 413 (or 503 for --max-body-memory) before the body arrives: a client
         * announcing a huge body must not make us read (or wait for) it. MHD closes the
         * connection after this reply. */
        if (r->too_big || r->over_budget) return dispatch(s, r);
        /* An import's body has no deadline (it may be gigabytes), only the idle timeout;
         * everything that needs no body was checked by mem_api_begin. */
        if (r->import && x) x->phase = CP_WORKING;
        return MHD_YES;
    }
    if (r->state == RS_READY) {
        struct MHD_Response *mr = r->ready;
        r->ready = NULL;
        if (!mr) return MHD_NO;
        enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, mr);
        MHD_destroy_response(mr);
        observe(r, r->aresp.route[0] ? r->aresp.route : "other");
        return ok;
    }
    if (r->state == RS_WORKING) return MHD_YES;
    /* MHD may still hand over data in the pass that suspended the connection: keep it for
     * later (not consumed) rather than touch the body a feed job is reading */
    if (r->feeding) return MHD_YES;
    if (*upload_size && r->import) {
        r->body_seen += *upload_size;
        if (!r->too_big && r->body_seen > s->cfg->max_import_body) r->too_big = true;
        if (r->too_big || r->imp_failed || r->out_of_memory || r->over_budget) {
            /* answered at the end */
            *upload_size = 0;
            return MHD_YES;
        }
        if (!body_append(r, upload_data, *upload_size, 65536)) {
            /* nothing of the import is written: a 503 once the body is in */
            r->out_of_memory = !r->over_budget;
            *upload_size = 0;
            return MHD_YES;
        }
        *upload_size = 0;
        if (r->len >= IMPORT_PIECE) {
            r->feeding = true;
            r->feed_job.work = feed_work_cb;
            r->feed_job.done = feed_after_cb;
            MHD_suspend_connection(c);
            s->in_flight++;
            mem_srv_pool_submit(s->pool, &r->feed_job);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (x && x->phase == CP_RECEIVING &&
            (double)(mono_ns() - x->started_ns) / 1e9 > s->cfg->request_timeout_s) {
            mem_srv_log(MEM_LOG_INFO, "request_timeout", "id=%s phase=body", r->req_id);
            return MHD_NO; /* drop the connection: the body did not arrive in time */
        }
        if (r->state == RS_ANSWERED) { /* a chunked body to an answered request: drop it */
            *upload_size = 0;
            return MHD_YES;
        }
        if (!r->too_big && r->len + *upload_size > r->aresp.max_body) r->too_big = true;
        if (!r->too_big && !r->out_of_memory && !r->over_budget &&
            !body_append(r, upload_data, *upload_size, 4096))
            r->out_of_memory = !r->over_budget; /* read the rest, keep none of it */
        *upload_size = 0;
        return MHD_YES;
    }
    if (x) x->phase = CP_WORKING; /* received in full */
    return dispatch(s, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    srv_t *s = cls;
    s->progress++;
    conn_req_t *r = *con_cls;
    if (r == (void *)&answered_oom) r = NULL;
    if (r && r->state == RS_WORKING)
        return; /* cannot happen: MHD never ends a suspended connection; keep r alive */
    /* a streamed answer (an export) ended before its last chunk: the client sees a chunked
     * body without its end, and the log says why */
    if (r && r->stream && toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        mem_srv_log(MEM_LOG_INFO, "stream_cut", "id=%s reason=%s", r->req_id,
                    toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED   ? "idle_timeout"
                    : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN ? "shutdown"
                    : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT    ? "client_closed"
                                                                    : "error");
    conn_ctx_t *x = conn_ctx_of(c);
    if (x) {
        x->req = NULL;
        x->phase = CP_IDLE;
        x->bytes_received = UNREAD;
    }
    req_free(r);
    *con_cls = NULL;
}

/* ---- loop plumbing ---- */

static void on_timer(uv_timer_t *t)
{
    mhd_run(t->data);
}

static void on_rerun(uv_idle_t *h)
{
    mhd_run(h->data);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    mhd_run(p->data);
}

/* When to run MHD next. MHD_get_timeout() answers 0 ("run again now") while any
 * connection is in its ready list: after an edge-triggered read that may have left data
 * in the socket, which the next pass reads. But 0.9.75 also answers 0 for as long as a
 * connection waits on the application with a full read buffer (its "blocked" state): a
 * chunked upload whose chunk-size line is longer than the buffer can never be parsed, and
 * MHD asks to be run again forever. Taking 0 at its word would spin the loop at 100 % CPU
 * until the idle timeout, and a zero-delay timer re-armed in its own callback would starve
 * every other handle (libuv 1.44 runs it again in the same timer pass: no poll, no
 * signals, no completions). So: "now" means after the loop has polled for I/O once (an idle
 * handle, never a zero timer), and only while passes make progress (some MHD callback
 * fired); after IDLE_PASSES_MAX passes that did nothing, the next ones back off on the
 * timer. New I/O still wakes MHD at once through the poll handle, and the request timeout
 * (on_sweep) drops the stuck connection. */
static void schedule(srv_t *s)
{
    MHD_UNSIGNED_LONG_LONG timeout;
    if (MHD_get_timeout(s->mhd, &timeout) != MHD_YES) {
        uv_idle_stop(&s->rerun);
        uv_timer_stop(&s->timer);
        s->idle_passes = 0;
        return;
    }
    if (timeout > 0) {
        uv_idle_stop(&s->rerun);
        uv_timer_start(&s->timer, on_timer, timeout, 0);
        s->idle_passes = 0;
        return;
    }
    if (s->progress != s->progress_seen) {
        s->progress_seen = s->progress;
        s->idle_passes = 0;
    } else if (s->idle_passes < IDLE_PASSES_MAX + 16) {
        s->idle_passes++;
    }
    if (s->idle_passes < IDLE_PASSES_MAX) {
        uv_timer_stop(&s->timer);
        uv_idle_start(&s->rerun, on_rerun);
        return;
    }
    unsigned shift = s->idle_passes - IDLE_PASSES_MAX;
    uint64_t delay = shift >= 6 ? BACKOFF_MAX_MS : (uint64_t)1 << shift;
    uv_idle_stop(&s->rerun);
    uv_timer_start(&s->timer, on_timer, delay < BACKOFF_MAX_MS ? delay : BACKOFF_MAX_MS, 0);
}

static void mhd_run(srv_t *s)
{
    if (!s->mhd || s->stopped) return;
    const union MHD_DaemonInfo *ci =
        MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    unsigned int before = ci ? ci->num_connections : 0;
    MHD_run(s->mhd);
    /* A connection closed in this pass: at --max-connections MHD took its listen socket out
     * of its epoll set and puts it back only at the start of its next pass, and nothing
     * would wake us for that pass (waiting clients already made their edge): run it now. */
    ci = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (ci && ci->num_connections < before) MHD_run(s->mhd);
    schedule(s);
}

static void close_cb(uv_handle_t *h)
{
}

/* The loop itself. Sleeping in epoll_wait and being woken costs tens to hundreds of
 * microseconds on a VM (a halted vCPU comes back, the scheduler runs), about what an inline
 * read costs: a client that sends its next request soon after an answer pays it on every
 * request. So after an answer the loop polls without blocking (UV_RUN_NOWAIT: timers,
 * signals, completions and I/O as usual, an epoll_wait with timeout 0) for up to
 * --loop-spin-us until the next request line arrives, then blocks (UV_RUN_ONCE) as before.
 * Whether it spins after an answer is s->spin's call (mem_spin_gate_t): it goes on while
 * spins catch the next request line (on_uri counts it), stops after LOOP_SPIN_CREDIT more
 * spins have run out than caught (so one slow gap among fast ones does not stop it), and
 * comes back when a blocking wait saw a gap within the spin or, once every
 * LOOP_SPIN_PROBE_EVERY answers, to try: the gap a blocking wait measures includes the
 * loop's own wake-up, which can be longer than the gap itself. An idle server, or one whose
 * clients come back later than the spin, burns nothing (at most LOOP_SPIN_CREDIT spins,
 * then one in LOOP_SPIN_PROBE_EVERY). A spin that caught a request line goes on through
 * its body and answer to the next one. And only while nothing is out on the pool
 * (in_flight 0): a worker's scan needs the core more than its completion needs a fast
 * wake-up. uv_run answers 0 once no handle is left (after finish_shutdown): the loop is
 * over. */
static void run_loop(srv_t *s)
{
    const uint64_t spin_ns = (uint64_t)s->cfg->loop_spin_us * 1000u;
    mem_spin_gate_init(&s->spin, spin_ns, LOOP_SPIN_CREDIT, LOOP_SPIN_PROBE_EVERY);
    s->spin_on = false;
    for (;;) {
        if (s->idle_since_ns && s->idle_since_ns != s->spin_seen_idle) { /* a new answer */
            s->spin_seen_idle = s->idle_since_ns;
            s->spin_on = mem_spin_gate_open(&s->spin);
        }
        if (s->spin_on && s->in_flight == 0) {
            uint64_t seen = s->requests, t0 = mono_ns(), t = t0;
            bool more, preempted = false;
            s->spinning = true;
            do {
                uint64_t progress = s->progress;
                if (uv_run(&s->loop, UV_RUN_NOWAIT) == 0) return;
                more = s->requests == seen && s->in_flight == 0;
                uint64_t now = mono_ns();
                if (now - t >= LOOP_SPIN_PREEMPTED_NS && s->progress == progress) preempted = true;
                t = now;
            } while (more && !preempted && t - t0 <= spin_ns);
            s->spinning = false;
            if (preempted) {
                mem_spin_gate_preempted(&s->spin);
                mem_srv_metrics_observe_spin_preempted();
                s->spin_on = false;
                s->spin_seen_idle = s->idle_since_ns;
                continue;
            }
            if (s->requests != seen) { /* caught: go on spinning through this request */
                mem_spin_gate_spun(&s->spin, true);
                mem_srv_metrics_observe_spin(true);
                continue;
            }
            s->spin_on = false; /* ran out, or a job went to the pool: block */
            if (more) {
                mem_spin_gate_spun(&s->spin, false);
                mem_srv_metrics_observe_spin(false);
                s->spin_seen_idle = s->idle_since_ns; /* an answer made meanwhile had its spin */
            }
            continue;
        }
        if (uv_run(&s->loop, UV_RUN_ONCE) == 0) return;
    }
}

static void finish_shutdown(srv_t *s)
{
    s->stopped = true;
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, close_cb);
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->timer, close_cb);
    uv_idle_stop(&s->rerun);
    uv_close((uv_handle_t *)&s->rerun, close_cb);
    uv_timer_stop(&s->sweep);
    uv_close((uv_handle_t *)&s->sweep, close_cb);
    MHD_stop_daemon(s->mhd);
    s->mhd = NULL;
    mem_srv_emb_close(s->emb); /* no job is left: every request has been answered */
    s->emb = NULL;
    mem_srv_repl_free(s->repl); /* no request is in flight any more */
    s->repl = NULL;
    if (s->cluster) {
        mem_cluster_close(s->cluster); /* stops consuming before the store goes away */
        s->cluster = NULL;
    }
    if (s->store) {
        mem_store_close(s->store); /* flushes the writer and checkpoints the WAL */
        s->store = NULL;
    }
    mem_srv_pool_close(s->pool); /* after the writer: nothing can complete any more */
    s->pool = NULL;
    uv_close((uv_handle_t *)&s->sigint, close_cb);
    uv_close((uv_handle_t *)&s->sigterm, close_cb);
    uv_close((uv_handle_t *)&s->sighup, close_cb);
    mem_srv_log(MEM_LOG_INFO, "stopped", "status=%d", s->exit_code);
}

static void maybe_finish_shutdown(srv_t *s)
{
    if (s->draining && !s->stopped && s->in_flight == 0 && !s->loading) finish_shutdown(s);
}

static void on_signal(uv_signal_t *h, int signum)
{
    srv_t *s = h->data;
    if (s->draining) return;
    mem_srv_log(MEM_LOG_INFO, "draining", "signal=%d in_flight=%zu", signum, s->in_flight);
    mem_srv_notify("STOPPING=1");
    s->draining = true;
    s->api.draining = true;
    MHD_socket lfd = MHD_quiesce_daemon(s->mhd);
    if (lfd != MHD_INVALID_SOCKET) close(lfd);
    mem_srv_emb_cancel_all(s->emb); /* requests waiting for the provider answer 503 */
    maybe_finish_shutdown(s);
}

/* SIGHUP: re-read the keys file. A file that does not parse keeps the keys in force. */
static void on_sighup(uv_signal_t *h, int signum)
{
    srv_t *s = h->data;
    if (!s->cfg->keys_path[0]) {
        mem_srv_log(MEM_LOG_INFO, "sighup", "msg=\"no keys file to reload\"");
        return;
    }
    mem_cfg_keys_t *keys = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_cfg_keys_load(s->cfg->keys_path, &keys, &err) != MEM_OK) {
        mem_srv_log(MEM_LOG_ERROR, "keys_reload_failed", "msg=%s kept=old", err.msg);
        return;
    }
    size_t n = keys->n;
    mem_api_edge_set_keys(s->api.edge, keys);
    mem_srv_log(MEM_LOG_INFO, "keys_reloaded", "file=%s grants=%zu", s->cfg->keys_path, n);
}

static void open_work_cb(uv_work_t *w)
{
    srv_t *s = w->data;
    mem_store_opts_t opts = {
        .path = s->cfg->data_path,
        .sync_full = s->cfg->sync_full,
        .coherence_threshold = s->cfg->coherence_threshold,
        .max_namespaces = s->cfg->max_namespaces,
        .max_queue = s->cfg->max_queue,
        .ops = s->ops,
        .scan_helpers = s->cfg->scan_helpers,
        .log = mem_srv_logger(),
        .scan_split_min = s->cfg->scan_split_min,
        /* at least 1 ms: 0 would ask the store for its default */
        .graph_wait_ms = s->cfg->graph_wait_s * 1000.0 >= 1.0
                             ? (uint32_t)(s->cfg->graph_wait_s * 1000.0 + 0.5)
                             : 1,
        .text_grams = s->cfg->lex.gram_weight > 0.0,
        .group_wait_us = (uint32_t)s->cfg->group_wait_us,
        .text_cache_bytes = s->cfg->text_cache,
    };
    s->open_rc = mem_store_open(&opts, &s->opened, &s->open_err);
    if (s->open_rc == MEM_OK && s->cfg->nats_url[0]) {
        s->open_rc =
            mem_cluster_open(s->cfg, mem_srv_logger(), s->opened, &s->opened_cluster, &s->open_err);
        if (s->open_rc != MEM_OK) {
            mem_store_close(s->opened);
            s->opened = NULL;
        }
    }
}

static void after_open_cb(uv_work_t *w, int status)
{
    srv_t *s = w->data;
    s->loading = false;
    if (s->open_rc != MEM_OK) {
        mem_srv_log_fail("open_failed", "cannot open %s: %s", s->cfg->data_path, s->open_err.msg);
        s->exit_code = 1;
        if (!s->draining) {
            s->draining = true;
            s->api.draining = true;
            MHD_socket lfd = MHD_quiesce_daemon(s->mhd);
            if (lfd != MHD_INVALID_SOCKET) close(lfd);
        }
        maybe_finish_shutdown(s);
        return;
    }
    s->store = s->opened; /* published on the loop thread: dispatch reads it there */
    s->api.store = s->store;
    s->cluster = s->opened_cluster;
    if (s->cluster && mem_srv_repl_new(&s->loop, s->cluster, &s->api, s->cfg, &s->repl) != 0) {
        mem_srv_log_fail("out_of_memory", "out of memory starting cluster routing");
        s->exit_code = 1;
        s->draining = true;
        s->api.draining = true;
        MHD_socket lfd = MHD_quiesce_daemon(s->mhd);
        if (lfd != MHD_INVALID_SOCKET) close(lfd);
        maybe_finish_shutdown(s);
        return;
    }
    mem_srv_log(MEM_LOG_INFO, "ready", "data=%s", s->cfg->data_path);
    mem_srv_notify("READY=1");
    maybe_finish_shutdown(s);
}

static int listen_addr(const mem_cfg_t *cfg, struct sockaddr_storage *ss, bool *v6)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    const char *host = cfg->listen_host[0] ? cfg->listen_host : "0.0.0.0";
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)cfg->listen_port);
        *v6 = false;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)cfg->listen_port);
        *v6 = true;
        return 0;
    }
    if (strcmp(host, "localhost") == 0) {
        in4->sin_family = AF_INET;
        in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        in4->sin_port = htons((uint16_t)cfg->listen_port);
        *v6 = false;
        return 0;
    }
    return -1;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

int mem_srv_run(const mem_cfg_t *cfg, const mem_vec_ops_t *ops, mem_cfg_keys_t *keys)
{
    srv_t *s = calloc(1, sizeof(*s));
    if (!s) {
        mem_cfg_keys_free(keys);
        return 1;
    }
    s->cfg = cfg;
    s->ops = ops;
    s->keys = keys;
    s->api.cfg = cfg;
    s->api.ops = ops;
    s->api.now_ms = wall_ms;
    s->api.log = mem_srv_logger();
    s->api.hooks.ud = s;
    s->api.hooks.metrics = metrics_hook;
    if (cfg->nats_url[0]) { /* cluster mode: its routes (they need the store, so run after open) */
        s->api.hooks.cluster_status = cluster_status_hook;
        s->api.hooks.cluster_snapshot = cluster_snapshot_hook;
        s->api.hooks.cluster_move = cluster_move_hook;
        s->api.hooks.cluster_drain = cluster_drain_hook;
        s->api.hooks.cluster_forget = cluster_forget_hook;
        s->api.hooks.cluster_healthy = cluster_healthy_hook;
    }
    if (getrandom(&s->rid_state, sizeof(s->rid_state), GRND_NONBLOCK) !=
        (ssize_t)sizeof(s->rid_state))
        s->rid_state = mono_ns() ^ (uint64_t)getpid() << 32;
    int code = 1;

    char threads[16];
    snprintf(threads, sizeof(threads), "%d", cfg->threads);
    setenv("UV_THREADPOOL_SIZE", threads, 1); /* read by libuv at its first queued work */

    struct sockaddr_storage ss;
    bool v6 = false;
    if (listen_addr(cfg, &ss, &v6) != 0) {
        mem_srv_log_fail("config_error", "invalid --listen host \"%s\"", cfg->listen_host);
        goto out_free;
    }
    if (!cfg->api_key[0] && !cfg->keys_path[0] && !is_loopback(&ss))
        mem_srv_log(MEM_LOG_WARN, "no_api_key",
                    "msg=\"listening on a non-loopback address without an API key\" host=%s",
                    cfg->listen_host);
    if (uv_loop_init(&s->loop) != 0) goto out_free;
    if (mem_srv_emb_open(&s->loop, cfg, &s->api, &s->emb) != 0) goto out_loop;

    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (v6) flags |= MHD_USE_IPv6;
    s->mhd = MHD_start_daemon(
        flags, (uint16_t)cfg->listen_port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
        mem_srv_log_mhd, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)cfg->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)ceil(cfg->idle_timeout_s), /* whole s, >= 1 */
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        s, MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_UNESCAPE_CALLBACK, keep_raw, NULL,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)cfg->connection_memory, MHD_OPTION_END);
    if (!s->mhd) {
        mem_srv_log_fail("listen_failed", "cannot listen on %s:%d: %s", cfg->listen_host,
                         cfg->listen_port, strerror(errno));
        mem_srv_emb_close(s->emb); /* its handles close before the loop can */
        uv_run(&s->loop, UV_RUN_DEFAULT);
        goto out_loop;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    const union MHD_DaemonInfo *port = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    mem_err_t eerr;
    mem_err_clear(&eerr);
    int erc =
        mem_api_edge_new(cfg, port ? port->port : cfg->listen_port, s->keys, &s->api.edge, &eerr);
    s->keys = NULL; /* the edge owns them now, or freed them */
    if (erc != MEM_OK) {
        mem_srv_log_fail("config_error", "%s", eerr.msg);
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
        mem_srv_emb_close(s->emb);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        goto out_loop;
    }
    if (mem_srv_pool_new(&s->loop, (size_t)cfg->threads, cfg->worker_spin_us * 1000u, on_pool_batch,
                         s, &s->pool) != 0) {
        mem_srv_log_fail("out_of_memory", "cannot start the request worker threads");
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
        mem_srv_emb_close(s->emb);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        goto out_loop;
    }
    uv_poll_init(&s->loop, &s->poll, info->epoll_fd);
    s->poll.data = s;
    uv_poll_start(&s->poll, UV_READABLE, on_poll);
    uv_timer_init(&s->loop, &s->timer);
    s->timer.data = s;
    uv_idle_init(&s->loop, &s->rerun);
    s->rerun.data = s;
    uv_timer_init(&s->loop, &s->sweep);
    s->sweep.data = s;
    uint64_t sweep_ms = (uint64_t)(cfg->request_timeout_s * 1000.0 / 4.0);
    sweep_ms = sweep_ms < 100 ? 100 : sweep_ms > 1000 ? 1000 : sweep_ms;
    uv_timer_start(&s->sweep, on_sweep, sweep_ms, sweep_ms);
    uv_signal_init(&s->loop, &s->sigint);
    uv_signal_init(&s->loop, &s->sigterm);
    s->sigint.data = s->sigterm.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_init(&s->loop, &s->sighup);
    s->sighup.data = s;
    uv_signal_start(&s->sighup, on_sighup, SIGHUP);
    mem_srv_log(MEM_LOG_INFO, "listening", "host=%s port=%u kernel=%s threads=%d version=%s",
                cfg->listen_host, port ? (unsigned)port->port : 0u, ops->name, cfg->threads,
                MNEMOD_VERSION);

    s->loading = true;
    s->open_work.data = s;
    uv_queue_work(&s->loop, &s->open_work, open_work_cb, after_open_cb);
    mhd_run(s);
    run_loop(s);
    code = s->exit_code;
    if (s->mhd) { /* the loop ended without a shutdown: should not happen */
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
        code = 1;
    }
out_loop:
    if (uv_loop_close(&s->loop) != 0) {
        mem_srv_log(MEM_LOG_ERROR, "loop_close", "msg=\"handles still open at exit\"");
        code = 1;
    }
out_free:
    mem_api_edge_free(s->api.edge);
    mem_cfg_keys_free(s->keys);
    free(s);
    return code;
}
