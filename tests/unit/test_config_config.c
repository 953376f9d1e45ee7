/* test_config_config.c - defaults, precedence, file format, every bad value class
 * SPDX-License-Identifier: MIT
 */
/* cmocka.h needs stdarg.h, stddef.h and setjmp.h first */
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

#include "config/config.h"
#include "core/vec.h"

#define MAXARGS 32

/* argv and env are given as NULL-terminated lists of string literals. */
typedef struct run {
    int rc;
    mem_cfg_t cfg;
    mem_err_t err;
    char out[MEM_CFG_TEXT_MAX];
} run_t;

static run_t R; /* big: keep it off the stack */

static int load(const char *const *args, const char *const *env)
{
    char *argv[MAXARGS + 1];
    int argc = 0;
    argv[argc++] = (char *)"mnemod";
    for (; args && *args; args++) {
        assert_true(argc < MAXARGS);
        argv[argc++] = (char *)*args;
    }
    argv[argc] = NULL;
    memset(&R, 0, sizeof(R));
    R.rc = mem_cfg_load(&R.cfg, argc, argv, (char *const *)env, R.out, sizeof(R.out), &R.err);
    return R.rc;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NOARGS    ((const char *const *)NULL)

static void expect_ok(const char *const *args, const char *const *env)
{
    if (load(args, env) != MEM_CFG_RUN) fail_msg("expected success, got %d: %s", R.rc, R.err.msg);
}

static void expect_bad(const char *const *args, const char *const *env, const char *needle)
{
    if (load(args, env) != MEM_EINVAL) fail_msg("expected MEM_EINVAL for \"%s\"", needle);
    assert_null(strchr(R.err.msg, '\n'));
    assert_true(strlen(R.err.msg) > 10);
    if (!strstr(R.err.msg, needle)) fail_msg("message lacks \"%s\": %s", needle, R.err.msg);
}

static char tmp_paths[32][64];
static int n_tmp;

static const char *tmp_file(const char *content)
{
    char *path = tmp_paths[n_tmp++ % 32];
    strcpy(path, "/tmp/mnemod-cfg-test-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(content);
    assert_int_equal(write(fd, content, len), (ssize_t)len);
    close(fd);
    return path;
}

static int cleanup(void **state)
{
    (void)state;
    for (int i = 0; i < 32; i++)
        if (tmp_paths[i][0]) {
            unlink(tmp_paths[i]);
            tmp_paths[i][0] = '\0';
        }
    return 0;
}

static void test_defaults(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    const mem_cfg_t *c = &R.cfg;
    assert_string_equal(c->listen_host, "127.0.0.1");
    assert_int_equal(c->listen_port, 6636);
    assert_string_equal(c->data_path, "./mnemod.db");
    assert_int_equal(c->decay.kind, MEM_DECAY_EXPONENTIAL);
    assert_true(c->decay.half_life_s == 0.0);
    assert_true(c->decay.offset_s == 0.0);
    assert_true(c->decay.recency_bias == 1.0);
    assert_int_equal(c->embed_dim, 256);
    assert_true(c->coherence_threshold == 0.55);
    assert_true(c->coherence_weight == 0.0);
    assert_string_equal(c->api_key, "");
    assert_false(c->metrics_public);
    assert_int_equal(c->max_body, 16 * 1024 * 1024);
    assert_int_equal(c->max_batch, 1000);
    assert_true(c->max_future_skew_s == 300.0);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(c->threads, ncpu > 4 ? ncpu : 4);
    assert_int_equal(c->worker_spin_us, 50);
    assert_int_equal(c->loop_spin_us, 200);
    assert_true(c->sync_full);
    assert_int_equal(c->max_connections, 1024);
    assert_int_equal(c->max_connections_per_ip, 0);
    assert_true(c->idle_timeout_s == 30.0);
    assert_true(c->request_timeout_s == 30.0);
    assert_true(c->graph_wait_s == 10.0);
    assert_int_equal(c->max_queue, 1024);
    assert_int_equal(c->max_namespaces, 10000);
    assert_int_equal(c->log_level, MEM_LOG_INFO);
    assert_false(c->log_json);
    assert_string_equal(c->simd, "");
    assert_string_equal(c->config_path, "");
    /* mem_cfg_defaults alone gives the same */
    mem_cfg_t d;
    mem_cfg_defaults(&d);
    assert_memory_equal(&d, &R.cfg, sizeof(d));
}

static void test_help_and_version(void **state)
{
    (void)state;
    static const char *const names[] = {
        "--config",
        "MNEMOD_CONFIG",
        "--listen",
        "MNEMOD_LISTEN",
        "--data",
        "MNEMOD_DATA",
        "--half-life",
        "MEMU_RECENCY_HALF_LIFE",
        "--recency-bias",
        "MNEMOD_RECENCY_BIAS",
        "--decay",
        "MNEMOD_DECAY",
        "--decay-offset",
        "MNEMOD_DECAY_OFFSET",
        "--embed-dim",
        "MNEMOD_EMBED_DIM",
        "--coherence-threshold",
        "MNEMOD_COHERENCE_THRESHOLD",
        "--coherence-weight",
        "MNEMOD_COHERENCE_WEIGHT",
        "MNEMOD_API_KEY",
        "--api-key-file",
        "MNEMOD_API_KEY_FILE",
        "--metrics-public",
        "MNEMOD_METRICS_PUBLIC",
        "--max-body",
        "MNEMOD_MAX_BODY",
        "--max-batch",
        "MNEMOD_MAX_BATCH",
        "--max-future-skew",
        "MNEMOD_MAX_FUTURE_SKEW",
        "--threads",
        "MNEMOD_THREADS",
        "--sync",
        "MNEMOD_SYNC",
        "--max-connections",
        "MNEMOD_MAX_CONNECTIONS",
        "--max-connections-per-ip",
        "MNEMOD_MAX_CONNECTIONS_PER_IP",
        "--idle-timeout",
        "MNEMOD_IDLE_TIMEOUT",
        "--request-timeout",
        "MNEMOD_REQUEST_TIMEOUT",
        "--graph-wait",
        "MNEMOD_GRAPH_WAIT",
        "--max-queue",
        "MNEMOD_MAX_QUEUE",
        "--max-namespaces",
        "MNEMOD_MAX_NAMESPACES",
        "--log-level",
        "MNEMOD_LOG_LEVEL",
        "--log-format",
        "MNEMOD_LOG_FORMAT",
        "--simd",
        "MNEMOD_SIMD",
        "--help",
        "--version",
        "127.0.0.1:6636",
        "./mnemod.db",
        "16MiB",
        "300s",
        "max(4, CPUs)",
        "0.55",
        "exponential",
    };
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strstr(R.out, names[i])) fail_msg("--help does not mention %s", names[i]);
    assert_true(mem_cfg_help(NULL, 0) < MEM_CFG_TEXT_MAX);
    assert_int_equal(mem_cfg_help(NULL, 0), strlen(R.out));
    char small[32];
    assert_int_equal(mem_cfg_help(small, sizeof(small)), strlen(R.out));
    assert_int_equal(strlen(small), sizeof(small) - 1);
    /* help wins even over a bad line */
    assert_int_equal(load(ARGS("--max-batch", "abc", "--nope", "-h"), NULL), MEM_CFG_EXIT_OK);
    assert_non_null(strstr(R.out, "Usage: mnemod"));
    assert_int_equal(load(ARGS("--version"), NULL), MEM_CFG_EXIT_OK);
    assert_string_equal(R.out, "mnemod " MNEMOD_VERSION "\n");
    assert_int_equal(load(ARGS("-V"), NULL), MEM_CFG_EXIT_OK);
    assert_string_equal(R.out, "mnemod " MNEMOD_VERSION "\n");
    /* out_text may be NULL */
    char *argv[] = {(char *)"mnemod", (char *)"--version", NULL};
    mem_cfg_t cfg;
    assert_int_equal(mem_cfg_load(&cfg, 2, argv, NULL, NULL, 0, NULL), MEM_CFG_EXIT_OK);
}

static void test_flag_forms(void **state)
{
    (void)state;
    expect_ok(ARGS("--max-batch", "5", "--threads=3", "--data", "/tmp/x.db", "--sync=normal"),
              NULL);
    assert_int_equal(R.cfg.max_batch, 5);
    assert_int_equal(R.cfg.threads, 3);
    assert_string_equal(R.cfg.data_path, "/tmp/x.db");
    assert_false(R.cfg.sync_full);
    /* last one wins */
    expect_ok(ARGS("--max-batch", "5", "--max-batch=7"), NULL);
    assert_int_equal(R.cfg.max_batch, 7);
    /* a value may contain '=' */
    expect_ok(ARGS("--data=/tmp/a=b.db"), NULL);
    assert_string_equal(R.cfg.data_path, "/tmp/a=b.db");
    /* booleans: bare, with a word, with = */
    expect_ok(ARGS("--metrics-public"), NULL);
    assert_true(R.cfg.metrics_public);
    expect_ok(ARGS("--metrics-public", "--threads", "2"), NULL);
    assert_true(R.cfg.metrics_public);
    assert_int_equal(R.cfg.threads, 2);
    expect_ok(ARGS("--metrics-public", "false"), NULL);
    assert_false(R.cfg.metrics_public);
    expect_ok(ARGS("--metrics-public=YES"), NULL);
    assert_true(R.cfg.metrics_public);
    expect_ok(ARGS("--metrics-public", "off"),
              (const char *const[]){"MNEMOD_METRICS_PUBLIC=1", NULL});
    assert_false(R.cfg.metrics_public);
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_METRICS_PUBLIC=1", NULL});
    assert_true(R.cfg.metrics_public);
    expect_ok(ARGS("--log-level", "debug", "--log-format", "json"), NULL);
    assert_int_equal(R.cfg.log_level, MEM_LOG_DEBUG);
    assert_true(R.cfg.log_json);
    expect_ok(ARGS("--log-level=warning"), NULL);
    assert_int_equal(R.cfg.log_level, MEM_LOG_WARN);
    expect_ok(ARGS("--log-level=error"), NULL);
    assert_int_equal(R.cfg.log_level, MEM_LOG_ERROR);
}

static void test_listen(void **state)
{
    (void)state;
    expect_ok(ARGS("--max-connections-per-ip", "8"), NULL);
    assert_int_equal(R.cfg.max_connections_per_ip, 8);
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_MAX_CONNECTIONS_PER_IP=0", NULL});
    assert_int_equal(R.cfg.max_connections_per_ip, 0);
    expect_ok(ARGS("--listen", "0.0.0.0:8080"), NULL);
    assert_string_equal(R.cfg.listen_host, "0.0.0.0");
    assert_int_equal(R.cfg.listen_port, 8080);
    expect_ok(ARGS("--listen", "[::1]:6636"), NULL);
    assert_string_equal(R.cfg.listen_host, "::1");
    assert_int_equal(R.cfg.listen_port, 6636);
    expect_ok(ARGS("--listen", "[::]:0"), NULL);
    assert_string_equal(R.cfg.listen_host, "::");
    assert_int_equal(R.cfg.listen_port, 0);
    expect_ok(ARGS("--listen", ":7000"), NULL);
    assert_string_equal(R.cfg.listen_host, "0.0.0.0");
    assert_int_equal(R.cfg.listen_port, 7000);
    expect_ok(ARGS("--listen", "localhost:65535"), NULL);
    assert_string_equal(R.cfg.listen_host, "localhost");
    assert_int_equal(R.cfg.listen_port, 65535);
    expect_bad(ARGS("--listen", "127.0.0.1"), NULL, "is not host:port");
    expect_bad(ARGS("--listen", "127.0.0.1:"), NULL, "no valid port");
    expect_bad(ARGS("--listen", "127.0.0.1:65536"), NULL, "no valid port");
    expect_bad(ARGS("--listen", "127.0.0.1:-1"), NULL, "no valid port");
    expect_bad(ARGS("--listen", "127.0.0.1:http"), NULL, "no valid port");
    expect_bad(ARGS("--listen", "::1:80"), NULL, "without brackets");
    expect_bad(ARGS("--listen", "[::1]"), NULL, "[IPv6]:port");
    expect_bad(ARGS("--listen", "[]:80"), NULL, "[IPv6]:port");
    expect_bad(ARGS("--listen", "[::1]80"), NULL, "[IPv6]:port");
    expect_bad(ARGS("--listen", "a b:80"), NULL, "invalid host");
    expect_bad(ARGS("--listen", "http://x:80"), NULL, "invalid host");
    expect_bad(ARGS("--listen", ""), NULL, "--listen (MNEMOD_LISTEN)");
}

static void test_half_life_and_decay(void **state)
{
    (void)state;
    const char *env90[] = {"MEMU_RECENCY_HALF_LIFE=90", NULL};
    expect_ok(NOARGS, env90);
    assert_true(R.cfg.decay.half_life_s == 90 * 86400.0);
    const char *env36h[] = {"MEMU_RECENCY_HALF_LIFE=36h", NULL};
    expect_ok(NOARGS, env36h);
    assert_true(R.cfg.decay.half_life_s == 36 * 3600.0);
    expect_ok(ARGS("--half-life", "1.5"), NULL);
    assert_true(R.cfg.decay.half_life_s == 1.5 * 86400);
    expect_ok(ARGS("--half-life", "2w"), NULL);
    assert_true(R.cfg.decay.half_life_s == 14 * 86400.0);
    expect_ok(ARGS("--half-life", "0"), env90);
    assert_true(R.cfg.decay.half_life_s == 0);
    /* decay offset: a bare number is seconds */
    expect_ok(ARGS("--decay-offset", "90"), NULL);
    assert_true(R.cfg.decay.offset_s == 90);
    expect_ok(ARGS("--decay-offset", "7d"), NULL);
    assert_true(R.cfg.decay.offset_s == 7 * 86400.0);
    const struct {
        const char *v;
        mem_decay_kind_t kind;
        double shape;
    } ok[] = {{"exponential", MEM_DECAY_EXPONENTIAL, 1}, {"linear", MEM_DECAY_LINEAR, 1},
              {"gaussian", MEM_DECAY_GAUSSIAN, 1},       {"none", MEM_DECAY_NONE, 1},
              {"weibull:1.5", MEM_DECAY_WEIBULL, 1.5},   {"weibull:10", MEM_DECAY_WEIBULL, 10},
              {"weibull:0.01", MEM_DECAY_WEIBULL, 0.01}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        expect_ok(ARGS("--decay", ok[i].v), NULL);
        assert_int_equal(R.cfg.decay.kind, ok[i].kind);
        assert_true(R.cfg.decay.shape == ok[i].shape);
    }
    expect_bad(ARGS("--decay", "weibull"), NULL, "needs a shape");
    expect_bad(ARGS("--decay", "weibull:"), NULL, "needs a shape");
    expect_bad(ARGS("--decay", "weibull:abc"), NULL, "needs a shape");
    expect_bad(ARGS("--decay", "weibull:0"), NULL, "outside (0, 10]");
    expect_bad(ARGS("--decay", "weibull:-1"), NULL, "outside (0, 10]");
    expect_bad(ARGS("--decay", "weibull:10.5"), NULL, "outside (0, 10]");
    expect_bad(ARGS("--decay", "Exponential"), NULL, "is not a decay");
    expect_bad(ARGS("--decay", "cosine"), NULL, "is not a decay");
    expect_bad(ARGS("--half-life", "-1"), NULL, "negative");
    expect_bad(ARGS("--half-life", "3 fortnights"), NULL, "unknown duration unit");
    expect_bad(ARGS("--half-life", "abc"), NULL,
               "invalid value for --half-life (MEMU_RECENCY_HALF_LIFE): \"abc\"");
    expect_bad(ARGS("--decay-offset", "-5s"), NULL, "--decay-offset (MNEMOD_DECAY_OFFSET)");
}

static void test_bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *flag, *value, *needle;
    } bad[] = {
        {"--max-batch", "abc",
         "invalid value for --max-batch (MNEMOD_MAX_BATCH): \"abc\" is not a positive integer"},
        {"--max-batch", "0", "is outside 1..1000000"},
        {"--max-batch", "-5", "is not a positive integer"},
        {"--max-batch", "1.5", "is not a positive integer"},
        {"--max-batch", "99999999999999999999999", "is not a positive integer"},
        {"--threads", "0", "--threads (MNEMOD_THREADS): \"0\" is outside 1..1024"},
        {"--threads", "2000", "is outside 1..1024"},
        {"--worker-spin-us", "10001",
         "--worker-spin-us (MNEMOD_WORKER_SPIN_US): \"10001\" is outside 0..10000"},
        {"--loop-spin-us", "10001",
         "--loop-spin-us (MNEMOD_LOOP_SPIN_US): \"10001\" is outside 0..10000"},
        {"--loop-spin-us", "-1", "is not a"},
        {"--max-connections", "0", "--max-connections (MNEMOD_MAX_CONNECTIONS)"},
        {"--max-connections-per-ip", "1000001",
         "--max-connections-per-ip (MNEMOD_MAX_CONNECTIONS_PER_IP): \"1000001\" is outside "
         "0..1000000"},
        {"--max-connections-per-ip", "-1", "--max-connections-per-ip"},
        {"--max-queue", "x", "--max-queue (MNEMOD_MAX_QUEUE)"},
        {"--max-namespaces", "0", "--max-namespaces (MNEMOD_MAX_NAMESPACES)"},
        {"--embed-dim", "0", "--embed-dim (MNEMOD_EMBED_DIM): \"0\" is outside 1..4096"},
        {"--embed-dim", "4097", "is outside 1..4096"},
        {"--coherence-threshold", "1.01", "is outside [-1, 1]"},
        {"--coherence-threshold", "-1.5", "is outside [-1, 1]"},
        {"--coherence-threshold", "nan", "is not a number"},
        {"--coherence-weight", "2", "--coherence-weight (MNEMOD_COHERENCE_WEIGHT)"},
        {"--coherence-weight", "-0.1", "is outside [0, 1]"},
        {"--coherence-weight", "inf", "is not a number"},
        {"--recency-bias", "1.1", "--recency-bias (MNEMOD_RECENCY_BIAS)"},
        {"--recency-bias", "0x1p-1", "is not a number"},
        {"--recency-bias", "1e999", "is not a number"},
        {"--max-body", "0", "must be a size greater than 0"},
        {"--max-body", "16 MiBs", "unknown size unit"},
        {"--max-body", "lots", "--max-body (MNEMOD_MAX_BODY)"},
        {"--max-future-skew", "-1s", "--max-future-skew (MNEMOD_MAX_FUTURE_SKEW)"},
        {"--idle-timeout", "0", "must be a duration greater than 0"},
        {"--request-timeout", "5y", "--request-timeout (MNEMOD_REQUEST_TIMEOUT)"},
        {"--graph-wait", "-1s", "--graph-wait (MNEMOD_GRAPH_WAIT)"},
        {"--graph-wait", "2h", "must be at most 1h"},
        {"--graph-wait", "soon", "is not a duration"},
        {"--sync", "FULL", "is not full or normal"},
        {"--sync", "off", "--sync (MNEMOD_SYNC)"},
        {"--log-level", "verbose", "is not debug, info, warn or error"},
        {"--log-format", "xml", "is not text or json"},
        {"--simd", "sse2", "is not auto, scalar, avx2, avx512 or neon"},
        {"--metrics-public", "maybe", "is not a boolean"},
        {"--data", "", "--data (MNEMOD_DATA): empty path"},
        {"--api-key-file", "/nonexistent/key", "cannot be read"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char arg[128];
        snprintf(arg, sizeof(arg), "%s=%s", bad[i].flag, bad[i].value);
        expect_bad(ARGS(arg), NULL, bad[i].needle);
        assert_string_equal(R.err.field, bad[i].flag + 2);
    }
    /* the same value class through the environment names the same flag and variable */
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_MAX_BATCH=abc", NULL},
               "invalid value for --max-batch (MNEMOD_MAX_BATCH): \"abc\" is not a positive "
               "integer");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_EMBED_DIM=5000", NULL}, "--embed-dim");
    /* long values are cut in the message, control bytes are not echoed */
    char longval[300];
    memset(longval, 'x', sizeof(longval) - 1);
    longval[sizeof(longval) - 1] = '\0';
    expect_bad(ARGS("--sync", longval), NULL, "...\" is not full or normal");
    expect_bad(ARGS("--sync", "a\033[2Jb"), NULL, "\"a?[2Jb\"");
}

