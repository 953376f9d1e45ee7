/* fuzz_config.c - libFuzzer target: mem_cfg_load with a config file, argv and environment
 * SPDX-License-Identifier: MIT
 *
 * The input is three NUL-separated parts: the config file's bytes, then argv words (one per
 * line), then environment entries "KEY=value" (one per line). The file is written to a
 * temporary path and passed with --config. Accepted configurations must be in range
 * (SPEC section 7); errors must be one line with a message; the start-up description never
 * contains the API key.
 */
#include <math.h>
#include <unistd.h>

#include "config/config.h"
#include "tests/fuzz/fuzz_common.h"

#define MAX_WORDS 32

static char dir[64], path[96];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(dir, sizeof(dir), "/tmp/mnemod-fuzzcfg-XXXXXX");
    FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof(path), "%s/mnemod.conf", dir);
    atexit(cleanup);
    return 0;
}

/* Split s (NUL-terminated, owned) at '\n' into words; returns the count. */
static int split(char *s, char **out, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        out[n++] = s;
        char *nl = strchr(s, '\n');
        if (!nl) break;
        *nl = '\0';
        s = nl + 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *z1 = memchr(data, '\0', size);
    size_t flen = z1 ? (size_t)(z1 - data) : size;
    const uint8_t *rest = z1 ? z1 + 1 : data + size;
    size_t rlen = (size_t)(data + size - rest);
    const uint8_t *z2 = memchr(rest, '\0', rlen);
    size_t alen = z2 ? (size_t)(z2 - rest) : rlen;
    char *args = fuzz_dup(rest, alen, 1);
    char *envs = z2 ? fuzz_dup(z2 + 1, (size_t)(data + size - z2 - 1), 1) : NULL;

    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot write %s", path);
    if (flen) fwrite(data, 1, flen, f);
    fclose(f);

    char *argv[MAX_WORDS + 4];
    int argc = 0;
    argv[argc++] = "mnemod";
    argv[argc++] = "--config";
    argv[argc++] = path;
    argc += split(args, argv + argc, MAX_WORDS);
    argv[argc] = NULL;
    char *env[MAX_WORDS + 1];
    int envc = envs ? split(envs, env, MAX_WORDS) : 0;
    env[envc] = NULL;

    static mem_cfg_t cfg;
    static char text[MEM_CFG_TEXT_MAX];
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_cfg_load(&cfg, argc, argv, env, text, sizeof(text), &err);
    if (rc == MEM_CFG_RUN) {
        FUZZ_CHECK(cfg.listen_port >= 0 && cfg.listen_port <= 65535, "port %d", cfg.listen_port);
        FUZZ_CHECK(cfg.embed_dim >= 1 && cfg.embed_dim <= 4096, "embed_dim %zu", cfg.embed_dim);
        FUZZ_CHECK(cfg.coherence_threshold >= -1 && cfg.coherence_threshold <= 1, "threshold");
        FUZZ_CHECK(cfg.coherence_weight >= 0 && cfg.coherence_weight <= 1, "weight");
        FUZZ_CHECK(cfg.decay.recency_bias >= 0 && cfg.decay.recency_bias <= 1, "recency_bias");
        FUZZ_CHECK(isfinite(cfg.decay.half_life_s) && cfg.decay.half_life_s >= 0, "half_life");
        FUZZ_CHECK(isfinite(cfg.decay.offset_s) && cfg.decay.offset_s >= 0, "offset");
        FUZZ_CHECK(cfg.decay.kind != MEM_DECAY_WEIBULL ||
                       (cfg.decay.shape > 0 && cfg.decay.shape <= 10),
                   "shape %g", cfg.decay.shape);
        FUZZ_CHECK(cfg.max_batch >= 1 && cfg.max_body >= 1 && cfg.max_queue >= 1 &&
                       cfg.max_connections >= 1 && cfg.max_namespaces >= 1,
                   "a zero limit was accepted");
        FUZZ_CHECK(cfg.threads >= 1 && cfg.threads <= 1024, "threads %d", cfg.threads);
        FUZZ_CHECK(isfinite(cfg.idle_timeout_s) && cfg.idle_timeout_s >= 0 &&
                       isfinite(cfg.request_timeout_s) && cfg.request_timeout_s >= 0 &&
                       isfinite(cfg.max_future_skew_s) && cfg.max_future_skew_s >= 0,
                   "durations");
        FUZZ_CHECK(memchr(cfg.listen_host, '\0', sizeof(cfg.listen_host)) &&
                       memchr(cfg.data_path, '\0', sizeof(cfg.data_path)) &&
                       memchr(cfg.api_key, '\0', sizeof(cfg.api_key)),
                   "unterminated string setting");
        char desc[2048];
        size_t n = mem_cfg_describe(&cfg, desc, sizeof(desc));
        FUZZ_CHECK(n > 0 && !strchr(desc, '\n'), "describe: %s", desc);
        if (strlen(cfg.api_key) >= 12)
            FUZZ_CHECK(!strstr(desc, cfg.api_key), "the API key leaks into the log line");
    } else if (rc == MEM_CFG_EXIT_OK) {
        FUZZ_CHECK(text[0] != '\0', "help/version without text");
    } else {
        FUZZ_CHECK(rc == MEM_EINVAL || rc == MEM_ENOMEM, "rc %d", rc);
        FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "error must be one line: %s", err.msg);
    }
    free(args);
    free(envs);
    return 0;
}
