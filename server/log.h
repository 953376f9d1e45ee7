/* log.h - one line per event on stderr: key=value text, or JSON
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_SERVER_LOG_H
#define MEM_SERVER_LOG_H

#include <stdbool.h>

#include "config/config.h"

void mem_srv_log_setup(mem_log_level_t level, bool json);
/* msg is the event name; fmt adds "key=value ..." pairs (rendered as JSON fields when
 * the format is json: values are then quoted strings). Thread-safe. */
void mem_srv_log(mem_log_level_t level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool mem_srv_log_enabled(mem_log_level_t level);

#endif
