/* edge.c - SPEC section 9 at the API boundary: Host, Origin and CORS, scoped keys
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Everything here runs on the loop thread, on the request head alone, before any
 * body is read: a page-style cross-site request is refused before it can send anything.
 * The settings are parsed once into a mem_api_edge_t (lowercase origins and host names);
 * the keys table is swapped as a whole on SIGHUP, and a request copies the grants of its
 * key into its own state, so a worker never reads a table that a reload may free.
 *
 * Keys are compared in constant time: every configured key is compared with the one
 * presented, byte by byte over the presented length, whatever matched before.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_int.h"

typedef struct host_entry {
    char name[256]; /* lowercase, IPv6 without brackets */
    int port;       /* -1: any */
} host_entry_t;

struct mem_api_edge {
    bool any_origin;
    char **origins; /* lowercase "scheme://host[:port]", own origins included */
    size_t n_origins;
    bool any_host; /* non-loopback --listen and no --allowed-hosts */
    host_entry_t *hosts;
    size_t n_hosts;
    char listen_host[256]; /* lowercase, no brackets */
    char api_key[MEM_CFG_KEY_MAX];
    size_t api_key_len;
    mem_cfg_keys_t *keys; /* owned; NULL: none */
    bool metrics_public;
};

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static bool is_loopback_name(const char *name)
{
    if (strcmp(name, "localhost") == 0) return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, name, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, name, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

/* An IPv4 or IPv6 address (no brackets), which no DNS answer can re-point. */
static bool is_address(const char *name)
{
    struct in_addr a4;
    struct in6_addr a6;
    return inet_pton(AF_INET, name, &a4) == 1 || inet_pton(AF_INET6, name, &a6) == 1;
}

static int add_origin(mem_api_edge_t *e, const char *o, size_t len)
{
    char **v = realloc(e->origins, (e->n_origins + 1) * sizeof(*v));
    if (!v) return MEM_ENOMEM;
    e->origins = v;
    char *s = strndup(o, len);
    if (!s) return MEM_ENOMEM;
    lower(s);
    e->origins[e->n_origins++] = s;
    return MEM_OK;
}

/* "name", "name:port", "[v6]", "[v6]:port" -> lowercase name and port (-1 when none).
 * false when it is not one of these. */
static bool split_host(const char *s, size_t len, char *name, size_t cap, int *port)
{
    *port = -1;
    const char *end = s + len, *colon = NULL;
    size_t nl;
    if (len && s[0] == '[') {
        const char *rb = memchr(s, ']', len);
        if (!rb) return false;
        nl = (size_t)(rb - s - 1);
        if (nl == 0 || nl >= cap) return false;
        memcpy(name, s + 1, nl);
        if (rb + 1 < end) {
            if (rb[1] != ':') return false;
            colon = rb + 1;
        }
    } else {
        colon = memchr(s, ':', len);
        nl = colon ? (size_t)(colon - s) : len;
        if (nl == 0 || nl >= cap) return false;
        memcpy(name, s, nl);
        if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1))) return false;
    }
    name[nl] = '\0';
    for (size_t i = 0; i < nl; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != ':') return false;
        name[i] = (char)tolower(c);
    }
    if (colon) {
        const char *p = colon + 1;
        if (p == end || end - p > 5) return false;
        int v = 0;
        for (; p < end; p++) {
            if (*p < '0' || *p > '9') return false;
            v = v * 10 + (*p - '0');
        }
        if (v > 65535) return false;
        *port = v;
    }
    return true;
}

/* Each comma-separated, trimmed entry of list. */
typedef struct list_iter {
    const char *p;
} list_iter_t;

static bool next_entry(list_iter_t *it, const char **e, size_t *len)
{
    while (it->p && *it->p) {
        const char *c = strchr(it->p, ',');
        const char *s = it->p;
        size_t n = c ? (size_t)(c - s) : strlen(s);
        it->p = c ? c + 1 : NULL;
        while (n && isspace((unsigned char)*s))
            s++, n--;
        while (n && isspace((unsigned char)s[n - 1]))
            n--;
        if (n) {
            *e = s;
            *len = n;
            return true;
        }
    }
    return false;
}

