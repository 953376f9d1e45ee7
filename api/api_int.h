/* api_int.h - declarations shared between the files of api/ (not a public contract)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Everything decoded from one request (segments, vectors, strings, the pending
 * store op) is allocated from the request's arena (core/arena.h: bump allocation in a few
 * blocks), kept in resp->_state and freed in one go by mem_api_resp_deinit. Decoders turn a json_t
 * into plain structs and take the namespace's dimension as a parameter (0: the namespace does not
 * exist), so tests drive them without a store.
 */
#ifndef MEM_API_API_INT_H
#define MEM_API_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api.h"
#include "core/arena.h"
#include "core/compact.h"
#include "core/err.h"
#include "storage/store.h"

#define MEM_API_MAX_DIM        4096
#define MEM_API_MAX_TEXT       (1024u * 1024u) /* bytes */
#define MEM_API_MAX_SOURCE     256             /* bytes */
#define MEM_API_MAX_SUPERSEDES 1024
/* levels of objects and arrays in metadata, its own included */
#define MEM_API_MAX_META_DEPTH 1000
#define MEM_API_MAX_CONTEXT    1024 /* compaction context vectors */

/* ---- the request's arena: every allocation of one request ---- */
typedef mem_arena_t mem_api__pool_t; /* {0} is an empty one */

void *mem_api__palloc(mem_api__pool_t *pool, size_t size); /* zeroed; NULL on ENOMEM */
char *mem_api__pstrndup(mem_api__pool_t *pool, const char *s, size_t len); /* NUL-terminated */
void mem_api__pool_free(mem_api__pool_t *pool);

/* ---- routing ---- */
typedef enum mem_api__route_kind {
    MEM_API_R_HEALTHZ,
    MEM_API_R_NAMESPACES,       /* /v1/namespaces */
    MEM_API_R_NS,               /* /v1/namespaces/{ns} */
    MEM_API_R_SEGMENTS,         /* /v1/namespaces/{ns}/segments */
    MEM_API_R_SEGMENT,          /* /v1/namespaces/{ns}/segments/{id} */
    MEM_API_R_RETRIEVE,         /* /v1/namespaces/{ns}/retrieve */
    MEM_API_R_COMPACT,          /* /v1/namespaces/{ns}/compact */
    MEM_API_R_MCP,              /* /mcp */
    MEM_API_R_OPENAPI,          /* /openapi.json */
    MEM_API_R_EXPORT,           /* /v1/namespaces/{ns}/export */
    MEM_API_R_IMPORT,           /* /v1/namespaces/{ns}/import */
    MEM_API_R_CONSOLE,          /* /console, /console/{file}: the static console (id = file) */
    MEM_API_R_METRICS,          /* /metrics */
    MEM_API_R_CLUSTER,          /* /v1/cluster (cluster mode) */
    MEM_API_R_CLUSTER_SNAPSHOT, /* /v1/cluster/snapshot (cluster mode) */
    MEM_API_R_CLUSTER_MOVE,     /* /v1/cluster/move (cluster mode) */
    MEM_API_R_CLUSTER_NODE,     /* /v1/cluster/nodes/{node} (cluster mode; id = node) */
    MEM_API_R_CLUSTER_DRAIN,    /* /v1/cluster/nodes/{node}/drain (cluster mode; id = node) */
} mem_api__route_kind_t;

typedef struct mem_api__route {
    mem_api__route_kind_t kind;
    const char *label;             /* metrics label, static */
    const char *allow;             /* allowed methods, static ("GET, PUT, DELETE") */
    char ns[MEM_STORE_NS_MAX + 1]; /* when the route has one */
    char id[MEM_STORE_ID_MAX + 1]; /* percent-decoded, when the route has one */
} mem_api__route_t;

/* Match method and raw path. MEM_OK; MEM_ENOTFOUND (unknown path); MEM_EMETHOD (out->allow
 * and out->label are set); MEM_EINVAL (bad namespace name or id). */
int mem_api__route(const char *method, const char *path, mem_api__route_t *out, mem_err_t *err);
/* Namespace name rule of SPEC section 2: MEM_OK or MEM_EINVAL (field "namespace"). */
int mem_api__check_ns(const char *name, size_t len, mem_err_t *err);
/* Content-Type is application/json (parameters allowed); false for NULL. */
bool mem_api__json_media(const char *content_type);
/* The media type of ct[0..len) (parameters ignored, case-insensitive) is want. */
bool mem_api__media_is(const char *ct, size_t len, const char *want);

