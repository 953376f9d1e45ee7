/* test_cluster_record.c - a write op survives the log record encoding exactly; bad bytes are
 * refused. cluster/ is linked into the server only, so the codec is compiled in here.
 * SPDX-License-Identifier: MIT
 */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

/* record.c's allocations go through these, so a test can fail the nth (armed only) */
static long rec_fail_at, rec_counted, rec_n_failed;
static bool rec_armed;
static bool rec_fail_now(void)
{
    if (!rec_armed || ++rec_counted != rec_fail_at) return false;
    rec_n_failed++;
    return true;
}
static void *rec_malloc(size_t n)
{
    return rec_fail_now() ? NULL : malloc(n);
}
static void *rec_calloc(size_t n, size_t size)
{
    return rec_fail_now() ? NULL : calloc(n, size);
}
static void *rec_realloc(void *p, size_t n)
{
    return rec_fail_now() ? NULL : realloc(p, n);
}
#define malloc(n)     rec_malloc(n)
#define calloc(n, s)  rec_calloc(n, s)
#define realloc(p, n) rec_realloc(p, n)
#include "cluster/record.c"
#undef malloc
#undef calloc
#undef realloc

static void test_insert_round_trip(void **state)
{
    float v[2][3] = {{0.6f, 0.8f, 0.0f}, {0.0f, -1.0f, 1e-30f}};
    const char *sup[] = {"a", "bb"};
    mem_store_seg_in_t segs[2];
    mem_store_seg_out_t outs[2];
    memset(segs, 0, sizeof(segs));
    snprintf(segs[0].id, sizeof(segs[0].id), "first");
    segs[0].ts_given = true;
    segs[0].ts_ms = -5;
    segs[0].text = "h\0llo"; /* lengths, not NULs, delimit */
    segs[0].text_len = 5;
    segs[0].vec = v[0];
    snprintf(segs[1].id, sizeof(segs[1].id), "second");
    segs[1].source = "src";
    segs[1].source_len = 3;
    segs[1].metadata = "{\"k\":1}";
    segs[1].metadata_len = 7;
    segs[1].supersedes = sup;
    segs[1].n_supersedes = 2;
    segs[1].vec = v[1];
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_INSERT;
    snprintf(op.ns, sizeof(op.ns), "ns.1");
    op.dim = 3;
    op.now_ms = 1234567890123;
    op.segs = segs;
    op.outs = outs;
    op.n_segs = 2;
    op.batch = true;
    op.embedder = "openai:text-embedding-3-small";
    size_t len = 0;
    unsigned char *buf = mem_cluster_rec_encode(&op, "node-1", &len);
    assert_non_null(buf);
    mem_cluster_rec_t *r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_string_equal(r->msgid, "node-1");
    assert_int_equal(r->op.kind, MEM_STORE_OP_INSERT);
    assert_string_equal(r->op.ns, "ns.1");
    assert_int_equal(r->op.dim, 3);
    assert_int_equal(r->op.now_ms, 1234567890123);
    assert_true(r->op.batch);
    assert_string_equal(r->op.embedder, "openai:text-embedding-3-small");
    assert_int_equal(r->op.n_segs, 2);
    assert_non_null(r->op.outs);
    assert_null(r->op.log_stream);
    const mem_store_seg_in_t *a = &r->op.segs[0], *b = &r->op.segs[1];
    assert_string_equal(a->id, "first");
    assert_true(a->ts_given);
    assert_int_equal(a->ts_ms, -5);
    assert_int_equal(a->text_len, 5);
    assert_memory_equal(a->text, "h\0llo", 5);
    assert_null(a->source);
    assert_null(a->metadata);
    assert_int_equal(a->n_supersedes, 0);
    assert_memory_equal(a->vec, v[0], sizeof(v[0]));
    assert_string_equal(b->id, "second");
    assert_false(b->ts_given);
    assert_null(b->text);
    assert_int_equal(b->source_len, 3);
    assert_memory_equal(b->source, "src", 3);
    assert_int_equal(b->metadata_len, 7);
    assert_memory_equal(b->metadata, "{\"k\":1}", 7);
    assert_int_equal(b->n_supersedes, 2);
    assert_string_equal(b->supersedes[0], "a");
    assert_string_equal(b->supersedes[1], "bb");
    assert_memory_equal(b->vec, v[1], sizeof(v[1]));
    /* the payload copy is owned: the caller's buffer may go away */
    memset(buf, 0, len);
    assert_string_equal(r->op.segs[1].supersedes[1], "bb");
    mem_cluster_rec_free(r);
    free(buf);
}

