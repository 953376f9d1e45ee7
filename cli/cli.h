/* cli.h - the command line for people: `mnemod ns|add|get|forget|search|list|export|import|compact`
 * SPDX-License-Identifier: MIT
 *
 * A client of a running server: it speaks only the public REST API over HTTP (libcurl),
 * exactly as curl or the Python client would, and never opens the database. The server
 * is --url URL, else MNEMOD_URL, else http://127.0.0.1:6636; the key is MNEMOD_API_KEY
 * (or --api-key-file FILE); the namespace is -n NS, else MNEMOD_NAMESPACE; 503 answers are
 * retried --retries N, else MNEMOD_RETRIES, times. Owned by cli/; server/main.c only
 * dispatches to it.
 */
#ifndef MEM_CLI_CLI_H
#define MEM_CLI_CLI_H

#include <stdbool.h>

/* True when argv names a client command: argv[1], or the first word after the client's
 * global options (--url, -n/--namespace, --json, --api-key-file, --timeout). The server
 * itself takes no positional word, so the two never collide. */
bool mem_cli_wants(int argc, char **argv);

/* Run that command: returns the exit status (0 done, 1 the server refused or
 * could not be reached, 2 usage error). Writes results to stdout, messages to stderr. */
int mem_cli_main(int argc, char **argv);

#endif