/* ---- the edge (edge.c, SPEC section 9; loop thread) ---- */
typedef struct mem_api__grant {
    mem_cfg_role_t role;
    const char *glob; /* in the request's pool */
} mem_api__grant_t;

/* What the request's key may do: open (no key configured, or a route that needs none), or
 * the grants of the key presented. */
typedef struct mem_api__auth {
    bool open;
    mem_api__grant_t *grants;
    size_t n;
} mem_api__auth_t;

/* The first header named name (case-insensitive), NULL when absent. */
const char *mem_api__req_header(const mem_api_req_t *req, const char *name, size_t *len);
/* The same without the spaces and tabs around the value (HTTP's optional whitespace). */
const char *mem_api__req_header_value(const mem_api_req_t *req, const char *name, size_t *len);
/* MEM_OK, MEM_EBADREQ (no Host) or MEM_EHOST. */
int mem_api__edge_host(const mem_api_edge_t *e, const mem_api_req_t *req, mem_err_t *err);
/* MEM_OK (no Origin, or an allowed one; *present says which) or MEM_EORIGIN. */
int mem_api__edge_origin(const mem_api_edge_t *e, const mem_api_req_t *req, bool *present,
                         mem_err_t *err);
bool mem_api__edge_auth_on(const mem_api_edge_t *e);
bool mem_api__edge_metrics_public(const mem_api_edge_t *e);
/* Resolve the bearer key into out (grants copied into pool): MEM_OK, MEM_EUNAUTH. */
int mem_api__edge_auth(const mem_api_edge_t *e, const mem_api_req_t *req, mem_api__pool_t *pool,
                       mem_api__auth_t *out, mem_err_t *err);
/* a may act with role need on namespace ns (NULL: on some namespace). */
bool mem_api__auth_allows(const mem_api__auth_t *a, mem_cfg_role_t need, const char *ns);
/* Same, as MEM_OK or MEM_EFORBIDDEN with a message naming the role and namespace. */
int mem_api__auth_check(const mem_api__auth_t *a, mem_cfg_role_t need, const char *ns,
                        mem_err_t *err);
/* '*' matches any run of bytes, '?' one byte. */
bool mem_api__glob_match(const char *glob, const char *s);

/* ---- per-response state between handle and finish ---- */
typedef enum mem_api__pending_kind {
    MEM_API_P_NONE,
    MEM_API_P_NS_CREATE,
    MEM_API_P_NS_DROP,
    MEM_API_P_INSERT,
    MEM_API_P_DELETE,
    MEM_API_P_COMPACT,
    MEM_API_P_PATCH,
    MEM_API_P_IMPORT,
} mem_api__pending_kind_t;

/* What a handler waiting for embeddings (resp->embed) goes on with in mem_api_resume. */
typedef enum mem_api__wait_kind {
    MEM_API_W_NONE,
    MEM_API_W_INSERT,    /* st->ins: vectors for the segments st->ins->embed_idx */
    MEM_API_W_RETRIEVE,  /* st->ret: the query's vector, then the scan */
    MEM_API_W_NS_CREATE, /* a namespace of the embedder's (then unknown) dimension */
} mem_api__wait_kind_t;

struct mem_api__insert_in;
struct mem_api__retrieve_in;
typedef enum mem_api__phase {
    MEM_API__PH_BEGUN,   /* mem_api_begin is running */
    MEM_API__PH_BODY,    /* the head passed: the body, then the handler */
    MEM_API__PH_WAITED,  /* cluster mode: waited for min_seq, the handler is next */
    MEM_API__PH_PENDING, /* the handler queued a write: finish is next */
    MEM_API__PH_DONE,
} mem_api__phase_t;