static void test_good_values(void **state)
{
    (void)state;
    expect_ok(ARGS("--max-body", "1GiB", "--max-future-skew", "0", "--idle-timeout", "1.5m",
                   "--request-timeout", "90", "--embed-dim", "4096", "--coherence-threshold", "-1",
                   "--coherence-weight", "1", "--recency-bias", "0.25"),
              NULL);
    assert_int_equal(R.cfg.max_body, 1u << 30);
    assert_true(R.cfg.max_future_skew_s == 0);
    assert_true(R.cfg.idle_timeout_s == 90);
    assert_true(R.cfg.request_timeout_s == 90);
    assert_int_equal(R.cfg.embed_dim, 4096);
    assert_true(R.cfg.coherence_threshold == -1);
    assert_true(R.cfg.coherence_weight == 1);
    assert_true(R.cfg.decay.recency_bias == 0.25);
    expect_ok(ARGS("--graph-wait", "0"), NULL); /* 503 at once when the graph is behind */
    assert_true(R.cfg.graph_wait_s == 0);
    expect_ok(ARGS("--graph-wait", "1.5m"), NULL);
    assert_true(R.cfg.graph_wait_s == 90);
    expect_ok(ARGS("--max-body", "4096", "--embed-dim", "1", "--coherence-threshold", "1e-1"),
              NULL);
    assert_int_equal(R.cfg.max_body, 4096);
    assert_int_equal(R.cfg.embed_dim, 1);
    assert_true(R.cfg.coherence_threshold == 0.1);
    /* values are trimmed */
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_MAX_BATCH= 12 ", NULL});
    assert_int_equal(R.cfg.max_batch, 12);
    expect_ok(ARGS("--simd", "scalar"), NULL);
    assert_string_equal(R.cfg.simd, "scalar");
    expect_ok(ARGS("--simd", "scalar", "--simd", "auto"), NULL);
    assert_string_equal(R.cfg.simd, "");
    for (int isa = MEM_VEC_AVX2; isa < MEM_VEC_ISA_COUNT; isa++) {
        static const char *const names[] = {"scalar", "avx2", "avx512", "neon"};
        int rc = load(ARGS("--simd", names[isa]), NULL);
        if (mem_vec_ops_for((mem_vec_isa_t)isa)) {
            assert_int_equal(rc, MEM_CFG_RUN);
            assert_string_equal(R.cfg.simd, names[isa]);
        } else {
            assert_int_equal(rc, MEM_EINVAL);
            assert_non_null(strstr(R.err.msg, "not supported"));
        }
    }
}