int mem_api_edge_new(const mem_cfg_t *cfg, int port, mem_cfg_keys_t *keys, mem_api_edge_t **out,
                     mem_err_t *err)
{
    mem_api_edge_t *e = calloc(1, sizeof(*e));
    if (!e) {
        mem_cfg_keys_free(keys);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    e->keys = keys;
    e->metrics_public = cfg->metrics_public;
    e->api_key_len = strlen(cfg->api_key);
    memcpy(e->api_key, cfg->api_key, e->api_key_len + 1);
    snprintf(e->listen_host, sizeof(e->listen_host), "%s",
             cfg->listen_host[0] ? cfg->listen_host : "0.0.0.0");
    lower(e->listen_host);
    int rc = MEM_OK;
    list_iter_t it = {cfg->allowed_origins};
    const char *s;
    size_t n;
    while (rc == MEM_OK && next_entry(&it, &s, &n)) {
        if (n == 1 && s[0] == '*')
            e->any_origin = true;
        else
            rc = add_origin(e, s, n);
    }
    /* the server's own origins, so a console it serves works */
    char own[320];
    bool v6 = strchr(e->listen_host, ':') != NULL;
    const char *names[] = {"localhost", "127.0.0.1", e->listen_host};
    for (size_t i = 0; rc == MEM_OK && i < 3; i++) {
        bool br = i == 2 && v6;
        int l = snprintf(own, sizeof(own), "http://%s%s%s:%d", br ? "[" : "", names[i],
                         br ? "]" : "", port);
        rc = add_origin(e, own, (size_t)l);
    }
    it.p = cfg->allowed_hosts;
    while (rc == MEM_OK && next_entry(&it, &s, &n)) {
        host_entry_t *v = realloc(e->hosts, (e->n_hosts + 1) * sizeof(*v));
        if (!v) {
            rc = MEM_ENOMEM;
            break;
        }
        e->hosts = v;
        host_entry_t *h = &e->hosts[e->n_hosts];
        if (!split_host(s, n, h->name, sizeof(h->name), &h->port)) {
            rc = mem_err_field(err, MEM_EINVAL, "allowed-hosts",
                               "invalid value for --allowed-hosts: \"%.*s\" is not name[:port]",
                               (int)(n > 100 ? 100 : n), s);
            break;
        }
        e->n_hosts++;
    }
    e->any_host = e->n_hosts == 0 && !is_loopback_name(e->listen_host);
    /* cluster mode: the name other nodes relay requests to is this server's too */
    size_t an = strlen(cfg->advertise);
    host_entry_t *v = rc == MEM_OK && an ? realloc(e->hosts, (e->n_hosts + 1) * sizeof(*v)) : NULL;
    if (v) {
        e->hosts = v;
        if (split_host(cfg->advertise, an, v[e->n_hosts].name, sizeof(v->name),
                       &v[e->n_hosts].port))
            e->n_hosts++;
    } else if (rc == MEM_OK && an) {
        rc = MEM_ENOMEM;
    }
    if (rc != MEM_OK) {
        if (rc == MEM_ENOMEM) mem_err_set(err, MEM_ENOMEM, "out of memory");
        mem_api_edge_free(e);
        return rc;
    }
    *out = e;
    return MEM_OK;
}

void mem_api_edge_set_keys(mem_api_edge_t *e, mem_cfg_keys_t *keys)
{
    mem_cfg_keys_free(e->keys);
    e->keys = keys;
}

void mem_api_edge_free(mem_api_edge_t *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->n_origins; i++)
        free(e->origins[i]);
    free(e->origins);
    free(e->hosts);
    mem_cfg_keys_free(e->keys);
    free(e);
}

const char *mem_api__req_header(const mem_api_req_t *req, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (size_t i = 0; req->headers && i < req->n_headers; i++) {
        const mem_api_header_t *h = &req->headers[i];
        if (h->name_len == nl && strncasecmp(h->name, name, nl) == 0) {
            if (len) *len = h->value_len;
            return h->value;
        }
    }
    return NULL;
}

