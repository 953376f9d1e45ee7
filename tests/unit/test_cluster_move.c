/* test_cluster_move.c - a namespace's copy on a node across moves (placed elsewhere,
 * forgotten, placed here again), and writes past their deadline. cluster/ is linked into the
 * server only: the whole module is compiled in here (but status.c, which nothing here calls),
 * over a real store; nothing talks to NATS.
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

#include "cluster/cluster.c"
#include "cluster/fetch.c"
#include "cluster/json.c"
#include "cluster/move.c"
#include "cluster/placemap.c"
#include "cluster/placement.c"
#include "cluster/record.c"
#include "cluster/snap.c"
#include "cluster/write.c"

#ifdef MNEMOD_HAVE_NATS

#define STORE_FIXTURE_TAG "clmove"
#include "tests/unit/store_fixture.h"

/* The placement entry {"ns": ns, "nodes": [node]} at revision rev, as the map watcher
 * delivers it. */
static void place(mem_cluster_t *cl, const char *ns, const char *node, uint64_t rev)
{
    char val[200];
    int len =
        snprintf(val, sizeof(val), "{\"ns\":\"%s\",\"stream\":0,\"nodes\":[\"%s\"]}", ns, node);
    char key[100] = "ns.";
    mem_cluster__hex(ns, key + 3, sizeof(key) - 3);
    apply_entry(cl, key, val, len, rev, false);
}

/* Moved away, and placed here again while the forget of the copy was under way (the map
 * watcher and the maintenance thread race): the copy the catch-up set out from is gone once
 * the forget has run, so its position must be what the store holds then, and the namespace
 * caught up again from there, not served from a position whose rows were dropped. */
static void test_placed_again_while_forgotten(void **state)
{
    mem_store_opts_t o = store_fixture_opts();
    o.path = fx_dbpath;
    mem_store_t *st = store_fixture_open(&o);
    store_fixture_fill_log(st, "x", 3, "MNEMOD_0", 1);
    assert_int_equal(mem_store_log_ns_applied(st, "x"), 3);

    static mem_cfg_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    snprintf(cfg.node_id, sizeof(cfg.node_id), "b");
    cfg.cluster_write_timeout_s = 1;
    mem_cluster_t *cl = calloc(1, sizeof(*cl));
    assert_non_null(cl);
    cl->cfg = &cfg;
    cl->st = st;
    cl->k = 1;
    cl->streams = calloc(1, sizeof(*cl->streams));
    assert_non_null(cl->streams);
    snprintf(cl->streams[0].name, sizeof(cl->streams[0].name), "MNEMOD_0");
    pthread_mutex_init(&cl->mu, NULL);
    pthread_cond_init(&cl->cv, NULL);

    place(cl, "x", "b", 1); /* placed here: caught up from the store's position, then live */
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, "x");
    assert_non_null(ns);
    assert_int_equal(ns->state, CL_NS_CATCHUP);
    assert_int_equal(ns->applied, 3);
    cl->cu_head = cl->cu_tail = NULL; /* no catch-up worker here: it would have gone live */
    ns->cu_queued = false;
    ns->state = CL_NS_LIVE;
    ns->verified = true;
    pthread_mutex_unlock(&cl->mu);

    place(cl, "x", "c", 2); /* moved to c: leaving, then forgotten */
    pthread_mutex_lock(&cl->mu);
    assert_int_equal(ns->state, CL_NS_LEAVING);
    ns->forgetting = true; /* what placement_tick marks before it runs the forget */
    pthread_mutex_unlock(&cl->mu);
    place(cl, "x", "b", 3); /* moved back before the forget ran */
    pthread_mutex_lock(&cl->mu);
    assert_int_equal(ns->state, CL_NS_CATCHUP);
    cl->cu_head = cl->cu_tail = NULL;
    ns->cu_queued = false;
    pthread_mutex_unlock(&cl->mu);

    forget(cl, "x"); /* the store drops the copy and its position */
    assert_int_equal(mem_store_log_ns_applied(st, "x"), 0);
    mem_store_ns_stats_t stats;
    assert_int_equal(mem_store_ns_stats(st, "x", &stats, NULL), MEM_ENOTFOUND);
    pthread_mutex_lock(&cl->mu);
    assert_int_equal(ns->state, CL_NS_CATCHUP);
    assert_int_equal(ns->applied, 0); /* not the 3 of the dropped copy */
    assert_int_equal(ns->submitted, 0);
    assert_false(ns->verified);
    assert_true(ns->cu_queued); /* caught up again, from the log (or a snapshot) */
    pthread_mutex_unlock(&cl->mu);

    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *e = cl->ht[b]; e;) {
            cl_ns_t *next = e->hnext;
            free(e);
            e = next;
        }
    pthread_mutex_destroy(&cl->mu);
    pthread_cond_destroy(&cl->cv);
    free(cl->streams);
    free(cl);
    mem_store_close(st);
}

/* A write past --cluster-write-timeout: one the log took but this node had not applied is
 * answered 504 write_timeout without Retry-After (clients retry a 503, and this one will be
 * applied: sent again, an insert without ids would be stored twice); one being published
 * stays with its publisher; one applied keeps its answer. */
static void test_expired_writes(void **state)
{
    (void)state;
    mem_cluster_t *cl = calloc(1, sizeof(*cl));
    assert_non_null(cl);
    pthread_mutex_init(&cl->mu, NULL);
    cl_job_t logged = {.acked = true, .seq = 42, .waiting = true};
    cl_job_t publishing = {.acked = false, .waiting = true};
    cl_job_t applied = {.acked = true, .applied = true, .seq = 43, .waiting = true};
    logged.wnext = &publishing;
    publishing.wnext = &applied;
    cl->waiters = &logged;
    cl_job_t *out = mem_cluster__jobs_expired(cl, 1000);
    assert_ptr_equal(cl->waiters, &publishing); /* its publisher keeps its own deadline */
    assert_null(publishing.wnext);
    size_t n = 0;
    for (cl_job_t *j = out; j; j = j->wnext) {
        assert_true(j == &logged || j == &applied);
        assert_false(j->waiting);
        n++;
    }
    assert_int_equal(n, 2);
    assert_int_equal(logged.rc, MEM_EWRITETIME);
    assert_int_equal(logged.err.retry_after_s, 0);
    assert_non_null(strstr(logged.err.msg, "(seq 42)"));
    assert_non_null(strstr(logged.err.msg, "do not send it again"));
    assert_int_equal(applied.rc, MEM_OK);
    assert_int_equal(cl->n_apply_timeouts, 1);
    pthread_mutex_destroy(&cl->mu);
    free(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_placed_again_while_forgotten, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test(test_expired_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

int main(void)
{
    printf("1..0 # SKIP built without libnats: cluster/ is stubs\n");
    return 0;
}

#endif
