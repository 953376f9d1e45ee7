/* test_storage_nssnap.c - one namespace exported alone and imported elsewhere: same rows, same
 * answers, its chain position, nothing of other namespaces; forget drops it and its position.
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

#define STORE_FIXTURE_TAG "nssnap"
#include "tests/unit/store_fixture.h"

#define DIM 4

static mem_store_t *open_at(const char *path)
{
    mem_store_opts_t o = store_fixture_opts();
    o.path = path;
    return store_fixture_open(&o);
}

static int run(mem_store_t *st, mem_store_op_t *op)
{
    assert_int_equal(mem_store_submit(st, op, NULL, NULL), MEM_OK);
    mem_store_sync(st);
    return op->rc;
}

/* n segments into ns as chain records of stream "s" from seq0 on. */
static void fill(mem_store_t *st, const char *ns, int n, uint64_t seq0)
{
    for (int i = 0; i < n; i++) {
        float v[DIM] = {1.0f, (float)i / 10.0f, (float)(i % 3), 0.5f};
        float norm = 0;
        for (int k = 0; k < DIM; k++)
            norm += v[k] * v[k];
        for (int k = 0; k < DIM; k++)
            v[k] /= __builtin_sqrtf(norm);
        mem_store_seg_in_t seg;
        mem_store_seg_out_t out;
        memset(&seg, 0, sizeof(seg));
        snprintf(seg.id, sizeof(seg.id), "%s-%d", ns, i);
        seg.ts_given = true;
        seg.ts_ms = 1000 + i;
        seg.vec = v;
        seg.text = "some text";
        seg.text_len = 9;
        mem_store_op_t op;
        memset(&op, 0, sizeof(op));
        op.kind = MEM_STORE_OP_INSERT;
        snprintf(op.ns, sizeof(op.ns), "%s", ns);
        op.dim = DIM;
        op.segs = &seg;
        op.outs = &out;
        op.n_segs = 1;
        op.log_stream = "s";
        op.log_seq = seq0 + (uint64_t)i;
        op.log_chain = true;
        op.log_prev = i ? seq0 + (uint64_t)i - 1 : 0;
        if (run(st, &op) != MEM_OK) fail_msg("%s #%d: %s", ns, i, op.err.msg);
    }
}

static void stats_at(mem_store_t *st, const char *ns, mem_store_ns_stats_t *s, int line)
{
    mem_err_t err;
    if (mem_store_ns_stats(st, ns, s, &err) != MEM_OK) fail_msg("line %d: %s", line, err.msg);
}
#define stats(st, ns, s) stats_at(st, ns, s, __LINE__)

/* top ids of a query, for comparing two stores */
static void top(mem_store_t *st, const char *ns, char out[][64], size_t *n)
{
    float q[DIM] = {0.8f, 0.6f, 0, 0};
    mem_store_query_t qu;
    memset(&qu, 0, sizeof(qu));
    qu.scan.query = q;
    qu.scan.k = 5;
    qu.q_dim = DIM;
    mem_store_result_t *res = NULL;
    size_t scanned = 0;
    const char *kernel = NULL;
    mem_err_t err;
    assert_int_equal(mem_store_retrieve(st, ns, &qu, &res, n, &scanned, &kernel, &err), MEM_OK);
    for (size_t i = 0; i < *n; i++)
        snprintf(out[i], 64, "%s", res[i].id);
    mem_store_results_free(res, *n);
}

