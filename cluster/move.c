/* move.c - moving namespaces between nodes: joins, switches, leaves, the rebalancer
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A move of namespace X from node B to node C is three compare-and-set steps on
 * X's placement entry, each by whoever can take it, and no step stops writes:
 *  1. start (the rebalancer, or POST /v1/cluster/move): join = C, drop = B. Writes keep
 *     going to the holders; C sees it is joining and its catch-up worker restores a fresh
 *     snapshot of X asked of a live holder, then applies the log after it, then follows
 *     the log like any holder (fetch.c).
 *  2. switch (C, once X is live and verified there): nodes = nodes - B + C, join = drop =
 *     none. Routing follows at once on every node (the map is watched).
 *  3. leave (B, seeing it is no longer placed): B keeps applying X for the write timeout
 *     plus a grace period, so answers to its own writes still come from its apply, then
 *     forgets X (NS_FORGET: rows and chain position dropped locally). X placed on B again
 *     while the forget runs is caught up again from what the store holds once it is done.
 * Every record goes through the log and every holder applies each record exactly once
 * (chain positions), so nothing is lost or applied twice whatever the timing; a write that
 * races the switch is simply applied by the new holders from the log.
 *
 * The rebalancer runs on the lease holder every 2 s. Members are the nodes not draining and
 * not silent for --node-dead-after (a node briefly down still counts: nothing moves during a
 * restart). A holder that is no longer a member is replaced first by the least loaded live
 * member (namespaces placed on it, joins included; rendezvous weight for ties), then groups
 * smaller than R grow, then namespaces move from the fullest live node to the emptiest
 * while their counts differ by 2 or more: a new node fills up, a drained one empties. At
 * most --max-moves moves run at once; a join whose node is gone is cancelled. Entries moved
 * by hand (pinned) are only touched when a holder leaves.
 */
#ifdef MNEMOD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cluster/cluster_int.h"

#define SWITCH_RETRY_MS 1000

typedef struct entry_copy {
    char name[MEM_STORE_NS_MAX + 1];
    char nodes[MEM_CLUSTER_PLACE_MAX][64];
    size_t n_nodes;
    char join[64], drop[64];
    bool pinned;
    uint64_t rev;
} entry_copy_t;

static void copy_entry(const cl_ns_t *ns, entry_copy_t *e)
{
    snprintf(e->name, sizeof(e->name), "%s", ns->name);
    memcpy(e->nodes, ns->nodes, sizeof(e->nodes));
    e->n_nodes = ns->n_nodes;
    snprintf(e->join, sizeof(e->join), "%s", ns->join);
    snprintf(e->drop, sizeof(e->drop), "%s", ns->drop);
    e->pinned = ns->pinned;
    e->rev = ns->map_rev;
}

static void node_ptrs(const entry_copy_t *e, const char **out)
{
    for (size_t i = 0; i < e->n_nodes; i++)
        out[i] = e->nodes[i];
}

/* C's side: X is live here and verified: make C a holder in drop's place. */
static void try_switch(mem_cluster_t *cl, entry_copy_t *e)
{
    const char *nodes[MEM_CLUSTER_PLACE_MAX + 1];
    size_t n = 0;
    bool placed = false;
    for (size_t i = 0; i < e->n_nodes; i++) {
        if (e->drop[0] && strcmp(e->nodes[i], e->drop) == 0) {
            nodes[n++] = cl->cfg->node_id; /* same rank: a moved primary stays primary */
            placed = true;
        } else if (strcmp(e->nodes[i], cl->cfg->node_id) != 0) {
            nodes[n++] = e->nodes[i];
        }
    }
    if (!placed && n < MEM_CLUSTER_PLACE_MAX) nodes[n++] = cl->cfg->node_id;
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_cluster__map_put(cl, e->name, nodes, n, NULL, NULL, e->pinned, e->rev, &err) ==
        MEM_OK) {
        pthread_mutex_lock(&cl->mu);
        cl->n_moves_done++;
        pthread_mutex_unlock(&cl->mu);
        mem_cluster__log("info", "move_switched", "ns=%s joined=%s dropped=%s", e->name,
                         cl->cfg->node_id, e->drop[0] ? e->drop : "-");
    }
}

