/* log.c - the process's logger: stderr, one write(2) per line
 * SPDX-License-Identifier: MIT
 *
 * A line is written with one write(2) so lines from different threads never interleave.
 */
#include "server/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_stderr(void *ud, const char *line, size_t len)
{
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

static mem_log_t logger = {
    .level = MEM_LOG_INFO, .json = false, .now_ms = wall_ms, .write = write_stderr};

static bool set_up; /* mem_srv_log_setup ran: the configuration is known */

void mem_srv_log_setup(mem_log_level_t level, bool json)
{
    logger.level = level;
    logger.json = json;
    set_up = true;
}

void mem_srv_log_early(int argc, char **argv, char **envp)
{
    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, "MNEMOD_LOG_FORMAT=", 18) == 0) logger.json = strcmp(*e + 18, "json") == 0;
    for (int i = 1; i < argc; i++) { /* flags win over the environment, the last one wins */
        if (strcmp(argv[i], "--log-format") == 0 && i + 1 < argc)
            logger.json = strcmp(argv[++i], "json") == 0;
        else if (strncmp(argv[i], "--log-format=", 13) == 0)
            logger.json = strcmp(argv[i] + 13, "json") == 0;
    }
}

void mem_srv_log_fail(const char *event, const char *fmt, ...)
{
    char msg[2048]; /* room for a usage text */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n') /* usage text ends in newlines; a line needs none */
        n--;
    if (!set_up && !logger.json) {
        char line[sizeof(msg) + 16];
        int len = snprintf(line, sizeof(line), "mnemod: %.*s\n", (int)n, msg);
        if (len > 0)
            write_stderr(NULL, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
        return;
    }
    mem_log_line_t ln;
    mem_log_line_begin(&ln, logger.json, wall_ms(), MEM_LOG_ERROR, event);
    mem_log_line_add(&ln, "msg", msg, n);
    mem_log_line_end(&ln);
    mem_log_line_write(&logger, &ln);
}

const mem_log_t *mem_srv_logger(void)
{
    return &logger;
}

bool mem_srv_log_enabled(mem_log_level_t level)
{
    return mem_log_enabled(&logger, level);
}

void mem_srv_log(mem_log_level_t level, const char *event, const char *fmt, ...)
{
    if (!mem_log_enabled(&logger, level)) return;
    va_list ap;
    va_start(ap, fmt);
    mem_log_v(&logger, level, event, fmt, ap);
    va_end(ap);
}

void mem_srv_log_mhd(void *cls, const char *fmt, va_list ap)
{
    if (!mem_log_enabled(&logger, MEM_LOG_INFO)) return;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        n--;
    mem_log_line_t ln;
    mem_log_line_begin(&ln, logger.json, wall_ms(), MEM_LOG_INFO, "http");
    mem_log_line_add(&ln, "msg", msg, n);
    mem_log_line_end(&ln);
    mem_log_line_write(&logger, &ln);
}

static void config_pair(void *ud, const char *key, const char *value)
{
    mem_log_line_add(ud, key, value, strlen(value));
}

void mem_srv_log_config(const mem_cfg_t *cfg)
{
    if (!mem_log_enabled(&logger, MEM_LOG_INFO)) return;
    mem_log_line_t ln;
    mem_log_line_begin(&ln, logger.json, wall_ms(), MEM_LOG_INFO, "config");
    mem_cfg_describe_each(cfg, config_pair, &ln);
    mem_log_line_end(&ln);
    mem_log_line_write(&logger, &ln);
}