static void test_unknown_and_malformed_lines(void **state)
{
    (void)state;
    expect_bad(ARGS("--nope"), NULL, "unknown flag --nope");
    expect_bad(ARGS("--max-batch=5", "--halflife=3"), NULL, "unknown flag --halflife");
    expect_bad(ARGS("-x"), NULL, "unknown flag -x");
    expect_bad(ARGS("serve"), NULL, "unexpected argument \"serve\"");
    expect_bad(ARGS("--"), NULL, "unexpected argument \"--\"");
    expect_bad(ARGS("--data"), NULL, "missing value for --data");
    expect_bad(ARGS("--data", "--threads", "2"), NULL, "missing value for --data");
    expect_bad(ARGS("--api-key"), NULL, "unknown flag --api-key");
    /* a mistake anywhere on the line is reported before any file is read */
    expect_bad(ARGS("--config", "/nonexistent.conf", "--bogus"), NULL, "unknown flag --bogus");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_MAX_BACTH=1", NULL},
               "unknown environment variable MNEMOD_MAX_BACTH");
    /* other variables are none of our business */
    expect_ok(NOARGS, (const char *const[]){"PATH=/bin", "MEMU_OTHER=1", "HOME=/", NULL});
    /* an empty variable counts as unset */
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_MAX_BATCH=", "MNEMOD_LISTEN=", NULL});
    assert_int_equal(R.cfg.max_batch, 1000);
    assert_int_equal(R.cfg.listen_port, 6636);
}

static void test_precedence(void **state)
{
    (void)state;
    const char *file = tmp_file("max-batch = 10\n"
                                "half-life = 1\n"
                                "listen = 127.0.0.2:1000\n"
                                "decay = linear\n"
                                "log-level = debug\n");
    const char *env[] = {"MNEMOD_MAX_BATCH=20", "MEMU_RECENCY_HALF_LIFE=2", NULL};
    const char *env_cfg[] = {"MNEMOD_MAX_BATCH=20", "MEMU_RECENCY_HALF_LIFE=2", NULL, NULL};
    char cfg_var[128];
    snprintf(cfg_var, sizeof(cfg_var), "MNEMOD_CONFIG=%s", file);
    env_cfg[2] = cfg_var;

    /* default only */
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.max_batch, 1000);
    /* file > default */
    expect_ok(ARGS("--config", file), NULL);
    assert_int_equal(R.cfg.max_batch, 10);
    assert_true(R.cfg.decay.half_life_s == 86400);
    assert_string_equal(R.cfg.listen_host, "127.0.0.2");
    assert_int_equal(R.cfg.listen_port, 1000);
    assert_int_equal(R.cfg.decay.kind, MEM_DECAY_LINEAR);
    assert_int_equal(R.cfg.log_level, MEM_LOG_DEBUG);
    assert_string_equal(R.cfg.config_path, file);
    /* env > file */
    expect_ok(ARGS("--config", file), env);
    assert_int_equal(R.cfg.max_batch, 20);
    assert_true(R.cfg.decay.half_life_s == 2 * 86400.0);
    assert_int_equal(R.cfg.listen_port, 1000); /* not in env: file value stays */
    /* flag > env > file, whatever the order on the line */
    expect_ok(ARGS("--max-batch", "30", "--config", file, "--half-life=3h"), env);
    assert_int_equal(R.cfg.max_batch, 30);
    assert_true(R.cfg.decay.half_life_s == 3 * 3600.0);
    assert_int_equal(R.cfg.decay.kind, MEM_DECAY_LINEAR);
    /* MNEMOD_CONFIG names the file when --config is absent */
    expect_ok(NOARGS, env_cfg);
    assert_int_equal(R.cfg.max_batch, 20);
    assert_int_equal(R.cfg.listen_port, 1000);
    /* --config beats MNEMOD_CONFIG */
    const char *other = tmp_file("max-namespaces = 7\n");
    expect_ok(ARGS("--config", other), env_cfg);
    assert_int_equal(R.cfg.max_namespaces, 7);
    assert_int_equal(R.cfg.listen_port, 6636);
    /* an invalid env value is an error even if a flag would override it: each source
     * must be valid on its own */
    expect_bad(ARGS("--max-batch", "5"), (const char *const[]){"MNEMOD_MAX_BATCH=x", NULL},
               "MNEMOD_MAX_BATCH");
}

