/* decay.c - temporal decay families (exponential, linear, gaussian, weibull)
 * SPDX-License-Identifier: MIT
 */
#include "core/decay.h"

#include <math.h>
#include <string.h>

double mem_decay_factor(const mem_decay_t *d, double age_s)
{
    if (d->kind == MEM_DECAY_NONE || d->half_life_s <= 0.0) return 1.0;
    double x = age_s / d->half_life_s;
    switch (d->kind) {
    case MEM_DECAY_LINEAR:
        return x >= 2.0 ? 0.0 : 1.0 - x / 2.0;
    case MEM_DECAY_GAUSSIAN:
        return exp2(-(x * x));
    case MEM_DECAY_WEIBULL:
        return exp2(-pow(x, d->shape));
    case MEM_DECAY_EXPONENTIAL:
    default:
        return exp2(-x);
    }
}

double mem_decay_age_s(const mem_decay_t *d, long long origin_ms, long long ts_ms)
{
    long long diff = origin_ms - ts_ms;
    double age = (double)(diff < 0 ? -diff : diff) / 1000.0 - d->offset_s;
    return age > 0.0 ? age : 0.0;
}

double mem_decay_time_weight(const mem_decay_t *d, double age_s)
{
    return (1.0 - d->recency_bias) + d->recency_bias * mem_decay_factor(d, age_s);
}

double mem_decay_blend(double t, double gate, double coherence_weight)
{
    return (1.0 - coherence_weight) * t + coherence_weight * gate;
}

static const char *const kind_names[] = {"exponential", "linear", "gaussian", "weibull", "none"};

int mem_decay_kind_parse(const char *name, mem_decay_kind_t *out)
{
    for (int i = 0; i <= MEM_DECAY_NONE; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (mem_decay_kind_t)i;
            return 0;
        }
    return -1;
}

const char *mem_decay_kind_name(mem_decay_kind_t kind)
{
    return (unsigned)kind <= MEM_DECAY_NONE ? kind_names[kind] : "unknown";
}
