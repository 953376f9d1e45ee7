/* log.h - the process's logger: one line per event on stderr, key=value text or JSON
 * SPDX-License-Identifier: MIT
 *
 * server/ owns the one mem_log_t of the process (core/log.h formats and escapes); the
 * other modules get it through their options (mem_srv_logger()).
 */
#ifndef MEM_SERVER_LOG_H
#define MEM_SERVER_LOG_H

#include <stdbool.h>

#include "config/config.h"
#include "core/log.h"

/* Call once, before any thread starts. */
void mem_srv_log_setup(mem_log_level_t level, bool json);
/* Before the configuration is loaded: take the log format from the command line or the
 * environment (--log-format json, --log-format=json, MNEMOD_LOG_FORMAT=json), so that a
 * configuration error of a JSON-logging run is a JSON line too. */
void mem_srv_log_early(int argc, char **argv, char **envp);
/* A failure that ends the command or start-up, as one error line (event, msg=...) in the
 * logger's format. Before mem_srv_log_setup, in text format, it is the plain usage line
 * "mnemod: MSG" (the configuration that would say more did not load). */
void mem_srv_log_fail(const char *event, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The process's logger (valid for the life of the process). */
const mem_log_t *mem_srv_logger(void);
/* mem_log() on the process's logger: event name, then "key=value ..." items whose values
 * are escaped (core/log.h). Thread-safe. */
void mem_srv_log(mem_log_level_t level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool mem_srv_log_enabled(mem_log_level_t level);
/* The effective settings as one "config" line. */
void mem_srv_log_config(const mem_cfg_t *cfg);
/* libmicrohttpd's error messages (MHD_OPTION_EXTERNAL_LOGGER): one escaped line each. */
void mem_srv_log_mhd(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
