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
#include "tests/unit/sqlite_fault.h"
#include "tests/unit/store_fixture.h"

#define DIM STORE_FIXTURE_LOG_DIM /* the dimension of the fixture's log inserts */

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
    store_fixture_fill_log(a, "moved", 30, "s", 1);
    store_fixture_fill_log(a, "other", 5, "s", 100);
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
    store_fixture_fill_log(b, "moved", 2, "s", 1); /* a stale local copy: replaced whole */
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
    store_fixture_fill_log(b, "moved", 0, "s", 41);
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

/* The incarnation a listing of ns reports; with resume, the listing resumes a page of
 * incarnation want and its code is returned in *rc instead. */
static uint64_t incarnation_of(mem_store_t *st, const char *ns, const uint64_t *want, int *rc)
{
    mem_store_list_req_t req = {.limit = 1, .since_ms = INT64_MIN, .until_ms = INT64_MAX};
    if (want) {
        req.resume = true;
        req.incarnation = *want;
        req.after_seq = 1;
    }
    mem_store_segment_t **segs = NULL;
    size_t n = 0;
    bool more = false;
    mem_store_ns_ident_t id = {0};
    mem_err_t err;
    mem_err_clear(&err);
    int r = mem_store_list(st, ns, &req, &segs, &n, &more, &id, &err);
    if (rc) {
        *rc = r;
        if (r == MEM_EINVAL) assert_string_equal(err.field, "after");
    } else if (r != MEM_OK) {
        fail_msg("list %s: %s", ns, err.msg);
    }
    mem_store_segments_free(segs, n);
    return id.incarnation;
}

/* The identity a listing of ns reports. */
static mem_store_ns_ident_t ident_of(mem_store_t *st, const char *ns)
{
    mem_store_list_req_t req = {.limit = 1, .since_ms = INT64_MIN, .until_ms = INT64_MAX};
    mem_store_segment_t **segs = NULL;
    size_t n = 0;
    bool more = false;
    mem_store_ns_ident_t id = {0};
    mem_err_t err;
    if (mem_store_list(st, ns, &req, &segs, &n, &more, &id, &err) != MEM_OK)
        fail_msg("list %s: %s", ns, err.msg);
    mem_store_segments_free(segs, n);
    return id;
}

/* The code of a listing of ns resuming a page of namespace want (with its creation time when
 * with_created: a cursor of the release before has none). */
static int resume_rc(mem_store_t *st, const char *ns, mem_store_ns_ident_t want, bool with_created)
{
    mem_store_list_req_t req = {.limit = 1, .since_ms = INT64_MIN, .until_ms = INT64_MAX};
    req.resume = true;
    req.after_seq = 1;
    req.incarnation = want.incarnation;
    req.created_known = with_created;
    req.created_ms = want.created_ms;
    mem_store_segment_t **segs = NULL;
    size_t n = 0;
    bool more = false;
    mem_store_ns_ident_t id = {0};
    mem_err_t err;
    mem_err_clear(&err);
    int r = mem_store_list(st, ns, &req, &segs, &n, &more, &id, &err);
    if (r == MEM_EINVAL) assert_string_equal(err.field, "after");
    mem_store_segments_free(segs, n);
    return r;
}

static void drop(mem_store_t *st, const char *ns, uint64_t seq, uint64_t prev)
{
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_NS_DROP;
    snprintf(op.ns, sizeof(op.ns), "%s", ns);
    op.log_stream = seq ? "s" : NULL;
    op.log_seq = seq;
    op.log_chain = seq != 0;
    op.log_prev = prev;
    assert_int_equal(run(st, &op), MEM_OK);
}

/* A namespace's incarnation is the same on every node that applies the records (it comes
 * from the creating record's place in the log), survives a restart and a copy to another
 * node, and is another one when the namespace is deleted and created again: a listing that
 * resumes a page of the old one is refused. */
