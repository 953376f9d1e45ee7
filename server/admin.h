/* admin.h - the offline commands: `mnemod backup`, `mnemod restore`, `mnemod --check`
 * SPDX-License-Identifier: MIT
 *
 * Both these commands and the server read their settings through mem_srv_cfg_load, so a
 * flag, a variable or a config file means the same to each (and a typo fails the same way).
 */
#ifndef MEM_SERVER_ADMIN_H
#define MEM_SERVER_ADMIN_H

#include "config/config.h"

/* Fill cfg from the defaults, --config FILE, the environment and argv. -1: the caller goes
 * on with cfg. Otherwise the process exit status, with what to say already printed: 0 after
 * --help or --version (stdout), 2 for a bad setting (stderr). */
int mem_srv_cfg_load(mem_cfg_t *cfg, int argc, char **argv);

/* When argv asks for an admin command (argv[1] is "backup" or "restore", or "--check" is
 * on the line), run it, set *handled = 1 and return the process exit status: 0 done,
 * 1 failed (or --check found problems), 2 usage or configuration error. Otherwise set
 * *handled = 0 and return 0: the caller starts the server. The database path comes from
 * the usual settings (--data, MNEMOD_DATA, --config FILE, default ./mnemod.db). */
int mem_srv_admin_main(int argc, char **argv, int *handled);

#endif
