/* test_storage_applied.c - cluster log positions: stored with the record, replay is idempotent
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
#include <unistd.h>
#include <cmocka.h>
/* clang-format on */

#include "core/vec.h"
#include "storage/store.h"

#define STORE_FIXTURE_TAG "applied"
#include "tests/unit/store_fixture.h"

#define DIM 4

static mem_store_t *open_store(void)
{
    mem_store_opts_t o = store_fixture_opts();
    o.max_namespaces = 10;
    o.max_queue = 100;
    return store_fixture_open(&o);
}

static float vecs[4][DIM] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};

/* Insert one segment as the log record (stream, seq); returns op.rc. */
static int insert(mem_store_t *st, const char *stream, uint64_t seq, const char *id, int v,
                  int64_t ts, mem_store_op_t *op, mem_store_seg_out_t *out)
{
    static mem_store_seg_in_t seg;
    memset(&seg, 0, sizeof(seg));
    memset(op, 0, sizeof(*op));
    snprintf(seg.id, sizeof(seg.id), "%s", id);
    seg.ts_given = true;
    seg.ts_ms = ts;
    seg.vec = vecs[v];
    op->kind = MEM_STORE_OP_INSERT;
    snprintf(op->ns, sizeof(op->ns), "n");
    op->dim = DIM;
    op->segs = &seg;
    op->outs = out;
    op->n_segs = 1;
    op->log_stream = stream;
    op->log_seq = seq;
    return store_fixture_run(st, op);
}

static uint64_t count(mem_store_t *st)
{
    mem_store_ns_stats_t s;
    mem_err_t err;
    if (mem_store_ns_stats(st, "n", &s, &err) != MEM_OK) return 0;
    return s.count;
}

static void test_positions(void **state)
{
    mem_store_t *st = open_store();
    mem_store_op_t op;
    mem_store_seg_out_t out;
    assert_int_equal(mem_store_log_applied(st, "s0"), 0);

    assert_int_equal(insert(st, "s0", 1, "a", 0, 1000, &op, &out), MEM_OK);
    assert_false(op.log_skipped);
    assert_int_equal(out.seq, 1);
    assert_int_equal(mem_store_log_applied(st, "s0"), 1);
    assert_int_equal(mem_store_log_applied(st, "s1"), 0);

    /* replay of the same record: skipped, nothing written */
    assert_int_equal(insert(st, "s0", 1, "b", 1, 2000, &op, &out), MEM_OK);
    assert_true(op.log_skipped);
    assert_int_equal(count(st), 1);

    /* a gap is refused and leaves the position alone */
    assert_int_equal(insert(st, "s0", 3, "c", 1, 2000, &op, &out), MEM_EBUSY);
    assert_int_equal(count(st), 1);
    assert_int_equal(mem_store_log_applied(st, "s0"), 1);

    /* a record failing validation still advances the position (same outcome everywhere) */
    assert_int_equal(insert(st, "s0", 2, "d", 1, 500, &op, &out), MEM_ENONMONO);
    assert_int_equal(mem_store_log_applied(st, "s0"), 2);
    assert_int_equal(count(st), 1);

    /* streams are independent; the first record of a stream may start anywhere */
    assert_int_equal(insert(st, "s1", 7, "e", 2, 3000, &op, &out), MEM_OK);
    assert_int_equal(out.seq, 2);
    assert_int_equal(mem_store_log_applied(st, "s1"), 7);

    /* an op without a log position is the single-node path: untouched */
    assert_int_equal(insert(st, NULL, 0, "f", 3, 4000, &op, &out), MEM_OK);
    assert_false(op.log_skipped);
    assert_int_equal(count(st), 3);
    mem_store_close(st);

    /* positions survive a restart; replay from them is exact */
    st = open_store();
    assert_int_equal(mem_store_log_applied(st, "s0"), 2);
    assert_int_equal(mem_store_log_applied(st, "s1"), 7);
    assert_int_equal(insert(st, "s1", 7, "e", 2, 3000, &op, &out), MEM_OK);
    assert_true(op.log_skipped);
    assert_int_equal(insert(st, "s0", 3, "g", 0, 5000, &op, &out), MEM_OK);
    assert_false(op.log_skipped);
    assert_int_equal(count(st), 4);
    mem_store_close(st);
}

