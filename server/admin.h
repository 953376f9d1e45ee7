/* admin.h - the offline commands: `mnemod backup`, `mnemod restore`, `mnemod --check`
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_SERVER_ADMIN_H
#define MEM_SERVER_ADMIN_H

/* When argv asks for an admin command (argv[1] is "backup" or "restore", or "--check" is
 * on the line), run it, set *handled = 1 and return the process exit status: 0 done,
 * 1 failed (or --check found problems), 2 usage or configuration error. Otherwise set
 * *handled = 0 and return 0: the caller starts the server. The database path comes from
 * the usual settings (--data, MNEMOD_DATA, --config FILE, default ./mnemod.db). */
int mem_srv_admin_main(int argc, char **argv, int *handled);

#endif