static void test_other_kinds(void **state)
{
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_DELETE;
    snprintf(op.ns, sizeof(op.ns), "n");
    snprintf(op.id, sizeof(op.id), "gone");
    size_t len;
    unsigned char *buf = mem_cluster_rec_encode(&op, "m", &len);
    mem_cluster_rec_t *r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_int_equal(r->op.kind, MEM_STORE_OP_DELETE);
    assert_string_equal(r->op.id, "gone");
    assert_null(r->op.embedder);
    mem_cluster_rec_free(r);
    free(buf);

    const char *ev[] = {"x", "y", "z"};
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_COMPACT;
    snprintf(op.ns, sizeof(op.ns), "n");
    op.evict_ids = ev;
    op.n_evict = 3;
    op.purge = true;
    buf = mem_cluster_rec_encode(&op, "m", &len);
    r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_int_equal(r->op.kind, MEM_STORE_OP_COMPACT);
    assert_true(r->op.purge);
    assert_int_equal(r->op.n_evict, 3);
    assert_string_equal(r->op.evict_ids[2], "z");
    mem_cluster_rec_free(r);
    free(buf);

    /* PATCH: metadata replaced, source cleared (given, NULL), then only the source */
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_PATCH;
    snprintf(op.ns, sizeof(op.ns), "n");
    snprintf(op.id, sizeof(op.id), "seg-1");
    op.patch_metadata = op.patch_source = true;
    op.metadata = "{\"user\":\"ana\"}";
    op.metadata_len = strlen(op.metadata);
    buf = mem_cluster_rec_encode(&op, "m", &len);
    r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_int_equal(r->op.kind, MEM_STORE_OP_PATCH);
    assert_string_equal(r->op.id, "seg-1");
    assert_true(r->op.patch_metadata);
    assert_true(r->op.patch_source);
    assert_int_equal(r->op.metadata_len, op.metadata_len);
    assert_string_equal(r->op.metadata, op.metadata);
    assert_null(r->op.source);
    mem_cluster_rec_free(r);
    free(buf);
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_PATCH;
    snprintf(op.ns, sizeof(op.ns), "n");
    snprintf(op.id, sizeof(op.id), "seg-2");
    op.patch_source = true;
    op.source = "ops";
    op.source_len = 3;
    buf = mem_cluster_rec_encode(&op, "m", &len);
    r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_false(r->op.patch_metadata);
    assert_null(r->op.metadata);
    assert_string_equal(r->op.source, "ops");
    assert_int_equal(r->op.source_len, 3);
    buf[len - 1] = 'x'; /* a string without its NUL */
    mem_cluster_rec_t *bad = mem_cluster_rec_decode(buf, len);
    assert_null(bad);
    mem_cluster_rec_free(r);
    free(buf);

    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_NS_CREATE;
    snprintf(op.ns, sizeof(op.ns), "made");
    op.dim = 4096;
    op.now_ms = 77;
    buf = mem_cluster_rec_encode(&op, "m", &len);
    r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_int_equal(r->op.kind, MEM_STORE_OP_NS_CREATE);
    assert_int_equal(r->op.dim, 4096);
    assert_int_equal(r->op.now_ms, 77);
    assert_false(r->op.no_graph);
    mem_cluster_rec_free(r);
    free(buf);
    op.no_graph = true; /* "coherence": false replicates as it is */
    buf = mem_cluster_rec_encode(&op, "m", &len);
    r = mem_cluster_rec_decode(buf, len);
    assert_non_null(r);
    assert_true(r->op.no_graph);
    mem_cluster_rec_free(r);
    free(buf);
}

/* Every truncation and a sample of corruptions of a valid record: refused or decoded, never
 * a crash (run under ASan); truncations are always refused. */
