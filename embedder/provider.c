/* provider.c - the provider client: libcurl's multi interface driven by the libuv loop
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The multi-uv.c pattern: CURLMOPT_SOCKETFUNCTION asks us to watch a socket (one
 * uv_poll_t each, created on demand), CURLMOPT_TIMERFUNCTION to call curl back after a
 * delay (one uv_timer_t); both end in curl_multi_socket_action, after which finished
 * transfers are collected. Sockets are looked up by descriptor in our own list, never
 * through curl's per-socket pointer, and curl closes its sockets through our close-socket
 * callback, which stops and releases the socket's poll handle first: a descriptor number
 * reused by the next connection can then never meet a stale uv_poll_t.
 *
 * Retries wait in the module's second timer (armed for the earliest waiting call), so a
 * job owns no uv handle: once finished, its easy handles are released on the loop and the
 * rest is plain memory any thread may free. Every time is uv_now(), in milliseconds.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "embedder/embedder.h"

#ifndef MNEMOD_VERSION
#define MNEMOD_VERSION "0.0.0-unknown"
#endif

#define BACKOFF_MAX_MS 8000

typedef struct sock {
    uv_poll_t poll;
    curl_socket_t fd;
    mem_emb_t *e;
    struct sock *next;
} sock_t;

typedef enum call_state { CALL_QUEUED, CALL_RUNNING, CALL_WAITING, CALL_DONE } call_state_t;

typedef struct call {
    mem_emb_job_t *job;
    size_t first, n; /* texts [first, first + n) of the job */
    char *body;      /* request JSON */
    size_t body_len;
    CURL *easy;   /* loop thread; NULL once the job finished */
    char *answer; /* response body */
    size_t answer_len, answer_cap;
    bool too_big;
    double retry_after_s; /* from the last answer's Retry-After, -1 when none */
    int attempts;
    uint64_t retry_at_ms; /* when CALL_WAITING */
    call_state_t state;
    char errbuf[CURL_ERROR_SIZE];
} call_t;

struct mem_emb_job {
    mem_emb_t *e;
    size_t n;
    call_t *calls;
    size_t n_calls, next_call, n_active, n_done; /* active: running or waiting */
    uint64_t start_ms, deadline_ms, end_ms;
    bool started, finished, decoded;
    int rc;
    mem_err_t err;
    mem_emb_done_fn done;
    void *ud;
    float *vecs; /* after a successful mem_emb_job_result */
    size_t dim;
    size_t retries;
    mem_emb_job_t *prev, *next;  /* the module's running jobs (loop thread) */
    mem_emb_probe_fn probe_done; /* probe jobs only */
    void *probe_ud;
};

struct mem_emb {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;       /* curl's timeout */
    uv_timer_t retry_timer; /* the earliest waiting call */
    int open_handles;       /* uv handles not yet closed: e is freed with the last */
    char *url;              /* base + "/embeddings" */
    char *model;
    struct curl_slist *headers;
    double timeout_s;
    size_t batch;
    sock_t *socks;
    mem_emb_job_t *jobs;
    bool closing;
    _Atomic size_t dim; /* 0 until learned */
};

static void check_done(mem_emb_t *e);
static void start_call(call_t *c);
static void on_retry(uv_timer_t *t);

/* ---- sockets and timers (the multi-uv pattern) ---- */

static void on_handle_closed(uv_handle_t *h)
{
    mem_emb_t *e = h->data;
    if (--e->open_handles == 0) {
        free(e->url);
        free(e->model);
        free(e);
    }
}

static void on_sock_closed(uv_handle_t *h)
{
    sock_t *s = h->data;
    mem_emb_t *e = s->e;
    free(s);
    if (--e->open_handles == 0) {
        free(e->url);
        free(e->model);
        free(e);
    }
}

static sock_t *sock_find(mem_emb_t *e, curl_socket_t fd)
{
    for (sock_t *s = e->socks; s; s = s->next)
        if (s->fd == fd) return s;
    return NULL;
}

