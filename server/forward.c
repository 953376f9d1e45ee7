/* forward.c - relaying HTTP requests to other mnemod nodes on the libuv loop
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One request at a time per connection (no pipelining); idle connections are kept
 * per peer address and reused for IDLE_MAX_MS (below the peers' idle timeout), so a relayed
 * request usually costs one write and one read on an open socket. A reused connection that
 * fails before any byte of the answer arrived (the peer closed it meanwhile) is retried
 * once on a fresh one. Answers are read whole (Content-Length, chunked, or until close) up
 * to max_answer bytes (--max-relay-answer), head included; a larger one fails with
 * res.too_big. Every request has a timer; the callback runs exactly once.
 */
#include "server/forward.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IDLE_MAX_MS 5000
#define READ_CHUNK  65536

typedef struct fconn fconn_t;
typedef struct freq freq_t;

struct mem_srv_fwd {
    uv_loop_t *loop;
    fconn_t *conns;    /* every open connection */
    size_t handles;    /* open uv handles (connections, timers) */
    size_t max_answer; /* bytes of an answer, head included; more: too_big */
    bool closing;
};

enum { C_CONNECTING, C_BUSY, C_IDLE, C_CLOSING };

struct fconn {
    uv_tcp_t tcp;
    mem_srv_fwd_t *f;
    char addr[300];
    int state;
    freq_t *req;
    char *in;
    size_t in_len, in_cap;
    uint64_t idle_since_ms;
    bool used; /* served a request before */
    uv_connect_t connect;
    fconn_t *next;
};

struct freq {
    mem_srv_fwd_t *f;
    fconn_t *c;
    mem_srv_fwd_cb cb;
    void *ud;
    char addr[300];
    char *out;
    size_t out_len;
    uv_write_t wr;
    uv_timer_t timer;
    uv_getaddrinfo_t gai;
    bool resolving, done, wrote, got_bytes;
    int attempts;
    mem_srv_fwd_res_t res;
};

static void conn_close(fconn_t *c);
static void req_finish(freq_t *r, const char *error);
static void on_timer_closed(uv_handle_t *h);
static void req_attach(freq_t *r);

/* ---- parsing (pure) ---- */

static bool hdr_is(const char *line, size_t len, const char *name, const char **val,
                   size_t *val_len)
{
    size_t n = strlen(name);
    if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0) return false;
    const char *v = line + n + 1;
    const char *e = line + len;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *val = v;
    *val_len = (size_t)(e - v);
    return true;
}

/* The first CRLF in [p, end), or NULL (the buffer is not NUL-terminated). */
static const char *find_crlf(const char *p, const char *end)
{
    for (; p + 1 < end; p++)
        if (p[0] == '\r' && p[1] == '\n') return p;
    return NULL;
}

