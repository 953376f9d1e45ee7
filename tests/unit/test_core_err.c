/* test_core_err.c - error detail: codes, statuses, wire names, a reset detail
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "core/err.h"

/* A mem_err_t on the stack that nobody cleared must come out of mem_err_set with no stale
 * detail: a garbage retry_after_s once became a garbage Retry-After header. */
static void test_set_resets_the_detail(void **state)
{
    mem_err_t err;
    memset(&err, 0x7b, sizeof(err));
    assert_int_equal(mem_err_set(&err, MEM_ENOMEM, "out of %s", "memory"), MEM_ENOMEM);
    assert_int_equal(err.code, MEM_ENOMEM);
    assert_string_equal(err.msg, "out of memory");
    assert_string_equal(err.field, "");
    assert_int_equal(err.retry_after_s, 0);
    assert_int_equal(err.last_ms, 0);
    assert_int_equal(err.given_ms, 0);
    assert_int_equal(err.line, 0); /* a stale one became a "line" in a 413's body */
    memset(&err, 0x7b, sizeof(err));
    mem_err_field(&err, MEM_EINVAL, "k", "k: out of range");
    assert_string_equal(err.field, "k");
    assert_int_equal(err.retry_after_s, 0);
    assert_int_equal(err.line, 0);
    assert_int_equal(mem_err_set(NULL, MEM_EBUSY, "x"), MEM_EBUSY);
}

static void test_edge_codes(void **state)
{
    assert_int_equal(mem_err_http_status(MEM_EBADREQ), 400);
    assert_string_equal(mem_err_wire(MEM_EBADREQ), "bad_request");
    assert_int_equal(mem_err_http_status(MEM_EFORBIDDEN), 403);
    assert_string_equal(mem_err_wire(MEM_EORIGIN), "forbidden_origin");
    assert_string_equal(mem_err_wire(MEM_EHOST), "forbidden_host");
    assert_int_equal(mem_err_http_status(MEM_EEXPECT), 417);
    assert_int_equal(mem_err_http_status(MEM_ENOTIMPL), 501);
    assert_int_equal(mem_err_http_status(12345), 500);
    assert_string_equal(mem_err_wire(12345), "internal");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_resets_the_detail),
        cmocka_unit_test(test_edge_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