static void test_file_format(void **state)
{
    (void)state;
    const char *file = tmp_file("# mnemod settings\n"
                                "\n"
                                "   # indented comment\n"
                                "data = /var/lib/mnemod/a b.db   # inline comment\n"
                                "half-life=90d\r\n"
                                "\tmax-body\t=\t8 MiB\t\n"
                                "listen = \"[::1]:6637\"\n"
                                "log-format = 'json'\n"
                                "decay = weibull:2 # comment\n"
                                "metrics-public = on\n"
                                "sync = normal"); /* no final newline */
    expect_ok(ARGS("--config", file), NULL);
    assert_string_equal(R.cfg.data_path, "/var/lib/mnemod/a b.db");
    assert_true(R.cfg.decay.half_life_s == 90 * 86400.0);
    assert_int_equal(R.cfg.max_body, 8u << 20);
    assert_string_equal(R.cfg.listen_host, "::1");
    assert_int_equal(R.cfg.listen_port, 6637);
    assert_true(R.cfg.log_json);
    assert_int_equal(R.cfg.decay.kind, MEM_DECAY_WEIBULL);
    assert_true(R.cfg.decay.shape == 2);
    assert_true(R.cfg.metrics_public);
    assert_false(R.cfg.sync_full);
    /* a '#' inside a value with no space before it is part of the value */
    expect_ok(ARGS("--config", tmp_file("data = /tmp/a#b.db\n")), NULL);
    assert_string_equal(R.cfg.data_path, "/tmp/a#b.db");
    expect_ok(ARGS("--config", tmp_file("data = \"/tmp/x # y.db\"\n")), NULL);
    assert_string_equal(R.cfg.data_path, "/tmp/x # y.db");
    /* an empty file is fine */
    expect_ok(ARGS("--config", tmp_file("")), NULL);
    assert_int_equal(R.cfg.max_batch, 1000);
}

static void test_file_errors(void **state)
{
    (void)state;
    const char *f = tmp_file("max-batch = 10\nmax-bacth = 3\n");
    const char *base = strrchr(f, '/') + 1;
    expect_bad(ARGS("--config", f), NULL, "unknown key \"max-bacth\"");
    assert_non_null(strstr(R.err.msg, base));
    assert_non_null(strstr(R.err.msg, ":2: "));
    expect_bad(ARGS("--config", tmp_file("\n\nthreads = many\n")), NULL,
               ":3: invalid value for --threads (MNEMOD_THREADS): \"many\" is not a positive "
               "integer");
    expect_bad(ARGS("--config", tmp_file("threads 4\n")), NULL, ":1: expected key = value");
    expect_bad(ARGS("--config", tmp_file("threads =\n")), NULL, ":1: empty value for threads");
    expect_bad(ARGS("--config", tmp_file("= 4\n")), NULL, "unknown key \"\"");
    expect_bad(ARGS("--config", tmp_file("--threads = 4\n")), NULL, "unknown key \"--threads\"");
    expect_bad(ARGS("--config", tmp_file("MNEMOD_THREADS = 4\n")), NULL,
               "unknown key \"MNEMOD_THREADS\"");
    expect_bad(ARGS("--config", tmp_file("config = /etc/other.conf\n")), NULL,
               "\"config\" cannot be set inside a config file");
    expect_bad(ARGS("--config", "/nonexistent/mnemod.conf"), NULL,
               "cannot read config file /nonexistent/mnemod.conf");
    expect_bad(ARGS("--config", ""), NULL, "--config (MNEMOD_CONFIG): empty path");
    char nul_file[] = "threads = 4\nsync = full\0x\n";
    const char *nf = tmp_file("");
    FILE *fp = fopen(nf, "wb");
    assert_non_null(fp);
    fwrite(nul_file, 1, sizeof(nul_file) - 1, fp);
    fclose(fp);
    expect_bad(ARGS("--config", nf), NULL, ":2: NUL byte");
}

/* libmicrohttpd counts the idle timeout in whole seconds, 0 meaning none: a fraction must
 * round up, so no value > 0 switches the timeout off. */
static void test_timeouts(void **state)
{
    (void)state;
    const char *const up[][2] = {{"0.0001", "1"}, {"1ms", "1"},  {"0.5", "1"},
                                 {"250ms", "1"},  {"1.2s", "2"}, {"1500ms", "2"},
                                 {"30s", "30"},   {"2m", "120"}, {"7d", "604800"}};
    for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
        expect_ok(ARGS("--idle-timeout", up[i][0]), NULL);
        if (R.cfg.idle_timeout_s != atof(up[i][1]))
            fail_msg("--idle-timeout %s: got %g, want %s", up[i][0], R.cfg.idle_timeout_s,
                     up[i][1]);
    }
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_IDLE_TIMEOUT=10ms", NULL});
    assert_true(R.cfg.idle_timeout_s == 1.0);
    char desc[8192];
    mem_cfg_describe(&R.cfg, desc, sizeof(desc));
    assert_non_null(strstr(desc, " idle_timeout_s=1 "));
    expect_bad(ARGS("--idle-timeout", "0"), NULL, "must be a duration greater than 0");
    expect_bad(ARGS("--idle-timeout", "0ms"), NULL, "must be a duration greater than 0");
    expect_bad(ARGS("--idle-timeout", "8d"), NULL,
               "invalid value for --idle-timeout (MNEMOD_IDLE_TIMEOUT): \"8d\" must be at most 7d");
    expect_bad(ARGS("--idle-timeout", "10000w"), NULL, "must be at most 7d");
    /* the request deadline is kept to the nanosecond, and bounded the same way */
    expect_ok(ARGS("--request-timeout", "250ms"), NULL);
    assert_true(R.cfg.request_timeout_s == 0.25);
    expect_ok(ARGS("--request-timeout", "7d"), NULL);
    expect_bad(ARGS("--request-timeout", "0"), NULL, "must be a duration greater than 0");
    expect_bad(ARGS("--request-timeout", "1000w"), NULL,
               "invalid value for --request-timeout (MNEMOD_REQUEST_TIMEOUT): \"1000w\" must be "
               "at most 7d");
    /* a relayed request's timeout is whole milliseconds of an int: rounded up, at most 7d */
    expect_ok(ARGS("--forward-timeout", "0.0001"), NULL);
    assert_true(R.cfg.forward_timeout_s == 0.001);
    expect_ok(ARGS("--forward-timeout", "1.5ms"), NULL);
    assert_true(R.cfg.forward_timeout_s == 0.002);
    expect_ok(ARGS("--forward-timeout", "7d"), NULL);
    assert_true(R.cfg.forward_timeout_s * 1000.0 <= 2147483647.0);
    expect_bad(ARGS("--forward-timeout", "25d"), NULL,
               "invalid value for --forward-timeout (MNEMOD_FORWARD_TIMEOUT): \"25d\" must be at "
               "most 7d");
}

/* The default address peers are told to use is one they can connect to. */
static void test_advertise(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"0.0.0.0:7000", "127.0.0.1:7000"},   {":7000", "127.0.0.1:7000"},
        {"[::]:7000", "[::1]:7000"},          {"[0:0:0:0:0:0:0:0]:7000", "[::1]:7000"},
        {"[::1]:7000", "[::1]:7000"},         {"127.0.0.1:7000", "127.0.0.1:7000"},
        {"10.0.0.5:7000", "10.0.0.5:7000"},   {"[fe80::1]:7000", "[fe80::1]:7000"},
        {"localhost:7000", "localhost:7000"},
    };
    char buf[300];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        expect_ok(ARGS("--listen", cases[i][0]), NULL);
        size_t n = mem_cfg_advertise(&R.cfg, buf, sizeof(buf));
        assert_int_equal(n, strlen(cases[i][1]));
        if (strcmp(buf, cases[i][1]) != 0)
            fail_msg("--listen %s: advertised %s, want %s", cases[i][0], buf, cases[i][1]);
    }
    expect_ok(ARGS("--listen", "[::]:7000", "--advertise", "10.0.0.7:7000"), NULL);
    mem_cfg_advertise(&R.cfg, buf, sizeof(buf));
    assert_string_equal(buf, "10.0.0.7:7000");
    /* the start-up line shows the address in effect */
    expect_ok(
        ARGS("--listen", "[::]:7000", "--nats-url", "nats://127.0.0.1:4222", "--node-id", "a"),
        NULL);
    char desc[8192];
    mem_cfg_describe(&R.cfg, desc, sizeof(desc));
    assert_non_null(strstr(desc, " advertise=[::1]:7000 "));
}