static void sock_release(mem_emb_t *e, sock_t *s)
{
    for (sock_t **p = &e->socks; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    sock_t *s = h->data;
    mem_emb_t *e = s->e;
    int flags = 0, running = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else
        flags = (events & UV_READABLE ? CURL_CSELECT_IN : 0) |
                (events & UV_WRITABLE ? CURL_CSELECT_OUT : 0);
    curl_multi_socket_action(e->multi, s->fd, flags, &running);
    check_done(e);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    mem_emb_t *e = userp;
    sock_t *s = sock_find(e, fd);
    if (what == CURL_POLL_REMOVE) {
        if (s) sock_release(e, s);
        return 0;
    }
    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s) return -1;
        if (uv_poll_init_socket(e->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->fd = fd;
        s->e = e;
        s->poll.data = s;
        s->next = e->socks;
        e->socks = s;
        e->open_handles++;
    }
    int events = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    uv_poll_start(&s->poll, events, on_poll);
    return 0;
}

/* curl closes a socket: its poll handle goes first (see DESIGN). */
static int on_close_socket(void *clientp, curl_socket_t fd)
{
    mem_emb_t *e = clientp;
    sock_t *s = sock_find(e, fd);
    if (s) sock_release(e, s);
    return close(fd);
}

static void on_curl_timer(uv_timer_t *t)
{
    mem_emb_t *e = t->data;
    int running = 0;
    curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(e);
}

static int on_timer_change(CURLM *multi, long timeout_ms, void *userp)
{
    mem_emb_t *e = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&e->timer);
    else /* 0: as soon as possible, but not from inside curl */
        uv_timer_start(&e->timer, on_curl_timer, (uint64_t)timeout_ms, 0);
    return 0;
}

/* ---- one transfer's data ---- */

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    call_t *c = ud;
    size_t len = size * nmemb, max = MEM_EMB_MAX_ANSWER(c->n);
    if (c->answer_len + len > max) {
        c->too_big = true;
        return 0; /* curl ends the transfer with CURLE_WRITE_ERROR */
    }
    if (c->answer_len + len + 1 > c->answer_cap) {
        size_t cap = c->answer_cap ? c->answer_cap : 16384;
        while (cap < c->answer_len + len + 1)
            cap *= 2;
        char *p = realloc(c->answer, cap);
        if (!p) return 0;
        c->answer = p;
        c->answer_cap = cap;
    }
    memcpy(c->answer + c->answer_len, ptr, len);
    c->answer_len += len;
    c->answer[c->answer_len] = '\0';
    return len;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    call_t *c = ud;
    size_t len = size * nitems;
    if (len > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
        char v[64];
        size_t vl = len - 12 < sizeof(v) - 1 ? len - 12 : sizeof(v) - 1;
        memcpy(v, buf + 12, vl);
        v[vl] = '\0';
        c->retry_after_s = mem_emb_retry_after(v, (double)time(NULL));
    }
    return len;
}

double mem_emb_retry_after(const char *value, double now_s)
{
    while (*value == ' ' || *value == '\t')
        value++;
    size_t len = strlen(value);
    while (len && isspace((unsigned char)value[len - 1]))
        len--;
    if (len == 0 || len > 40) return -1;
    char v[48];
    memcpy(v, value, len);
    v[len] = '\0';
    bool digits = true;
    for (size_t i = 0; i < len; i++)
        digits &= isdigit((unsigned char)v[i]) != 0;
    if (digits) return len > 9 ? 1e9 : (double)strtol(v, NULL, 10);
    time_t now = (time_t)now_s, t = curl_getdate(v, &now);
    if (t == (time_t)-1) return -1;
    return (double)t > now_s ? (double)t - now_s : 0.0;
}

/* ---- jobs ---- */

static void release_easy(call_t *c, CURLM *multi)
{
    if (!c->easy) return;
    if (c->state == CALL_RUNNING) curl_multi_remove_handle(multi, c->easy);
    curl_easy_cleanup(c->easy);
    c->easy = NULL;
}

