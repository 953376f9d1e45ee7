/* loop.h - the event loop: libuv owns the process, libmicrohttpd runs inside it
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_SERVER_LOOP_H
#define MEM_SERVER_LOOP_H

#include "config/config.h"
#include "core/vec.h"

/* Serve until SIGINT/SIGTERM, then drain and close; SIGHUP re-reads the keys file. Takes
 * keys (the --keys-file table, NULL when none). Returns the process exit status: 0 after
 * a clean shutdown, 1 when the store or the listener could not be opened. */
int mem_srv_run(const mem_cfg_t *cfg, const mem_vec_ops_t *ops, mem_cfg_keys_t *keys);

#endif
