/* bench_vec.c - kernel throughput per ISA and dimension (STYLE section 7)
 * SPDX-License-Identifier: MIT
 *
 * dot_rows over a cache-resident set (~512 KB, fits L2) and a DRAM-sized set (~256 MB):
 * ns per row and GB/s of vectors read, next to the read floor (sum kernel) of the same
 * ISA. Writes bench/results/vec.json.
 */
#include "bench/bench_util.h"

static const size_t dims[] = {128, 384, 768, 1536};
#define N_DIMS (sizeof(dims) / sizeof(dims[0]))
static const size_t set_bytes[2] = {512u << 10, 256u << 20};
static const char *const set_names[2] = {"l2", "dram"};

typedef struct result {
    const char *isa;
    size_t dim;
    int set;
    double ns_row, gbs, floor_gbs;
} result_t;

int main(void)
{
    const mem_vec_ops_t *chosen = bench_ops();
    result_t res[MEM_VEC_ISA_COUNT * N_DIMS * 2];
    size_t n_res = 0;
    float *out = malloc(256 * sizeof(float));
    uint64_t seed = 42;
    for (int set = 0; set < 2; set++) {
        size_t bytes = set_bytes[set];
        float *data = aligned_alloc(64, bytes);
        for (size_t i = 0; i < bytes / sizeof(float); i++)
            data[i] = (float)(bench_unit(&seed) - 0.5);
        for (size_t di = 0; di < N_DIMS; di++) {
            size_t dim = dims[di], n_rows = bytes / (dim * sizeof(float));
            float *q = malloc(dim * sizeof(float));
            for (size_t i = 0; i < dim; i++)
                q[i] = (float)(bench_unit(&seed) - 0.5);
            for (int isa = 0; isa < MEM_VEC_ISA_COUNT; isa++) {
                const mem_vec_ops_t *ops = mem_vec_ops_for((mem_vec_isa_t)isa);
                if (!ops) continue;
                size_t reps = set == 0 ? 200 : 5;
                if (isa == MEM_VEC_SCALAR) reps = set == 0 ? 20 : 2;
                uint64_t best = UINT64_MAX, best_floor = UINT64_MAX;
                volatile float sink = 0;
                for (size_t r = 0; r < reps; r++) {
                    uint64_t t0 = bench_now_ns();
                    for (size_t row = 0; row < n_rows; row += 256) {
                        size_t nr = n_rows - row < 256 ? n_rows - row : 256;
                        ops->dot_rows(q, data + row * dim, nr, dim, dim, out);
                        sink += out[0];
                    }
                    uint64_t t = bench_now_ns() - t0;
                    best = t < best ? t : best;
                    t0 = bench_now_ns();
                    sink += ops->sum(data, n_rows * dim);
                    t = bench_now_ns() - t0;
                    best_floor = t < best_floor ? t : best_floor;
                }
                (void)sink;
                double read = (double)n_rows * (double)dim * sizeof(float);
                res[n_res++] = (result_t){ops->name,
                                          dim,
                                          set,
                                          (double)best / (double)n_rows,
                                          read / (double)best,
                                          read / (double)best_floor};
            }
            free(q);
        }
        free(data);
    }
    bench_print_machine("vec (kernel throughput, best of repeats)", chosen);
    printf("%-8s %-5s %-6s %-10s %-10s %-12s\n", "isa", "dim", "set", "ns/row", "GB/s",
           "floor GB/s");
    for (size_t i = 0; i < n_res; i++)
        printf("%-8s %-5zu %-6s %-10.2f %-10.1f %-12.1f\n", res[i].isa, res[i].dim,
               set_names[res[i].set], res[i].ns_row, res[i].gbs, res[i].floor_gbs);
    FILE *f = fopen("bench/results/vec.json", "w");
    if (!f) {
        perror("bench/results/vec.json");
        return 0;
    }
    fprintf(f, "{\n");
    bench_json_machine(f, chosen);
    fprintf(f, ",\n  \"results\": [\n");
    for (size_t i = 0; i < n_res; i++)
        fprintf(f,
                "    {\"isa\": \"%s\", \"dim\": %zu, \"set\": \"%s\", \"ns_per_row\": %.3f, "
                "\"gb_per_s\": %.2f, \"floor_gb_per_s\": %.2f}%s\n",
                res[i].isa, res[i].dim, set_names[res[i].set], res[i].ns_row, res[i].gbs,
                res[i].floor_gbs, i + 1 < n_res ? "," : "");
    fprintf(f, "  ]\n}\n");
    fclose(f);
    free(out);
    return 0;
}
