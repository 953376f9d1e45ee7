#!/bin/sh
# check-deps.sh - include arrows point down only (STYLE.md section 1).
fail=0
check() { # dir, forbidden project dirs regex, forbidden system headers regex
    for f in "$1"/*.[ch]; do
        [ -e "$f" ] || continue
        if grep -nE "#include \"($2)/" "$f"; then echo "check-deps: $f includes a higher layer"; fail=1; fi
        if [ -n "$3" ] && grep -nE "#include <($3)\.h>" "$f"; then echo "check-deps: $f includes a forbidden library"; fail=1; fi
    done
}
check core "server|api|storage|config" "uv|microhttpd|jansson|sqlite3|pthread"
check config "server|api|storage" "uv|microhttpd|jansson|sqlite3"
check storage "server|api|config" "uv|microhttpd|jansson"
check api "server" "uv|microhttpd|sqlite3"
# the client commands speak only the public HTTP API: no store, no handlers, no loop
check cli "server|api|storage|config" "uv|microhttpd|sqlite3"
exit $fail
