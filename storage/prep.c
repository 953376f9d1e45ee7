/* prep.c - a segment's terms and vector codes, made before it is queued (see store.h)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The writer is one thread for the whole store; tokenising a text and quantising a
 * vector need nothing it owns, so the threads that decode requests do them, in parallel,
 * and the writer copies the results in (insert.c). They are made exactly as the writer
 * makes them: the store's tokenizer options and trigram setting, mem_vec_quantize_u8. A
 * segment without a prep (an import, a cluster record, an allocation that failed) is made
 * by the writer as before.
 */
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "storage/store_int.h"

struct mem_store_prep {
    size_t n;
    mem_store_seg_prep_t *segs;
    uint8_t *codes; /* n * dim */
};

int mem_store_prepare(mem_store_t *st, mem_store_seg_in_t *segs, size_t n, size_t dim,
                      mem_store_prep_t **out)
{
    *out = NULL;
    if (!n || !dim) return MEM_OK;
    mem_store_prep_t *p = calloc(1, sizeof(*p));
    mem_lextok_t *tk = NULL;
    if (!p || !(p->segs = calloc(n, sizeof(*p->segs))) || !(p->codes = malloc(n * dim))) goto oom;
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        mem_store_seg_prep_t *sp = &p->segs[i];
        if (!segs[i].vec) goto oom; /* not final: leave it all to the writer */
        sp->dim = dim;
        sp->q8 = p->codes + i * dim;
        mem_vec_quantize_u8(segs[i].vec, dim, sp->q8, &sp->q8_scale, &sp->q8_err);
        if (segs[i].text) {
            if (!tk && !(tk = mem_store__tok_get(st))) goto oom;
            if (mem_lexdoc_build(&sp->doc, tk, segs[i].text, segs[i].text_len,
                                 st->opts.text_grams) != MEM_OK)
                goto oom;
            sp->has_doc = true;
        }
    }
    mem_store__tok_put(st, tk);
    for (size_t i = 0; i < n; i++)
        segs[i].prep = &p->segs[i];
    *out = p;
    return MEM_OK;
oom:
    mem_store__tok_put(st, tk);
    mem_store_prep_free(p);
    return MEM_ENOMEM;
}

void mem_store_prep_free(mem_store_prep_t *p)
{
    if (!p) return;
    for (size_t i = 0; p->segs && i < p->n; i++)
        mem_lexdoc_deinit(&p->segs[i].doc);
    free(p->segs);
    free(p->codes);
    free(p);
}