/* The file and value bounds answer one line naming the file or the setting, wherever the
 * value comes from. */
static void test_source_limits(void **state)
{
    (void)state;
    size_t big = MEM_CFG_FILE_MAX;
    char *text = malloc(big + 2);
    assert_non_null(text);
    /* exactly MEM_CFG_FILE_MAX bytes: one setting, then comment lines */
    size_t o = (size_t)sprintf(text, "max-batch = 7\n");
    while (o < big) {
        size_t n = big - o < 100 ? big - o : 100;
        memset(text + o, '#', n);
        text[o + n - 1] = '\n';
        o += n;
    }
    text[o] = '\0';
    const char *f = tmp_file(text);
    expect_ok(ARGS("--config", f), NULL);
    assert_int_equal(R.cfg.max_batch, 7);
    text[o] = '\n'; /* one byte more */
    text[o + 1] = '\0';
    f = tmp_file(text);
    expect_bad(ARGS("--config", f), NULL, "is larger than 1 MiB");
    assert_non_null(strstr(R.err.msg, strrchr(f, '/') + 1));
    /* a value of MEM_CFG_VALUE_MAX bytes: refused from a flag, a variable and a file line;
     * one byte less reaches the setting's own check */
    size_t vl = MEM_CFG_VALUE_MAX;
    char *env = malloc(vl + 32);
    assert_non_null(env);
    int p = sprintf(env, "MNEMOD_DATA=");
    memset(env + p, 'd', vl);
    env[p + vl] = '\0';
    const char *val = env + p;
    expect_bad(ARGS("--data", val), NULL, "invalid value for --data: longer than 8191 bytes");
    expect_bad(NOARGS, (const char *const[]){env, NULL}, "--data: longer than 8191 bytes");
    sprintf(text, "data = %s\n", val);
    expect_bad(ARGS("--config", tmp_file(text)), NULL,
               ":1: invalid value for --data: longer than 8191 bytes");
    env[p + vl - 1] = '\0';
    expect_bad(ARGS("--data", val), NULL, "path longer than 4095 bytes");
    free(env);
    free(text);
}

static void test_cluster_limits(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.publishers, 4);
    assert_int_equal(R.cfg.max_relay_answer, (size_t)1 << 30);
    expect_ok(ARGS("--cluster-publishers", "64", "--max-relay-answer", "64KiB"), NULL);
    assert_int_equal(R.cfg.publishers, 64);
    assert_int_equal(R.cfg.max_relay_answer, 65536);
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_CLUSTER_PUBLISHERS=1", NULL});
    assert_int_equal(R.cfg.publishers, 1);
    expect_bad(ARGS("--cluster-publishers", "0"), NULL,
               "invalid value for --cluster-publishers (MNEMOD_CLUSTER_PUBLISHERS): \"0\" is "
               "outside 1..64");
    expect_bad(ARGS("--cluster-publishers", "65"), NULL, "is outside 1..64");
    expect_bad(ARGS("--max-relay-answer", "0"), NULL,
               "invalid value for --max-relay-answer (MNEMOD_MAX_RELAY_ANSWER): \"0\" must be a "
               "size greater than 0");
    expect_ok(
        ARGS("--nats-url", "nats://127.0.0.1:4222", "--node-id", "a", "--cluster-publishers", "2"),
        NULL);
    char desc[8192];
    mem_cfg_describe(&R.cfg, desc, sizeof(desc));
    assert_non_null(strstr(desc, " cluster_publishers=2 max_relay_answer=1073741824"));
}

static void test_api_key(void **state)
{
    (void)state;
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_API_KEY=s3cret-Key_1", NULL});
    assert_string_equal(R.cfg.api_key, "s3cret-Key_1");
    expect_ok(ARGS("--api-key-file", tmp_file("filekey\n")), NULL);
    assert_string_equal(R.cfg.api_key, "filekey");
    expect_ok(ARGS("--api-key-file", tmp_file("crlfkey\r\n")), NULL);
    assert_string_equal(R.cfg.api_key, "crlfkey");
    expect_ok(ARGS("--api-key-file", tmp_file("bare")), NULL);
    assert_string_equal(R.cfg.api_key, "bare");
    /* flag beats env; env file variable works; config file key works */
    expect_ok(ARGS("--api-key-file", tmp_file("fromflag\n")),
              (const char *const[]){"MNEMOD_API_KEY=fromenv", NULL});
    assert_string_equal(R.cfg.api_key, "fromflag");
    char var[128];
    snprintf(var, sizeof(var), "MNEMOD_API_KEY_FILE=%s", tmp_file("fromenvfile\n"));
    expect_ok(NOARGS, (const char *const[]){var, NULL});
    assert_string_equal(R.cfg.api_key, "fromenvfile");
    char conf[128];
    snprintf(conf, sizeof(conf), "api-key-file = %s\n", tmp_file("fromconf\n"));
    expect_ok(ARGS("--config", tmp_file(conf)), NULL);
    assert_string_equal(R.cfg.api_key, "fromconf");
    expect_ok(ARGS("--config", tmp_file(conf)),
              (const char *const[]){"MNEMOD_API_KEY=envwins", NULL});
    assert_string_equal(R.cfg.api_key, "envwins");
    /* bad keys; the key itself never appears in the message */
    expect_bad(ARGS("--api-key-file", tmp_file("\n")), NULL, "the API key is empty");
    expect_bad(ARGS("--api-key-file", tmp_file("")), NULL, "the API key is empty");
    expect_bad(ARGS("--api-key-file", tmp_file("two words\n")), NULL, "without spaces");
    assert_null(strstr(R.err.msg, "two words"));
    expect_bad(ARGS("--api-key-file", tmp_file("a\nb\n")), NULL, "without spaces");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_API_KEY=caf\xc3\xa9", NULL},
               "invalid value for MNEMOD_API_KEY: the API key must be printable ASCII");
    assert_null(strstr(R.err.msg, "caf"));
    char big[700];
    memset(big, 'k', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    expect_bad(ARGS("--api-key-file", tmp_file(big)), NULL, "too long");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_API_KEY=a", var, NULL},
               "set only one of MNEMOD_API_KEY and MNEMOD_API_KEY_FILE");
}

/* etc/mnemod.conf.sample as it was when this test was built (the Makefile compiles a copy
 * in): the test checks the sample against the code it was built with, never a working tree
 * that may change while the suites run (a checkout or a merge that rewrites the file between
 * the build and the run, or between two reads of it, fails a test that reads it then). */
static const unsigned char SAMPLE_CONF[] = {
#include "sample_conf.inc"
    0};

/* etc/mnemod.conf.sample documents every key with its default: uncommenting every
 * "# key = value" line must give the defaults back, and every flag must be there.
 * MEM_TEST_SAMPLE_CONF=FILE checks another copy (an installed one) instead, read once. */
static void test_sample_config(void **state)
{
    (void)state;
    static char sample[32768];
    const char *path = getenv("MEM_TEST_SAMPLE_CONF");
    if (path) {
        FILE *f = fopen(path, "r");
        if (!f) fail_msg("cannot open %s", path);
        size_t len = fread(sample, 1, sizeof(sample) - 1, f);
        fclose(f);
        sample[len] = '\0';
    } else {
        path = "etc/mnemod.conf.sample (as built)";
        assert_true(sizeof(SAMPLE_CONF) <= sizeof(sample));
        memcpy(sample, SAMPLE_CONF, sizeof(SAMPLE_CONF));
    }
    static char uncommented[16384], line[512];
    size_t used = 0;
    int keys = 0;
    for (const char *p = sample; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
        assert_true(len < sizeof(line));
        memcpy(line, p, len);
        line[len] = '\0';
        p += len;
        char key[64];
        int n = 0;
        if (sscanf(line, "# %63[a-z-] = %n", key, &n) != 1 || n == 0) continue;
        if (strcmp(key, "api-key-file") == 0 || strcmp(key, "threads") == 0 ||
            strcmp(key, "scan-helpers") == 0 || strcmp(key, "embedder-model") == 0 ||
            strcmp(key, "embedder-key-file") == 0 || strcmp(key, "keys-file") == 0 ||
            strcmp(key, "allowed-origins") == 0 || strcmp(key, "allowed-hosts") == 0 ||
            strcmp(key, "nats-url") == 0 || strcmp(key, "node-id") == 0 ||
            strcmp(key, "advertise") == 0)
            continue; /* example values (no default); CPU-dependent defaults */
        assert_true(used + len < sizeof(uncommented));
        memcpy(uncommented + used, line + 2, len - 2);
        used += len - 2;
        uncommented[used] = '\0';
        keys++;
    }
    assert_true(keys >= 20);
    expect_ok(ARGS("--config", tmp_file(uncommented)), NULL);
    mem_cfg_t want;
    mem_cfg_defaults(&want);
    strcpy(want.config_path, R.cfg.config_path);
    assert_memory_equal(&want, &R.cfg, sizeof(want));
    /* every flag of --help has a "# flag = " line */
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    static char help[MEM_CFG_TEXT_MAX];
    strcpy(help, R.out);
    for (const char *p = strstr(help, "\n  --"); p; p = strstr(p + 1, "\n  --")) {
        char flag[64], needle[80];
        if (sscanf(p + 5, "%63[a-z0-9-]", flag) != 1 || strcmp(flag, "help") == 0 ||
            strcmp(flag, "version") == 0 || strcmp(flag, "config") == 0)
            continue;
        snprintf(needle, sizeof(needle), "\n# %s = ", flag);
        if (!strstr(sample, needle)) fail_msg("%s does not document %s", path, flag);
    }
}