long mem_srv_fwd_parse_head(const char *buf, size_t len, int *status, long long *content_length,
                            bool *chunked, bool *close, mem_srv_fwd_res_t *res)
{
    const char *end = NULL;
    for (size_t i = 0; i + 3 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
            end = buf + i + 4;
            break;
        }
    if (!end) return len > 65536 ? -1 : 0;
    *content_length = -1;
    *chunked = *close = false;
    const char *p = buf;
    const char *eol = find_crlf(p, end);
    if (!eol || eol - p < 12 || strncmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ') return -1;
    if (!isdigit((unsigned char)p[9]) || !isdigit((unsigned char)p[10]) ||
        !isdigit((unsigned char)p[11]))
        return -1;
    *status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    if (*status < 100) return -1;
    if (p[7] == '0') *close = true; /* HTTP/1.0: no keep-alive unless asked, which we do not */
    p = eol + 2;
    while (p < end - 2) {
        eol = find_crlf(p, end);
        if (!eol || eol > end - 2) return -1;
        size_t l = (size_t)(eol - p);
        const char *v;
        size_t vl;
        if (hdr_is(p, l, "Content-Length", &v, &vl)) {
            long long n = 0;
            if (vl == 0 || vl > 18) return -1;
            for (size_t i = 0; i < vl; i++) {
                if (!isdigit((unsigned char)v[i])) return -1;
                n = n * 10 + (v[i] - '0');
            }
            if (*content_length >= 0 && *content_length != n) return -1;
            *content_length = n;
        } else if (hdr_is(p, l, "Transfer-Encoding", &v, &vl)) {
            if (vl >= 7 && strncasecmp(v + vl - 7, "chunked", 7) == 0) *chunked = true;
        } else if (hdr_is(p, l, "Connection", &v, &vl)) {
            if (vl == 5 && strncasecmp(v, "close", 5) == 0) *close = true;
        } else if (res && hdr_is(p, l, "Content-Type", &v, &vl)) {
            snprintf(res->content_type, sizeof(res->content_type), "%.*s", (int)vl, v);
        } else if (res && hdr_is(p, l, "Allow", &v, &vl)) {
            snprintf(res->allow, sizeof(res->allow), "%.*s", (int)vl, v);
        } else if (res && hdr_is(p, l, "Retry-After", &v, &vl)) {
            int n = 0;
            for (size_t i = 0; i < vl && i < 6 && isdigit((unsigned char)v[i]); i++)
                n = n * 10 + (v[i] - '0');
            res->retry_after_s = n;
        }
        p = eol + 2;
    }
    return (long)(end - buf);
}

long mem_srv_fwd_dechunk(const char *buf, size_t len, char *out, size_t *out_len)
{
    size_t i = 0, o = 0;
    for (;;) {
        size_t size = 0, digits = 0;
        while (i < len && isxdigit((unsigned char)buf[i])) {
            char c = buf[i++];
            if (++digits > 15) return -1;
            size = size * 16 + (size_t)(isdigit((unsigned char)c)
                                            ? c - '0'
                                            : tolower((unsigned char)c) - 'a' + 10);
        }
        if (i >= len) return 0;
        if (digits == 0) return -1;
        while (i < len && buf[i] != '\r') /* chunk extensions: ignored */
            i++;
        if (i + 1 >= len) return 0;
        if (buf[i + 1] != '\n') return -1;
        i += 2;
        if (size == 0) { /* trailer lines, then the blank line */
            for (;;) {
                if (i + 1 >= len) return 0;
                if (buf[i] == '\r' && buf[i + 1] == '\n') {
                    *out_len = o;
                    return (long)(i + 2);
                }
                while (i + 1 < len && !(buf[i] == '\r' && buf[i + 1] == '\n'))
                    i++;
                if (i + 1 >= len) return 0;
                i += 2;
            }
        }
        if (len - i < size + 2) return 0;
        memcpy(out + o, buf + i, size);
        o += size;
        i += size;
        if (buf[i] != '\r' || buf[i + 1] != '\n') return -1;
        i += 2;
    }
}

/* ---- connections ---- */

static void on_conn_closed(uv_handle_t *h)
{
    fconn_t *c = (fconn_t *)h;
    mem_srv_fwd_t *f = c->f;
    free(c->in);
    free(c);
    f->handles--;
    if (f->closing && f->handles == 0) free(f);
}

static void conn_close(fconn_t *c)
{
    if (c->state == C_CLOSING) return;
    c->state = C_CLOSING;
    for (fconn_t **pp = &c->f->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static uint64_t now_ms(mem_srv_fwd_t *f)
{
    return uv_now(f->loop);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    fconn_t *c = (fconn_t *)h;
    if (c->in_cap - c->in_len < READ_CHUNK) {
        size_t cap = c->in_cap ? c->in_cap * 2 : READ_CHUNK * 2;
        while (cap - c->in_len < READ_CHUNK)
            cap *= 2;
        char *p = realloc(c->in, cap);
        if (!p) {
            buf->base = NULL;
            buf->len = 0;
            return;
        }
        c->in = p;
        c->in_cap = cap;
    }
    buf->base = c->in + c->in_len;
    buf->len = c->in_cap - c->in_len;
}

/* Is the answer in c->in complete? 1 yes (r->res filled), 0 no, -1 malformed. */
static int answer_complete(fconn_t *c, freq_t *r, bool eof, bool *keep)
{
    int status = 0;
    long long clen = -1;
    bool chunked = false, close = false;
    mem_srv_fwd_res_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    long head = mem_srv_fwd_parse_head(c->in, c->in_len, &status, &clen, &chunked, &close, &tmp);
    if (head < 0) return -1;
    if (head == 0) return eof ? -1 : 0;
    size_t avail = c->in_len - (size_t)head;
    char *body = NULL;
    size_t body_len = 0, used = 0;
    if (status == 204 || status == 304 || (status >= 100 && status < 200)) {
        clen = 0;
        chunked = false;
    }
    if (chunked) {
        body = malloc(avail ? avail : 1);
        if (!body) return -1;
        long n = mem_srv_fwd_dechunk(c->in + head, avail, body, &body_len);
        if (n < 0 || (n == 0 && eof)) {
            free(body);
            return -1;
        }
        if (n == 0) {
            free(body);
            return 0;
        }
        used = (size_t)n;
    } else if (clen >= 0) {
        if (avail < (size_t)clen) return eof ? -1 : 0;
        body = malloc((size_t)clen + 1);
        if (!body) return -1;
        memcpy(body, c->in + head, (size_t)clen);
        body_len = used = (size_t)clen;
    } else { /* no length: until the peer closes */
        if (!eof) return 0;
        close = true;
        body = malloc(avail + 1);
        if (!body) return -1;
        memcpy(body, c->in + head, avail);
        body_len = used = avail;
    }
    tmp.status = status;
    tmp.body = body;
    tmp.body_len = body_len;
    tmp.sent = true;
    r->res = tmp;
    *keep = !close && c->in_len == (size_t)head + used; /* nothing unexpected after it */
    c->in_len = 0;
    return 1;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    fconn_t *c = (fconn_t *)s;
    freq_t *r = c->req;
    if (nread == 0) return;
    if (!r) { /* an idle connection the peer closed (or wrote to): drop it */
        conn_close(c);
        return;
    }
    bool eof = nread < 0;
    if (nread > 0) {
        c->in_len += (size_t)nread;
        r->got_bytes = true;
        if (c->in_len > c->f->max_answer) {
            char msg[96];
            snprintf(msg, sizeof(msg), "the answer is larger than --max-relay-answer (%zu bytes)",
                     c->f->max_answer);
            conn_close(c);
            r->res.too_big = true;
            req_finish(r, msg);
            return;
        }
    } else if (nread != UV_EOF) {
        eof = true;
    }
    bool keep = false;
    int done = answer_complete(c, r, eof, &keep);
    if (done == 0) return;
    c->req = NULL;
    r->c = NULL;
    if (done < 0) {
        bool retry = !r->got_bytes && c->used && r->attempts < 2;
        conn_close(c);
        if (retry) { /* the peer had closed this kept-alive connection: a fresh one */
            req_attach(r);
            return;
        }
        req_finish(r, eof && !r->got_bytes ? "the peer closed the connection"
                                           : "malformed answer from the peer");
        return;
    }
    c->used = true;
    if (keep && !c->f->closing) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->state = C_IDLE;
        c->idle_since_ms = now_ms(c->f);
        /* watch for the peer closing it meanwhile */
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    } else {
        conn_close(c);
    }
    req_finish(r, NULL);
}

static void on_written(uv_write_t *w, int status)
{
    freq_t *r = w->data;
    if (r->done) return;
    r->wrote = status == 0;
    if (status != 0 && r->c) {
        fconn_t *c = r->c;
        bool retry = c->used && r->attempts < 2;
        c->req = NULL;
        r->c = NULL;
        conn_close(c);
        if (retry) {
            req_attach(r);
            return;
        }
        req_finish(r, uv_strerror(status));
    }
}

static void send_on(freq_t *r, fconn_t *c)
{
    c->state = C_BUSY;
    c->req = r;
    c->in_len = 0;
    r->c = c;
    r->attempts++;
    r->got_bytes = false;
    r->res.sent = true;
    uv_buf_t b = uv_buf_init(r->out, (unsigned int)r->out_len);
    r->wr.data = r;
    int rc = uv_write(&r->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written);
    if (rc == 0) rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc != 0) {
        c->req = NULL;
        r->c = NULL;
        conn_close(c);
        req_finish(r, uv_strerror(rc));
    }
}

static void on_connect(uv_connect_t *cr, int status)
{
    fconn_t *c = cr->data;
    freq_t *r = c->req;
    if (c->state == C_CLOSING) return;
    if (!r) { /* its request finished (timeout) meanwhile */
        conn_close(c);
        return;
    }
    if (status != 0) {
        c->req = NULL;
        r->c = NULL;
        conn_close(c);
        r->res.sent = false;
        char msg[160];
        snprintf(msg, sizeof(msg), "cannot connect to %.80s: %s", r->addr, uv_strerror(status));
        req_finish(r, msg);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->req = NULL;
    send_on(r, c);
}

static void connect_to(freq_t *r, const struct sockaddr *sa)
{
    mem_srv_fwd_t *f = r->f;
    fconn_t *c = calloc(1, sizeof(*c));
    if (!c) {
        req_finish(r, "out of memory");
        return;
    }
    c->f = f;
    snprintf(c->addr, sizeof(c->addr), "%s", r->addr);
    uv_tcp_init(f->loop, &c->tcp);
    f->handles++;
    c->next = f->conns;
    f->conns = c;
    c->state = C_CONNECTING;
    c->req = r;
    r->c = c;
    c->connect.data = c;
    int rc = uv_tcp_connect(&c->connect, &c->tcp, sa, on_connect);
    if (rc != 0) {
        c->req = NULL;
        r->c = NULL;
        conn_close(c);
        char msg[160];
        snprintf(msg, sizeof(msg), "cannot connect to %.80s: %s", r->addr, uv_strerror(rc));
        req_finish(r, msg);
    }
}

static void on_resolved(uv_getaddrinfo_t *g, int status, struct addrinfo *ai)
{
    freq_t *r = g->data;
    r->resolving = false;
    if (r->done) { /* finished (timeout) while resolving: free it now */
        uv_freeaddrinfo(ai);
        uv_close((uv_handle_t *)&r->timer, on_timer_closed);
        return;
    }
    if (status != 0 || !ai) {
        char msg[160];
        snprintf(msg, sizeof(msg), "cannot resolve %.80s: %s", r->addr, uv_strerror(status));
        uv_freeaddrinfo(ai);
        req_finish(r, msg);
        return;
    }
    connect_to(r, ai->ai_addr);
    uv_freeaddrinfo(ai);
}

/* host:port, [v6]:port -> host and port strings. */
static int split_addr(const char *addr, char *host, size_t hcap, char *port, size_t pcap)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1]) return -1;
    const char *h = addr, *he = colon;
    if (*h == '[') {
        h++;
        if (he == h || he[-1] != ']') return -1;
        he--;
    }
    if ((size_t)(he - h) >= hcap || strlen(colon + 1) >= pcap) return -1;
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    snprintf(port, pcap, "%s", colon + 1);
    return 0;
}