typedef struct mem_api__state {
    mem_api__pool_t pool;
    mem_api__phase_t phase;
    mem_api__route_t route;
    mem_store_t *store; /* ctx->store as the loop thread saw it in mem_api_begin */
    const char *query;  /* the query string (min_seq taken out in cluster mode) */
    json_t *root;       /* the parsed body, own reference */
    uint64_t min_seq;   /* cluster mode */
    bool has_min_seq;
    mem_api__auth_t auth;
    char *origin;        /* an allowed Origin, answered with CORS headers */
    bool vary_origin;    /* the request had an Origin: answers vary by it */
    bool preflight;      /* OPTIONS with Access-Control-Request-Method */
    char *allow_headers; /* echoed Access-Control-Request-Headers */
    mem_api__pending_kind_t kind;
    /* took_ms counts from here: the request read in full (mem_api_body_complete), so a
     * client slow to send its body is not the server's time; set once, so an inline try
     * that falls back to a worker keeps it */
    double t0_s;
    bool t0_set;
    /* compact */
    char **plan_ids; /* from mem_store_compact_plan, freed with mem_store_ids_free */
    size_t n_plan, before;
    mem_compact_policy_t policy;
    /* insert: the segments' terms and codes, made here for the writer (mem_store_prepare) */
    mem_store_prep_t *prep;
    /* an import run whole by mem_api_handle (server/ streams it instead) */
    mem_api_import_t *import;
    /* MCP: the REST answer is wrapped as a tools/call result */
    bool mcp;
    json_t *rpc_id; /* own reference */
    /* waiting for embeddings: the decoded request (pool) and the namespace as it was */
    mem_api__wait_kind_t wait;
    char ns[MEM_STORE_NS_MAX + 1];
    bool ns_exists;
    bool no_graph;                 /* namespace create: "coherence": false */
    mem_store_ns_stats_t ns_stats; /* when ns_exists */
    struct mem_api__insert_in *ins;
    struct mem_api__retrieve_in *ret;
    mem_api_embed_t embed; /* what resp->embed points to */
    /* a read tried on the event loop (mem_api_work_inline): its budget, and why it gave up
     * (MEM_API_INLINE_ANSWERED while it has not) */
    bool inline_try;
    size_t inline_budget;
    mem_api_inline_t inline_why;
} mem_api__state_t;

/* The response's state, created on first use (NULL on ENOMEM). */
mem_api__state_t *mem_api__state(mem_api_resp_t *resp);
/* resp becomes the error of a failed call: err, with rc as its code when the callee left
 * the code unset. */
void mem_api__fail_call(mem_api_resp_t *resp, int rc, mem_err_t *err);
/* Every handler starts here: the request's state (503 on ENOMEM) and, when stats is not
 * NULL, ns's stats: a missing namespace is 404, unless exists is not NULL (then *exists
 * says, and stats is zeroed). NULL after filling resp with the error. */
mem_api__state_t *mem_api__handler_begin(const mem_api_ctx_t *ctx, mem_api_resp_t *resp,
                                         const char *ns, mem_store_ns_stats_t *stats, bool *exists);
double mem_api__mono_s(void);
/* took_ms rounded to the microsecond. */
double mem_api__took_ms(double t0_s);

/* ---- JSON text (api/json.c) ---- */
/* Where an embedding may stand in a REST body (an insert, one segment of a batch, a
 * retrieve, a compaction context vector, an import line) and in an MCP message. Patterns
 * are keys separated by '.', with "[]" for any array index. */
#define MEM_API_VEC_PATHS_REST                                                                     \
    {                                                                                              \
        "embedding", "segments[].embedding", "context[]", NULL                                     \
    }
#define MEM_API_VEC_PATHS_MCP                                                                      \
    {                                                                                              \
        "params.arguments.embedding", "params.arguments.context[]", NULL                           \
    }
/* Parse JSON text with jansson's rules for json_loadb(JSON_REJECT_DUPLICATES): UTF-8, no
 * NUL in strings, no duplicate keys, depth 2048, an object or an array at the top, nothing
 * after it. An array of 1..MEM_API_MAX_DIM numbers within float32 range at a place that
 * matches vec_paths (NULL: none) becomes a vector node, its numbers correctly rounded to
 * float32. MEM_OK (*out a new reference), MEM_EJSON ("WHAT: invalid JSON at line L column
 * C: reason"; what may be NULL) or MEM_ENOMEM. */
int mem_api__json_parse(const char *text, size_t len, const char *const *vec_paths,
                        const char *what, json_t **out, mem_err_t *err);
/* A float32 vector held as one json_t (a tagged string no JSON text can produce):
 * mem_api__dump writes it as an array of shortest decimals. New reference, NULL on ENOMEM. */