static void finish(mem_emb_job_t *job, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The job is over (rc MEM_OK: every call answered): release its transfers, tell the owner. */
static void finish(mem_emb_job_t *job, int rc, const char *fmt, ...)
{
    if (job->finished) return;
    mem_emb_t *e = job->e;
    job->finished = true;
    job->rc = rc;
    uv_update_time(e->loop);
    job->end_ms = uv_now(e->loop);
    if (rc != MEM_OK) {
        mem_err_clear(&job->err);
        job->err.code = rc;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(job->err.msg, sizeof(job->err.msg), fmt, ap);
        va_end(ap);
    }
    for (size_t i = 0; i < job->n_calls; i++)
        release_easy(&job->calls[i], e->multi);
    if (job->prev)
        job->prev->next = job->next;
    else if (e->jobs == job)
        e->jobs = job->next;
    if (job->next) job->next->prev = job->prev;
    job->prev = job->next = NULL;
    job->done(job, job->ud);
}

static uint64_t backoff_ms(int attempts)
{
    uint64_t d = (uint64_t)MEM_EMB_BACKOFF_MS << (attempts > 6 ? 5 : attempts - 1);
    return d > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : d;
}

static void arm_retry_timer(mem_emb_t *e)
{
    uint64_t first = UINT64_MAX, now = uv_now(e->loop);
    for (mem_emb_job_t *j = e->jobs; j; j = j->next)
        for (size_t i = 0; i < j->n_calls; i++)
            if (j->calls[i].state == CALL_WAITING && j->calls[i].retry_at_ms < first)
                first = j->calls[i].retry_at_ms;
    if (first == UINT64_MAX)
        uv_timer_stop(&e->retry_timer);
    else
        uv_timer_start(&e->retry_timer, on_retry, first > now ? first - now : 0, 0);
}

static void on_retry(uv_timer_t *t)
{
    mem_emb_t *e = t->data;
    uint64_t now = uv_now(e->loop);
    /* start_call may finish (and unlink) a job: restart the walk after each start */
    for (bool again = true; again;) {
        again = false;
        for (mem_emb_job_t *j = e->jobs; j && !again; j = j->next)
            for (size_t i = 0; i < j->n_calls; i++)
                if (j->calls[i].state == CALL_WAITING && j->calls[i].retry_at_ms <= now) {
                    start_call(&j->calls[i]);
                    again = true;
                    break;
                }
    }
    arm_retry_timer(e);
}

/* Start calls until MEM_EMB_PARALLEL are active or none is left. */
static void pump(mem_emb_job_t *job)
{
    while (!job->finished && job->n_active < MEM_EMB_PARALLEL && job->next_call < job->n_calls) {
        call_t *c = &job->calls[job->next_call++];
        job->n_active++;
        start_call(c);
    }
}

static void start_call(call_t *c)
{
    mem_emb_job_t *job = c->job;
    mem_emb_t *e = job->e;
    uint64_t now = uv_now(e->loop);
    if (now >= job->deadline_ms) {
        finish(job, MEM_EEMBEDTIME, "embedder: no answer from the provider within %gs",
               e->timeout_s);
        return;
    }
    long left_ms = (long)(job->deadline_ms - now);
    if (!c->easy && !(c->easy = curl_easy_init())) {
        finish(job, MEM_ENOMEM, "embedder: out of memory");
        return;
    }
    CURL *h = c->easy;
    curl_easy_reset(h);
    c->answer_len = 0;
    c->too_big = false;
    c->retry_after_s = -1;
    c->errbuf[0] = '\0';
    c->attempts++;
    curl_easy_setopt(h, CURLOPT_URL, e->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, e->headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "mnemod/" MNEMOD_VERSION);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* whatever this curl can decode */
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, left_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, left_ms);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, e);
    curl_easy_setopt(h, CURLOPT_PRIVATE, c);
    CURLMcode mc = curl_multi_add_handle(e->multi, h);
    if (mc != CURLM_OK) {
        finish(job, MEM_EEMBED, "embedder: cannot start a call: %s", curl_multi_strerror(mc));
        return;
    }
    c->state = CALL_RUNNING;
}