const char *mem_api__req_header_value(const mem_api_req_t *req, const char *name, size_t *len)
{
    size_t n;
    const char *v = mem_api__req_header(req, name, &n);
    while (v && n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (v && n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    *len = v ? n : 0;
    return v;
}

/* ---- Host ---- */

int mem_api__edge_host(const mem_api_edge_t *e, const mem_api_req_t *req, mem_err_t *err)
{
    size_t len;
    const char *v = mem_api__req_header_value(req, "Host", &len);
    if (!v || len == 0) return mem_err_set(err, MEM_EBADREQ, "a Host header is required");
    if (e->any_host) return MEM_OK;
    char name[256];
    int port;
    if (split_host(v, len, name, sizeof(name), &port)) {
        if (is_loopback_name(name) || strcmp(name, e->listen_host) == 0) return MEM_OK;
        for (size_t i = 0; i < e->n_hosts; i++)
            if (strcmp(e->hosts[i].name, name) == 0 &&
                (e->hosts[i].port < 0 || e->hosts[i].port == port ||
                 (port < 0 && e->hosts[i].port == 80)))
                return MEM_OK;
    }
    return mem_err_set(err, MEM_EHOST,
                       "Host \"%.*s\" is not this server's (add it to --allowed-hosts)",
                       mem_api__utf8_prefix_n(v, len, 100), v);
}

/* ---- Origin ---- */

/* the header's value equals want (any letter case) */
static bool header_is(const mem_api_req_t *req, const char *name, const char *want)
{
    size_t len;
    const char *v = mem_api__req_header_value(req, name, &len);
    return v && len == strlen(want) && strncasecmp(v, want, len) == 0;
}

/* A browser names the site a request comes from in Sec-Fetch-Site, also where it sends no
 * Origin (a subresource load, a navigation). Another site's request without an Origin to
 * check is refused like a foreign Origin, except a link followed to a page (GET or HEAD,
 * mode navigate): that reads, and its answer goes to the user's tab, not to the page. */
static int other_site_without_origin(const mem_api_req_t *req, mem_err_t *err)
{
    bool cross = header_is(req, "Sec-Fetch-Site", "cross-site");
    if (!cross && !header_is(req, "Sec-Fetch-Site", "same-site")) return MEM_OK;
    bool safe = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    if (safe && header_is(req, "Sec-Fetch-Mode", "navigate")) return MEM_OK;
    return mem_err_set(err, MEM_EORIGIN,
                       "a request from another site (Sec-Fetch-Site: %s) without an allowed "
                       "Origin is refused",
                       cross ? "cross-site" : "same-site");
}

/* Where every Host passes (a public --listen without --allowed-hosts), a Host that is a
 * DNS name proves nothing about the page a browser request comes from: a page whose name
 * was re-pointed at this server (DNS rebinding) is same-origin with itself. An address
 * cannot be re-pointed, and localhost and the listen host are this server's. */
static bool host_rebindable(const mem_api_edge_t *e, const char *host, size_t hl)
{
    if (!e->any_host) return false;
    char name[256];
    int port;
    return !split_host(host, hl, name, sizeof(name), &port) ||
           !(is_address(name) || is_loopback_name(name) || strcmp(name, e->listen_host) == 0);
}

int mem_api__edge_origin(const mem_api_edge_t *e, const mem_api_req_t *req, bool *present,
                         mem_err_t *err)
{
    size_t len;
    const char *v = mem_api__req_header_value(req, "Origin", &len);
    *present = v != NULL;
    if (e->any_origin) return MEM_OK;
    size_t hl;
    const char *host = mem_api__req_header_value(req, "Host", &hl);
    if (!v) {
        int rc = other_site_without_origin(req, err);
        /* a same-origin GET carries no Origin: its Sec-Fetch-Site tells it is a page's */
        if (rc == MEM_OK && host && header_is(req, "Sec-Fetch-Site", "same-origin") &&
            host_rebindable(e, host, hl))
            rc = mem_err_set(err, MEM_EORIGIN,
                             "a page's request through the host name \"%.*s\" is refused: "
                             "every Host is accepted here, so it may be a re-pointed (DNS "
                             "rebinding) page (add the name to --allowed-hosts)",
                             mem_api__utf8_prefix_n(host, hl, 100), host);
        return rc;
    }
    for (size_t i = 0; i < e->n_origins; i++)
        if (strlen(e->origins[i]) == len && strncasecmp(e->origins[i], v, len) == 0) return MEM_OK;
    /* A same-origin request: the page was served by this Host, which passed the Host
     * check (so the console works through any allowed host name), unless any Host passes
     * and this one is a name. */
    size_t skip = len > 7 && strncasecmp(v, "http://", 7) == 0    ? 7
                  : len > 8 && strncasecmp(v, "https://", 8) == 0 ? 8
                                                                  : 0;
    bool same = host && hl && skip && len - skip == hl && strncasecmp(v + skip, host, hl) == 0;
    if (same && !host_rebindable(e, host, hl)) return MEM_OK;
    return mem_err_set(err, MEM_EORIGIN, "Origin \"%.*s\" is not allowed (add it to %s)",
                       mem_api__utf8_prefix_n(v, len, 100), v,
                       same ? "--allowed-hosts or --allowed-origins" : "--allowed-origins");
}

/* ---- keys ---- */

bool mem_api__glob_match(const char *glob, const char *s)
{
    const char *star = NULL, *mark = NULL;
    while (*s) {
        if (*glob == '?' || (*glob && *glob == *s)) {
            glob++, s++;
        } else if (*glob == '*') {
            star = glob++;
            mark = s;
        } else if (star) {
            glob = star + 1;
            s = ++mark;
        } else {
            return false;
        }
    }
    while (*glob == '*')
        glob++;
    return *glob == '\0';
}

/* 1 when a equals b (b_len bytes): time depends on b_len and a's length only. */
static unsigned ct_equal(const char *a, size_t a_len, const char *b, size_t b_len)
{
    unsigned char diff = (unsigned char)(a_len != b_len);
    for (size_t i = 0; i < b_len; i++)
        diff |= (unsigned char)((i < a_len ? (unsigned char)a[i] : 0) ^ (unsigned char)b[i]);
    return diff == 0;
}

bool mem_api__edge_auth_on(const mem_api_edge_t *e)
{
    return e && (e->api_key_len > 0 || e->keys);
}

bool mem_api__edge_metrics_public(const mem_api_edge_t *e)
{
    return !e || e->metrics_public;
}

int mem_api__edge_auth(const mem_api_edge_t *e, const mem_api_req_t *req, mem_api__pool_t *pool,
                       mem_api__auth_t *out, mem_err_t *err)
{
    memset(out, 0, sizeof(*out));
    if (!mem_api__edge_auth_on(e)) {
        out->open = true;
        return MEM_OK;
    }
    size_t len;
    const char *v = mem_api__req_header(req, "Authorization", &len);
    if (!v || len < 7 || strncasecmp(v, "Bearer ", 7) != 0)
        return mem_err_set(err, MEM_EUNAUTH,
                           "missing or wrong bearer token (Authorization: Bearer KEY)");
    const char *key = v + 7;
    size_t kl = len - 7;
    while (kl && (*key == ' ' || *key == '\t'))
        key++, kl--;
    while (kl && (key[kl - 1] == ' ' || key[kl - 1] == '\t'))
        kl--;
    /* every candidate is compared, matched or not */
    size_t n_keys = e->keys ? e->keys->n : 0, n_match = 0;
    unsigned api_match = e->api_key_len ? ct_equal(e->api_key, e->api_key_len, key, kl) : 0;
    unsigned char *match = n_keys ? mem_api__palloc(pool, n_keys) : NULL;
    if (n_keys && !match) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_keys; i++) {
        match[i] =
            (unsigned char)ct_equal(e->keys->grants[i].key, e->keys->grants[i].key_len, key, kl);
        n_match += match[i];
    }
    n_match += api_match;
    if (kl == 0 || n_match == 0)
        return mem_err_set(err, MEM_EUNAUTH,
                           "missing or wrong bearer token (Authorization: Bearer KEY)");
    out->grants = mem_api__palloc(pool, n_match * sizeof(*out->grants));
    if (!out->grants) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    if (api_match) out->grants[out->n++] = (mem_api__grant_t){MEM_CFG_ROLE_ADMIN, "*"};
    for (size_t i = 0; i < n_keys; i++) {
        if (!match[i]) continue;
        const mem_cfg_grant_t *g = &e->keys->grants[i];
        char *glob = mem_api__pstrndup(pool, g->glob, strlen(g->glob));
        if (!glob) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        out->grants[out->n++] = (mem_api__grant_t){g->role, glob};
    }
    return MEM_OK;
}

bool mem_api__auth_allows(const mem_api__auth_t *a, mem_cfg_role_t need, const char *ns)
{
    if (!a || a->open) return true;
    for (size_t i = 0; i < a->n; i++)
        if (a->grants[i].role >= need && (!ns || mem_api__glob_match(a->grants[i].glob, ns)))
            return true;
    return false;
}

int mem_api__auth_check(const mem_api__auth_t *a, mem_cfg_role_t need, const char *ns,
                        mem_err_t *err)
{
    if (mem_api__auth_allows(a, need, ns)) return MEM_OK;
    static const char *const names[] = {"", "read", "write", "admin"};
    const char *role = names[need <= MEM_CFG_ROLE_ADMIN ? need : 0];
    if (ns)
        return mem_err_set(err, MEM_EFORBIDDEN, "this key has no %s access to namespace %s", role,
                           ns);
    return mem_err_set(err, MEM_EFORBIDDEN, "this key has no %s access", role);
}
