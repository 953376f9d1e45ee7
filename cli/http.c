/* http.c - the CLI's HTTP: one libcurl easy handle, JSON calls, streamed export and import
 * SPDX-License-Identifier: MIT
 *
 * The CLI is a plain blocking client (it runs in its own process, never near the server's
 * loop), so libcurl's easy interface fits: one handle reused for every call keeps the
 * connection alive. A 503 is retried after its Retry-After, as the REST contract asks
 * (only for JSON calls, whose bodies can be sent again; a streamed import cannot).
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_int.h"

int mem_cli__http_open(mem_cli_t *c)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "mnemod: could not initialise libcurl\n");
        return 1;
    }
    c->curl = curl_easy_init();
    if (!c->curl) {
        fprintf(stderr, "mnemod: could not initialise libcurl\n");
        curl_global_cleanup();
        return 1;
    }
    return 0;
}

void mem_cli__http_close(mem_cli_t *c)
{
    if (c->curl) {
        curl_easy_cleanup(c->curl);
        c->curl = NULL;
        curl_global_cleanup();
    }
}

void mem_cli__resp_free(mem_cli_resp_t *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

char *mem_cli__escape(mem_cli_t *c, const char *s)
{
    char *e = curl_easy_escape(c->curl, s, (int)strlen(s));
    if (!e) return NULL;
    char *out = strdup(e); /* callers free() it like every other string here */
    curl_free(e);
    return out;
}

static int resp_append(mem_cli_resp_t *r, const char *p, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b) return -1;
        r->body = b;
        r->cap = cap;
    }
    memcpy(r->body + r->len, p, n);
    r->len += n;
    r->body[r->len] = '\0';
    return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    return resp_append(ud, p, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    mem_cli_resp_t *r = ud;
    size_t len = size * n;
    static const char name[] = "retry-after:";
    if (len > sizeof(name) - 1 && strncasecmp(p, name, sizeof(name) - 1) == 0) {
        char buf[32];
        size_t l = len - (sizeof(name) - 1);
        if (l >= sizeof(buf)) l = sizeof(buf) - 1;
        memcpy(buf, p + sizeof(name) - 1, l);
        buf[l] = '\0';
        char *end;
        long v = strtol(buf, &end, 10);
        if (end != buf && v >= 0) r->retry_after_s = v;
    }
    return len;
}

/* The handle reset to a request on base+path with our headers; returns the header list to
 * free after the transfer, or NULL after printing why not. */
static struct curl_slist *prepare(mem_cli_t *c, const char *method, const char *path,
                                  const char *ctype, mem_cli_resp_t *r)
{
    CURL *h = c->curl;
    curl_easy_reset(h);
    memset(r, 0, sizeof(*r));
    r->retry_after_s = -1;
    size_t ul = strlen(c->base) + strlen(path) + 1;
    char *url = malloc(ul);
    if (!url) return NULL;
    snprintf(url, ul, "%s%s", c->base, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    free(url); /* libcurl keeps its own copy of string options */
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "mnemod-cli/" MNEMOD_VERSION);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    struct curl_slist *hl = curl_slist_append(NULL, "Accept: application/json");
    if (hl && c->key[0]) {
        char auth[MEM_CLI_KEY_MAX + 32];
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->key);
        struct curl_slist *n = curl_slist_append(hl, auth);
        hl = n ? n : (curl_slist_free_all(hl), NULL);
    }
    if (hl && ctype) {
        char ct[96];
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
        struct curl_slist *n = curl_slist_append(hl, ct);
        hl = n ? n : (curl_slist_free_all(hl), NULL);
    }
    if (!hl) fprintf(stderr, "mnemod: out of memory\n");
    return hl;
}

static int perform(mem_cli_t *c, const char *method, const char *path, mem_cli_resp_t *r)
{
    CURLcode rc = curl_easy_perform(c->curl);
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
    if (rc != CURLE_OK && r->status == 0) {
        fprintf(stderr, "mnemod: %s %s%s: %s\n", method, c->base, path, curl_easy_strerror(rc));
        return 1;
    }
    if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR && rc != CURLE_SEND_ERROR) {
        fprintf(stderr, "mnemod: %s %s%s: %s\n", method, c->base, path, curl_easy_strerror(rc));
        return 1;
    }
    return 0;
}