/* Wait and try the call again, or give up when that would pass the deadline. what says
 * what the last attempt got ("the provider answered 503: overloaded"). */
static void retry_or_fail(call_t *c, const char *what)
{
    mem_emb_job_t *job = c->job;
    mem_emb_t *e = job->e;
    uint64_t now = uv_now(e->loop);
    double spent_s = (double)(now - job->start_ms) / 1000.0;
    if (c->attempts >= MEM_EMB_MAX_ATTEMPTS) {
        finish(job, MEM_EEMBED, "embedder: %s (gave up after %d attempts in %.1fs)", what,
               c->attempts, spent_s);
        return;
    }
    uint64_t delay = c->retry_after_s >= 0 ? (uint64_t)(c->retry_after_s * 1000.0 + 0.5)
                                           : backoff_ms(c->attempts);
    if (now + delay >= job->deadline_ms) {
        finish(job, MEM_EEMBED, "embedder: %s (%d attempts in %.1fs; no time left to retry)", what,
               c->attempts, spent_s);
        return;
    }
    c->state = CALL_WAITING;
    c->retry_at_ms = now + delay;
    job->retries++;
    arm_retry_timer(e);
}

static bool transient(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
           rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING ||
           rc == CURLE_PARTIAL_FILE || rc == CURLE_HTTP2 || rc == CURLE_HTTP2_STREAM;
}

/* One transfer ended with rc. */
static void call_ended(call_t *c, CURLcode rc)
{
    mem_emb_job_t *job = c->job;
    mem_emb_t *e = job->e;
    curl_multi_remove_handle(e->multi, c->easy);
    c->state = CALL_QUEUED; /* off the multi handle */
    char what[176], words[112];
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        finish(job, MEM_EEMBEDTIME, "embedder: no answer from the provider within %gs",
               e->timeout_s);
        return;
    }
    if (rc == CURLE_WRITE_ERROR && c->too_big) {
        finish(job, MEM_EEMBED, "embedder: the provider's answer is larger than %zu bytes",
               MEM_EMB_MAX_ANSWER(c->n));
        return;
    }
    if (rc != CURLE_OK) {
        snprintf(what, sizeof(what), "cannot reach the provider: %.120s",
                 c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
        if (transient(rc))
            retry_or_fail(c, what);
        else
            finish(job, MEM_EEMBED, "embedder: %s", what);
        return;
    }
    long status = 0;
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
        c->state = CALL_DONE;
        job->n_active--;
        job->n_done++;
        if (job->n_done == job->n_calls)
            finish(job, MEM_OK, "%s", "");
        else
            pump(job);
        return;
    }
    mem_emb_error_text(c->answer, c->answer_len, words, sizeof(words));
    snprintf(what, sizeof(what), "the provider answered %ld%s%s", status, words[0] ? ": " : "",
             words);
    if (status == 429 || (status >= 500 && status <= 599))
        retry_or_fail(c, what);
    else
        finish(job, MEM_EEMBED, "embedder: %s", what);
}

/* Collect the transfers curl has finished. */
static void check_done(mem_emb_t *e)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(e->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        char *priv = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        CURLcode rc = m->data.result;
        if (priv) call_ended((call_t *)priv, rc); /* m is invalid from here */
    }
}