/* Give r a connection: an idle one to its peer, or a new one. */
static void req_attach(freq_t *r)
{
    mem_srv_fwd_t *f = r->f;
    uint64_t now = now_ms(f);
    for (fconn_t *c = f->conns, *next; c; c = next) {
        next = c->next;
        if (c->state != C_IDLE) continue;
        if (now - c->idle_since_ms > IDLE_MAX_MS) {
            conn_close(c);
            continue;
        }
        if (strcmp(c->addr, r->addr) == 0 && r->attempts == 0) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            send_on(r, c);
            return;
        }
    }
    char host[256], port[16];
    if (split_addr(r->addr, host, sizeof(host), port, sizeof(port)) != 0) {
        req_finish(r, "invalid peer address");
        return;
    }
    struct sockaddr_storage ss;
    if (uv_ip4_addr(host, atoi(port), (struct sockaddr_in *)&ss) == 0 ||
        uv_ip6_addr(host, atoi(port), (struct sockaddr_in6 *)&ss) == 0) {
        connect_to(r, (const struct sockaddr *)&ss);
        return;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    r->gai.data = r;
    r->resolving = true;
    if (uv_getaddrinfo(f->loop, &r->gai, on_resolved, host, port, &hints) != 0) {
        r->resolving = false;
        req_finish(r, "cannot resolve the peer address");
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    freq_t *r = h->data;
    mem_srv_fwd_t *f = r->f;
    free(r->res.body);
    free(r->out);
    free(r);
    f->handles--;
    if (f->closing && f->handles == 0) free(f);
}
static void req_finish(freq_t *r, const char *error)
{
    if (r->done) return;
    r->done = true;
    uv_timer_stop(&r->timer);
    if (error) {
        free(r->res.body);
        r->res.body = NULL;
        r->res.body_len = 0;
        r->res.status = 0;
        r->res.sent = r->wrote;
        snprintf(r->res.error, sizeof(r->res.error), "%s", error);
    }
    r->cb(r->ud, &r->res);
    if (!r->resolving) uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

static void on_timeout(uv_timer_t *t)
{
    freq_t *r = t->data;
    if (r->c) {
        fconn_t *c = r->c;
        c->req = NULL;
        r->c = NULL;
        conn_close(c);
    }
    req_finish(r, "the peer did not answer in time");
}

int mem_srv_fwd_new(uv_loop_t *loop, size_t max_answer, mem_srv_fwd_t **out)
{
    mem_srv_fwd_t *f = calloc(1, sizeof(*f));
    if (!f) return -1;
    f->loop = loop;
    f->max_answer = max_answer;
    *out = f;
    return 0;
}

int mem_srv_fwd_start(mem_srv_fwd_t *f, const mem_srv_fwd_req_t *q, mem_srv_fwd_cb cb, void *ud)
{
    if (f->closing) return -1;
    freq_t *r = calloc(1, sizeof(*r));
    if (!r) return -1;
    r->f = f;
    r->cb = cb;
    r->ud = ud;
    snprintf(r->addr, sizeof(r->addr), "%s", q->addr);
    size_t cap = q->body_len + 2048 + strlen(q->path) + (q->query ? strlen(q->query) : 0) +
                 (q->authorization ? strlen(q->authorization) : 0) +
                 (q->content_type ? strlen(q->content_type) : 0);
    r->out = malloc(cap);
    if (!r->out) {
        free(r);
        return -1;
    }
    int n = snprintf(r->out, cap,
                     "%s %s%s%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\n"
                     "%s%s%s%s%s%s%s%s%s%s%s%s",
                     q->method, q->path, q->query && *q->query ? "?" : "", q->query ? q->query : "",
                     q->addr, q->body_len, q->content_type ? "Content-Type: " : "",
                     q->content_type ? q->content_type : "", q->content_type ? "\r\n" : "",
                     q->authorization ? "Authorization: " : "",
                     q->authorization ? q->authorization : "", q->authorization ? "\r\n" : "",
                     q->request_id ? "X-Request-Id: " : "", q->request_id ? q->request_id : "",
                     q->request_id ? "\r\n" : "", q->forwarded_by ? "X-Mnemod-Forwarded: " : "",
                     q->forwarded_by ? q->forwarded_by : "", q->forwarded_by ? "\r\n" : "");
    if (n < 0 || (size_t)n + 2 + q->body_len > cap) {
        free(r->out);
        free(r);
        return -1;
    }
    memcpy(r->out + n, "\r\n", 2);
    if (q->body_len) memcpy(r->out + n + 2, q->body, q->body_len);
    r->out_len = (size_t)n + 2 + q->body_len;
    uv_timer_init(f->loop, &r->timer);
    f->handles++;
    r->timer.data = r;
    uv_timer_start(&r->timer, on_timeout, (uint64_t)(q->timeout_ms > 0 ? q->timeout_ms : 30000), 0);
    req_attach(r);
    return 0;
}

void mem_srv_fwd_free(mem_srv_fwd_t *f)
{
    if (!f) return;
    f->closing = true;
    while (f->conns) {
        fconn_t *c = f->conns;
        freq_t *r = c->req;
        c->req = NULL;
        if (r) r->c = NULL;
        conn_close(c);
        if (r) req_finish(r, "the server is shutting down");
    }
    if (f->handles == 0) free(f);
}