static void test_incarnation(void **state)
{
    mem_store_t *a = open_at(fx_dbpath), *b = open_at(store_fixture_extra("b.db"));
    store_fixture_fill_log(a, "n", 3, "s", 1); /* the first insert creates it */
    store_fixture_fill_log(b, "n", 3, "s", 1);
    uint64_t first = incarnation_of(a, "n", NULL, NULL);
    assert_true(first != 0);
    assert_true(incarnation_of(b, "n", NULL, NULL) == first);
    int rc = -1;
    incarnation_of(a, "n", &first, &rc);
    assert_int_equal(rc, MEM_OK);
    /* deleted and created again by the next records */
    drop(a, "n", 4, 3);
    store_fixture_fill_log(a, "n", 3, "s", 5);
    uint64_t second = incarnation_of(a, "n", NULL, NULL);
    assert_true(second != 0 && second != first);
    incarnation_of(a, "n", &first, &rc);
    assert_int_equal(rc, MEM_EINVAL);
    incarnation_of(a, "n", &second, &rc);
    assert_int_equal(rc, MEM_OK);
    /* a copy on another node keeps it, and so does a restart */
    const char *file = store_fixture_extra("n.export");
    uint64_t pos = 0, bytes = 0;
    assert_int_equal(mem_store_ns_export(a, "n", file, &pos, &bytes, NULL), MEM_OK);
    mem_store_op_t imp;
    memset(&imp, 0, sizeof(imp));
    imp.kind = MEM_STORE_OP_NS_IMPORT;
    snprintf(imp.ns, sizeof(imp.ns), "n");
    imp.import_path = file;
    imp.log_seq = pos;
    assert_int_equal(run(b, &imp), MEM_OK);
    assert_true(incarnation_of(b, "n", NULL, NULL) == second);
    mem_store_close(b);
    mem_store_close(a);
    a = open_at(fx_dbpath);
    assert_true(incarnation_of(a, "n", NULL, NULL) == second);
    /* without a log (one node) each creation draws its own */
    mem_store_op_t cr;
    memset(&cr, 0, sizeof(cr));
    cr.kind = MEM_STORE_OP_NS_CREATE;
    snprintf(cr.ns, sizeof(cr.ns), "solo");
    cr.dim = DIM;
    assert_int_equal(run(a, &cr), MEM_OK);
    uint64_t s1 = incarnation_of(a, "solo", NULL, NULL);
    drop(a, "solo", 0, 0);
    assert_int_equal(run(a, &cr), MEM_OK);
    uint64_t s2 = incarnation_of(a, "solo", NULL, NULL);
    assert_true(s1 != 0 && s2 != 0 && s1 != s2);
    mem_store_close(a);
}

static bool file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Every SQLite allocation of an export fails in turn (the connection, the ATTACH of the new
 * file, its tables, the copy): the answer is the export or out of memory (a 503 for the
 * client, like every other one), never another error, and a failed export leaves no file. */
static void test_export_out_of_memory(void **state)
{
    mem_store_t *a = open_at(fx_dbpath);
    store_fixture_fill_log(a, "n", 3, "s", 1);
    assert_int_equal(mem_store_settle(a, NULL), MEM_OK);
    const char *file = store_fixture_extra("n.export");
    long n = sqlite_fault_sweeps() ? 1 : 0, failures = 0;
    for (;; n++) {
        uint64_t pos = 0, bytes = 0;
        mem_err_t err;
        mem_err_clear(&err);
        sqlite_fault_arm(n, false);
        int rc = mem_store_ns_export(a, "n", file, &pos, &bytes, &err);
        long failed = sqlite_fault_disarm();
        if (rc != MEM_OK) {
            if (rc != MEM_ENOMEM) print_error("allocation %ld: %d %s\n", n, rc, err.msg);
            assert_int_equal(rc, MEM_ENOMEM);
            if (file_exists(file)) print_error("allocation %ld: %s left behind\n", n, file);
            assert_false(file_exists(file));
            failures++;
            continue;
        }
        /* an allocation SQLite could do without: the export is whole */
        assert_int_equal(pos, 3);
        assert_true(bytes > 0);
        assert_int_equal(store_fixture_sql_int(file, "SELECT count(*) FROM segments"), 3);
        assert_int_equal(store_fixture_sql_int(file, "SELECT pos FROM export"), 3);
        store_fixture_rm_db(file);
        if (!failed) break; /* the nth allocation was never reached: all of them failed once */
    }
    assert_true(failures > 10 || !sqlite_fault_sweeps());
    mem_store_close(a);
}

static int import(mem_store_t *st, const char *ns, const char *path, mem_err_t *err)
{
    mem_store_op_t imp;
    memset(&imp, 0, sizeof(imp));
    imp.kind = MEM_STORE_OP_NS_IMPORT;
    snprintf(imp.ns, sizeof(imp.ns), "%s", ns);
    imp.import_path = path;
    imp.log_seq = 10;
    int rc = run(st, &imp);
    *err = imp.err;
    return rc;
}

