/* decay.h - temporal decay and the score blend of SPEC section 4
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_CORE_DECAY_H
#define MEM_CORE_DECAY_H

typedef enum mem_decay_kind {
    MEM_DECAY_EXPONENTIAL = 0,
    MEM_DECAY_LINEAR,
    MEM_DECAY_GAUSSIAN,
    MEM_DECAY_WEIBULL,
    MEM_DECAY_NONE
} mem_decay_kind_t;

typedef struct mem_decay {
    mem_decay_kind_t kind;
    double half_life_s;  /* 0 disables decay (d = 1) */
    double shape;        /* weibull only, in (0, 10] */
    double offset_s;     /* grace period subtracted from the age, >= 0 */
    double recency_bias; /* [0, 1] */
} mem_decay_t;

/* d in [0, 1] for an age already reduced by the offset (age_s >= 0). */
double mem_decay_factor(const mem_decay_t *d, double age_s);
/* Age as SPEC defines it: max(0, |origin - ts| - offset), in seconds. */
double mem_decay_age_s(const mem_decay_t *d, long long origin_ms, long long ts_ms);
/* t = (1 - recency_bias) + recency_bias * d. */
double mem_decay_time_weight(const mem_decay_t *d, double age_s);
/* f = (1 - w) * t + w * gate. */
double mem_decay_blend(double t, double gate, double coherence_weight);
/* Parse "exponential", "linear", "gaussian", "none"; 0 or -1. */
int mem_decay_kind_parse(const char *name, mem_decay_kind_t *out);
const char *mem_decay_kind_name(mem_decay_kind_t kind);

#endif