int mem_cli__call(mem_cli_t *c, const char *method, const char *path, const json_t *body,
                  mem_cli_resp_t *r)
{
    char *data = NULL;
    if (body) {
        data = mem_cli__dumps(body);
        if (!data) {
            fprintf(stderr, "mnemod: out of memory\n");
            return 1;
        }
    }
    int rc = 1;
    for (int attempt = 0;; attempt++) {
        struct curl_slist *hl = prepare(c, method, path, data ? "application/json" : NULL, r);
        if (!hl) break;
        if (c->timeout_s > 0) curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout_s);
        if (data) {
            curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, data);
            curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(data));
        }
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hl);
        rc = perform(c, method, path, r);
        curl_slist_free_all(hl);
        if (rc != 0 || r->status != 503) break;
        long wait = r->retry_after_s >= 0 ? r->retry_after_s : 1;
        if (wait > MEM_CLI_RETRY_MAX_S) {
            snprintf(r->note, sizeof(r->note),
                     "not retried: Retry-After %ld s is longer than the %d s a command waits", wait,
                     MEM_CLI_RETRY_MAX_S);
            break;
        }
        if (attempt >= c->retries) {
            if (c->retries > 0)
                snprintf(r->note, sizeof(r->note), "still 503 after %d retr%s (--retries)",
                         c->retries, c->retries == 1 ? "y" : "ies");
            break;
        }
        mem_cli__resp_free(r);
        sleep((unsigned)wait);
    }
    free(data);
    return rc;
}

/* Export: a 2xx body goes straight to the output file (bounded memory whatever the size);
 * any other status is kept in memory to be printed as an error. */
typedef struct download {
    mem_cli_t *c;
    mem_cli_resp_t *r;
    FILE *out;
    uint64_t lines;
    bool failed; /* writing to out failed */
} download_t;

static size_t on_download(char *p, size_t size, size_t n, void *ud)
{
    download_t *d = ud;
    size_t len = size * n;
    long status = 0;
    curl_easy_getinfo(d->c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) return resp_append(d->r, p, len) == 0 ? len : 0;
    if (fwrite(p, 1, len, d->out) != len) {
        d->failed = true;
        return 0;
    }
    for (size_t i = 0; i < len; i++)
        d->lines += p[i] == '\n';
    return len;
}

int mem_cli__download(mem_cli_t *c, const char *path, FILE *out, uint64_t *lines, mem_cli_resp_t *r)
{
    download_t d = {.c = c, .r = r, .out = out};
    struct curl_slist *hl = prepare(c, "GET", path, NULL, r);
    if (!hl) return 1;
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_download);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &d);
    int rc = perform(c, "GET", path, r);
    curl_slist_free_all(hl);
    if (fflush(out) != 0) d.failed = true;
    if (d.failed) {
        perror("mnemod: writing the export");
        return 1;
    }
    *lines = d.lines;
    return rc;
}

static size_t on_read(char *p, size_t size, size_t n, void *ud)
{
    mem_cli_upload_t *up = ud;
    size_t got = fread(p, 1, size * n, up->in);
    if (got == 0 && ferror(up->in)) {
        up->read_error = true;
        return CURL_READFUNC_ABORT;
    }
    up->sent += got;
    for (size_t i = 0; i < got; i++)
        up->lines += p[i] == '\n';
    if (up->progress) up->progress(up, false);
    return got;
}

int mem_cli__upload(mem_cli_t *c, const char *path, const char *ctype, mem_cli_upload_t *up,
                    mem_cli_resp_t *r)
{
    struct stat st;
    up->total = 0;
    if (fstat(fileno(up->in), &st) == 0 && S_ISREG(st.st_mode)) {
        off_t at = ftello(up->in);
        up->total = (uint64_t)(st.st_size - (at > 0 ? at : 0));
    }
    struct curl_slist *hl = prepare(c, "POST", path, ctype, r);
    if (!hl) return 1;
    if (!up->total) { /* size unknown (a pipe): chunked */
        struct curl_slist *n = curl_slist_append(hl, "Transfer-Encoding: chunked");
        if (!n) {
            curl_slist_free_all(hl);
            return 1;
        }
        hl = n;
    }
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(c->curl, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c->curl, CURLOPT_READDATA, up);
    curl_easy_setopt(c->curl, CURLOPT_UPLOAD_BUFFERSIZE, 256L * 1024);
    if (up->total) curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)up->total);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hl);
    int rc = perform(c, "POST", path, r);
    curl_slist_free_all(hl);
    if (up->read_error) {
        perror("mnemod: reading the import");
        return 1;
    }
    if (up->progress) up->progress(up, true);
    return rc;
}