/* Every SQLite allocation of an import (on the writer: the checks of the file, the copy,
 * the load) fails in turn: the import is done or refused with out of memory, never with
 * "not an export" (a 400 would tell the sender its good file is bad) or a 500, and a refused
 * one leaves the local copy as it was. Only a file that is not an export gets the 400. */
static void test_import_out_of_memory(void **state)
{
    mem_store_t *a = open_at(fx_dbpath);
    store_fixture_fill_log(a, "n", 3, "s", 1);
    assert_int_equal(mem_store_settle(a, NULL), MEM_OK);
    const char *file = store_fixture_extra("n.export");
    uint64_t pos = 0, bytes = 0;
    assert_int_equal(mem_store_ns_export(a, "n", file, &pos, &bytes, NULL), MEM_OK);
    mem_store_close(a);
    mem_store_t *b = open_at(store_fixture_extra("b.db"));
    store_fixture_fill_log(b, "n", 2, "s", 1); /* the stale local copy the import replaces */
    assert_int_equal(mem_store_settle(b, NULL), MEM_OK);
    uint64_t want = 2; /* what b holds of n: the old copy until an import went through */
    long n = sqlite_fault_sweeps() ? 1 : 0, failures = 0;
    for (;; n++) {
        mem_err_t err;
        sqlite_fault_arm(n, true);
        int rc = import(b, "n", file, &err);
        long failed = sqlite_fault_disarm();
        if (rc != MEM_OK && rc != MEM_ENOMEM)
            print_error("allocation %ld: %d %s\n", n, rc, err.msg);
        assert_true(rc == MEM_OK || rc == MEM_ENOMEM);
        if (rc == MEM_OK)
            want = 3;
        else
            failures++;
        mem_store_ns_stats_t sb;
        stats(b, "n", &sb);
        assert_int_equal(sb.count, want);
        if (rc == MEM_OK) assert_int_equal(mem_store_log_ns_applied(b, "n"), 10);
        if (!failed) break; /* the nth allocation was never reached */
    }
    assert_true(failures > 10 || !sqlite_fault_sweeps());
    /* the same file under another name is not an export of it; out of memory aside, 400 */
    for (n = sqlite_fault_sweeps() ? 1 : 0;; n++) {
        mem_err_t err;
        sqlite_fault_arm(n, true);
        int rc = import(b, "m", file, &err);
        long failed = sqlite_fault_disarm();
        if (!failed) {
            assert_int_equal(rc, MEM_EINVAL);
            assert_non_null(strstr(err.msg, "not an export"));
            break;
        }
        assert_true(rc == MEM_EINVAL || rc == MEM_ENOMEM);
    }
    assert_int_equal(mem_store_ns_stats(b, "m", &(mem_store_ns_stats_t){0}, NULL), MEM_ENOTFOUND);
    mem_store_close(b);
}

/* An older mnemod's copy of a namespace has no incarnation column: imported here the
 * namespace has incarnation 0, while the nodes that applied its creating record have one. A
 * listing page of either is still resumed on the other (the creation times, the creating
 * record's clock, agree), and once the namespace is deleted and created again neither page
 * is (the new namespace has a later creation time and, where the record was applied, another
 * incarnation). */