static void test_bad_bytes(void **state)
{
    float v[2] = {1.0f, 0.0f};
    const char *sup[] = {"p"};
    mem_store_seg_in_t seg;
    memset(&seg, 0, sizeof(seg));
    snprintf(seg.id, sizeof(seg.id), "i");
    seg.text = "t";
    seg.text_len = 1;
    seg.supersedes = sup;
    seg.n_supersedes = 1;
    seg.vec = v;
    mem_store_seg_out_t out;
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_INSERT;
    snprintf(op.ns, sizeof(op.ns), "n");
    op.dim = 2;
    op.segs = &seg;
    op.outs = &out;
    op.n_segs = 1;
    size_t len;
    unsigned char *buf = mem_cluster_rec_encode(&op, "m", &len);
    for (size_t cut = 0; cut < len; cut++)
        assert_null(mem_cluster_rec_decode(buf, cut));
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, buf, len);
    longer[len] = 0;
    assert_null(mem_cluster_rec_decode(longer, len + 1)); /* trailing bytes */
    free(longer);
    unsigned char *bad = malloc(len);
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, buf, len);
            bad[i] ^= (unsigned char)(1u << bit);
            mem_cluster_rec_free(mem_cluster_rec_decode(bad, len));
        }
    free(bad);
    assert_null(mem_cluster_rec_decode("MNR0", 4));
    free(buf);
}

/* mem_cluster_rec_size is the encoder's exact length (the payload limit is checked with it
 * before anything is encoded); local op kinds are never encoded. */
