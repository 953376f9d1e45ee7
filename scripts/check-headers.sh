#!/bin/sh
# check-headers.sh - every header compiles on its own, twice in a row (STYLE.md section 8):
# it includes what it uses and its include guard works.
CC=${CC:-cc}
fail=0
pkgs="libuv libmicrohttpd jansson sqlite3 libcurl"
flags="-I. -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Wpedantic \
       -Wno-unused-function $(pkg-config --cflags $pkgs 2>/dev/null)"
n=0
for h in core/*.h config/*.h storage/*.h api/*.h server/*.h cluster/*.h embedder/*.h cli/*.h; do
    [ -e "$h" ] || continue
    isa=""
    case $h in # the ISA kernels' own helpers need their file's flags (mk/engine.mk)
    core/vec_avx512_int.h) isa="-mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma" ;;
    # cluster/'s internals exist with libnats only (mk/cluster.mk)
    cluster/cluster_int.h) isa="-DMNEMOD_HAVE_NATS $(pkg-config --cflags libnats 2>/dev/null)" ;;
    esac
    n=$((n + 1))
    if ! printf '#include "%s"\n#include "%s"\n' "$h" "$h" |
        $CC $flags $isa -fsyntax-only -x c - 2>/tmp/check-headers.$$; then
        echo "check-headers: $h does not compile on its own:"
        sed 's/^/    /' /tmp/check-headers.$$ | head -20
        fail=1
    fi
done
rm -f /tmp/check-headers.$$
[ $fail -eq 0 ] && echo "check-headers: $n headers compile on their own"
exit $fail
