/* test_config_keys.c - the scoped keys file: grants, comments, roles, globs, line errors
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
/* clang-format on */

#include "config/config.h"

static void test_parse_grants(void **state)
{
    static const char T[] = "# comment\r\n"
                            "\n"
                            "   \t \n"
                            "alpha read team-*\r\n"
                            "  beta\twrite   a?c  \n"
                            "alpha admin *\n"
                            "gamma read x"; /* no final newline */
    mem_cfg_keys_t *k = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_cfg_keys_parse(T, strlen(T), "f", &k, &err), MEM_OK);
    assert_int_equal(k->n, 4);
    assert_string_equal(k->grants[0].key, "alpha");
    assert_int_equal(k->grants[0].key_len, 5);
    assert_int_equal(k->grants[0].role, MEM_CFG_ROLE_READ);
    assert_string_equal(k->grants[0].glob, "team-*");
    assert_string_equal(k->grants[1].key, "beta");
    assert_int_equal(k->grants[1].role, MEM_CFG_ROLE_WRITE);
    assert_string_equal(k->grants[1].glob, "a?c");
    assert_int_equal(k->grants[2].role, MEM_CFG_ROLE_ADMIN);
    assert_string_equal(k->grants[3].glob, "x");
    mem_cfg_keys_free(k);
    /* an empty file is no grant at all, not an error */
    assert_int_equal(mem_cfg_keys_parse("", 0, "f", &k, &err), MEM_OK);
    assert_int_equal(k->n, 0);
    mem_cfg_keys_free(k);
}

static void bad(const char *text, const char *needle)
{
    mem_cfg_keys_t *k = (mem_cfg_keys_t *)0x1;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_cfg_keys_parse(text, strlen(text), "/etc/keys", &k, &err);
    if (rc != MEM_EINVAL) fail_msg("accepted: %s", text);
    assert_ptr_equal(k, (mem_cfg_keys_t *)0x1); /* out-param untouched */
    assert_non_null(strstr(err.msg, "/etc/keys"));
    if (!strstr(err.msg, needle)) fail_msg("%s: message lacks \"%s\": %s", text, needle, err.msg);
    assert_string_equal(err.field, "keys-file");
}

static void test_malformed_lines_name_their_line(void **state)
{
    bad("a read *\nb root *\n", "line 2: role");
    bad("a read\n", "line 1: expected KEY ROLE NAMESPACE_GLOB");
    bad("a read * extra\n", "line 1: expected");
    bad("# ok\n\na read a/b\n", "line 3: namespace glob");
    bad("a read t\x01x\n", "line 1: control");
    bad("a READ *\n", "role must be read, write or admin");
    bad("k\xc3\xa9y read *\n", "printable ASCII");
    char big[700];
    memset(big, 'k', 600);
    memcpy(big + 600, " read *\n", 9);
    bad(big, "longer than 511");
}

static void test_load_file(void **state)
{
    char path[] = "/tmp/mnemod-keys-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("k1 read *\n", f);
    fclose(f);
    mem_cfg_keys_t *k = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_cfg_keys_load(path, &k, &err), MEM_OK);
    assert_int_equal(k->n, 1);
    mem_cfg_keys_free(k);
    unlink(path);
    assert_int_equal(mem_cfg_keys_load(path, &k, &err), MEM_EINVAL);
    assert_non_null(strstr(err.msg, path));
    mem_cfg_keys_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_grants),
        cmocka_unit_test(test_malformed_lines_name_their_line),
        cmocka_unit_test(test_load_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