int mem_emb_job_new(mem_emb_t *e, const char *const *texts, const size_t *lens, size_t n,
                    mem_emb_job_t **out, mem_err_t *err)
{
    if (n == 0) return mem_err_set(err, MEM_EINVAL, "embedder: nothing to embed");
    size_t n_calls = (n + e->batch - 1) / e->batch;
    mem_emb_job_t *job = calloc(1, sizeof(*job));
    call_t *calls = calloc(n_calls, sizeof(*calls));
    if (!job || !calls) {
        free(job);
        free(calls);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    job->e = e;
    job->n = n;
    job->calls = calls;
    job->n_calls = n_calls;
    for (size_t i = 0; i < n_calls; i++) {
        call_t *c = &calls[i];
        c->job = job;
        c->first = i * e->batch;
        c->n = n - c->first < e->batch ? n - c->first : e->batch;
        c->body = mem_emb_encode(e->model, texts + c->first, lens + c->first, c->n, &c->body_len);
        if (!c->body) {
            mem_emb_job_free(job);
            return mem_err_set(err, MEM_ENOMEM, "out of memory (or text not UTF-8)");
        }
    }
    *out = job;
    return MEM_OK;
}

int mem_emb_job_start(mem_emb_job_t *job, mem_emb_done_fn done, void *ud)
{
    mem_emb_t *e = job->e;
    job->done = done;
    job->ud = ud;
    job->started = true;
    if (e->closing) {
        job->finished = true;
        return job->rc = mem_err_set(&job->err, MEM_EBUSY, "embedder: the server is shutting down");
    }
    uv_update_time(e->loop); /* the deadline counts from now, not from the loop turn's start */
    job->start_ms = uv_now(e->loop);
    job->deadline_ms = job->start_ms + (uint64_t)(e->timeout_s * 1000.0 + 0.5);
    job->next = e->jobs;
    if (e->jobs) e->jobs->prev = job;
    e->jobs = job;
    pump(job);
    return MEM_OK;
}

int mem_emb_job_result(mem_emb_job_t *job, const float **vecs, size_t *dim, mem_err_t *err)
{
    mem_emb_t *e = job->e;
    if (job->rc != MEM_OK) {
        if (err) *err = job->err;
        return job->rc;
    }
    if (!job->decoded) {
        size_t d = atomic_load(&e->dim);
        float *all = NULL;
        for (size_t i = 0; i < job->n_calls; i++) {
            call_t *c = &job->calls[i];
            float *v = NULL;
            size_t cd = 0;
            mem_err_t e2;
            mem_err_clear(&e2);
            int rc =
                mem_emb_decode(c->answer ? c->answer : "", c->answer_len, c->n, d, &v, &cd, &e2);
            if (rc == MEM_OK && !all && !(all = malloc(job->n * cd * sizeof(float)))) {
                free(v);
                rc = mem_err_set(&e2, MEM_ENOMEM, "out of memory");
            }
            if (rc != MEM_OK) {
                free(all);
                job->rc = rc;
                job->err = e2;
                if (err) *err = e2;
                return rc;
            }
            d = cd;
            memcpy(all + c->first * d, v, c->n * d * sizeof(float));
            free(v);
            free(c->answer);
            c->answer = NULL;
            c->answer_len = c->answer_cap = 0;
        }
        size_t none = 0;
        if (!atomic_compare_exchange_strong(&e->dim, &none, d) && none != d) {
            free(all);
            job->rc = mem_err_set(&job->err, MEM_EEMBED,
                                  "embedder: the provider answered %zu floats per vector where "
                                  "its earlier answers had %zu",
                                  d, none);
            if (err) *err = job->err;
            return job->rc;
        }
        job->vecs = all;
        job->dim = d;
        job->decoded = true;
    }
    *vecs = job->vecs;
    *dim = job->dim;
    return MEM_OK;
}

void mem_emb_job_counts(const mem_emb_job_t *job, size_t *calls, size_t *retries, double *seconds)
{
    size_t n = 0;
    for (size_t i = 0; i < job->n_calls; i++)
        n += (size_t)job->calls[i].attempts;
    *calls = n;
    *retries = job->retries;
    *seconds = job->end_ms > job->start_ms ? (double)(job->end_ms - job->start_ms) / 1000.0 : 0;
}

void mem_emb_job_free(mem_emb_job_t *job)
{
    if (!job) return;
    for (size_t i = 0; i < job->n_calls; i++) {
        call_t *c = &job->calls[i];
        if (c->easy) curl_easy_cleanup(c->easy); /* only when never started */
        free(c->body);
        free(c->answer);
    }
    free(job->calls);
    free(job->vecs);
    free(job);
}

/* ---- the probe ---- */

static void probe_done(mem_emb_job_t *job, void *ud)
{
    const float *v;
    size_t dim = 0;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_emb_job_result(job, &v, &dim, &err); /* one short vector: fine on the loop */
    job->probe_done(rc, dim, &err, job->probe_ud);
    mem_emb_job_free(job);
}

void mem_emb_probe(mem_emb_t *e, mem_emb_probe_fn done, void *ud)
{
    static const char *const text[] = {"dimension probe"};
    static const size_t len[] = {15};
    mem_emb_job_t *job;
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_emb_job_new(e, text, len, 1, &job, &err) != MEM_OK) {
        done(err.code, 0, &err, ud);
        return;
    }
    job->probe_done = done;
    job->probe_ud = ud;
    if (mem_emb_job_start(job, probe_done, NULL) != MEM_OK) {
        done(job->rc, 0, &job->err, ud);
        mem_emb_job_free(job);
    }
}