json_t *mem_api__vec_node(const float *v, size_t n);
/* Whether j is a vector node; if so *n gets its length and dst (room for *n, may be NULL)
 * its floats. mem_api__decode_vec is the way decoders read embeddings. */
bool mem_api__vec_node_get(const json_t *j, float *dst, size_t *n);

/* ---- query strings ----
 * Iterates key[=value] pairs separated by '&', percent-decoding both, a '+' as a space (form
 * encoding: a '+' itself is %2B; the listing reads a space in a timestamp as the '+' of its
 * offset). */
typedef struct mem_api__query {
    const char *p;
    char key[64];
    char val[512];
    size_t val_len;
    bool has_val; /* "key=..." rather than a bare "key" */
} mem_api__query_t;
void mem_api__query_init(mem_api__query_t *q, const char *query);
/* 1 with key/val filled, 0 at the end, or MEM_EINVAL (bad percent-encoding, a NUL byte, a key
 * over 63 or a value over 511 bytes). */
int mem_api__query_next(mem_api__query_t *q, mem_err_t *err);

/* ---- decoding ---- */
/* Parse a REST body: MEM_OK, MEM_EJSON (malformed, duplicate keys, too deep, invalid UTF-8),
 * MEM_EINVAL (well-formed but not an object), MEM_ENOMEM. *out is a new reference;
 * embeddings are vector nodes. */
int mem_api__parse_body(const char *body, size_t len, json_t **out, mem_err_t *err);
/* An embedding as a request gives it (a JSON array of numbers, a vector node, or a string
 * of base64 little-endian float32): 1..4096 finite floats, exactly want_dim of them when
 * want_dim > 0 (else MEM_EDIM), normalised into a pool array. */
int mem_api__decode_vec(mem_api__pool_t *pool, const json_t *v, const char *field, size_t want_dim,
                        float **vec, size_t *dim, mem_err_t *err);
/* How a response carries embeddings: not at all, as JSON arrays, or as base64 strings of
 * little-endian float32 (?embedding=true|false|1|0|base64). */
typedef enum mem_api__emb_form {
    MEM_API_EMB_NONE,
    MEM_API_EMB_ARRAY,
    MEM_API_EMB_BASE64,
} mem_api__emb_form_t;
/* The value of an embedding= query parameter (v[0..len), NULL: the key without a value,
 * which means true). MEM_OK or MEM_EINVAL (field "embedding"). */
int mem_api__decode_emb_form(const char *v, size_t len, mem_api__emb_form_t *out, mem_err_t *err);
/* metadata v (field f) holds no more than MEM_API_MAX_META_DEPTH levels of objects and
 * arrays: the store indexes its values with SQLite's json_tree, which refuses deeper ones.
 * MEM_OK or MEM_EINVAL. */
int mem_api__check_meta_depth(const json_t *v, const char *f, mem_err_t *err);
/* Reject any key of obj not in allowed (NULL-terminated); prefix names the object
 * ("" at top level, "segments[2]." in a batch). */
int mem_api__check_keys(const json_t *obj, const char *const *allowed, const char *prefix,
                        mem_err_t *err);
/* A request timestamp (RFC 3339 with zone, or Unix seconds) to Unix ms, truncated. */
int mem_api__decode_ts(const json_t *v, const char *field, int64_t *ms, mem_err_t *err);
/* A duration (seconds, or "90d"/"36h"/"15m"/"30s"/"2w", fractions allowed) >= 0. */
int mem_api__decode_duration(const json_t *v, const char *field, double *s, mem_err_t *err);
/* Parse RFC 3339 with a zone or offset: 0 or -1. */
int mem_api__rfc3339_parse(const char *s, size_t len, int64_t *ms);
/* Format Unix ms as RFC 3339 UTC with milliseconds ("2026-07-31T09:30:00.000Z"). */
void mem_api__ts_format(int64_t ms, char out[32]);
/* The built-in embedder (SPEC section 6): MEM_OK or MEM_EINVAL (nothing to embed). */
int mem_api__embed(const char *text, size_t len, float *out, size_t dim);

