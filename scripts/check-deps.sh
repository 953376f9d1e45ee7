#!/bin/sh
# check-deps.sh - include arrows point down only (STYLE.md section 1), and a module's
# internals stay inside it.
fail=0
check() { # dir, forbidden project dirs regex, forbidden system headers regex
    for f in "$1"/*.[ch]; do
        [ -e "$f" ] || continue
        if grep -nE "#include \"($2)/" "$f"; then echo "check-deps: $f includes a higher layer"; fail=1; fi
        if [ -n "$3" ] && grep -nE "#include <($3)\.h>" "$f"; then echo "check-deps: $f includes a forbidden library"; fail=1; fi
    done
}
check core "server|api|storage|config|embedder" "uv|microhttpd|jansson|sqlite3|pthread|curl/curl"
check config "server|api|storage|embedder" "uv|microhttpd|jansson|sqlite3|curl/curl"
check storage "server|api|config|embedder" "uv|microhttpd|jansson|curl/curl"
check api "server|embedder" "uv|microhttpd|sqlite3|curl/curl"
# embedder/: the provider client; below server/, beside api/ (it never sees a request)
check embedder "server|api|storage|cluster" "microhttpd|sqlite3"
# the client commands speak only the public HTTP API: no store, no handlers, no loop
check cli "server|api|storage|config" "uv|microhttpd|sqlite3"
# cluster/: the replicated log; below server/, beside api/ (it sees write records, never
# requests)
check cluster "server|api|cli|embedder" "uv|microhttpd|sqlite3|curl/curl"
# server/: converts MHD to and from api/ requests and runs the loop; JSON stays in api/
# (STYLE.md section 5), SQL in storage/
check server "-" "jansson|sqlite3"

# <dir>/<name>_int.h is shared by the files of <dir> only (tests and benches of that
# module may include it too).
for f in core/*.[ch] config/*.[ch] storage/*.[ch] api/*.[ch] server/*.[ch] cluster/*.[ch] cli/*.[ch] embedder/*.[ch]; do
    [ -e "$f" ] || continue
    dir=${f%%/*}
    if grep -nE '#include "[a-z]+/[a-z0-9_]+_int\.h"' "$f" | grep -v "#include \"$dir/"; then
        echo "check-deps: $f includes another module's internals"
        fail=1
    fi
done
# The index of a namespace is reached only through the calls of storage/store_int.h
# (read views, the writer's handle); its field is named only where those live.
if grep -nE '(->|\.)_idx\b' storage/*.c | grep -vE '^storage/(store|load)\.c:'; then
    echo "check-deps: only storage/store.c and storage/load.c may touch mem_store_ns_t._idx"
    fail=1
fi
# The writer's token is the writer's: only its files include storage/writer_int.h.
for f in storage/*.c; do
    case $f in
    storage/writer.c | storage/insert.c | storage/remove.c | storage/supersede.c | \
    storage/vacuum.c | storage/access.c | storage/patch.c | storage/meta.c | storage/import.c | \
    storage/nssnap.c) ;;
    *) if grep -n '#include "storage/writer_int.h"' "$f"; then
           echo "check-deps: $f is not one of the writer's files"
           fail=1
       fi ;;
    esac
done
exit $fail
