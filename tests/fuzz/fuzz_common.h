/* fuzz_common.h - shared helpers of the libFuzzer targets in tests/fuzz/
 * SPDX-License-Identifier: MIT
 *
 * A finding is reported with FUZZ_CHECK (message on stderr, then abort, so libFuzzer keeps
 * the input as a crash file). Inputs are copied into exactly sized heap buffers before a
 * parser sees them, so ASan catches any read past the slice it was given.
 */
#ifndef MEM_TESTS_FUZZ_COMMON_H
#define MEM_TESTS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A heap copy of exactly len bytes (no NUL), or with nul != 0 a NUL-terminated copy. */
static inline char *fuzz_dup(const uint8_t *p, size_t len, int nul)
{
    char *c = malloc(len + (nul ? 1 : 0) + (len == 0 && !nul ? 1 : 0));
    if (!c) abort();
    if (len) memcpy(c, p, len);
    if (nul) c[len] = '\0';
    return c;
}

#endif