/* ---- the server's embedder and the namespaces' (SPEC section 6) ---- */
/* What namespaces record for the server's embedder: "builtin" or "openai:MODEL". */
const char *mem_api__embedder_id(const mem_api_ctx_t *ctx);
/* Floats per vector of the server's embedder: cfg->embed_dim for the built-in one, the
 * provider's dimension once known, 0 before. */
size_t mem_api__embedder_dim(const mem_api_ctx_t *ctx);

/* What made a namespace's vectors: the embedder it recorded at its first vector made from
 * text, or none (client vectors only, or nothing stored yet). Decides the default match of
 * a text query. */
typedef enum mem_api__vec_kind {
    MEM_API_VEC_CLIENT,   /* no embedder recorded */
    MEM_API_VEC_BUILTIN,  /* the built-in lexical embedder */
    MEM_API_VEC_PROVIDER, /* a model behind --embedder openai:URL */
} mem_api__vec_kind_t;
mem_api__vec_kind_t mem_api__ns_vec_kind(const mem_store_ns_stats_t *s);
/* Can the server's embedder make vectors for namespace s (NULL: it does not exist yet) out
 * of text? MEM_OK; MEM_EMISMATCH when s recorded another embedder; MEM_EDIM when s has
 * another dimension than the embedder's (known) one. err names field ("query", "text"). */
int mem_api__embed_check(const mem_api_ctx_t *ctx, const mem_store_ns_stats_t *s, const char *field,
                         mem_err_t *err);
/* The first half of mem_api__embed_check: MEM_EMISMATCH when s recorded another embedder. */
int mem_api__embedder_match(const mem_api_ctx_t *ctx, const mem_store_ns_stats_t *s,
                            const char *field, mem_err_t *err);
/* A time-ordered UUIDv7 for ms (random bits from getrandom). out gets 36 chars + NUL. */
void mem_api__uuid7(int64_t ms, char out[37]);

typedef struct mem_api__insert_in {
    mem_store_seg_in_t *segs; /* pool */
    size_t n_segs;
    size_t dim;            /* floats per vector (the namespace's, or fixed by this insert); 0 while
                              only a remote embedder's answer can fix it */
    bool batch;            /* {"segments":[...]} */
    bool embedded;         /* some segment's vector is (or will be) made from its text */
    size_t first_embedded; /* the first such segment, when embedded */
    /* remote embedder: segments whose vector awaits the provider (segs[i].vec NULL) */
    size_t *embed_idx; /* pool */
    size_t n_embed;
} mem_api__insert_in_t;

/* Insert body (single object or batch). ns_dim is the namespace's dimension, 0 when it
 * does not exist yet (the first embedding, or the embedder's, fixes it). */
int mem_api__decode_insert(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *root,
                           size_t ns_dim, mem_api__insert_in_t *out, mem_err_t *err);

/* The retrieve "filter" (api/filter.c): a core/meta.h filter in the pool. MEM_OK, MEM_EINVAL
 * (field "filter.<path>[.<operator>]"), MEM_ENOMEM. */
int mem_api__decode_filter(mem_api__pool_t *pool, const json_t *j, const mem_meta_filter_t **out,
                           mem_err_t *err);

/* One insert object (as in a single-segment POST .../segments) into seg; *dim is the
 * namespace's dimension (0: not fixed yet) and becomes the segment's; *embedded: the vector
 * was made from the text by the local embedder (a remote one is refused: no vector yet). */
int mem_api__decode_segment(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *o,
                            size_t *dim, mem_store_seg_in_t *seg, bool *embedded, mem_err_t *err);

typedef struct mem_api__retrieve_in {
    mem_store_query_t q; /* q.scan.query, q.text in the pool */
    bool explain;
    bool embedded; /* the query vector is (or will be) made from the query text */
    /* remote embedder: the query text awaiting its vector (q.scan.query NULL, q_dim 0) */
    const char *query_text;
    size_t query_len;
} mem_api__retrieve_in_t;

/* What a text query does when the request names no match (SPEC 6): the match and hybrid's
 * text weight for the namespace's kind of vectors (mem_api__text_match). */
typedef struct mem_api__text_match {
    mem_scan_match_t match;
    double text_weight;
} mem_api__text_match_t;
/* The default of a text query for namespace s (its kind of vectors, the configuration). */
mem_api__text_match_t mem_api__text_match(const mem_api_ctx_t *ctx, const mem_store_ns_stats_t *s);