static void forget(mem_cluster_t *cl, const char *name)
{
    mem_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = MEM_STORE_OP_NS_FORGET;
    snprintf(op.ns, sizeof(op.ns), "%s", name);
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_cluster__run_local(cl, &op, &err);
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    if (ns) {
        ns->forgetting = false;
        if (rc == MEM_OK && ns->state == CL_NS_LEAVING) {
            ns->state = CL_NS_NONE;
            ns->applied = ns->submitted = 0;
            cl->n_forgotten++;
        } else if (rc != MEM_OK && ns->state == CL_NS_LEAVING) {
            ns->leave_at_ms = mem_cluster__mono_ms() + 5000;
        } else if (rc == MEM_OK && ns->state != CL_NS_NONE) {
            /* Placed here again while the forget was under way: the catch-up (or the fetcher,
             * had it gone live) started from the copy the forget then dropped, and would go
             * on from that position on rows that are gone (records after it refused as a gap
             * forever, or nothing to apply: live and empty). Start again from what the store
             * holds now: the log, or a snapshot where it was trimmed. */
            ns->applied = ns->submitted = mem_store_log_ns_applied(cl->st, name);
            ns->bootstrap_first = false;
            mem_cluster__ns_catchup(cl, ns, "placed here again while its copy was forgotten");
            cl->n_forgotten++;
        }
    }
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    mem_cluster__log(rc == MEM_OK ? "info" : "warn", "forgotten", "ns=%s rc=%d err=\"%s\"", name,
                     rc, err.msg);
}

void mem_cluster__placement_tick(mem_cluster_t *cl)
{
    const char *me = cl->cfg->node_id;
    int64_t now = mem_cluster__mono_ms();
    size_t cap = 16, n_sw = 0, n_fg = 0;
    entry_copy_t *sw = malloc(cap * sizeof(*sw));
    char(*fg)[MEM_STORE_NS_MAX + 1] = malloc(cap * sizeof(*fg));
    if (!sw || !fg) {
        free(sw);
        free(fg);
        return;
    }
    pthread_mutex_lock(&cl->mu);
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext) {
            if (ns->state == CL_NS_LEAVING && !ns->forgetting && now >= ns->leave_at_ms &&
                n_fg < cap) {
                ns->forgetting = true;
                snprintf(fg[n_fg++], sizeof(fg[0]), "%s", ns->name);
            } else if ((ns->state == CL_NS_CATCHUP || ns->state == CL_NS_BOOTSTRAP) &&
                       !ns->cu_queued && cl->cu_current != ns && now >= ns->retry_at_ms) {
                mem_cluster__ns_catchup(cl, ns, NULL);
            } else if (ns->state == CL_NS_LIVE && ns->verified && ns->in_map &&
                       strcmp(ns->join, me) == 0 && now - ns->switch_at_ms >= SWITCH_RETRY_MS &&
                       n_sw < cap) {
                ns->switch_at_ms = now;
                copy_entry(ns, &sw[n_sw++]);
            }
        }
    pthread_mutex_unlock(&cl->mu);
    for (size_t i = 0; i < n_sw; i++)
        try_switch(cl, &sw[i]);
    for (size_t i = 0; i < n_fg; i++)
        forget(cl, fg[i]);
    free(sw);
    free(fg);
}

/* ---- the rebalancer (lease holder) ---- */