static void test_describe(void **state)
{
    (void)state;
    char line[2048];
    expect_ok(NOARGS, NULL);
    size_t n = mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_int_equal(n, strlen(line));
    assert_null(strchr(line, '\n'));
    assert_non_null(strstr(line, "listen=127.0.0.1:6636 data=./mnemod.db config=none "));
    assert_non_null(strstr(line, " half_life_s=0 decay=exponential "));
    assert_non_null(strstr(line, " auth=off "));
    assert_non_null(strstr(line, " max_body=16777216 "));
    assert_non_null(strstr(line, " simd=auto"));
    expect_ok(ARGS("--listen", "[::1]:1", "--decay", "weibull:1.5", "--half-life", "1", "--sync",
                   "normal", "--log-format", "json"),
              (const char *const[]){"MNEMOD_API_KEY=topsecret", NULL});
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, "listen=[::1]:1 "));
    assert_non_null(strstr(line, " half_life_s=86400 decay=weibull:1.5 "));
    assert_non_null(strstr(line, " auth=on "));
    assert_non_null(strstr(line, " sync=normal "));
    assert_non_null(strstr(line, " log_format=json "));
    assert_null(strstr(line, "topsecret"));
    /* measuring, and truncation */
    assert_int_equal(mem_cfg_describe(&R.cfg, NULL, 0), strlen(line));
    char small[16];
    mem_cfg_describe(&R.cfg, small, sizeof(small));
    assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* Cluster mode settings (issue 7): environment only, off by default, validated. */
static void test_cluster(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    assert_string_equal(R.cfg.nats_url, "");
    assert_string_equal(R.cfg.node_id, "");
    assert_int_equal(R.cfg.streams, 4);
    assert_int_equal(R.cfg.replicas, 3);
    expect_ok(NOARGS,
              (const char *const[]){"MNEMOD_NATS_URL=nats://127.0.0.1:4222,nats://h:4223",
                                    "MNEMOD_NODE_ID=node-a_1", "MNEMOD_STREAMS=8",
                                    "MNEMOD_REPLICAS=1", "MNEMOD_ADVERTISE=10.0.0.1:6636", NULL});
    assert_string_equal(R.cfg.nats_url, "nats://127.0.0.1:4222,nats://h:4223");
    assert_string_equal(R.cfg.node_id, "node-a_1");
    assert_int_equal(R.cfg.streams, 8);
    assert_int_equal(R.cfg.replicas, 1);
    assert_string_equal(R.cfg.advertise, "10.0.0.1:6636");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_NATS_URL=nats://127.0.0.1:4222", NULL},
               "MNEMOD_NODE_ID");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_NATS_URL=http://x", "MNEMOD_NODE_ID=a", NULL},
               "MNEMOD_NATS_URL");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_NODE_ID=a.b", NULL}, "MNEMOD_NODE_ID");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_STREAMS=0", NULL}, "MNEMOD_STREAMS");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_STREAMS=257", NULL}, "MNEMOD_STREAMS");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_REPLICAS=6", NULL}, "MNEMOD_REPLICAS");
    /* an empty variable counts as unset: still single-node */
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_NATS_URL=", NULL});
    assert_string_equal(R.cfg.nats_url, "");
    /* placement settings: defaults, flags, the config file, bounds */
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.ns_replicas, 2);
    assert_true(R.cfg.cluster_write_timeout_s == 15.0);
    assert_true(R.cfg.node_dead_after_s == 300.0);
    assert_true(R.cfg.trim_interval_s == 3600.0);
    assert_int_equal(R.cfg.trim_bytes, (size_t)1 << 30);
    assert_int_equal(R.cfg.max_lag, 10000);
    assert_true(R.cfg.rebalance);
    assert_int_equal(R.cfg.max_moves, 2);
    expect_ok(ARGS("--nats-url", "nats://h:1", "--node-id=n1", "--namespace-replicas", "3",
                   "--cluster-write-timeout", "2s", "--node-dead-after=1m", "--log-trim-size",
                   "64MiB", "--log-trim-interval", "0", "--max-lag", "50", "--rebalance", "off",
                   "--max-moves", "4", "--forward-timeout", "5", "--stream-replicas", "1",
                   "--advertise", "10.1.2.3:7000"),
              NULL);
    assert_string_equal(R.cfg.nats_url, "nats://h:1");
    assert_string_equal(R.cfg.node_id, "n1");
    assert_int_equal(R.cfg.ns_replicas, 3);
    assert_true(R.cfg.cluster_write_timeout_s == 2.0);
    assert_true(R.cfg.node_dead_after_s == 60.0);
    assert_int_equal(R.cfg.trim_bytes, (size_t)64 << 20);
    assert_true(R.cfg.trim_interval_s == 0.0);
    assert_int_equal(R.cfg.max_lag, 50);
    assert_false(R.cfg.rebalance);
    assert_int_equal(R.cfg.max_moves, 4);
    assert_true(R.cfg.forward_timeout_s == 5.0);
    assert_int_equal(R.cfg.replicas, 1);
    assert_string_equal(R.cfg.advertise, "10.1.2.3:7000");
    char line[4096];
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " node_id=n1 "));
    assert_non_null(strstr(line, " namespace_replicas=3 "));
    assert_non_null(strstr(line, " rebalance=0 "));
    expect_ok(ARGS("--config", tmp_file("nats-url = nats://x:4222\nnode-id = file-node\n"
                                        "namespace-replicas = 1\nmax-moves = 7\n")),
              NULL);
    assert_string_equal(R.cfg.node_id, "file-node");
    assert_int_equal(R.cfg.ns_replicas, 1);
    assert_int_equal(R.cfg.max_moves, 7);
    expect_bad(ARGS("--namespace-replicas", "8"), NULL, "namespace-replicas");
    expect_bad(ARGS("--namespace-replicas", "0"), NULL, "namespace-replicas");
    expect_bad(ARGS("--max-moves", "0"), NULL, "max-moves");
    expect_bad(ARGS("--cluster-write-timeout", "0"), NULL, "cluster-write-timeout");
    expect_bad(ARGS("--advertise", "nohost"), NULL, "advertise");
    expect_bad(ARGS("--nats-url", "nats://h:1"), NULL, "node-id");
    /* a cluster node on a port chosen at start must say where the others reach it */
    expect_bad(ARGS("--nats-url", "nats://h:1", "--node-id", "n1", "--listen", "127.0.0.1:0"), NULL,
               "--advertise");
    expect_ok(ARGS("--nats-url", "nats://h:1", "--node-id", "n1", "--listen", "127.0.0.1:0",
                   "--advertise", "10.0.0.7:7000"),
              NULL);
    expect_ok(ARGS("--listen", "127.0.0.1:0"), NULL); /* one node: nobody needs to reach it */
    /* single-node: the cluster settings stay out of the start-up line */
    expect_ok(NOARGS, NULL);
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_null(strstr(line, "node_id="));
}