/* Retrieve body. A query text matches as the body's "match" says, else as dflt says; an
 * embedding alone matches by vector (text and hybrid need a query: 400). The query is
 * embedded only for vector and hybrid match. */
int mem_api__decode_retrieve(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *root,
                             size_t ns_dim, const mem_api__text_match_t *dflt,
                             mem_api__retrieve_in_t *out, mem_err_t *err);

typedef struct mem_api__compact_in {
    mem_store_compact_req_t req; /* req.context in the pool */
    bool dry_run, purge;
} mem_api__compact_in_t;

int mem_api__decode_compact(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *root,
                            size_t ns_dim, mem_api__compact_in_t *out, mem_err_t *err);
/* PUT body: NULL root (no body) means the embedder's dimension (*dim 0 when a remote
 * embedder's dimension is not known yet). */
int mem_api__decode_ns_create(const mem_api_ctx_t *ctx, const json_t *root, size_t *dim,
                              bool *coherence, mem_err_t *err);

/* Bytes of s (a NUL-terminated UTF-8 string) to quote in a message of at most max bytes:
 * never more than max, never ending inside a multi-byte character. */
int mem_api__utf8_prefix(const char *s, size_t max);
/* The same for len bytes at s (not NUL-terminated). */
int mem_api__utf8_prefix_n(const char *s, size_t len, size_t max);
/* A JSON string of s (at most 250 bytes) with every byte that does not start a valid UTF-8
 * sequence replaced by '?' (new reference, NULL on ENOMEM). */
json_t *mem_api__text(const char *s);

/* ---- encoding (new references, NULL on ENOMEM) ---- */
json_t *mem_api__enc_ts(int64_t ms);
json_t *mem_api__enc_stats(const mem_store_ns_stats_t *s);
json_t *mem_api__enc_segment(const mem_store_segment_t *seg);
/* Same, with the embedding (when seg has one) in the given form. */
json_t *mem_api__enc_segment_form(const mem_store_segment_t *seg, mem_api__emb_form_t form);
json_t *mem_api__enc_results(const char *ns, const mem_store_result_t *res, size_t n,
                             size_t scanned, const char *kernel, double took_ms, bool explain,
                             int64_t origin_ms, mem_scan_match_t match);
/* mem_api__dump(mem_api__enc_results(...)) without the tree: the text (its length in *len)
 * or NULL on ENOMEM or a result field JSON cannot hold. */
char *mem_api__enc_results_text(const char *ns, const mem_store_result_t *res, size_t n,
                                size_t scanned, const char *kernel, double took_ms, bool explain,
                                int64_t origin_ms, mem_scan_match_t match, size_t *len);
json_t *mem_api__enc_inserted(const mem_store_op_t *op);
json_t *mem_api__enc_compact(size_t before, size_t after, mem_compact_policy_t policy,
                             char *const *ids, size_t n_ids, double took_ms);
/* Compact JSON text of j (keys in insertion order), every real written as the shortest
 * decimal that reads back as the same double (0.1, not 0.10000000000000001) and vector
 * nodes as arrays of shortest float32 decimals (api/json.c). malloc'd; NULL on ENOMEM. */
char *mem_api__dump(const json_t *j);
/* A writer of compact JSON text for answers built without a json_t tree (api/json.c),
 * formatting as mem_api__dump does. Zero-initialised; every call appends; a failed
 * allocation or a value JSON cannot hold (a non-finite number, a string that is not
 * UTF-8, NULL) sets oom, after which mem_api__jw_finish frees the text and returns NULL. */
