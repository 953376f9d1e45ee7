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

void mem_srv_log_setup(mem_log_level_t level, bool json)
{
    logger.level = level;
    logger.json = json;
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