/* ---- the module ---- */

int mem_emb_open(uv_loop_t *loop, const mem_emb_opts_t *o, mem_emb_t **out, mem_err_t *err)
{
    if (!o->url || !o->model || !o->model[0] || o->batch == 0 || !(o->timeout_s > 0))
        return mem_err_set(err, MEM_EINVAL, "embedder: url, model, batch and timeout are needed");
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return mem_err_set(err, MEM_ENOMEM, "embedder: curl_global_init failed");
    mem_emb_t *e = calloc(1, sizeof(*e));
    size_t ul = strlen(o->url);
    if (e) e->url = malloc(ul + sizeof("/embeddings"));
    if (e) e->model = strdup(o->model);
    if (!e || !e->url || !e->model) goto nomem;
    memcpy(e->url, o->url, ul);
    memcpy(e->url + ul, "/embeddings", sizeof("/embeddings"));
    e->loop = loop;
    e->timeout_s = o->timeout_s;
    e->batch = o->batch;
    atomic_init(&e->dim, 0);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (h) h = curl_slist_append(h, "Accept: application/json");
    if (h) h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip for big bodies */
    if (h && o->key && o->key[0]) {
        size_t kl = strlen(o->key);
        char *auth = malloc(kl + sizeof("Authorization: Bearer "));
        if (!auth) {
            curl_slist_free_all(h);
            goto nomem;
        }
        memcpy(auth, "Authorization: Bearer ", 22);
        memcpy(auth + 22, o->key, kl + 1);
        struct curl_slist *h2 = curl_slist_append(h, auth);
        memset(auth, 0, kl + 22);
        free(auth);
        if (!h2) {
            curl_slist_free_all(h);
            goto nomem;
        }
        h = h2;
    }
    if (!h) goto nomem;
    e->headers = h;
    if (!(e->multi = curl_multi_init())) goto nomem;
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer_change);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
    uv_timer_init(loop, &e->timer);
    uv_timer_init(loop, &e->retry_timer);
    e->timer.data = e->retry_timer.data = e;
    e->open_handles = 2;
    *out = e;
    return MEM_OK;
nomem:
    if (e) {
        curl_slist_free_all(e->headers);
        free(e->url);
        free(e->model);
        free(e);
    }
    curl_global_cleanup();
    return mem_err_set(err, MEM_ENOMEM, "embedder: out of memory");
}

size_t mem_emb_dim(mem_emb_t *e)
{
    return atomic_load(&e->dim);
}

void mem_emb_cancel_all(mem_emb_t *e)
{
    e->closing = true;
    while (e->jobs)
        finish(e->jobs, MEM_EBUSY, "embedder: the server is shutting down");
    uv_timer_stop(&e->retry_timer);
}

void mem_emb_close(mem_emb_t *e)
{
    if (!e) return;
    mem_emb_cancel_all(e);
    curl_multi_cleanup(e->multi); /* closes cached connections through on_close_socket */
    e->multi = NULL;
    curl_slist_free_all(e->headers);
    e->headers = NULL;
    while (e->socks)
        sock_release(e, e->socks);
    uv_timer_stop(&e->timer);
    uv_close((uv_handle_t *)&e->timer, on_handle_closed);
    uv_close((uv_handle_t *)&e->retry_timer, on_handle_closed);
    curl_global_cleanup();
}