typedef struct mem_api__jw {
    char *b;
    size_t n, cap;
    bool oom;
} mem_api__jw_t;
/* len bytes as they are: punctuation and keys the caller knows need no escaping */
void mem_api__jw_raw(mem_api__jw_t *w, const char *s, size_t len);
#define MEM_API_JW_LIT(w, lit) mem_api__jw_raw((w), (lit), sizeof(lit) - 1)
void mem_api__jw_str(mem_api__jw_t *w, const char *s); /* quoted and escaped */
void mem_api__jw_i64(mem_api__jw_t *w, int64_t v);
void mem_api__jw_f64(mem_api__jw_t *w, double x); /* shortest round-trip decimal */
void mem_api__jw_value(mem_api__jw_t *w, const json_t *j);
/* The NUL-terminated text (malloc'd, its length in *len when len is not NULL), or NULL. */
char *mem_api__jw_finish(mem_api__jw_t *w, size_t *len);
/* text (malloc'd, len bytes; NULL: out of memory) as resp's JSON body. Steals text. */
void mem_api__send_text(mem_api_resp_t *resp, int status, char *text, size_t len);
/* Serialise obj into resp (status, body, content type). Steals obj. */
void mem_api__send_json(mem_api_resp_t *resp, int status, json_t *obj);
/* The error body of SPEC section 3 for err (new reference). */
json_t *mem_api__enc_error(const mem_err_t *err);
/* Shortcut for mem_api_error with a fresh error. */
void mem_api__fail(mem_api_resp_t *resp, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- handlers (the REST part; MCP calls them with a decoded body) ---- */
void mem_api__ns_list(const mem_api_ctx_t *ctx, mem_api_resp_t *resp);
void mem_api__ns_get(const mem_api_ctx_t *ctx, const char *ns, mem_api_resp_t *resp);
void mem_api__ns_create(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                        mem_api_resp_t *resp);
void mem_api__ns_drop(const mem_api_ctx_t *ctx, const char *ns, mem_api_resp_t *resp);
void mem_api__seg_insert(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                         mem_api_resp_t *resp);
void mem_api__seg_get(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                      mem_api__emb_form_t form, mem_api_resp_t *resp);
/* GET .../segments: one page of the listing (query: limit, after, since, until, source,
 * include_superseded, include_archived, embedding). */
void mem_api__seg_list(const mem_api_ctx_t *ctx, const char *ns, const char *query,
                       mem_api_resp_t *resp);
/* PATCH .../segments/{id}: metadata and/or source. */
void mem_api__seg_patch(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                        const json_t *root, mem_api_resp_t *resp);
/* The patched segment as stored now (after the PATCH op committed). */
void mem_api__seg_patched(const mem_api_ctx_t *ctx, mem_api_resp_t *resp);
void mem_api__seg_delete(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                         mem_api_resp_t *resp);
void mem_api__retrieve(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                       mem_api_resp_t *resp);
void mem_api__compact(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                      mem_api_resp_t *resp);
/* A zeroed store op in the response's pool, with ns and now_ms set and the pending kind
 * recorded; NULL (resp already holds a 503) on ENOMEM. */
mem_store_op_t *mem_api__new_op(const mem_api_ctx_t *ctx, mem_api_resp_t *resp,
                                mem_api__pending_kind_t kind, mem_store_op_kind_t op_kind,
                                const char *ns);
/* Fill resp from the finished pending op (REST shape). */
void mem_api__finish_rest(const mem_api_ctx_t *ctx, mem_api_resp_t *resp);

/* GET .../export: the namespace as NDJSON (api/export.c), a streamed body. */
void mem_api__export(const mem_api_ctx_t *ctx, const char *ns, mem_api__emb_form_t form,
                     mem_api_resp_t *resp);

/* mem_api_resume's continuations, one per wait kind. */
void mem_api__seg_insert_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, const float *vecs,
                                size_t dim);
void mem_api__retrieve_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, const float *vecs,
                              size_t dim);
void mem_api__ns_create_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, size_t dim);
/* GET /openapi.json: the OpenAPI document compiled in from api/openapi.json (mk/openapi.mk). */
extern const char mem_api__openapi_json[];
extern const size_t mem_api__openapi_json_len;
void mem_api__openapi(mem_api_resp_t *resp);

/* POST /mcp with a parsed or unparsable body. */
void mem_api__mcp(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp);
/* console.c: GET /console/{name} ("" = index.html) from the embedded files. */
void mem_api__console(const char *name, mem_api_resp_t *resp);
/* Wrap the REST answer now in resp as a tools/call result. */
void mem_api__mcp_wrap(mem_api_resp_t *resp);

/* ---- cluster mode (cluster.c) ---- */
/* POST /v1/cluster/move, POST /v1/cluster/nodes/{node}/drain, DELETE
 * /v1/cluster/nodes/{node}: the body checked, then the hook. */
mem_api_next_t mem_api__cluster_admin(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                      mem_api_resp_t *resp);

#endif