/* Parallel scan settings: defaults, every source, bounds, the help and describe lines. */
static void test_scan_settings(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(R.cfg.scan_helpers, ncpu > 65 ? 64 : ncpu > 1 ? ncpu - 1 : 0);
    assert_int_equal(R.cfg.scan_split_min, 1048576);
    expect_ok(ARGS("--scan-helpers", "3", "--scan-split-min=0"), NULL);
    assert_int_equal(R.cfg.scan_helpers, 3);
    assert_int_equal(R.cfg.scan_split_min, 0);
    expect_ok(ARGS("--scan-helpers=0", "--scan-split-min", "5000"), NULL);
    assert_int_equal(R.cfg.scan_helpers, 0);
    assert_int_equal(R.cfg.scan_split_min, 5000);
    expect_ok(NOARGS,
              (const char *const[]){"MNEMOD_SCAN_HELPERS=64", "MNEMOD_SCAN_SPLIT_MIN=1", NULL});
    assert_int_equal(R.cfg.scan_helpers, 64);
    assert_int_equal(R.cfg.scan_split_min, 1);
    /* flag > environment > file */
    expect_ok(ARGS("--config", tmp_file("scan-helpers = 2\nscan-split-min = 77\n"),
                   "--scan-split-min", "88"),
              (const char *const[]){"MNEMOD_SCAN_HELPERS=5", NULL});
    assert_int_equal(R.cfg.scan_helpers, 5);
    assert_int_equal(R.cfg.scan_split_min, 88);
    expect_bad(ARGS("--scan-helpers", "65"), NULL,
               "--scan-helpers (MNEMOD_SCAN_HELPERS): \"65\" is outside 0..64");
    expect_bad(ARGS("--scan-helpers", "-1"), NULL, "is not a positive integer");
    expect_bad(ARGS("--scan-split-min", "1M"), NULL,
               "--scan-split-min (MNEMOD_SCAN_SPLIT_MIN): \"1M\" is not a positive integer");
    expect_bad(ARGS("--scan-split-min", "2000000000000"), NULL, "is outside 0..1099511627776");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_SCAN_HELPERS=x", NULL}, "MNEMOD_SCAN_HELPERS");
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    assert_non_null(strstr(R.out, "--scan-helpers N"));
    assert_non_null(strstr(R.out, "MNEMOD_SCAN_SPLIT_MIN"));
    expect_ok(ARGS("--scan-helpers", "3", "--scan-split-min=0"), NULL);
    char line[2048];
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " scan_helpers=3 scan_split_min=0"));
}

/* --loop-spin-us: every source, its precedence, its bounds, the help and the config line. */
static void test_loop_spin(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.loop_spin_us, 200);
    expect_ok(ARGS("--loop-spin-us", "0"), NULL);
    assert_int_equal(R.cfg.loop_spin_us, 0);
    expect_ok(ARGS("--loop-spin-us=10000"), NULL);
    assert_int_equal(R.cfg.loop_spin_us, 10000);
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_LOOP_SPIN_US=75", NULL});
    assert_int_equal(R.cfg.loop_spin_us, 75);
    expect_ok(ARGS("--config", tmp_file("loop-spin-us = 33\n")), NULL);
    assert_int_equal(R.cfg.loop_spin_us, 33);
    /* flag > environment > file */
    expect_ok(ARGS("--config", tmp_file("loop-spin-us = 33\n")),
              (const char *const[]){"MNEMOD_LOOP_SPIN_US=44", NULL});
    assert_int_equal(R.cfg.loop_spin_us, 44);
    expect_ok(ARGS("--config", tmp_file("loop-spin-us = 33\n"), "--loop-spin-us", "55"),
              (const char *const[]){"MNEMOD_LOOP_SPIN_US=44", NULL});
    assert_int_equal(R.cfg.loop_spin_us, 55);
    expect_bad(ARGS("--loop-spin-us", "10001"), NULL,
               "--loop-spin-us (MNEMOD_LOOP_SPIN_US): \"10001\" is outside 0..10000");
    expect_bad(ARGS("--loop-spin-us", "1.5"), NULL, "is not a positive integer");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_LOOP_SPIN_US=fast", NULL},
               "MNEMOD_LOOP_SPIN_US");
    expect_bad(ARGS("--config", tmp_file("loop-spin-us = 20000\n")), NULL, "loop-spin-us");
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    assert_non_null(strstr(R.out, "--loop-spin-us N"));
    assert_non_null(strstr(R.out, "MNEMOD_LOOP_SPIN_US"));
    expect_ok(ARGS("--loop-spin-us", "120"), NULL);
    char line[2048];
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " loop_spin_us=120 "));
}

/* --text-cache: a size from every source, 0 allowed, bad sizes refused, help and line. */
static void test_text_cache(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.text_cache, (size_t)64 << 20);
    expect_ok(ARGS("--text-cache", "0"), NULL);
    assert_int_equal(R.cfg.text_cache, 0);
    expect_ok(ARGS("--text-cache=1GiB"), NULL);
    assert_int_equal(R.cfg.text_cache, (size_t)1 << 30);
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_TEXT_CACHE=512KiB", NULL});
    assert_int_equal(R.cfg.text_cache, (size_t)512 << 10);
    expect_ok(ARGS("--config", tmp_file("text-cache = 3MiB\n"), "--text-cache", "1000"),
              (const char *const[]){"MNEMOD_TEXT_CACHE=2MiB", NULL});
    assert_int_equal(R.cfg.text_cache, 1000);
    expect_ok(ARGS("--config", tmp_file("text-cache = 3MiB\n")), NULL);
    assert_int_equal(R.cfg.text_cache, (size_t)3 << 20);
    expect_bad(ARGS("--text-cache", "lots"), NULL, "--text-cache (MNEMOD_TEXT_CACHE)");
    expect_bad(ARGS("--text-cache", "-1"), NULL, "is not a size");
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    assert_non_null(strstr(R.out, "--text-cache SIZE"));
    expect_ok(ARGS("--text-cache", "2048"), NULL);
    char line[2048];
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " text_cache=2048"));
}

/* --connection-memory: 16KiB by default, a size within 4KiB..1MiB from every source,
 * others refused with the range, help and line. */
static void test_connection_memory(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.connection_memory, (size_t)16 << 10);
    expect_ok(ARGS("--connection-memory", "4KiB"), NULL);
    assert_int_equal(R.cfg.connection_memory, (size_t)4 << 10);
    expect_ok(ARGS("--connection-memory=1MiB"), NULL);
    assert_int_equal(R.cfg.connection_memory, (size_t)1 << 20);
    expect_ok(NOARGS, (const char *const[]){"MNEMOD_CONNECTION_MEMORY=32KiB", NULL});
    assert_int_equal(R.cfg.connection_memory, (size_t)32 << 10);
    expect_ok(ARGS("--config", tmp_file("connection-memory = 64KiB\n")), NULL);
    assert_int_equal(R.cfg.connection_memory, (size_t)64 << 10);
    expect_bad(ARGS("--connection-memory", "4095"), NULL, "from 4KiB to 1MiB");
    expect_bad(ARGS("--connection-memory", "2MiB"), NULL, "from 4KiB to 1MiB");
    expect_bad(ARGS("--connection-memory", "0"), NULL, "greater than 0");
    expect_bad(ARGS("--connection-memory", "lots"), NULL,
               "--connection-memory (MNEMOD_CONNECTION_MEMORY)");
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    assert_non_null(strstr(R.out, "--connection-memory SIZE"));
    expect_ok(ARGS("--connection-memory", "8192"), NULL);
    char line[2048];
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " connection_memory=8192"));
}

/* Embedder settings (SPEC 6): builtin by default; openai:URL with its model, key, timeout
 * and batch from every source; bad URLs, models, keys, bounds and combinations refused. */
