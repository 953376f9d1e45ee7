/* config.h - settings: defaults < config file < environment < command-line flags (SPEC 7)
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_CONFIG_CONFIG_H
#define MEM_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/decay.h"
#include "core/err.h"
#include "core/lexidx.h"
#include "core/log.h"

/* Which embedder makes vectors from text (SPEC 6). */
typedef enum mem_cfg_embedder {
    MEM_CFG_EMBEDDER_BUILTIN, /* core/embed.c, the hashed lexical embedder */
    MEM_CFG_EMBEDDER_OPENAI,  /* an OpenAI-compatible POST BASE_URL/embeddings */
} mem_cfg_embedder_t;

/* How a text query matches by default (SPEC 6): AUTO picks per namespace by the kind of its
 * vectors (docs/retrieval.md); the others force one match for every namespace. */
typedef enum mem_cfg_match {
    MEM_CFG_MATCH_AUTO,
    MEM_CFG_MATCH_VECTOR,
    MEM_CFG_MATCH_TEXT,
    MEM_CFG_MATCH_HYBRID,
} mem_cfg_match_t;

#define MEM_CFG_EMBEDDER_BATCH_MAX   2048   /* texts per provider call (OpenAI's own limit) */
#define MEM_CFG_EMBEDDER_TIMEOUT_MAX 3600.0 /* seconds */
/* Bounds of connection_memory (bytes). */
#define MEM_CFG_CONNECTION_MEMORY_MIN (4u << 10)
#define MEM_CFG_CONNECTION_MEMORY_MAX (1u << 20)
/* Fixed bounds of the sources themselves: a config file is read whole up to
 * MEM_CFG_FILE_MAX bytes (larger: refused, naming the file), and one value (of a flag, a
 * variable or a file line) holds less than MEM_CFG_VALUE_MAX bytes (else refused, naming
 * the setting). A file line may be longer only by its key, spaces and comment. */
#define MEM_CFG_FILE_MAX  (1u << 20)
#define MEM_CFG_VALUE_MAX 8192
/* Most --cluster-publishers. */
#define MEM_CFG_PUBLISHERS_MAX 64
/* Longest --idle-timeout, --request-timeout and --forward-timeout (seconds): 7 days. */
#define MEM_CFG_TIMEOUT_MAX_S (7.0 * 86400.0)