static void test_size_and_local_kinds(void **state)
{
    float v[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
    const char *sup[] = {"a", "bcd"};
    mem_store_seg_in_t segs[3];
    mem_store_seg_out_t outs[3];
    memset(segs, 0, sizeof(segs));
    for (int i = 0; i < 3; i++) {
        snprintf(segs[i].id, sizeof(segs[i].id), "id-%d", i * 1000);
        segs[i].vec = v[i];
    }
    segs[1].text = "some text";
    segs[1].text_len = 9;
    segs[2].metadata = "{}";
    segs[2].metadata_len = 2;
    segs[2].source = "s";
    segs[2].source_len = 1;
    segs[2].supersedes = sup;
    segs[2].n_supersedes = 2;
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_INSERT;
    snprintf(op.ns, sizeof(op.ns), "size-ns");
    op.dim = 4;
    op.segs = segs;
    op.outs = outs;
    const char *ids[] = {"x", "yy"};
    for (size_t n = 1; n <= 3; n++) {
        op.n_segs = n;
        size_t len;
        unsigned char *buf = mem_cluster_rec_encode(&op, "msg-id-1", &len);
        assert_non_null(buf);
        assert_int_equal(mem_cluster_rec_size(&op, 8), len);
        free(buf);
    }
    mem_store_op_t other[3];
    memset(other, 0, sizeof(other));
    other[0].kind = MEM_STORE_OP_DELETE;
    snprintf(other[0].id, sizeof(other[0].id), "gone");
    other[1].kind = MEM_STORE_OP_COMPACT;
    other[1].evict_ids = ids;
    other[1].n_evict = 2;
    other[2].kind = MEM_STORE_OP_NS_DROP;
    for (int i = 0; i < 3; i++) {
        snprintf(other[i].ns, sizeof(other[i].ns), "n%d", i);
        size_t len;
        unsigned char *buf = mem_cluster_rec_encode(&other[i], "m", &len);
        assert_non_null(buf);
        assert_int_equal(mem_cluster_rec_size(&other[i], 1), len);
        free(buf);
    }
    mem_store_op_t local;
    memset(&local, 0, sizeof(local));
    snprintf(local.ns, sizeof(local.ns), "n");
    size_t len = 0;
    local.kind = MEM_STORE_OP_IMPORT; /* an import without its staged segments */
    assert_null(mem_cluster_rec_encode(&local, "m", &len));
    /* a PATCH's size is its encoding's too, and it is wire kind 5 */
    mem_store_op_t pt;
    memset(&pt, 0, sizeof(pt));
    pt.kind = MEM_STORE_OP_PATCH;
    snprintf(pt.ns, sizeof(pt.ns), "n");
    snprintf(pt.id, sizeof(pt.id), "seg");
    pt.patch_metadata = pt.patch_source = true;
    pt.metadata = "{\"a\":1}";
    pt.metadata_len = 7;
    unsigned char *pb = mem_cluster_rec_encode(&pt, "mm", &len);
    assert_non_null(pb);
    assert_int_equal(mem_cluster_rec_size(&pt, 2), len);
    assert_int_equal(pb[4], 5);
    free(pb);
    local.kind = MEM_STORE_OP_NS_IMPORT;
    assert_null(mem_cluster_rec_encode(&local, "m", &len));
    local.kind = MEM_STORE_OP_NS_FORGET;
    assert_null(mem_cluster_rec_encode(&local, "m", &len));
    /* the wire kind of a record is stable: 2 is an insert, whatever the enum order */
    op.n_segs = 1;
    unsigned char *buf = mem_cluster_rec_encode(&op, "m", &len);
    assert_int_equal(buf[4], 2);
    buf[4] = 9; /* unknown kinds are refused */
    assert_null(mem_cluster_rec_decode(buf, len));
    free(buf);
}

/* An import's segments as the api/ stage hands them over: an array read in order. */
typedef struct mem_src {
    const mem_store_seg_in_t *segs;
    const bool *archived;
    const uint64_t *lines;
    size_t n, at;
} mem_src_t;

static int msrc_rewind(void *ud)
{
    ((mem_src_t *)ud)->at = 0;
    return MEM_OK;
}

static int msrc_next(void *ud, mem_store_seg_in_t *seg, bool *archived, uint64_t *line)
{
    mem_src_t *m = ud;
    if (m->at >= m->n) return 0;
    *seg = m->segs[m->at];
    *archived = m->archived[m->at];
    *line = m->lines[m->at];
    m->at++;
    return 1;
}

/* An IMPORT is one record (wire kind 6) carrying every segment with its archived flag and
 * line; read back it is an import source again, with the earlier-line lookup. */
static void test_import_round_trip(void **state)
{
    float v[3][2] = {{1, 0}, {0, 1}, {0.6f, 0.8f}};
    const char *sup[] = {"a"};
    mem_store_seg_in_t segs[3];
    memset(segs, 0, sizeof(segs));
    for (int i = 0; i < 3; i++) {
        snprintf(segs[i].id, sizeof(segs[i].id), "%c", 'a' + i);
        segs[i].vec = v[i];
        segs[i].ts_given = true;
        segs[i].ts_ms = 1000 + i;
    }
    segs[1].text = "two";
    segs[1].text_len = 3;
    segs[1].metadata = "{\"k\":1}";
    segs[1].metadata_len = 7;
    segs[2].supersedes = sup;
    segs[2].n_supersedes = 1;
    bool archived[3] = {true, false, false};
    uint64_t lines[3] = {1, 2, 4};
    mem_src_t m = {segs, archived, lines, 3, 0};
    mem_store_import_src_t src = {
        .ud = &m, .dim = 2, .rewind = msrc_rewind, .next = msrc_next, .has_id_before = NULL};
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_IMPORT;
    snprintf(op.ns, sizeof(op.ns), "imp");
    op.dim = 2;
    op.now_ms = 77;
    op.import = &src;
    size_t len = 0;
    unsigned char *buf = mem_cluster_rec_encode(&op, "m-1", &len);
    assert_non_null(buf);
    assert_int_equal(buf[4], 6);
    assert_int_equal(mem_cluster_rec_size(&op, 3), len);
    mem_cluster_rec_t *rec = mem_cluster_rec_decode(buf, len);
    assert_non_null(rec);
    assert_int_equal(rec->op.kind, MEM_STORE_OP_IMPORT);
    assert_int_equal(rec->op.now_ms, 77);
    assert_int_equal(rec->op.n_segs, 0); /* read through the source only */
    mem_store_import_src_t *back = rec->op.import;
    assert_non_null(back);
    assert_int_equal(back->dim, 2);
    for (int pass = 0; pass < 2; pass++) { /* the writer reads an import twice */
        assert_int_equal(back->rewind(back->ud), MEM_OK);
        mem_store_seg_in_t seg;
        bool arch;
        uint64_t line;
        for (int i = 0; i < 3; i++) {
            assert_int_equal(back->next(back->ud, &seg, &arch, &line), 1);
            assert_string_equal(seg.id, segs[i].id);
            assert_int_equal(seg.ts_ms, segs[i].ts_ms);
            assert_true(seg.ts_given);
            assert_int_equal(arch, archived[i]);
            assert_int_equal(line, lines[i]);
            assert_int_equal(seg.n_supersedes, segs[i].n_supersedes);
            assert_memory_equal(seg.vec, v[i], sizeof(v[i]));
            assert_int_equal(seg.text_len, segs[i].text_len);
            assert_int_equal(seg.metadata_len, segs[i].metadata_len);
        }
        assert_string_equal(back->next(back->ud, &seg, &arch, &line) == 0 ? "end" : "more", "end");
    }
    assert_true(back->has_id_before(back->ud, "a", 2));
    assert_false(back->has_id_before(back->ud, "a", 1)); /* not before its own line */
    assert_false(back->has_id_before(back->ud, "c", 4));
    assert_false(back->has_id_before(back->ud, "zz", 9));
    mem_cluster_rec_free(rec);
    for (size_t cut = 0; cut < len; cut++)
        assert_null(mem_cluster_rec_decode(buf, cut));
    free(buf);
    (void)state;
}

/* Every allocation of a read fails in turn: the record is read whole or the read is out of
 * memory, never "not a record" (the fetcher would apply a well-formed write as an empty
 * insert here, while the other nodes apply it). */
static void test_read_out_of_memory(void **state)
{
    (void)state;
    float v[2][3] = {{0.6f, 0.8f, 0.0f}, {0.0f, -1.0f, 0.0f}};
    const char *sup[] = {"first"};
    mem_store_seg_in_t segs[2];
    mem_store_seg_out_t outs[2];
    memset(segs, 0, sizeof(segs));
    snprintf(segs[0].id, sizeof(segs[0].id), "first");
    segs[0].text = "hello";
    segs[0].text_len = 5;
    segs[0].vec = v[0];
    snprintf(segs[1].id, sizeof(segs[1].id), "second");
    segs[1].supersedes = sup;
    segs[1].n_supersedes = 1;
    segs[1].vec = v[1];
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_INSERT;
    snprintf(op.ns, sizeof(op.ns), "ns.1");
    op.dim = 3;
    op.segs = segs;
    op.outs = outs;
    op.n_segs = 2;
    size_t len = 0;
    unsigned char *buf = mem_cluster_rec_encode(&op, "node-1", &len);
    assert_non_null(buf);
    long ooms = 0;
    for (long n = 1;; n++) {
        mem_cluster_rec_t *r = NULL;
        rec_fail_at = n;
        rec_counted = rec_n_failed = 0;
        rec_armed = true;
        int rc = mem_cluster_rec_read(buf, len, &r);
        rec_armed = false;
        if (rc == MEM_OK) {
            assert_int_equal(r->op.n_segs, 2);
            assert_string_equal(r->op.segs[1].supersedes[0], "first");
            assert_memory_equal(r->op.segs[0].text, "hello", 5);
        } else {
            assert_int_equal(rc, MEM_ENOMEM);
            assert_null(r);
            ooms++;
        }
        mem_cluster_rec_free(r);
        if (!rec_n_failed) break;
    }
    assert_true(ooms >= 5);
    /* the same bytes cut short are not a record, with memory to spare */
    mem_cluster_rec_t *r = (mem_cluster_rec_t *)1;
    assert_int_equal(mem_cluster_rec_read(buf, len - 1, &r), MEM_EINVAL);
    assert_null(r);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_and_local_kinds), cmocka_unit_test(test_insert_round_trip),
        cmocka_unit_test(test_other_kinds),          cmocka_unit_test(test_bad_bytes),
        cmocka_unit_test(test_import_round_trip),    cmocka_unit_test(test_read_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
