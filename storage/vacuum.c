/* vacuum.c - reclaim the holes that hard deletes leave in an index
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A hard delete leaves a hole in the index (core/index.h). After a group has
 * committed and been published, a namespace whose holes exceed max(VACUUM_MIN_HOLES,
 * rows / 4) is rebuilt without them (mem_index_vacuum) WITHOUT its lock, through the
 * writer's view - this thread is the only mutator, readers only bump access statistics
 * (atomics) - then swapped in under the exclusive lock, where the access statistics
 * bumped meanwhile are copied over and the dirty access list (the only row positions kept
 * across groups) is remapped to the new positions (mem_index_vacuum_remap); the old index
 * is freed after the unlock. It waits for the coherence graph to be idle (every hole
 * unlinked, nothing pending) and keeps the linker away meanwhile, so no position list
 * survives the swap but the dirty access list. Scans give the same answers: same rows,
 * same order, same fields.
 */
#include <stdlib.h>

#include "storage/writer_int.h"

#define VACUUM_MIN_HOLES 1024

void mem_store__maybe_vacuum(mem_store__writer_t *w, mem_store_ns_t *ns)
{
    const mem_index_t *view = mem_store__writer_view(w, ns);
    /* under the shared lock: the linker writes the graph's counts beside ours under the
     * exclusive one (only once the graph is idle below is the view the writer's alone) */
    mem_index_counts_t c;
    mem_index_counts(mem_store__read_lock(ns), &c);
    mem_store__read_unlock(ns);
    size_t limit = c.n_rows / 4 > VACUUM_MIN_HOLES ? c.n_rows / 4 : VACUUM_MIN_HOLES;
    if (c.n_deleted <= limit || c.n_visible != c.n_rows || ns->in_group) return;
    /* Only once the graph has let go of every hole, and with the linker kept away: it keeps
     * positions (pending rows, g_rows) that the swap changes. */
    mem_store_t *st = w->st;
    pthread_mutex_lock(&st->g_mu);
    mem_store_graph_t *g = &ns->g;
    bool idle = !g->busy && !g->queued && !g->n_pend && g->g_gen == g->w_gen;
    if (idle) g->busy = true;
    pthread_mutex_unlock(&st->g_mu);
    if (!idle) return; /* a later group tries again */
    mem_index_t *vac = NULL;
    mem_lexidx_t *lvac = NULL;
    size_t *remap = malloc(c.n_rows * sizeof(*remap));
    /* the writer is the only one that changes the lexical index: read it without the lock */
    if (!remap || mem_index_vacuum(view, &vac) != MEM_OK ||
        mem_lexidx_vacuum(mem_store__lex(ns), &lvac) != MEM_OK) { /* ENOMEM: tried again */
        w->vacuum_again = true; /* between groups (writer.c), or by a later group */
        free(remap);
        mem_index_free(vac);
        pthread_mutex_lock(&st->g_mu);
        g->busy = false;
        pthread_mutex_unlock(&st->g_mu);
        return;
    }
    mem_index_vacuum_remap(view, remap);
    mem_index_t *idx = mem_store__write_lock(w, ns);
    pthread_mutex_lock(&ns->acc_mu);
    mem_index_vacuum_sync_access(vac, idx);
    size_t k = 0;
    for (size_t i = 0; i < ns->n_dirty; i++) {
        size_t pos = ns->dirty[i];
        if (pos < c.n_rows && remap[pos] != SIZE_MAX) ns->dirty[k++] = remap[pos];
    }
    ns->n_dirty = k;
    mem_index_t *old = mem_store__write_swap(w, ns, vac);
    mem_lexidx_t *lold = mem_store__write_swap_lex(w, ns, lvac);
    g->g_rows = g->g_rows >= c.n_rows ? mem_index_rows(vac) : 0; /* all of it was taken */
    pthread_mutex_unlock(&ns->acc_mu);
    mem_store__write_unlock(w, ns);
    mem_index_free(old);
    mem_lexidx_free(lold);
    free(remap);
    pthread_mutex_lock(&st->g_mu);
    g->busy = false;
    pthread_mutex_unlock(&st->g_mu);
}

void mem_store__vacuum_again(mem_store__writer_t *w)
{
    mem_store_t *st = w->st;
    w->vacuum_again = false;
    /* the writer is the registry's only mutator, and a vacuum does not change it */
    for (size_t i = 0; i < st->n_nss; i++)
        if (!st->nss[i]->dropped) mem_store__maybe_vacuum(w, st->nss[i]);
}