typedef struct mem_cfg {
    char listen_host[256]; /* "127.0.0.1", "0.0.0.0", "::1" */
    int listen_port;       /* 0 = any free port */
    char data_path[4096];
    mem_decay_t decay;          /* kind, half_life_s, shape, offset_s, recency_bias */
    size_t embed_dim;           /* built-in embedder dimension */
    double coherence_threshold; /* [-1, 1] */
    double coherence_weight;    /* [0, 1] */
    char api_key[512];          /* "" = no auth (MEM_CFG_KEY_MAX) */
    bool metrics_public;
    size_t max_body;        /* bytes */
    size_t max_import_body; /* bytes of one POST .../import body (streamed, never buffered) */
    size_t max_body_memory; /* bytes of request bodies held at once, all connections; 0: no bound */
    size_t max_batch;
    double max_future_skew_s;
    int threads;           /* request worker threads (server/pool.c) */
    size_t worker_spin_us; /* an idle worker watches for the next job this long, 0..10000 */
    size_t loop_spin_us;   /* the event loop polls for the next event this long, 0..10000 */
    size_t group_wait_us;  /* the writer waits this long to fill a group, 0..100000 */
    bool sync_full;
    size_t max_connections;
    size_t max_connections_per_ip; /* 0: no limit */
    double idle_timeout_s;         /* whole seconds >= 1 (a fraction is rounded up when set) */
    double request_timeout_s;      /* > 0, at most MEM_CFG_TIMEOUT_MAX_S */
    double graph_wait_s; /* a read that needs the coherence graph waits this long at most */
    size_t max_queue;
    size_t max_namespaces;
    mem_log_level_t log_level;
    bool log_json;
    char simd[16]; /* "" = detect */
    char config_path[4096];
    /* Cluster mode (docs/cluster.md): off while nats_url is "". Each is a flag, a config
     * file key and an environment variable. */
    char nats_url[1024]; /* --nats-url, MNEMOD_NATS_URL: comma-separated nats:// URLs */
    char node_id[64];    /* --node-id, MNEMOD_NODE_ID: [A-Za-z0-9_-]{1,63}; required */
    size_t streams;      /* --streams, MNEMOD_STREAMS: JetStream streams, 1..256 */
    int replicas;        /* --stream-replicas, MNEMOD_REPLICAS: replicas per stream, 1..5 */
    char advertise[256]; /* --advertise, MNEMOD_ADVERTISE: host:port peers reach; "" = listen */
    size_t ns_replicas;  /* --namespace-replicas: nodes each namespace lives on, 1..7 */
    double cluster_write_timeout_s; /* --cluster-write-timeout: publish + local apply bound */
    double forward_timeout_s;       /* --forward-timeout: a relayed request; whole ms, <= 7d */
    double node_dead_after_s;       /* --node-dead-after: then its namespaces are re-placed */
    double trim_interval_s;         /* --log-trim-interval: snapshot + trim; 0 = only by size */
    size_t trim_bytes;              /* --log-trim-size: a stream larger triggers it; 0 = never */
    size_t max_lag;                 /* --max-lag: records behind before /healthz says 503 */
    bool rebalance;                 /* --rebalance: move namespaces when nodes come and go */
    size_t max_moves;               /* --max-moves: namespace moves running at once */
    size_t publishers;              /* --cluster-publishers: threads publishing write records */
    size_t max_relay_answer;        /* --max-relay-answer: bytes of an answer relayed from a peer */
    /* The edge (SPEC 9). Comma-separated lists, as given (checked: origins are "*" or
     * scheme://host[:port], hosts are name[:port]); "" = none. */
    char allowed_origins[4096];
    char allowed_hosts[4096];
    char keys_path[4096]; /* --keys-file, "" = none (read by mem_cfg_keys_load) */
    /* Parallel scan (storage/scanpool.c): helper threads a large retrieve is split across
     * (0..64, default CPUs - 1), and the size n_visible * dim from which a retrieve is
     * split when a helper is idle (0 = never split). */
    size_t scan_helpers;
    size_t scan_split_min;
    /* Small reads answered on the event loop (server/loop.c): a retrieve whose scan fits in
     * inline_scan_budget vector components (rows of the blocks entered x dim; 0 = never
     * inline) and whose body is at most inline_max_body bytes, tried while no other request
     * runs on the pool. */
    size_t inline_scan_budget;
    size_t inline_max_body;
    /* Bytes the store keeps of recent retrieve hits' text, source and metadata
     * (storage/textcache_int.h), so repeated answers skip SQLite; 0 = none. */
    size_t text_cache;
    /* An insert whose body is at most inline_max_write_body bytes is decoded on the event
     * loop and queued for the writer from there, under any concurrency (0 = always on the
     * pool). */
    size_t inline_max_write_body;
    /* Bytes of memory libmicrohttpd gives each connection for its read and write buffers
     * (MHD_OPTION_CONNECTION_MEMORY_LIMIT): a request head must fit in it, and MHD clears
     * all of it between two requests of a kept-alive connection. */
    size_t connection_memory;
    /* Embedder (SPEC 6). With MEM_CFG_EMBEDDER_OPENAI, embedder_url is the base URL
     * (http:// or https://, no trailing '/', no query) and embedder_model is required. */
    mem_cfg_embedder_t embedder;
    char embedder_url[1024];
    char embedder_model[256];  /* printable ASCII without spaces; "" with builtin */
    char embedder_key[1024];   /* sent as "Authorization: Bearer KEY"; "" = none */
    double embedder_timeout_s; /* budget of one request's provider calls, retries included */
    size_t embedder_batch;     /* texts per provider call, 1..MEM_CFG_EMBEDDER_BATCH_MAX */
    /* Text retrieval (SPEC 6). text_weight < 0: hybrid's text share by namespace kind. */
    mem_cfg_match_t match;
    double text_weight;  /* [0, 1], or -1 (auto) */
    mem_lexparams_t lex; /* k1, b, gram_weight (0: no trigram field is kept) */
} mem_cfg_t;