static void test_incarnation_of_an_older_copy(void **state)
{
    mem_store_t *a = open_at(fx_dbpath), *b = open_at(store_fixture_extra("b.db"));
    store_fixture_fill_log(a, "n", 3, "s", 1);
    const char *file = store_fixture_extra("n.export");
    uint64_t pos = 0, bytes = 0;
    assert_int_equal(mem_store_ns_export(a, "n", file, &pos, &bytes, NULL), MEM_OK);
    /* the export as an older mnemod writes it: namespaces without the incarnation column */
    store_fixture_sql(file, "ALTER TABLE namespaces DROP COLUMN incarnation;");
    mem_store_op_t imp;
    memset(&imp, 0, sizeof(imp));
    imp.kind = MEM_STORE_OP_NS_IMPORT;
    snprintf(imp.ns, sizeof(imp.ns), "n");
    imp.import_path = file;
    imp.log_seq = pos;
    assert_int_equal(run(b, &imp), MEM_OK);
    mem_store_ns_ident_t ia = ident_of(a, "n"), ib = ident_of(b, "n");
    assert_true(ia.incarnation != 0);
    assert_true(ib.incarnation == 0);
    assert_true(ia.created_ms == INT64_C(1780000000001) && ib.created_ms == ia.created_ms);
    /* each resumes the other's page, and its own */
    assert_int_equal(resume_rc(b, "n", ia, true), MEM_OK);
    assert_int_equal(resume_rc(a, "n", ib, true), MEM_OK);
    assert_int_equal(resume_rc(a, "n", ia, true), MEM_OK);
    assert_int_equal(resume_rc(b, "n", ib, true), MEM_OK);
    /* a cursor of the release before (no creation time) compares incarnations as they are */
    assert_int_equal(resume_rc(a, "n", ia, false), MEM_OK);
    assert_int_equal(resume_rc(b, "n", ib, false), MEM_OK);
    assert_int_equal(resume_rc(a, "n", ib, false), MEM_EINVAL);
    /* deleted and created again by the next records, on both */
    drop(a, "n", 4, 3);
    drop(b, "n", 4, 3);
    store_fixture_fill_log(a, "n", 3, "s", 5);
    store_fixture_fill_log(b, "n", 3, "s", 5);
    mem_store_ns_ident_t na = ident_of(a, "n"), nb = ident_of(b, "n");
    assert_true(na.incarnation != 0 && na.incarnation == nb.incarnation);
    assert_true(na.created_ms == INT64_C(1780000000005) && nb.created_ms == na.created_ms);
    for (int k = 0; k < 2; k++) {
        mem_store_t *st = k ? b : a;
        assert_int_equal(resume_rc(st, "n", ia, true), MEM_EINVAL);
        assert_int_equal(resume_rc(st, "n", ib, true), MEM_EINVAL);
        assert_int_equal(resume_rc(st, "n", ia, false), MEM_EINVAL);
        assert_int_equal(resume_rc(st, "n", ib, false), MEM_EINVAL);
        assert_int_equal(resume_rc(st, "n", na, true), MEM_OK);
    }
    /* the copy keeps its creation time across a restart too */
    mem_store_close(b);
    b = open_at(store_fixture_extra("b.db"));
    assert_true(ident_of(b, "n").created_ms == na.created_ms);
    mem_store_close(b);
    mem_store_close(a);
}

/* A namespace replaced by a copy and forgotten, again and again, while the graph's linker
 * thread takes its checkpoints: the writer marks the replaced or forgotten namespace dropped
 * as the linker reads that mark (make tsan saw the writer's plain store race the linker's
 * atomic load). Whatever the timing, the copy and the position are right each time. */
static void test_replace_and_forget_beside_the_linker(void **state)
{
    mem_store_t *a = open_at(fx_dbpath), *b = open_at(store_fixture_extra("b.db"));
    store_fixture_fill_log(a, "n", 12, "s", 1);
    assert_int_equal(mem_store_settle(a, NULL), MEM_OK);
    const char *file = store_fixture_extra("n.export");
    uint64_t pos = 0, bytes = 0;
    assert_int_equal(mem_store_ns_export(a, "n", file, &pos, &bytes, NULL), MEM_OK);
    for (int round = 0; round < 20; round++) {
        store_fixture_fill_log(
            b, "n", 3, "s", 1); /* a local copy with graph work pending, replaced by the import */
        mem_store_op_t imp;
        memset(&imp, 0, sizeof(imp));
        imp.kind = MEM_STORE_OP_NS_IMPORT;
        snprintf(imp.ns, sizeof(imp.ns), "n");
        imp.import_path = file;
        imp.log_seq = pos;
        assert_int_equal(run(b, &imp), MEM_OK);
        mem_store_ns_stats_t s;
        stats(b, "n", &s);
        assert_int_equal(s.count, 12);
        assert_int_equal(mem_store_log_ns_applied(b, "n"), pos);
        mem_store_op_t fg;
        memset(&fg, 0, sizeof(fg));
        fg.kind = MEM_STORE_OP_NS_FORGET;
        snprintf(fg.ns, sizeof(fg.ns), "n");
        assert_int_equal(run(b, &fg), MEM_OK);
        assert_int_equal(mem_store_ns_stats(b, "n", &s, NULL), MEM_ENOTFOUND);
        assert_int_equal(mem_store_log_ns_applied(b, "n"), 0);
    }
    mem_store_close(b);
    mem_store_close(a);
}

int main(void)
{
    if (sqlite_fault_install() != 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_out_of_memory, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_import_out_of_memory, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_replace_and_forget_beside_the_linker,
                                        store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_incarnation_of_an_older_copy, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_incarnation, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_export_import, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
