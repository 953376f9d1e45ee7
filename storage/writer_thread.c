/* writer_thread.c - which thread is a writer (mem_store_on_writer_thread)
 * SPDX-License-Identifier: MIT
 *
 * A file of its own: api/ asks it on every answer, and the api tests that fake the store's
 * reads (weak symbols) must not pull the writer's objects into their binaries with it.
 */
#include <stdbool.h>

#include "storage/store.h"
#include "storage/store_int.h"

static _Thread_local bool on_writer_thread;

void mem_store__mark_writer_thread(void)
{
    on_writer_thread = true;
}

bool mem_store_on_writer_thread(void)
{
    return on_writer_thread;
}