#define MEM_CFG_KEY_MAX 512 /* bytes of a key, NUL included */

/* ---- scoped keys (SPEC 9): the --keys-file table ---- */
typedef enum mem_cfg_role {
    MEM_CFG_ROLE_NONE = 0,
    MEM_CFG_ROLE_READ = 1,
    MEM_CFG_ROLE_WRITE = 2, /* includes read */
    MEM_CFG_ROLE_ADMIN = 3, /* includes write */
} mem_cfg_role_t;

typedef struct mem_cfg_grant {
    const char *key; /* NUL-terminated, key_len bytes */
    size_t key_len;
    mem_cfg_role_t role;
    const char *glob; /* namespace glob: '*' any run, '?' one byte */
} mem_cfg_grant_t;

/* One immutable table: grants in file order (a key may have several). */
typedef struct mem_cfg_keys {
    mem_cfg_grant_t *grants;
    size_t n;
} mem_cfg_keys_t;

/* Parse a keys file's text: lines `KEY ROLE NAMESPACE_GLOB`, '#' comments and blank lines.
 * MEM_OK with *out (free with mem_cfg_keys_free), or MEM_EINVAL with err->msg naming path
 * and the 1-based line (MEM_ENOMEM). */
int mem_cfg_keys_parse(const char *text, size_t len, const char *path, mem_cfg_keys_t **out,
                       mem_err_t *err);
/* Read and parse the file at path (the only I/O here). */
int mem_cfg_keys_load(const char *path, mem_cfg_keys_t **out, mem_err_t *err);
void mem_cfg_keys_free(mem_cfg_keys_t *keys);

enum {
    MEM_CFG_RUN = 0,     /* start the server */
    MEM_CFG_EXIT_OK = 1, /* --help or --version printed to out: exit 0 */
};

/* Buffer size that holds the --help text (and the version line). */
#define MEM_CFG_TEXT_MAX 16384

/* Fill cfg from defaults, the optional --config file, env (NULL = none; a NULL-terminated
 * "KEY=value" array) and argv. Help/version text goes to out_text (may be NULL).
 * Returns MEM_CFG_RUN, MEM_CFG_EXIT_OK, or MEM_EINVAL with err->msg one line naming the
 * key (the caller prints it and exits 2); MEM_ENOMEM if the file buffer cannot be had.
 * Unknown MNEMOD_* variables in env are errors (a typo must not be ignored); an empty
 * variable counts as unset. Reads the config file and the API key file (the only I/O). */
int mem_cfg_load(mem_cfg_t *cfg, int argc, char *const *argv, char *const *env, char *out_text,
                 size_t out_len, mem_err_t *err);
void mem_cfg_defaults(mem_cfg_t *cfg);
/* Write the --help text (every flag, its environment variable and default) into buf like
 * snprintf; returns the full length. buf may be NULL with len 0 to measure. */
size_t mem_cfg_help(char *buf, size_t len);
/* One key=value line (no newline) describing the effective settings, for the start-up log:
 * "listen=127.0.0.1:6636 data=./mnemod.db half_life_s=0 decay=exponential ... auth=off".
 * The API key itself is never written (auth=on|off). snprintf semantics. */
size_t mem_cfg_describe(const mem_cfg_t *cfg, char *buf, size_t len);
/* The address other nodes reach this one at in cluster mode, "host:port" into buf
 * (snprintf semantics): --advertise when set, else the listen address with an unspecified
 * host (0.0.0.0, ::) replaced by the loopback address of its family (127.0.0.1, ::1), since
 * no peer can connect to an unspecified address; an IPv6 host is written in brackets. */
size_t mem_cfg_advertise(const mem_cfg_t *cfg, char *buf, size_t len);
/* The same settings one pair at a time (values unquoted, any bytes), for a logger. */
void mem_cfg_describe_each(const mem_cfg_t *cfg,
                           void (*fn)(void *ud, const char *key, const char *value), void *ud);

#endif