/* A snapshot is a consistent copy: a store opened on it has the rows and the positions. */
static void test_snapshot(void **state)
{
    mem_store_t *st = open_store();
    mem_store_op_t op;
    mem_store_seg_out_t out;
    assert_int_equal(insert(st, "s2", 4, "a", 0, 1000, &op, &out), MEM_OK);
    assert_int_equal(insert(st, "s2", 5, "b", 1, 2000, &op, &out), MEM_OK);
    const char *snap = store_fixture_extra("snap.db");
    mem_err_t err;
    assert_int_equal(mem_store_snapshot(st, snap, &err), MEM_OK);
    assert_int_not_equal(mem_store_snapshot(st, snap, &err), MEM_OK);       /* exists: refused */
    assert_int_equal(insert(st, "s2", 6, "c", 2, 3000, &op, &out), MEM_OK); /* after it */
    mem_store_close(st);
    char keep[sizeof(fx_dbpath)];
    snprintf(keep, sizeof(keep), "%s", fx_dbpath);
    snprintf(fx_dbpath, sizeof(fx_dbpath), "%s", snap);
    st = open_store();
    assert_int_equal(mem_store_log_applied(st, "s2"), 5);
    assert_int_equal(count(st), 2);
    /* replay continues right after the snapshot's position */
    assert_int_equal(insert(st, "s2", 6, "c", 2, 3000, &op, &out), MEM_OK);
    assert_false(op.log_skipped);
    assert_int_equal(out.seq, 3);
    mem_store_close(st);
    snprintf(fx_dbpath, sizeof(fx_dbpath), "%s", keep);
}

/* Per-namespace chains: a record names its predecessor; replays are skipped, a missing
 * predecessor is a gap, other namespaces' records of the stream do not count. */
static int chain(mem_store_t *st, const char *ns, uint64_t seq, uint64_t prev, const char *id,
                 int v, int64_t ts, mem_store_op_t *op, mem_store_seg_out_t *out)
{
    static mem_store_seg_in_t seg;
    memset(&seg, 0, sizeof(seg));
    memset(op, 0, sizeof(*op));
    snprintf(seg.id, sizeof(seg.id), "%s", id);
    seg.ts_given = true;
    seg.ts_ms = ts;
    seg.vec = vecs[v];
    op->kind = MEM_STORE_OP_INSERT;
    snprintf(op->ns, sizeof(op->ns), "%s", ns);
    op->dim = DIM;
    op->segs = &seg;
    op->outs = out;
    op->n_segs = 1;
    op->log_stream = "s";
    op->log_seq = seq;
    op->log_chain = true;
    op->log_prev = prev;
    assert_int_equal(mem_store_submit(st, op, NULL, NULL), MEM_OK);
    mem_store_sync(st);
    return op->rc;
}

static void test_chains(void **state)
{
    mem_store_t *st = open_store();
    mem_store_op_t op;
    mem_store_seg_out_t out;
    /* two namespaces interleaved in one stream: 1 (x), 2 (y), 3 (x after 1), 5 (y after 2) */
    assert_int_equal(chain(st, "x", 1, 0, "a", 0, 1000, &op, &out), MEM_OK);
    assert_int_equal(chain(st, "y", 2, 0, "b", 1, 1000, &op, &out), MEM_OK);
    assert_int_equal(chain(st, "x", 3, 1, "c", 2, 2000, &op, &out), MEM_OK);
    assert_int_equal(out.seq, 2);
    assert_int_equal(mem_store_log_ns_applied(st, "x"), 3);
    assert_int_equal(mem_store_log_ns_applied(st, "y"), 2);
    assert_int_equal(mem_store_log_applied(st, "s"), 3); /* the stream's: the highest */
    /* a replay is skipped */
    assert_int_equal(chain(st, "x", 3, 1, "c", 2, 2000, &op, &out), MEM_OK);
    assert_true(op.log_skipped);
    /* y's next names 4, which this store never got: a gap, nothing written */
    assert_int_equal(chain(st, "y", 5, 4, "d", 3, 3000, &op, &out), MEM_EBUSY);
    assert_int_equal(mem_store_log_ns_applied(st, "y"), 2);
    /* a record naming an older predecessor than the last applied one still applies (two
     * records may name the same one: the stream's order decides) */
    assert_int_equal(chain(st, "y", 6, 0, "e", 3, 3000, &op, &out), MEM_OK);
    assert_int_equal(mem_store_log_ns_applied(st, "y"), 6);
    /* a stream position below a namespace's does not make its records replays */
    assert_int_equal(chain(st, "z", 4, 0, "f", 0, 1000, &op, &out), MEM_OK);
    assert_false(op.log_skipped);
    mem_store_close(st);
    st = open_store(); /* positions are durable */
    assert_int_equal(mem_store_log_ns_applied(st, "x"), 3);
    assert_int_equal(mem_store_log_ns_applied(st, "y"), 6);
    assert_int_equal(mem_store_log_ns_applied(st, "z"), 4);
    assert_int_equal(mem_store_log_applied(st, "s"), 6);
    mem_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_positions, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_snapshot, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_chains, store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
