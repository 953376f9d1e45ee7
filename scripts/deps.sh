#!/bin/sh
# deps.sh - install the Debian packages mnemod builds, tests and benchmarks with.
# Installs only what is missing; uses sudo when not root. Safe to run repeatedly.
set -eu
PKGS="build-essential pkg-config libuv1-dev libmicrohttpd-dev libjansson-dev libsqlite3-dev \
libcmocka-dev curl python3 clang libclang-rt-14-dev systemd man-db groff-base \
nats-server libnats-dev libcurl4-openssl-dev python3-venv python3-mypy chromium libutf8proc-dev libstemmer-dev"
# --bench: wrk for the HTTP suites; FAISS (with OpenBLAS, as FAISS users run it) for the
# peers suite, whose npm peers are installed at the end
[ "${1:-}" = "--bench" ] && PKGS="$PKGS wrk hyperfine python3-faiss libopenblas0-pthread"
# node + npm run the pinned OpenAPI linter (tools/openapi); a machine that already has them
# (from any source) keeps its own
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# Node.js and npm run the TypeScript client's tests (its pinned npm packages come from
# `npm ci`); a Node already on PATH (e.g. a newer one from elsewhere) is used as it is.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
    echo "deps: installing$missing" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# --bench: the peers' pinned npm packages (bench/peers/package-lock.json: usearch,
# hnswlib-node). Their native addons build against the installed Node's own headers. A
# failure is not fatal: the peers suite then reports the peer as missing.
if [ "${1:-}" = "--bench" ]; then
    P="$(dirname "$0")/../bench/peers"
    if [ -f "$P/package-lock.json" ] && ! cmp -s "$P/package-lock.json" "$P/node_modules/.mnemod-installed"; then
        echo "deps: installing the bench peers (npm ci in bench/peers)" >&2
        nodedir=""
        [ -d /usr/include/node ] && nodedir=/usr
        if (cd "$P" && npm_config_nodedir="$nodedir" npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
            cp "$P/package-lock.json" "$P/node_modules/.mnemod-installed"
        else
            echo "deps: npm ci in bench/peers failed; the peers suite will say which peer is missing" >&2
        fi
    fi
fi