static void test_embedder(void **state)
{
    (void)state;
    expect_ok(NOARGS, NULL);
    assert_int_equal(R.cfg.embedder, MEM_CFG_EMBEDDER_BUILTIN);
    assert_string_equal(R.cfg.embedder_url, "");
    assert_string_equal(R.cfg.embedder_model, "");
    assert_string_equal(R.cfg.embedder_key, "");
    assert_true(R.cfg.embedder_timeout_s == 30.0);
    assert_int_equal(R.cfg.embedder_batch, 64);
    char line[4096];
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " embedder=builtin"));

    /* flags; trailing slashes of the base URL are dropped */
    expect_ok(ARGS("--embedder", "openai:http://127.0.0.1:11434/v1/", "--embedder-model",
                   "nomic-embed-text:latest", "--embedder-timeout", "2.5", "--embedder-batch", "7"),
              NULL);
    assert_int_equal(R.cfg.embedder, MEM_CFG_EMBEDDER_OPENAI);
    assert_string_equal(R.cfg.embedder_url, "http://127.0.0.1:11434/v1");
    assert_string_equal(R.cfg.embedder_model, "nomic-embed-text:latest");
    assert_true(R.cfg.embedder_timeout_s == 2.5);
    assert_int_equal(R.cfg.embedder_batch, 7);
    /* environment, with the key itself; a duration with a unit */
    expect_ok(NOARGS,
              (const char *const[]){"MNEMOD_EMBEDDER=openai:https://api.openai.com/v1",
                                    "MNEMOD_EMBEDDER_MODEL=text-embedding-3-small",
                                    "MNEMOD_EMBEDDER_KEY=sk-test_123", "MNEMOD_EMBEDDER_TIMEOUT=2m",
                                    "MNEMOD_EMBEDDER_BATCH=2048", NULL});
    assert_string_equal(R.cfg.embedder_url, "https://api.openai.com/v1");
    assert_string_equal(R.cfg.embedder_key, "sk-test_123");
    assert_true(R.cfg.embedder_timeout_s == 120.0);
    assert_int_equal(R.cfg.embedder_batch, 2048);
    mem_cfg_describe(&R.cfg, line, sizeof(line));
    assert_non_null(strstr(line, " embedder=openai:https://api.openai.com/v1 "
                                 "embedder_model=text-embedding-3-small embedder_key=on "
                                 "embedder_timeout_s=120 embedder_batch=2048"));
    assert_null(strstr(line, "sk-test_123"));
    /* key file (newline ignored), from the flag, the environment and the config file */
    expect_ok(ARGS("--embedder", "openai:http://h/v1", "--embedder-model", "m",
                   "--embedder-key-file", tmp_file("filekey\n")),
              NULL);
    assert_string_equal(R.cfg.embedder_key, "filekey");
    char var[128], conf[512];
    snprintf(var, sizeof(var), "MNEMOD_EMBEDDER_KEY_FILE=%s", tmp_file("envfile\r\n"));
    expect_ok(ARGS("--embedder", "openai:http://h/v1", "--embedder-model", "m"),
              (const char *const[]){var, NULL});
    assert_string_equal(R.cfg.embedder_key, "envfile");
    snprintf(conf, sizeof(conf),
             "embedder = openai:http://10.0.0.1:8080/v1\nembedder-model = \"bge-m3\"\n"
             "embedder-key-file = %s\nembedder-timeout = 45s\nembedder-batch = 16\n",
             tmp_file("confkey\n"));
    expect_ok(ARGS("--config", tmp_file(conf)), NULL);
    assert_string_equal(R.cfg.embedder_url, "http://10.0.0.1:8080/v1");
    assert_string_equal(R.cfg.embedder_model, "bge-m3");
    assert_string_equal(R.cfg.embedder_key, "confkey");
    assert_true(R.cfg.embedder_timeout_s == 45.0);
    assert_int_equal(R.cfg.embedder_batch, 16);
    /* precedence: flag > env > file */
    expect_ok(ARGS("--config", tmp_file(conf), "--embedder-batch", "3"),
              (const char *const[]){"MNEMOD_EMBEDDER_BATCH=9", "MNEMOD_EMBEDDER_MODEL=envm", NULL});
    assert_int_equal(R.cfg.embedder_batch, 3);
    assert_string_equal(R.cfg.embedder_model, "envm");
    /* back to builtin from a later source */
    expect_ok(ARGS("--embedder", "openai:http://h/v1", "--embedder", "builtin"), NULL);
    assert_int_equal(R.cfg.embedder, MEM_CFG_EMBEDDER_BUILTIN);
    assert_string_equal(R.cfg.embedder_url, "");

    /* bad values */
    expect_bad(ARGS("--embedder", "ollama"), NULL,
               "--embedder (MNEMOD_EMBEDDER): \"ollama\" is not builtin or openai:BASE_URL");
    expect_bad(ARGS("--embedder", "openai:"), NULL, "needs an http:// or https:// base URL");
    expect_bad(ARGS("--embedder", "openai:ftp://h/v1"), NULL, "needs an http:// or https://");
    expect_bad(ARGS("--embedder", "openai:http://"), NULL, "has a URL without a host");
    expect_bad(ARGS("--embedder", "openai:http:///v1"), NULL, "has a URL without a host");
    expect_bad(ARGS("--embedder", "openai:http://h/v1?x=1"), NULL, "query or fragment");
    expect_bad(ARGS("--embedder", "openai:http://h/v1#a"), NULL, "query or fragment");
    expect_bad(ARGS("--embedder", "openai:http://h /v1"), NULL, "white space");
    expect_bad(ARGS("--embedder", "openai:http://h\xc3\xa9/v1"), NULL, "non-ASCII");
    static char longurl[1200];
    memcpy(longurl, "openai:http://", 14);
    memset(longurl + 14, 'h', sizeof(longurl) - 15);
    expect_bad(ARGS("--embedder", longurl), NULL, "has a URL longer than 1023 bytes");
    expect_bad(ARGS("--embedder", "openai:http://h/v1", "--embedder-model", "two words"), NULL,
               "--embedder-model (MNEMOD_EMBEDDER_MODEL): \"two words\" must be printable ASCII");
    static char longmodel[300];
    memset(longmodel, 'm', sizeof(longmodel) - 1);
    expect_bad(ARGS("--embedder", "openai:http://h/v1", "--embedder-model", longmodel), NULL,
               "the model name is longer than 255 bytes");
    expect_bad(ARGS("--embedder-timeout", "0"), NULL,
               "--embedder-timeout (MNEMOD_EMBEDDER_TIMEOUT): \"0\" must be a duration greater "
               "than 0");
    expect_bad(ARGS("--embedder-timeout", "-1s"), NULL, "--embedder-timeout");
    expect_bad(ARGS("--embedder-timeout", "2h"), NULL, "is longer than 3600s");
    expect_bad(ARGS("--embedder-timeout", "soon"), NULL, "is not a duration");
    expect_bad(ARGS("--embedder-batch", "0"), NULL,
               "--embedder-batch (MNEMOD_EMBEDDER_BATCH): \"0\" is outside 1..2048");
    expect_bad(ARGS("--embedder-batch", "2049"), NULL, "is outside 1..2048");
    expect_bad(ARGS("--embedder-batch", "1e3"), NULL, "is not a positive integer");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_EMBEDDER_BATCH=x", NULL},
               "MNEMOD_EMBEDDER_BATCH");
    expect_bad(ARGS("--embedder-key-file", tmp_file("\n")), NULL, "the embedder key is empty");
    expect_bad(ARGS("--embedder-key-file", tmp_file("two words\n")), NULL, "without spaces");
    assert_null(strstr(R.err.msg, "two words"));
    expect_bad(ARGS("--embedder-key-file", "/nonexistent/key"), NULL, "cannot be read");
    static char bigkey[1100];
    memset(bigkey, 'k', sizeof(bigkey) - 1);
    expect_bad(ARGS("--embedder-key-file", tmp_file(bigkey)), NULL, "too long");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_EMBEDDER_KEY=caf\xc3\xa9", NULL},
               "invalid value for MNEMOD_EMBEDDER_KEY: the embedder key must be printable ASCII");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_EMBEDDER_KEY=a", var, NULL},
               "set only one of MNEMOD_EMBEDDER_KEY and MNEMOD_EMBEDDER_KEY_FILE");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_EMBEDDER_KEYS=a", NULL},
               "unknown environment variable MNEMOD_EMBEDDER_KEYS");
    /* combinations */
    expect_bad(ARGS("--embedder", "openai:http://127.0.0.1:11434/v1"), NULL,
               "--embedder-model (MNEMOD_EMBEDDER_MODEL) is required with --embedder "
               "openai:http://127.0.0.1:11434/v1");
    expect_bad(ARGS("--embedder-model", "m"), NULL,
               "--embedder-model is set but --embedder is builtin");
    expect_bad(NOARGS, (const char *const[]){"MNEMOD_EMBEDDER_KEY=k", NULL},
               "an embedder key (MNEMOD_EMBEDDER_KEY or --embedder-key-file) is set but "
               "--embedder is builtin");
    /* --help lists every setting with its variable */
    assert_int_equal(load(ARGS("--help"), NULL), MEM_CFG_EXIT_OK);
    assert_non_null(strstr(R.out, "--embedder KIND"));
    assert_non_null(strstr(R.out, "--embedder-model NAME"));
    assert_non_null(strstr(R.out, "MNEMOD_EMBEDDER_KEY "));
    assert_non_null(strstr(R.out, "--embedder-key-file FILE"));
    assert_non_null(strstr(R.out, "--embedder-timeout DUR"));
    assert_non_null(strstr(R.out, "--embedder-batch N"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_defaults, cleanup),
        cmocka_unit_test_teardown(test_help_and_version, cleanup),
        cmocka_unit_test_teardown(test_flag_forms, cleanup),
        cmocka_unit_test_teardown(test_listen, cleanup),
        cmocka_unit_test_teardown(test_half_life_and_decay, cleanup),
        cmocka_unit_test_teardown(test_bad_values, cleanup),
        cmocka_unit_test_teardown(test_good_values, cleanup),
        cmocka_unit_test_teardown(test_unknown_and_malformed_lines, cleanup),
        cmocka_unit_test_teardown(test_precedence, cleanup),
        cmocka_unit_test_teardown(test_file_format, cleanup),
        cmocka_unit_test_teardown(test_file_errors, cleanup),
        cmocka_unit_test_teardown(test_timeouts, cleanup),
        cmocka_unit_test_teardown(test_advertise, cleanup),
        cmocka_unit_test_teardown(test_source_limits, cleanup),
        cmocka_unit_test_teardown(test_cluster_limits, cleanup),
        cmocka_unit_test_teardown(test_api_key, cleanup),
        cmocka_unit_test_teardown(test_sample_config, cleanup),
        cmocka_unit_test_teardown(test_describe, cleanup),
        cmocka_unit_test_teardown(test_cluster, cleanup),
        cmocka_unit_test_teardown(test_scan_settings, cleanup),
        cmocka_unit_test_teardown(test_loop_spin, cleanup),
        cmocka_unit_test_teardown(test_text_cache, cleanup),
        cmocka_unit_test_teardown(test_connection_memory, cleanup),
        cmocka_unit_test_teardown(test_embedder, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
