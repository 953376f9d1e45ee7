/* test_server_forward.c - the relay's answer parsing: heads, lengths, chunked bodies, and
 * malformed input refused (never read past what arrived). The parsers are pure.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heads),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
