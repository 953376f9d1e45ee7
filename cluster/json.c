/* json.c - cluster/'s JSON texts: out of memory told apart from "not JSON"
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The placement map's entries, the node registry's records, snapshot manifests and
 * the nodes' control requests are JSON texts, read and written with jansson. Its text
 * functions go on after a failed allocation (embedder/wire.c, which has the same problem,
 * says how): the parser drops the byte it was saving and reads on, which gives another
 * node name, a syntax error or a copy that runs past a string's buffer, and a NULL from it
 * says nothing about the text. Read as "not JSON" that would drop a node from a namespace's
 * placement, take a node for gone, a snapshot for missing or the lease for free. So the
 * cluster's jansson allocator, chained to the one installed before it (the embedder's, the
 * fault build's), makes a failure sticky while one of these calls runs on the thread:
 * every later allocation of that call fails too, and the call is out of memory whatever it
 * returned. Callers then try again or refuse with a 503, never act on a half-read text.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/json_int.h"
#include "core/jstr.h"

static json_malloc_t prev_malloc = malloc;
static __thread bool cl_in_text, cl_failed;

static void *cl_json_malloc(size_t n)
{
    if (cl_in_text && cl_failed) return NULL;
    void *p = prev_malloc(n);
    if (!p && cl_in_text) cl_failed = true;
    return p;
}

void mem_cluster__json_hook(void)
{
    json_malloc_t m = NULL;
    json_free_t f = NULL;
    json_get_alloc_funcs(&m, &f);
    if (m == cl_json_malloc) return;
    prev_malloc = m ? m : malloc;
    json_set_alloc_funcs(cl_json_malloc, f ? f : free);
}

/* Before main, while there is one thread: json_set_alloc_funcs is process-wide. */
__attribute__((constructor)) static void json_hook_at_start(void)
{
    mem_cluster__json_hook();
}

static void text_begin(void)
{
    cl_in_text = true;
    cl_failed = false;
}

/* Whether an allocation failed since text_begin. */
static bool text_end(void)
{
    bool failed = cl_failed;
    cl_in_text = cl_failed = false;
    return failed;
}

int mem_cluster__json_parse(const void *buf, size_t len, json_t **out)
{
    *out = NULL;
    text_begin();
    json_t *o = json_loadb(buf, len, 0, NULL);
    if (text_end()) {
        json_decref(o);
        return MEM_ENOMEM;
    }
    if (!o) return MEM_EINVAL;
    *out = o;
    return MEM_OK;
}

char *mem_cluster__json_dump(const json_t *j)
{
    if (!j) return NULL;
    text_begin();
    char *s = json_dumps(j, JSON_COMPACT);
    if (text_end()) { /* a part may be missing from what it returned */
        free(s);
        return NULL;
    }
    return s;
}

json_t *mem_cluster__json_text(const char *s)
{
    char out[512];
    mem_jstr_sanitize(s ? s : "", out, sizeof(out));
    return json_string(out);
}

json_t *mem_cluster__json_strings(const char *const *v, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, json_string(v[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    return arr;
}

char *mem_cluster__entry_json(const char *ns, size_t stream, const char *const *nodes, size_t n,
                              const char *join, const char *drop, bool pinned, uint64_t epoch)
{
    json_t *arr = mem_cluster__json_strings(nodes, n);
    if (!arr) return NULL;
    /* "o" takes arr, on failure too */
    json_t *o =
        json_pack("{s:s,s:I,s:o,s:s?,s:s?,s:b,s:I}", "ns", ns, "stream", (json_int_t)stream,
                  "nodes", arr, "join", join && *join ? join : NULL, "drop",
                  drop && *drop ? drop : NULL, "pinned", pinned, "epoch", (json_int_t)epoch);
    char *s = mem_cluster__json_dump(o);
    json_decref(o);
    return s;
}
