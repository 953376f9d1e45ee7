/* filter.c - the retrieve "filter" object -> a core/meta.h filter
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. {"user": "ana", "priority": {"$gte": 2, "$lt": 5}, "a.b": {"$in": [1, 2]}}: every
 * key is a path (a top-level metadata key, or a dotted path into nested objects), every
 * value a bare scalar (equality) or an object of operators, all of which must hold. The
 * first problem wins and its field names the path and operator ("filter.priority.$gte").
 * Everything decoded lives in the request pool.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"

static const struct {
    const char *name;
    mem_meta_op_t op;
} OPS[] = {{"$eq", MEM_META_EQ},   {"$ne", MEM_META_NE},   {"$in", MEM_META_IN},
           {"$nin", MEM_META_NIN}, {"$gt", MEM_META_GT},   {"$gte", MEM_META_GTE},
           {"$lt", MEM_META_LT},   {"$lte", MEM_META_LTE}, {"$exists", MEM_META_EXISTS}};

static void field_of(char *f, size_t cap, const char *path, const char *op)
{
    snprintf(f, cap, "filter.%.*s%s%s", (int)(cap > 16 ? cap - 16 : 1), path, op ? "." : "",
             op ? op : "");
}

/* A scalar filter operand into v (strings copied into the pool). */
static int scalar(mem_api__pool_t *pool, const json_t *j, mem_meta_val_t *v)
{
    memset(v, 0, sizeof(*v));
    if (json_is_null(j)) {
        v->type = MEM_META_NULL;
    } else if (json_is_boolean(j)) {
        v->type = MEM_META_BOOL;
        v->b = json_is_true(j);
    } else if (json_is_number(j)) {
        double x = json_number_value(j);
        if (!isfinite(x)) return MEM_EINVAL;
        v->type = MEM_META_NUM;
        v->num = x;
    } else if (json_is_string(j)) {
        v->type = MEM_META_STR;
        v->len = json_string_length(j);
        if (!(v->str = mem_api__pstrndup(pool, json_string_value(j), v->len))) return MEM_ENOMEM;
    } else {
        return MEM_EINVAL;
    }
    return MEM_OK;
}

static int check_path(const char *path, size_t len, char *f, size_t fcap, mem_err_t *err)
{
    field_of(f, fcap, path, NULL);
    if (len == 0 || len > MEM_META_MAX_PATH)
        return mem_err_field(err, MEM_EINVAL, f, "%s: a key must have 1 to %d bytes", f,
                             MEM_META_MAX_PATH);
    if (path[0] == '$')
        return mem_err_field(err, MEM_EINVAL, f,
                             "%s: unknown operator at the top level (keys are metadata paths)", f);
    if (path[0] == '.' || path[len - 1] == '.' || strstr(path, ".."))
        return mem_err_field(err, MEM_EINVAL, f, "%s: an empty segment in a dotted path", f);
    return MEM_OK;
}

