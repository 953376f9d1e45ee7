/* test_core_decay.c - decay families and the blend of SPEC section 4 (memU's figures)
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/decay.h"

#define DAY 86400.0

static mem_decay_t mk(mem_decay_kind_t kind, double half_life_days)
{
    mem_decay_t d = {.kind = kind,
                     .half_life_s = half_life_days * DAY,
                     .shape = 1.0,
                     .offset_s = 0.0,
                     .recency_bias = 1.0};
    return d;
}

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("got %.9g want %.9g\n", got, want);
        fail();
    }
}

static void test_exponential(void **state)
{
    (void)state;
    mem_decay_t d = mk(MEM_DECAY_EXPONENTIAL, 90);
    near(mem_decay_factor(&d, 0), 1.0, 0);
    near(mem_decay_factor(&d, 90 * DAY), 0.5, 1e-12);
    near(mem_decay_factor(&d, 180 * DAY), 0.25, 1e-12);
    assert_true(mem_decay_factor(&d, 6 * DAY) >= 0.95);
    near(mem_decay_factor(&d, 7 * DAY), 0.9475, 5e-5); /* below memU's 95 % at 7 days */
    assert_true(mem_decay_factor(&d, 7 * DAY) < 0.95);
    assert_true(mem_decay_factor(&d, 6.6 * DAY) >= 0.95);
    assert_true(mem_decay_factor(&d, 91 * DAY) <= 0.5);
}

static void test_gaussian(void **state)
{
    (void)state;
    mem_decay_t d = mk(MEM_DECAY_GAUSSIAN, 90);
    near(mem_decay_factor(&d, 90 * DAY), 0.5, 1e-12);
    near(mem_decay_factor(&d, 7 * DAY), 0.996, 5e-4);
    assert_true(mem_decay_factor(&d, 7 * DAY) >= 0.95);
    assert_true(mem_decay_factor(&d, 91 * DAY) <= 0.5);
    near(mem_decay_factor(&d, 180 * DAY), 0.0625, 1e-12);
}

static void test_linear(void **state)
{
    (void)state;
    mem_decay_t d = mk(MEM_DECAY_LINEAR, 10);
    near(mem_decay_factor(&d, 0), 1.0, 0);
    near(mem_decay_factor(&d, 10 * DAY), 0.5, 1e-12);
    near(mem_decay_factor(&d, 15 * DAY), 0.25, 1e-12);
    near(mem_decay_factor(&d, 20 * DAY), 0.0, 0);
    near(mem_decay_factor(&d, 400 * DAY), 0.0, 0);
}

static void test_weibull(void **state)
{
    (void)state;
    mem_decay_t w = mk(MEM_DECAY_WEIBULL, 30), e = mk(MEM_DECAY_EXPONENTIAL, 30);
    for (double age = 0; age < 200 * DAY; age += 7.3 * DAY)
        near(mem_decay_factor(&w, age), mem_decay_factor(&e, age), 1e-15);
    w.shape = 2.0; /* shape 2 = gaussian */
    mem_decay_t g = mk(MEM_DECAY_GAUSSIAN, 30);
    for (double age = 0; age < 200 * DAY; age += 7.3 * DAY)
        near(mem_decay_factor(&w, age), mem_decay_factor(&g, age), 1e-12);
    w.shape = 0.5;
    near(mem_decay_factor(&w, 30 * DAY), 0.5, 1e-12);
}

static void test_none_and_zero_half_life(void **state)
{
    (void)state;
    mem_decay_t n = mk(MEM_DECAY_NONE, 30), z = mk(MEM_DECAY_EXPONENTIAL, 0);
    for (double age = 0; age < 1000 * DAY; age += 99 * DAY) {
        near(mem_decay_factor(&n, age), 1.0, 0);
        near(mem_decay_factor(&z, age), 1.0, 0);
        near(mem_decay_time_weight(&z, age), 1.0, 0);
    }
}

static void test_age_and_offset(void **state)
{
    (void)state;
    mem_decay_t d = mk(MEM_DECAY_EXPONENTIAL, 90);
    long long now = 1000ll * 86400 * 1000;
    near(mem_decay_age_s(&d, now, now - 3 * 86400000ll), 3 * DAY, 0);
    /* two-sided: a segment after the origin is as old as one before it */
    near(mem_decay_age_s(&d, now, now + 3 * 86400000ll), 3 * DAY, 0);
    d.offset_s = 7 * DAY;
    near(mem_decay_age_s(&d, now, now - 3 * 86400000ll), 0, 0);
    near(mem_decay_age_s(&d, now, now - 10 * 86400000ll), 3 * DAY, 1e-9);
    /* offset 7d keeps the last week at 1.0 and reaches 0.5 at 97 days */
    near(mem_decay_factor(&d, mem_decay_age_s(&d, now, now - 7 * 86400000ll)), 1.0, 0);
    near(mem_decay_factor(&d, mem_decay_age_s(&d, now, now - 97 * 86400000ll)), 0.5, 1e-12);
    /* milliseconds count */
    d.offset_s = 0;
    near(mem_decay_age_s(&d, 1500, 0), 1.5, 0);
}

static void test_blend(void **state)
{
    (void)state;
    mem_decay_t d = mk(MEM_DECAY_EXPONENTIAL, 90);
    d.recency_bias = 0.25;
    near(mem_decay_time_weight(&d, 90 * DAY), 0.75 + 0.25 * 0.5, 1e-15);
    near(mem_decay_blend(0.8, 0.5, 0.3), 0.7 * 0.8 + 0.3 * 0.5, 1e-15);
    near(mem_decay_blend(0.8, 0.5, 0.0), 0.8, 0);
    near(mem_decay_blend(0.8, 0.5, 1.0), 0.5, 0);
}

static void test_kind_names(void **state)
{
    (void)state;
    mem_decay_kind_t k;
    const char *names[] = {"exponential", "linear", "gaussian", "weibull", "none"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(mem_decay_kind_parse(names[i], &k), 0);
        assert_int_equal(k, i);
        assert_string_equal(mem_decay_kind_name(k), names[i]);
    }
    assert_int_equal(mem_decay_kind_parse("cosine", &k), -1);
    assert_string_equal(mem_decay_kind_name((mem_decay_kind_t)42), "unknown");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exponential),
        cmocka_unit_test(test_gaussian),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_weibull),
        cmocka_unit_test(test_none_and_zero_half_life),
        cmocka_unit_test(test_age_and_offset),
        cmocka_unit_test(test_blend),
        cmocka_unit_test(test_kind_names),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
