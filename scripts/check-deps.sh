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
check core "server|api|storage|config|embedder" "uv|microhttpd|jansson|sqlite3|pthread|curl/curl"
check config "server|api|storage|embedder" "uv|microhttpd|jansson|sqlite3|curl/curl"
check storage "server|api|config|embedder" "uv|microhttpd|jansson|curl/curl"
check api "server|embedder" "uv|microhttpd|sqlite3|curl/curl"
# embedder/: the provider client; below server/, beside api/ (it never sees a request)
check embedder "server|api|storage|cluster" "microhttpd|sqlite3"
exit $fail