static int start_move(mem_cluster_t *cl, const entry_copy_t *e, const char *join, const char *drop,
                      bool pinned, mem_err_t *err)
{
    const char *nodes[MEM_CLUSTER_PLACE_MAX];
    node_ptrs(e, nodes);
    int rc = mem_cluster__map_put(cl, e->name, nodes, e->n_nodes, join, drop, pinned, e->rev, err);
    if (rc == MEM_OK) {
        pthread_mutex_lock(&cl->mu);
        cl->n_moves_started++;
        pthread_mutex_unlock(&cl->mu);
        mem_cluster__log("info", "move_started", "ns=%s join=%s drop=%s pinned=%d", e->name, join,
                         drop && *drop ? drop : "-", pinned ? 1 : 0);
    }
    return rc;
}

static size_t member_at(const char *const *members, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(members[i], id) == 0) return i;
    return SIZE_MAX;
}

/* The least loaded alive member outside e's group (and not avoid), or NULL. */
static const char *pick_joiner(const entry_copy_t *e, const char *const *members,
                               const size_t *loads, const bool *alive, size_t n)
{
    const char *cand[CL_NODE_MAX];
    size_t cl_loads[CL_NODE_MAX], k = 0, idx[1];
    for (size_t i = 0; i < n; i++) {
        bool in = false;
        for (size_t j = 0; j < e->n_nodes && !in; j++)
            in = strcmp(e->nodes[j], members[i]) == 0;
        if (in || !alive[i]) continue;
        cand[k] = members[i];
        cl_loads[k++] = loads[i];
    }
    return mem_cluster_place_least(e->name, cand, cl_loads, k, 1, idx) ? cand[idx[0]] : NULL;
}