static void test_export_import(void **state)
{
    mem_store_t *a = open_at(fx_dbpath);
    fill(a, "moved", 30, 1);
    fill(a, "other", 5, 100);
    mem_store_op_t del;
    memset(&del, 0, sizeof(del));
    del.kind = MEM_STORE_OP_DELETE;
    snprintf(del.ns, sizeof(del.ns), "moved");
    snprintf(del.id, sizeof(del.id), "moved-3");
    del.log_stream = "s";
    del.log_seq = 31;
    del.log_chain = true;
    del.log_prev = 30;
    assert_int_equal(run(a, &del), MEM_OK);
    /* the graph is the linker's: compare graphs once it caught up */
    assert_int_equal(mem_store_settle(a, NULL), MEM_OK);
    const char *file = store_fixture_extra("moved.export");
    uint64_t pos = 0, bytes = 0;
    mem_err_t err;
    assert_int_equal(mem_store_ns_export(a, "moved", file, &pos, &bytes, &err), MEM_OK);
    assert_int_equal(pos, 31);
    assert_true(bytes > 0);
    assert_int_equal(
        mem_store_ns_export(a, "missing", store_fixture_extra("x.export"), &pos, &bytes, &err),
        MEM_ENOTFOUND);

    mem_store_t *b = open_at(store_fixture_extra("b.db"));
    fill(b, "moved", 2, 1); /* a stale local copy: replaced whole */
    mem_store_op_t imp;
    memset(&imp, 0, sizeof(imp));
    imp.kind = MEM_STORE_OP_NS_IMPORT;
    snprintf(imp.ns, sizeof(imp.ns), "moved");
    imp.import_path = file;
    imp.log_seq = 40; /* the covered position the snapshot stands for */
    assert_int_equal(run(b, &imp), MEM_OK);
    mem_store_ns_stats_t sa, sb;
    /* a read that needs the graph gets it: the copy's graph work went to the linker */
    assert_int_equal(mem_store_ns_stats_exact(b, "moved", &sb, &err), MEM_OK);
    assert_int_equal(mem_store_settle(b, NULL), MEM_OK);
    stats(a, "moved", &sa);
    stats(b, "moved", &sb);
    assert_int_equal(sb.count, 29);
    assert_int_equal(sa.count, sb.count);
    assert_int_equal(sa.dim, sb.dim);
    assert_true(sa.oldest_ms == sb.oldest_ms && sa.newest_ms == sb.newest_ms);
    assert_int_equal(sa.graph_edges, sb.graph_edges);
    assert_int_equal(sa.max_degree, sb.max_degree);
    assert_int_equal(mem_store_log_ns_applied(b, "moved"), 40);
    assert_int_not_equal(mem_store_ns_stats(b, "other", &sb, &err), MEM_OK); /* not copied */
    char ta[5][64], tb[5][64];
    size_t na, nb;
    top(a, "moved", ta, &na);
    top(b, "moved", tb, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_string_equal(ta[i], tb[i]);
    mem_store_segment_t *seg = NULL;
    assert_int_equal(mem_store_get(b, "moved", "moved-7", false, &seg, &err), MEM_OK);
    assert_string_equal(seg->text, "some text");
    assert_int_equal(seg->seq, 8);
    mem_store_segment_free(seg);
    assert_int_equal(mem_store_get(b, "moved", "moved-3", false, &seg, &err), MEM_ENOTFOUND);
    /* the chain goes on after the import */
    fill(b, "moved", 0, 41);
    mem_store_close(b);
    b = open_at(store_fixture_extra("b.db") - 0); /* reopen: durable */
    mem_store_close(b);

    /* a file that is not an export of that namespace is refused, nothing changes */
    memset(&imp, 0, sizeof(imp));
    imp.kind = MEM_STORE_OP_NS_IMPORT;
    snprintf(imp.ns, sizeof(imp.ns), "other");
    imp.import_path = file;
    assert_int_equal(run(a, &imp), MEM_EINVAL);
    stats(a, "other", &sa);
    assert_int_equal(sa.count, 5);

    /* forget: rows and chain position go, other namespaces stay */
    mem_store_op_t fg;
    memset(&fg, 0, sizeof(fg));
    fg.kind = MEM_STORE_OP_NS_FORGET;
    snprintf(fg.ns, sizeof(fg.ns), "moved");
    assert_int_equal(run(a, &fg), MEM_OK);
    assert_int_equal(mem_store_ns_stats(a, "moved", &sa, &err), MEM_ENOTFOUND);
    assert_int_equal(mem_store_log_ns_applied(a, "moved"), 0);
    stats(a, "other", &sa);
    assert_int_equal(sa.count, 5);
    mem_store_close(a);
    a = open_at(fx_dbpath);
    assert_int_equal(mem_store_ns_stats(a, "moved", &sa, &err), MEM_ENOTFOUND);
    assert_int_equal(mem_store_log_ns_applied(a, "other"), 104);
    mem_store_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_import, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
