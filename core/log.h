/* log.h - one logger for every module: levels, key=value or JSON lines, escaped values
 * SPDX-License-Identifier: MIT
 *
 * A mem_log_t says where lines go and how they look. server/ sets one up before any thread
 * starts and hands a pointer to every module that logs (storage and cluster get it through
 * their options), so --log-format and --log-level hold for every line. This file only
 * formats: the clock and the write come in as callbacks, so core/ stays free of I/O.
 *
 * Every value is escaped, whatever its bytes, so no request can forge a line or break a
 * JSON one: a text value that holds a space, '"', '=', '\\' or any byte outside printable
 * ASCII is written in double quotes with \" \\ \n \r \t and \xNN escapes (invalid UTF-8 and
 * control bytes become \xNN); a JSON value is a JSON string with the same \xNN spelling
 * (as "\\xNN") for bytes that are not valid UTF-8, and \u00NN for control characters.
 */
#ifndef MEM_CORE_LOG_H
#define MEM_CORE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mem_log_level {
    MEM_LOG_DEBUG,
    MEM_LOG_INFO,
    MEM_LOG_WARN,
    MEM_LOG_ERROR
} mem_log_level_t;

/* Receives one complete line, '\n' included. Must be safe to call from any thread. */
typedef void (*mem_log_write_fn)(void *ud, const char *line, size_t len);

typedef struct mem_log {
    mem_log_level_t level;   /* lines below it are dropped */
    bool json;               /* one JSON object per line instead of key=value text */
    int64_t (*now_ms)(void); /* wall clock (Unix ms) for the ts field; NULL writes 0 */
    mem_log_write_fn write;  /* NULL: lines are dropped */
    void *ud;
} mem_log_t;

/* Longest line written (longer values are cut at a character boundary and the line gets
 * truncated=1). */
#define MEM_LOG_LINE_MAX 4096

/* false for a NULL logger or a level below lg->level. */
bool mem_log_enabled(const mem_log_t *lg, mem_log_level_t level);

/* Log one event. fmt is a list of space-separated key=value items where each value is
 * literal text and/or printf conversions ("id=%s status=%d ms=%.3f"), or the same in
 * double quotes when the literal text holds spaces (`msg="no key set"`); keys are literal.
 * Every value is escaped as the header says, whatever its bytes. lg may be NULL (nothing is
 * written). */
void mem_log(const mem_log_t *lg, mem_log_level_t level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void mem_log_v(const mem_log_t *lg, mem_log_level_t level, const char *event, const char *fmt,
               va_list ap) __attribute__((format(printf, 4, 0)));

/* A line built item by item, for values that do not come from one format string. */
typedef struct mem_log_line {
    char buf[MEM_LOG_LINE_MAX];
    size_t len;
    bool json, truncated;
} mem_log_line_t;

void mem_log_line_begin(mem_log_line_t *ln, bool json, int64_t now_ms, mem_log_level_t level,
                        const char *event);
/* Append key=value (len bytes of value; any bytes). */
void mem_log_line_add(mem_log_line_t *ln, const char *key, const char *value, size_t len);
/* Close the line ('\n' included) and return its length. */
size_t mem_log_line_end(mem_log_line_t *ln);
/* Hand a finished line to lg's writer (nothing for a NULL logger). */
void mem_log_line_write(const mem_log_t *lg, const mem_log_line_t *ln);

/* The level's name: "debug", "info", "warn", "error". */
const char *mem_log_level_name(mem_log_level_t level);

#endif