void mem_cluster__rebalance(mem_cluster_t *cl)
{
    int64_t wall = mem_cluster__wall_ms();
    int64_t dead_ms = (int64_t)(cl->cfg->node_dead_after_s * 1000.0);
    size_t r = cl->cfg->ns_replicas;
    size_t cap = 64, cnt = 0;
    entry_copy_t *es = malloc(cap * sizeof(*es));
    /* members: nodes that count for placement (a node briefly down still does); alive: those
     * that can take a namespace now; loads: namespaces placed on each (joins included) */
    const char *members[CL_NODE_MAX];
    char ids[CL_NODE_MAX][64];
    bool alive[CL_NODE_MAX];
    size_t loads[CL_NODE_MAX];
    size_t n_members = 0, running = 0;
    if (!es) return;
    pthread_mutex_lock(&cl->mu);
    for (size_t i = 0; i < cl->n_nodes && n_members < CL_NODE_MAX; i++) {
        const cl_node_t *nd = &cl->nodes[i];
        bool self = strcmp(nd->id, cl->cfg->node_id) == 0;
        if (nd->deleted || nd->draining || (!self && wall - nd->heartbeat_ms > dead_ms)) continue;
        snprintf(ids[n_members], sizeof(ids[0]), "%s", nd->id);
        members[n_members] = ids[n_members];
        loads[n_members] = 0;
        alive[n_members++] = self || mem_cluster__node_alive(nd, wall);
    }
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns && es; ns = ns->hnext) {
            if (!ns->in_map) continue;
            if (ns->join[0]) running++;
            if (cnt == cap) {
                entry_copy_t *more = realloc(es, 2 * cap * sizeof(*es));
                if (!more) break;
                es = more;
                cap *= 2;
            }
            copy_entry(ns, &es[cnt++]);
        }
    pthread_mutex_unlock(&cl->mu);
    for (size_t i = 0; i < cnt; i++) {
        size_t m;
        for (size_t k = 0; k < es[i].n_nodes; k++)
            if ((m = member_at(members, n_members, es[i].nodes[k])) != SIZE_MAX) loads[m]++;
        if (es[i].join[0] && (m = member_at(members, n_members, es[i].join)) != SIZE_MAX)
            loads[m]++;
    }
    /* 1. holders that are gone (dead, draining, removed) are replaced; small groups grow */
    for (size_t i = 0; i < cnt; i++) {
        entry_copy_t *e = &es[i];
        mem_err_t err;
        mem_err_clear(&err);
        const char *bad = NULL;
        size_t live_holders = 0;
        for (size_t k = 0; k < e->n_nodes; k++) {
            size_t m = member_at(members, n_members, e->nodes[k]);
            if (m == SIZE_MAX && !bad) bad = e->nodes[k];
            if (m != SIZE_MAX && alive[m]) live_holders++;
        }
        if (e->join[0]) {
            if (member_at(members, n_members, e->join) == SIZE_MAX) { /* joiner gone: cancel */
                const char *nodes[MEM_CLUSTER_PLACE_MAX];
                node_ptrs(e, nodes);
                if (mem_cluster__map_put(cl, e->name, nodes, e->n_nodes, NULL, NULL, e->pinned,
                                         e->rev, &err) == MEM_OK) {
                    running--;
                    e->join[0] = '\0';
                    mem_cluster__log("info", "move_cancelled", "ns=%s", e->name);
                }
            }
            continue;
        }
        if (running >= cl->cfg->max_moves || live_holders == 0) continue;
        if (!bad && e->n_nodes >= r) continue;
        const char *add = pick_joiner(e, members, loads, alive, n_members);
        if (!add && bad && e->n_nodes > 1) { /* nobody to take its place: shrink the group */
            const char *nodes[MEM_CLUSTER_PLACE_MAX];
            size_t n = 0;
            for (size_t k = 0; k < e->n_nodes; k++)
                if (strcmp(e->nodes[k], bad) != 0) nodes[n++] = e->nodes[k];
            mem_cluster__map_put(cl, e->name, nodes, n, NULL, NULL, e->pinned, e->rev, &err);
            continue;
        }
        if (!add) continue;
        if (start_move(cl, e, add, bad, e->pinned, &err) == MEM_OK) {
            running++;
            snprintf(e->join, sizeof(e->join), "%s", add);
            loads[member_at(members, n_members, add)]++;
        }
    }
    /* 2. balance: from the fullest live node to the emptiest while they differ by 2 or more */
    while (running < cl->cfg->max_moves) {
        size_t hi = SIZE_MAX, lo = SIZE_MAX;
        for (size_t m = 0; m < n_members; m++) {
            if (!alive[m]) continue;
            if (hi == SIZE_MAX || loads[m] > loads[hi]) hi = m;
            if (lo == SIZE_MAX || loads[m] < loads[lo]) lo = m;
        }
        if (hi == SIZE_MAX || loads[hi] < loads[lo] + 2) break;
        entry_copy_t *pick = NULL;
        for (size_t i = 0; i < cnt && !pick; i++) {
            entry_copy_t *e = &es[i];
            if (e->join[0] || e->pinned) continue;
            bool on_hi = false, on_lo = false;
            for (size_t k = 0; k < e->n_nodes; k++) {
                on_hi = on_hi || strcmp(e->nodes[k], members[hi]) == 0;
                on_lo = on_lo || strcmp(e->nodes[k], members[lo]) == 0;
            }
            if (on_hi && !on_lo) pick = e;
        }
        if (!pick) break;
        mem_err_t err;
        mem_err_clear(&err);
        if (start_move(cl, pick, members[lo], members[hi], false, &err) != MEM_OK) break;
        snprintf(pick->join, sizeof(pick->join), "%s", members[lo]);
        running++;
        loads[lo]++;
        loads[hi]--; /* it leaves once the switch is done: count it gone already */
    }
    free(es);
}

/* ---- administration ---- */

