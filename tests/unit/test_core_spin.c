/* test_core_spin.c - the bounded spin: it ends once its budget has passed on the caller's
 * clock (read every MEM_SPIN_CLOCK_EVERY pauses), never before, and at once for budget 0.
 * The spin gate: closed at first and for a zero budget, opened by a catch or a short
 * blocking gap, kept open through fewer than credit_max spins that ran out in a row of
 * catches, closed by a busy machine, and probing once every probe_every waits while closed.
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

/* Waits until the gate opens, counting them (at most limit). */
static unsigned waits_until_open(mem_spin_gate_t *g, unsigned limit)
{
    unsigned n = 1;
    while (!mem_spin_gate_open(g) && n < limit)
        n++;
    return n;
}

static void test_gate_starts_closed_and_probes(void **state)
{
    mem_spin_gate_t g;
    mem_spin_gate_init(&g, 200000, 4, 16);
    /* closed: no spin before a short gap was seen, except one probe every 16 waits */
    for (int round = 0; round < 3; round++) {
        assert_int_equal(waits_until_open(&g, 100), 16);
        mem_spin_gate_spun(&g, false); /* the probe ran out: still closed */
    }
    mem_spin_gate_waited(&g, 200001); /* a blocking gap longer than the spin: no change */
    assert_int_equal(waits_until_open(&g, 100), 16);
}

static void test_gate_zero_budget_never_opens(void **state)
{
    mem_spin_gate_t g;
    mem_spin_gate_init(&g, 0, 4, 16);
    mem_spin_gate_waited(&g, 0);
    mem_spin_gate_spun(&g, true);
    for (int i = 0; i < 100; i++)
        assert_false(mem_spin_gate_open(&g));
}

static void test_gate_short_gap_opens(void **state)
{
    mem_spin_gate_t g;
    mem_spin_gate_init(&g, 200000, 4, 16);
    mem_spin_gate_waited(&g, 200000); /* within the spin (the bound included) */
    assert_true(mem_spin_gate_open(&g));
    mem_spin_gate_spun(&g, false); /* one catch's worth of credit, spent */
    assert_false(mem_spin_gate_open(&g));
}

static void test_gate_hysteresis(void **state)
{
    mem_spin_gate_t g;
    mem_spin_gate_init(&g, 200000, 4, 16);
    for (int i = 0; i < 10; i++) { /* a run of catches fills the credit (at most 4) */
        assert_true(i == 0 ? waits_until_open(&g, 100) == 16 : mem_spin_gate_open(&g));
        mem_spin_gate_spun(&g, true);
    }
    /* one long gap among short ones does not close it */
    for (int i = 0; i < 20; i++) {
        assert_true(mem_spin_gate_open(&g));
        mem_spin_gate_spun(&g, i % 3 != 0);
    }
    /* a client slower than the spin: 4 spins run out at most, then it closes */
    unsigned spins = 0;
    for (int i = 0; i < 160; i++)
        if (mem_spin_gate_open(&g)) {
            spins++;
            mem_spin_gate_spun(&g, false);
        }
    assert_true(spins >= 4 + 160 / 16 - 1 && spins <= 4 + 160 / 16);
    /* a probe that catches opens it again (the next one: within 16 waits) */
    assert_true(waits_until_open(&g, 100) <= 16);
    mem_spin_gate_spun(&g, true);
    assert_true(mem_spin_gate_open(&g));
}

static void test_gate_preempted_closes(void **state)
{
    mem_spin_gate_t g;
    mem_spin_gate_init(&g, 200000, 4, 16);
    mem_spin_gate_waited(&g, 1000);
    for (int i = 0; i < 8; i++) {
        assert_true(mem_spin_gate_open(&g));
        mem_spin_gate_spun(&g, true);
    }
    mem_spin_gate_preempted(&g); /* full credit or not, a busy machine closes it */
    assert_int_equal(waits_until_open(&g, 100), 16);
}

static void test_gate_degenerate_settings(void **state)
{
    mem_spin_gate_t g;
    mem_spin_gate_init(&g, 1000, 0, 0);  /* taken as 1 and 1 */
    assert_true(mem_spin_gate_open(&g)); /* probes at every wait */
    mem_spin_gate_spun(&g, true);
    mem_spin_gate_spun(&g, true);
    assert_true(mem_spin_gate_open(&g));
    mem_spin_gate_spun(&g, false); /* credit 1 at most: one run-out closes it */
    assert_int_equal(g.credit, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_budget),
        cmocka_unit_test(test_ends_after_budget),
        cmocka_unit_test(test_gate_starts_closed_and_probes),
        cmocka_unit_test(test_gate_zero_budget_never_opens),
        cmocka_unit_test(test_gate_short_gap_opens),
        cmocka_unit_test(test_gate_hysteresis),
        cmocka_unit_test(test_gate_preempted_closes),
        cmocka_unit_test(test_gate_degenerate_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
