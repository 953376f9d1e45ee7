/* main.c - start-up: configuration, kernel choice, then the loop
 * SPDX-License-Identifier: MIT
 *
 * Order: config -> logging -> mem_vec_init (before any thread) -> loop, which opens the
 * store on the pool while /healthz already answers 503 "loading".
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/config.h"
#include "core/vec.h"
#include "server/admin.h"
#include "server/log.h"
#include "server/loop.h"

extern char **environ;

int main(int argc, char **argv)
{
    if (mem_cli_wants(argc, argv))
        return mem_cli_main(argc, argv); /* a client of a running server: ns, add, search... */
    mem_srv_log_early(argc, argv, environ);
    int handled = 0;
    int admin_rc = mem_srv_admin_main(argc, argv, &handled);
    if (handled) return admin_rc; /* backup, restore or --check: no server */
    static mem_cfg_t cfg;
    int rc = mem_srv_cfg_load(&cfg, argc, argv);
    if (rc >= 0) return rc;
    mem_err_t err;
    mem_err_clear(&err);
    mem_srv_log_setup(cfg.log_level, cfg.log_json);
    signal(SIGPIPE, SIG_IGN);

    mem_vec_isa_t isa = mem_vec_best_isa();
    if (cfg.simd[0]) {
        if (mem_vec_isa_parse(cfg.simd, &isa) != 0 || !mem_vec_ops_for(isa)) {
            mem_srv_log_fail("config_error",
                             "invalid value for MNEMOD_SIMD: \"%s\" is not supported by this CPU",
                             cfg.simd);
            return 2;
        }
    }
    mem_vec_init(isa);
    mem_cfg_keys_t *keys = NULL;
    if (cfg.keys_path[0] && mem_cfg_keys_load(cfg.keys_path, &keys, &err) != MEM_OK) {
        mem_srv_log_fail("config_error", "%s", err.msg);
        return 2;
    }
    mem_srv_log_config(&cfg);
    return mem_srv_run(&cfg, mem_vec_ops(), keys);
}