int mem_cluster_move(mem_cluster_t *cl, const char *name, const char *from, const char *to,
                     char **json, mem_err_t *err)
{
    *json = NULL;
    int rc = mem_cluster__map_fetch(cl, name, false, err);
    if (rc != MEM_OK) return rc;
    entry_copy_t e;
    int64_t wall = mem_cluster__wall_ms();
    pthread_mutex_lock(&cl->mu);
    cl_ns_t *ns = mem_cluster__ns_find(cl, name);
    bool ok_from = ns && mem_cluster__ns_holds(cl, ns, from);
    bool ok_to = ns && !mem_cluster__ns_holds(cl, ns, to);
    bool alive = mem_cluster__node_alive(mem_cluster__node_find(cl, to), wall);
    bool busy = ns && ns->join[0];
    if (ns) copy_entry(ns, &e);
    pthread_mutex_unlock(&cl->mu);
    if (!ns) return mem_err_set(err, MEM_ENOTFOUND, "namespace not found: %s", name);
    if (busy)
        return mem_err_set(err, MEM_EEXISTS, "namespace %s is already moving to %s", name, e.join);
    if (!ok_from)
        return mem_err_field(err, MEM_EINVAL, "from", "from: node %s does not hold %s", from, name);
    if (!ok_to)
        return mem_err_field(err, MEM_EINVAL, "to", "to: node %s already holds %s", to, name);
    if (!alive) return mem_err_field(err, MEM_EINVAL, "to", "to: node %s is not alive", to);
    if ((rc = start_move(cl, &e, to, from, true, err)) != MEM_OK) return rc;
    /* the move is started; an answer without all its nodes would misstate it */
    const char *nodes[MEM_CLUSTER_PLACE_MAX];
    for (size_t i = 0; i < e.n_nodes && i < MEM_CLUSTER_PLACE_MAX; i++)
        nodes[i] = e.nodes[i];
    json_t *arr = mem_cluster__json_strings(nodes, e.n_nodes);
    json_t *o = arr ? json_pack("{s:s,s:o,s:s,s:s,s:s}", "namespace", name, "nodes", arr, "join",
                                to, "drop", from, "status", "moving")
                    : NULL;
    *json = mem_cluster__json_dump(o);
    json_decref(o);
    return *json ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
}

int mem_cluster_drain(mem_cluster_t *cl, const char *node, bool drain, char **json, mem_err_t *err)
{
    *json = NULL;
    char key[128];
    snprintf(key, sizeof(key), "drain.%s", node);
    uint64_t rev = 0;
    natsStatus s;
    if (drain) {
        char val[64];
        snprintf(val, sizeof(val), "{\"since_ms\":%lld}", (long long)mem_cluster__wall_ms());
        s = kvStore_Put(&rev, cl->kv_map, key, val, (int)strlen(val));
    } else {
        s = kvStore_Delete(cl->kv_map, key);
    }
    if (s != NATS_OK)
        return mem_err_set(err, MEM_EBUSY, "cannot mark node %s: %s", node, natsStatus_GetText(s));
    json_t *o = json_pack("{s:s,s:b}", "node", node, "draining", drain);
    *json = mem_cluster__json_dump(o);
    json_decref(o);
    return *json ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
}

int mem_cluster_forget_node(mem_cluster_t *cl, const char *node, char **json, mem_err_t *err)
{
    *json = NULL;
    int64_t wall = mem_cluster__wall_ms();
    size_t holds = 0;
    pthread_mutex_lock(&cl->mu);
    bool alive = mem_cluster__node_alive(mem_cluster__node_find(cl, node), wall);
    for (size_t b = 0; b < CL_NS_BUCKETS; b++)
        for (cl_ns_t *ns = cl->ht[b]; ns; ns = ns->hnext)
            holds += ns->in_map && (mem_cluster__ns_holds(cl, ns, node) || !strcmp(ns->join, node));
    pthread_mutex_unlock(&cl->mu);
    if (alive) return mem_err_set(err, MEM_EEXISTS, "node %s is running: stop it first", node);
    if (holds)
        return mem_err_set(err, MEM_EEXISTS,
                           "node %s still holds %zu namespaces: drain it and wait for the moves",
                           node, holds);
    kvStore_Delete(cl->kv_nodes, node);
    char key[128];
    snprintf(key, sizeof(key), "drain.%s", node);
    kvStore_Delete(cl->kv_map, key);
    json_t *o = json_pack("{s:s}", "forgotten", node);
    *json = mem_cluster__json_dump(o);
    json_decref(o);
    return *json ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
}

#endif /* MNEMOD_HAVE_NATS */
