/* test_server_forward.c - the relay's answer parsing: heads, lengths, chunked bodies, and
 * malformed input refused (never read past what arrived). The parsers are pure. And the
 * relay on a real loop against a loopback peer: an answer over max_answer is refused.
 * SPDX-License-Identifier: MIT
 */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/forward.c"

static long head(const char *s, int *status, long long *clen, bool *chunked, bool *close,
                 mem_srv_fwd_res_t *res)
{
    memset(res, 0, sizeof(*res));
    return mem_srv_fwd_parse_head(s, strlen(s), status, clen, chunked, close, res);
}

static void test_heads(void **state)
{
    int st;
    long long cl;
    bool ch, cc;
    mem_srv_fwd_res_t res;
    const char *a = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                    "Content-Length: 12\r\nX-Request-Id: z\r\nRetry-After: 3\r\n"
                    "Allow: GET, PUT, DELETE\r\n\r\n{\"ok\":true}x";
    long n = head(a, &st, &cl, &ch, &cc, &res);
    assert_int_equal(n, (long)(strstr(a, "\r\n\r\n") - a + 4));
    assert_int_equal(st, 201);
    assert_int_equal(cl, 12);
    assert_false(ch);
    assert_false(cc);
    assert_string_equal(res.content_type, "application/json");
    assert_string_equal(res.allow, "GET, PUT, DELETE");
    assert_int_equal(res.retry_after_s, 3);
    /* incomplete heads wait for more */
    for (size_t k = 0; k < strlen("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); k++)
        assert_int_equal(mem_srv_fwd_parse_head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", k,
                                                &st, &cl, &ch, &cc, &res),
                         0);
    assert_true(head("HTTP/1.1 200 OK\r\ntransfer-encoding:  chunked \r\nconnection: Close\r\n\r\n",
                     &st, &cl, &ch, &cc, &res) > 0);
    assert_true(ch);
    assert_true(cc);
    assert_int_equal(cl, -1);
    assert_true(head("HTTP/1.0 200 OK\r\n\r\n", &st, &cl, &ch, &cc, &res) > 0);
    assert_true(cc); /* 1.0: the peer closes */
    /* malformed */
    assert_int_equal(head("HTTP/2 200 OK\r\n\r\n", &st, &cl, &ch, &cc, &res), -1);
    assert_int_equal(head("HTTP/1.1 2x0 OK\r\n\r\n", &st, &cl, &ch, &cc, &res), -1);
    assert_int_equal(
        head("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", &st, &cl, &ch, &cc, &res), -1);
    assert_int_equal(head("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &st,
                          &cl, &ch, &cc, &res),
                     -1);
    assert_true(head("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", &st, &cl,
                     &ch, &cc, &res) > 0); /* repeated but equal: fine */
}

static void test_chunks(void **state)
{
    char out[64];
    size_t ol = 0;
    const char *b = "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
    long n = mem_srv_fwd_dechunk(b, strlen(b), out, &ol);
    assert_int_equal(n, (long)(strlen(b) - 4));
    assert_int_equal(ol, 12);
    assert_memory_equal(out, "hello, world", 12);
    /* every prefix: more needed, never a read past the end */
    for (size_t k = 0; k < strlen(b) - 4; k++) {
        char *copy = malloc(k ? k : 1);
        memcpy(copy, b, k);
        assert_int_equal(mem_srv_fwd_dechunk(copy, k, out, &ol), 0);
        free(copy);
    }
    assert_int_equal(mem_srv_fwd_dechunk("0\r\n\r\n", 5, out, &ol), 5);
    assert_int_equal(ol, 0);
    assert_int_equal(mem_srv_fwd_dechunk("x\r\n", 3, out, &ol), -1);
    assert_int_equal(mem_srv_fwd_dechunk("2\r\nabc\r\n0\r\n\r\n", 13, out, &ol), -1);
    assert_int_equal(mem_srv_fwd_dechunk("3\rxabc\r\n", 8, out, &ol), -1);
    assert_int_equal(mem_srv_fwd_dechunk("fffffffffffffffff\r\n", 19, out, &ol), -1);
}

static void test_addr(void **state)
{
    char h[64], p[16];
    assert_int_equal(split_addr("127.0.0.1:6636", h, sizeof(h), p, sizeof(p)), 0);
    assert_string_equal(h, "127.0.0.1");
    assert_string_equal(p, "6636");
    assert_int_equal(split_addr("[::1]:80", h, sizeof(h), p, sizeof(p)), 0);
    assert_string_equal(h, "::1");
    assert_int_equal(split_addr("node-a.internal:7", h, sizeof(h), p, sizeof(p)), 0);
    assert_string_equal(h, "node-a.internal");
    assert_int_equal(split_addr("nohost", h, sizeof(h), p, sizeof(p)), -1);
    assert_int_equal(split_addr("h:", h, sizeof(h), p, sizeof(p)), -1);
    assert_int_equal(split_addr("[::1:80", h, sizeof(h), p, sizeof(p)), -1);
}

/* A peer on loopback: accepts one connection, reads the request head, answers 200 with a
 * body of body_len bytes and closes. */
typedef struct peer {
    int fd;
    int port;
    size_t body_len;
    pthread_t t;
} peer_t;

static void *peer_main(void *ud)
{
    peer_t *p = ud;
    int c = accept(p->fd, NULL, NULL);
    if (c < 0) return NULL;
    char buf[4096];
    size_t got = 0;
    while (got < sizeof(buf) - 1) {
        ssize_t n = read(c, buf + got, sizeof(buf) - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n")) break;
    }
    char head[128];
    int hl = snprintf(head, sizeof(head),
                      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                      "%zu\r\n\r\n",
                      p->body_len);
    ssize_t w = send(c, head, (size_t)hl, MSG_NOSIGNAL); /* the relay may close first */
    char *body = malloc(p->body_len);
    memset(body, 'x', p->body_len);
    for (size_t off = 0; w > 0 && off < p->body_len; off += (size_t)w)
        w = send(c, body + off, p->body_len - off, MSG_NOSIGNAL);
    free(body);
    close(c);
    return NULL;
}

static void peer_start(peer_t *p, size_t body_len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    p->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p->fd >= 0);
    assert_int_equal(bind(p->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(p->fd, 4), 0);
    assert_int_equal(getsockname(p->fd, (struct sockaddr *)&a, &al), 0);
    p->port = ntohs(a.sin_port);
    p->body_len = body_len;
    assert_int_equal(pthread_create(&p->t, NULL, peer_main, p), 0);
}

typedef struct got {
    bool done;
    mem_srv_fwd_res_t res;
} got_t;

static void on_res(void *ud, mem_srv_fwd_res_t *res)
{
    got_t *g = ud;
    g->done = true;
    g->res = *res;
    res->body = NULL; /* taken */
}

/* One GET relayed to a peer answering body_len bytes, with max_answer; the result in *g. */
static void relay(size_t max_answer, size_t body_len, got_t *g)
{
    peer_t p;
    peer_start(&p, body_len);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    mem_srv_fwd_t *f = NULL;
    assert_int_equal(mem_srv_fwd_new(&loop, max_answer, &f), 0);
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", p.port);
    mem_srv_fwd_req_t q = {.addr = addr, .method = "GET", .path = "/v1/x", .timeout_ms = 30000};
    memset(g, 0, sizeof(*g));
    assert_int_equal(mem_srv_fwd_start(f, &q, on_res, g), 0);
    while (!g->done)
        uv_run(&loop, UV_RUN_ONCE);
    mem_srv_fwd_free(f);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    pthread_join(p.t, NULL);
    close(p.fd);
}

static void test_max_answer(void **state)
{
    got_t g;
    relay(4096, 1000, &g); /* fits: head and body under 4096 bytes */
    assert_int_equal(g.res.status, 200);
    assert_int_equal(g.res.body_len, 1000);
    assert_false(g.res.too_big);
    free(g.res.body);
    relay(4096, 200000, &g); /* over: refused, saying which setting */
    assert_int_equal(g.res.status, 0);
    assert_true(g.res.too_big);
    assert_null(g.res.body);
    assert_non_null(strstr(g.res.error, "--max-relay-answer (4096 bytes)"));
    relay((size_t)1 << 30, 200000, &g); /* the default holds it */
    assert_int_equal(g.res.status, 200);
    assert_int_equal(g.res.body_len, 200000);
    free(g.res.body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heads),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_addr),
        cmocka_unit_test(test_max_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
