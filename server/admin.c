/* admin.c - `mnemod backup OUT`, `mnemod restore IN`, `mnemod --check`
 * SPDX-License-Identifier: MIT
 *
 * The command word and its one path are taken out of argv; everything else goes through
 * mem_cfg_load like a server start, so --data, --config FILE and MNEMOD_DATA name the
 * database exactly as they do for the server (and a typo in a flag is refused the same
 * way). The SQLite work is in storage/backup.c.
 */
#include "server/admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "server/log.h"
#include "storage/store.h"

extern char **environ;

enum { CMD_NONE, CMD_BACKUP, CMD_RESTORE, CMD_CHECK };

static const char usage[] =
    "Usage: mnemod backup  [--data FILE | --config FILE] OUT\n"
    "       mnemod restore [--data FILE | --config FILE] IN\n"
    "       mnemod --check [--data FILE | --config FILE]\n"
    "  backup   copy the database to OUT (SQLite online backup: safe while the server runs;\n"
    "           OUT is replaced only by a complete, synced copy)\n"
    "  restore  replace the database with the backup IN (IN must pass the integrity check;\n"
    "           refused while a server has the database open)\n"
    "  --check  full integrity check: prints ok (exit 0) or the problems (exit 1)\n"
    "The database is --data, else MNEMOD_DATA, else data in the --config file, else ./mnemod.db.\n";

/* Flags that are followed by a value unless written --flag=value. Only metrics-public is a
 * boolean flag (its value word is optional). */
static int is_bool_word(const char *s)
{
    static const char *const w[] = {"0", "1", "true", "false", "yes", "no", "on", "off"};
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (strcmp(s, w[i]) == 0) return 1;
    return 0;
}

static void print_problem(const char *problem, void *ud)
{
    (void)ud;
    printf("%s\n", problem);
}

int mem_srv_cfg_load(mem_cfg_t *cfg, int argc, char **argv)
{
    static char text[MEM_CFG_TEXT_MAX];
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_cfg_load(cfg, argc, argv, environ, text, sizeof(text), &err);
    if (rc == MEM_CFG_EXIT_OK) {
        fputs(text, stdout);
        return 0;
    }
    if (rc != MEM_CFG_RUN) {
        mem_srv_log_fail("config_error", "%s", err.msg);
        return 2;
    }
    return -1;
}

int mem_srv_admin_main(int argc, char **argv, int *handled)
{
    *handled = 0;
    int cmd = CMD_NONE;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "backup") == 0)
        cmd = CMD_BACKUP, first = 2;
    else if (argc > 1 && strcmp(argv[1], "restore") == 0)
        cmd = CMD_RESTORE, first = 2;
    else
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--check") == 0) cmd = CMD_CHECK;
    if (cmd == CMD_NONE) return 0;
    *handled = 1;

    /* Split: flags (and their values) for mem_cfg_load, the positional path for us. */
    char **fargv = calloc((size_t)argc + 1, sizeof(*fargv));
    if (!fargv) {
        mem_srv_log_fail("out_of_memory", "out of memory");
        return 1;
    }
    int fargc = 0;
    fargv[fargc++] = argv[0];
    const char *path = NULL;
    int n_pos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            free(fargv);
            return 0;
        }
        if (strcmp(a, "--check") == 0) continue;
        if (strncmp(a, "--", 2) == 0 && a[2]) {
            fargv[fargc++] = argv[i];
            if (!strchr(a, '=') && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 &&
                (strcmp(a, "--metrics-public") != 0 || is_bool_word(argv[i + 1])))
                fargv[fargc++] = argv[++i];
            continue;
        }
        path = a;
        n_pos++;
    }
    int want_pos = cmd == CMD_CHECK ? 0 : 1;
    if (n_pos != want_pos) {
        mem_srv_log_fail("usage", "%s\n%s",
                         cmd == CMD_CHECK    ? "--check takes no path (use --data FILE)"
                         : cmd == CMD_BACKUP ? "backup needs exactly one output path"
                                             : "restore needs exactly one input path",
                         usage);
        free(fargv);
        return 2;
    }

    static mem_cfg_t cfg;
    int rc = mem_srv_cfg_load(&cfg, fargc, fargv);
    free(fargv);
    if (rc >= 0) return rc;
    mem_err_t err;
    mem_err_clear(&err);
    mem_srv_log_setup(cfg.log_level, cfg.log_json);
    const char *db = cfg.data_path;

    if (cmd == CMD_CHECK) {
        size_t n = 0;
        rc = mem_store_check(db, print_problem, NULL, &n, &err);
        if (rc != MEM_OK) {
            mem_srv_log_fail("check_failed", "check %s: %s", db, err.msg);
            return 1;
        }
        if (n == 0) {
            printf("ok\n");
            return 0;
        }
        mem_srv_log_fail("check_problems", "%s: integrity check found %zu problem%s", db, n,
                         n == 1 ? "" : "s");
        return 1;
    }
    if (cmd == CMD_BACKUP) {
        rc = mem_store_backup(db, path, &err);
        if (rc != MEM_OK) {
            mem_srv_log_fail("backup_failed", "backup %s: %s", db, err.msg);
            return 1;
        }
        struct stat sb;
        long long size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
        printf("backup of %s written to %s (%lld bytes)\n", db, path, size);
        return 0;
    }
    rc = mem_store_restore(db, path, &err);
    if (rc != MEM_OK) {
        mem_srv_log_fail("restore_failed", "restore %s: %s", db, err.msg);
        return 1;
    }
    printf("%s restored from %s\n", db, path);
    return 0;
}
