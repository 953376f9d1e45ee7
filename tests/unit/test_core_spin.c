/* test_core_spin.c - the bounded spin: it ends once its budget has passed on the caller's
 * clock (read every MEM_SPIN_CLOCK_EVERY pauses), never before, and at once for budget 0.
 * SPDX-License-Identifier: MIT
 */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include "core/spin.h"

static uint64_t fake_now;
static unsigned clock_reads;

static uint64_t fake_clock(void)
{
    clock_reads++;
    return fake_now;
}

static void test_zero_budget(void **state)
{
    mem_spin_t sp;
    clock_reads = 0;
    mem_spin_begin(&sp, 0, fake_clock);
    assert_false(mem_spin_more(&sp));
    assert_int_equal(clock_reads, 0);
}

static void test_ends_after_budget(void **state)
{
    mem_spin_t sp;
    fake_now = 1000;
    clock_reads = 0;
    mem_spin_begin(&sp, 500, fake_clock);
    assert_int_equal(clock_reads, 1);
    /* the clock stands still: the spin goes on, the clock read once per round of pauses */
    for (unsigned i = 0; i < 10 * MEM_SPIN_CLOCK_EVERY; i++)
        assert_true(mem_spin_more(&sp));
    assert_int_equal(clock_reads, 1 + 10);
    fake_now = 1500; /* exactly the budget: still allowed */
    unsigned n = 0;
    while (mem_spin_more(&sp) && n < 10 * MEM_SPIN_CLOCK_EVERY)
        n++;
    assert_int_equal(n, 10 * MEM_SPIN_CLOCK_EVERY);
    fake_now = 1501; /* past it: false at the next clock read, not later */
    n = 0;
    while (mem_spin_more(&sp))
        n++;
    assert_true(n < MEM_SPIN_CLOCK_EVERY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_budget),
        cmocka_unit_test(test_ends_after_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
