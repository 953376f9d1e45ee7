/* cli_int.h - shared between the files of cli/ (HTTP, output, commands)
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_CLI_CLI_INT_H
#define MEM_CLI_CLI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define MEM_CLI_URL_MAX     1024  /* bytes of --url */
#define MEM_CLI_KEY_MAX     512   /* bytes of the API key */
#define MEM_CLI_RETRIES     3     /* --retries default: 503 answers retried after Retry-After */
#define MEM_CLI_RETRIES_MAX 100   /* most --retries accepted */
#define MEM_CLI_TIMEOUT_MAX 86400 /* most --timeout seconds accepted (a day) */
#define MEM_CLI_RETRY_MAX_S 30    /* longest Retry-After waited for, seconds; longer: no retry */

typedef struct mem_cli {
    char base[MEM_CLI_URL_MAX]; /* server URL, no trailing slash */
    char key[MEM_CLI_KEY_MAX];  /* "" = send no Authorization */
    long timeout_s;             /* whole-request timeout for JSON calls, 0 = none */
    int retries;                /* 503 answers of a JSON call retried, 0..MEM_CLI_RETRIES_MAX */
    bool json;                  /* --json: print the server's JSON as it came */
    bool stdout_tty, stderr_tty;
    void *curl; /* CURL *, reused so the connection stays alive */
} mem_cli_t;

typedef struct mem_cli_resp {
    long status;        /* HTTP status, 0 when no answer came */
    char *body;         /* malloc'd, NUL-terminated; error bodies of streams too */
    size_t len;         /* bytes in body */
    size_t cap;         /* allocated bytes */
    long retry_after_s; /* Retry-After header, -1 when absent */
    char note[128];     /* why a 503 was not retried further, printed after its error */
} mem_cli_resp_t;

/* Progress of an upload, given to the callback after each chunk is handed to libcurl. */
typedef struct mem_cli_upload {
    FILE *in;        /* read until EOF */
    uint64_t sent;   /* bytes read from in so far */
    uint64_t lines;  /* newlines read so far */
    uint64_t total;  /* size of in when known (a regular file), else 0 */
    bool read_error; /* in failed (not EOF) */
    void (*progress)(struct mem_cli_upload *up, bool final);
    void *ud;
} mem_cli_upload_t;

/* --- http.c (the only file that includes curl.h) */
int mem_cli__http_open(mem_cli_t *c);
void mem_cli__http_close(mem_cli_t *c);
/* One JSON request (body may be NULL: none sent). Returns 0 when an answer came (any
 * status, in r), 1 after printing why none did. A 503 is retried c->retries times after its
 * Retry-After (1 s when absent), unless that is over MEM_CLI_RETRY_MAX_S; a 503 given back
 * says why in r->note. */
int mem_cli__call(mem_cli_t *c, const char *method, const char *path, const json_t *body,
                  mem_cli_resp_t *r);
/* GET path and write a 2xx body to out as it arrives (an error body lands in r). */
int mem_cli__download(mem_cli_t *c, const char *path, FILE *out, uint64_t *lines,
                      mem_cli_resp_t *r);
/* POST the stream up->in to path with content type ctype. */
int mem_cli__upload(mem_cli_t *c, const char *path, const char *ctype, mem_cli_upload_t *up,
                    mem_cli_resp_t *r);
/* Percent-encode s for a path segment or query value; malloc'd (NULL on failure). */
char *mem_cli__escape(mem_cli_t *c, const char *s);
void mem_cli__resp_free(mem_cli_resp_t *r);

/* --- out.c */
/* r is an answer: a 2xx is parsed into *out (new reference) and 0 returned; an error
 * status is printed as "mnemod: 409 duplicate_id: ..." and 1 returned. */
int mem_cli__result(const mem_cli_resp_t *r, json_t **out);
void mem_cli__print_raw(const mem_cli_resp_t *r);
/* v as compact JSON in its order, every real as the shortest decimal that reads back as
 * the same double (json_dumps writes 17 significant digits: 0.1 as 0.10000000000000001),
 * so what the server sent prints as it was and what is typed is sent as typed. malloc'd;
 * NULL when out of memory. */
char *mem_cli__dumps(const json_t *v);
/* A table: n_cols headers, then rows of n_cols cells (NULL cells print as "-"). The last
 * column takes the room left on the terminal and is cut with "..." when too long. */
typedef struct mem_cli_table {
    size_t n_cols, n_rows, cap;
    const char *head[12];
    char **cells;   /* n_rows * n_cols, malloc'd strings */
    bool right[12]; /* right-align this column (numbers) */
} mem_cli_table_t;
void mem_cli__table_init(mem_cli_table_t *t, size_t n_cols, const char *const *head);
int mem_cli__table_add(mem_cli_table_t *t, const char *const *cells);
void mem_cli__table_print(const mem_cli_table_t *t, FILE *f, int width);
void mem_cli__table_free(mem_cli_table_t *t);
int mem_cli__term_width(void);
/* "2026-11-02T09:00:00.000Z" -> "2026-11-02T09:00:00Z" into buf. */
void mem_cli__fmt_ts(const char *ts, char *buf, size_t cap);
/* seconds -> "45s", "12m", "5.0h", "3.2d" */
void mem_cli__fmt_age(double s, char *buf, size_t cap);
void mem_cli__fmt_bytes(uint64_t n, char *buf, size_t cap);
/* The import progress: a bar on a terminal, plain lines otherwise. */
void mem_cli__progress(mem_cli_upload_t *up, bool final);

#endif