int mem_api__decode_filter(mem_api__pool_t *pool, const json_t *j, const mem_meta_filter_t **out,
                           mem_err_t *err)
{
    char f[64];
    if (!json_is_object(j))
        return mem_err_field(err, MEM_EINVAL, "filter",
                             "filter: expected an object of metadata paths");
    /* every key gives at least one condition, an operator object one per operator */
    size_t cap = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v)
    {
        cap += json_is_object(v) && json_object_size(v) ? json_object_size(v) : 1;
    }
    if (cap > MEM_META_MAX_CONDS)
        return mem_err_field(err, MEM_EINVAL, "filter", "filter: more than %d conditions",
                             MEM_META_MAX_CONDS);
    mem_meta_cond_t *conds = mem_api__palloc(pool, (cap ? cap : 1) * sizeof(*conds));
    mem_meta_filter_t *flt = mem_api__palloc(pool, sizeof(*flt));
    if (!conds || !flt) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    size_t n = 0;
    json_object_foreach((json_t *)j, key, v)
    {
        size_t plen = strlen(key);
        int rc = check_path(key, plen, f, sizeof(f), err);
        if (rc != MEM_OK) return rc;
        const char *path = mem_api__pstrndup(pool, key, plen);
        if (!path) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        if (!json_is_object(v)) {
            if (json_is_array(v))
                return mem_err_field(err, MEM_EINVAL, f,
                                     "%s: an array is not a value to compare; use {\"$in\": [...]}",
                                     f);
            mem_meta_val_t *val = mem_api__palloc(pool, sizeof(*val));
            if (!val || (rc = scalar(pool, v, val)) == MEM_ENOMEM)
                return mem_err_set(err, MEM_ENOMEM, "out of memory");
            if (rc != MEM_OK) return mem_err_field(err, MEM_EINVAL, f, "%s: not a value", f);
            conds[n++] = (mem_meta_cond_t){path, plen, MEM_META_EQ, val, 1};
            continue;
        }
        if (json_object_size(v) == 0)
            return mem_err_field(err, MEM_EINVAL, f, "%s: an empty operator object", f);
        const char *opname;
        json_t *arg;
        json_object_foreach(v, opname, arg)
        {
            size_t k = 0;
            while (k < sizeof(OPS) / sizeof(OPS[0]) && strcmp(OPS[k].name, opname) != 0)
                k++;
            field_of(f, sizeof(f), key, opname);
            if (k == sizeof(OPS) / sizeof(OPS[0])) {
                if (opname[0] == '$')
                    return mem_err_field(err, MEM_EINVAL, f,
                                         "%s: unknown operator (use $eq $ne $in $nin $gt $gte $lt "
                                         "$lte $exists)",
                                         f);
                return mem_err_field(err, MEM_EINVAL, f,
                                     "%s: expected an operator; match nested objects with a dotted "
                                     "path (\"%.20s.%.20s\")",
                                     f, key, opname);
            }
            mem_meta_op_t op = OPS[k].op;
            mem_meta_val_t *vals = NULL;
            size_t n_vals = 1;
            if (op == MEM_META_IN || op == MEM_META_NIN) {
                if (!json_is_array(arg))
                    return mem_err_field(err, MEM_EINVAL, f, "%s: expected an array of values", f);
                n_vals = json_array_size(arg);
                if (n_vals > MEM_META_MAX_IN)
                    return mem_err_field(err, MEM_EINVAL, f, "%s: more than %d values", f,
                                         MEM_META_MAX_IN);
                vals = mem_api__palloc(pool, (n_vals ? n_vals : 1) * sizeof(*vals));
                if (!vals) return mem_err_set(err, MEM_ENOMEM, "out of memory");
                for (size_t i = 0; i < n_vals; i++) {
                    rc = scalar(pool, json_array_get(arg, i), &vals[i]);
                    if (rc == MEM_ENOMEM) return mem_err_set(err, rc, "out of memory");
                    if (rc != MEM_OK)
                        return mem_err_field(err, MEM_EINVAL, f,
                                             "%s[%zu]: expected a string, number, boolean or null",
                                             f, i);
                }
            } else {
                vals = mem_api__palloc(pool, sizeof(*vals));
                if (!vals) return mem_err_set(err, MEM_ENOMEM, "out of memory");
                if (op == MEM_META_EXISTS) {
                    if (!json_is_boolean(arg))
                        return mem_err_field(err, MEM_EINVAL, f, "%s: expected true or false", f);
                    vals->b = json_is_true(arg);
                } else if (op == MEM_META_EQ || op == MEM_META_NE) {
                    rc = scalar(pool, arg, vals);
                    if (rc == MEM_ENOMEM) return mem_err_set(err, rc, "out of memory");
                    if (rc != MEM_OK)
                        return mem_err_field(err, MEM_EINVAL, f,
                                             "%s: expected a string, number, boolean or null", f);
                } else {
                    if (!json_is_number(arg) && !json_is_string(arg))
                        return mem_err_field(err, MEM_EINVAL, f,
                                             "%s: expected a number or a string", f);
                    if ((rc = scalar(pool, arg, vals)) != MEM_OK)
                        return mem_err_set(err, rc, "out of memory");
                }
            }
            conds[n++] = (mem_meta_cond_t){path, plen, op, vals, n_vals};
        }
    }
    flt->conds = conds;
    flt->n_conds = n;
    *out = flt;
    return MEM_OK;
}
