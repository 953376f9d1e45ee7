#!/bin/sh
# run.sh - build the Docker image with podman and run it: the `make docker-test` check.
#
#   sh tests/docker/run.sh            (from the repository root; `make docker-test` does this)
#
# No Docker engine is needed. Steps:
#   1. install podman, runc, debootstrap, curl (and uidmap + fuse-overlayfs when not root)
#      with apt-get when one is missing (through sudo when not root); lint the Dockerfile
#      with `npx dockerfilelint` when npx is there;
#   2. the base image debian:bookworm-slim: kept when podman already has it, else pulled,
#      else (no registry reachable) made locally with `debootstrap --variant=minbase
#      bookworm` from the mirror in this machine's apt sources and `podman import`ed;
#   3. `podman build --pull=never --isolation=chroot` of ./Dockerfile (the build stage runs
#      the unit tests, so a failing unit test fails here);
#   4. run the image with `podman --runtime runc --cgroup-manager=cgroupfs run
#      --network=host` and MNEMOD_LISTEN=0.0.0.0:PORT on a free port, wait for /healthz,
#      check that MEMU_RECENCY_HALF_LIFE reached it, the non-root user and the
#      HEALTHCHECK, insert and retrieve with curl, take an online `mnemod backup` inside
#      the container and --check it;
#   5. `podman stop` (SIGTERM) must end it with exit status 0; start the same container
#      again and read the segment back from the /data volume; stop; remove the container
#      and its volume.
# Ends with "docker-test: N passed, M failed" and the elapsed time; exit status 0 only when
# every check passed.
# Environment: MNEMOD_IMAGE (default localhost/mnemod:test), KEEP_IMAGE=0 removes the built
# image at the end (the base image is always kept as a cache), DOCKER_TEST_MIRROR overrides
# the Debian mirror used by debootstrap.
set -u
cd "$(dirname "$0")/../.." || exit 1
T0=$(date +%s)
IMAGE=${MNEMOD_IMAGE:-localhost/mnemod:test}
BASE=debian:bookworm-slim
NAME=mnemod-docker-test-$$
passed=0
failed=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnemod-docker.XXXXXX") || exit 1

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
P="podman --runtime runc --cgroup-manager=cgroupfs"

log() { echo "docker-test: $*"; }
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
elapsed() { echo $(($(date +%s) - T0)); }
finish() {
    if $P container exists "$NAME" 2>/dev/null; then
        $P rm -f -v "$NAME" >/dev/null 2>&1 || true
    fi
    [ "${KEEP_IMAGE:-1}" = 0 ] && $P rmi -f "$IMAGE" >/dev/null 2>&1
    if [ -d "$WORK/rootfs" ]; then $SUDO rm -rf "$WORK/rootfs"; fi
    rm -rf "$WORK"
    echo "docker-test: $passed passed, $failed failed"
    log "elapsed $(elapsed) s"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
die() { bad "$*"; finish; exit 1; }
trap 'bad "interrupted"; finish; exit 1' INT TERM

# ---------------------------------------------------------------- 1. tools
need=""
for t in podman runc debootstrap curl; do
    command -v "$t" >/dev/null 2>&1 || need="$need $t"
done
if [ -n "$SUDO" ]; then
    command -v newuidmap >/dev/null 2>&1 || need="$need uidmap"
    command -v fuse-overlayfs >/dev/null 2>&1 || need="$need fuse-overlayfs"
fi
if [ -n "$need" ]; then
    log "installing$need"
    { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
        --no-install-recommends $need; } >"$WORK/apt.log" 2>&1 \
        || { tail -20 "$WORK/apt.log"; die "apt-get install$need"; }
fi
ok "tools: $(podman --version), $(runc --version | head -1)"

# The Dockerfile lint of issue 6 (npm registry); skipped, not failed, without npx.
if command -v npx >/dev/null 2>&1; then
    if npx --yes dockerfilelint Dockerfile >"$WORK/lint.log" 2>&1; then
        ok "npx dockerfilelint Dockerfile"
    else
        cat "$WORK/lint.log"
        bad "npx dockerfilelint Dockerfile"
    fi
else
    log "skip: npx dockerfilelint (no npx)"
fi

# ---------------------------------------------------------------- 2. base image
# The mirror for a suite: the first URI of the deb822 stanza (or one-line entry) in this
# machine's apt sources whose suites include it.
apt_mirror() { # suite
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk -v want="$1" '
            function flush() { if (uri != "" && has && deb && !done) { print uri; done = 1 }
                               uri = ""; has = 0; deb = 0 }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]*#/ { next }
            tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
            tolower($1) == "uris:" { uri = $2 }
            tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == want) has = 1 }
            END { flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        awk -v want="$1" '$1 == "deb" {
            i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == want) print $i }' "$f"
    done
}

make_base() {
    mirror=${DOCKER_TEST_MIRROR:-$(apt_mirror bookworm | head -1)}
    mirror=${mirror:-http://deb.debian.org/debian}
    secmirror=$(apt_mirror bookworm-security | head -1)
    secmirror=${secmirror:-http://deb.debian.org/debian-security}
    log "no $BASE image and no registry: debootstrap --variant=minbase bookworm from $mirror"
    root="$WORK/rootfs"
    if ! $SUDO debootstrap --variant=minbase bookworm "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1; then
        tail -20 "$WORK/debootstrap.log"
        return 1
    fi
    # apt sources laid out as in the official image (deb822, updates and security), then
    # the caches emptied: the image should not carry the downloaded packages.
    $SUDO rm -f "$root/etc/apt/sources.list"
    $SUDO sh -c "cat >'$root/etc/apt/sources.list.d/debian.sources'" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $secmirror
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    $SUDO sh -c "rm -rf '$root'/var/cache/apt/archives/*.deb '$root'/var/lib/apt/lists/* \
        '$root'/var/log/*.log '$root'/tmp/* '$root/debootstrap'"
    $SUDO tar -C "$root" --numeric-owner -cf - . \
        | $P import --change 'CMD ["bash"]' - "$BASE" >"$WORK/import.log" 2>&1 \
        || { cat "$WORK/import.log"; return 1; }
    $SUDO rm -rf "$root"
}

t=$(date +%s)
if $P image exists "$BASE"; then
    ok "base image $BASE present"
elif $P pull -q "docker.io/library/$BASE" >"$WORK/pull.log" 2>&1; then
    ok "base image $BASE pulled ($(($(date +%s) - t)) s)"
elif make_base; then
    ok "base image $BASE made with debootstrap + podman import ($(($(date +%s) - t)) s)"
else
    die "could not make the base image $BASE"
fi

# ---------------------------------------------------------------- 3. build
t=$(date +%s)
# --format docker keeps HEALTHCHECK (the OCI image format has no field for it).
if $P build --pull=never --isolation=chroot --format docker -t "$IMAGE" -f Dockerfile . >"$WORK/build.log" 2>&1; then
    ok "podman build --pull=never --isolation=chroot --format docker ($(($(date +%s) - t)) s)"
else
    grep -E 'FAIL|ERROR|error:' "$WORK/build.log" | tail -20
    tail -30 "$WORK/build.log"
    die "podman build"
fi
# The unit tests ran in this build, or the step was taken from the layer cache (a step is
# cached only after it succeeded on exactly these sources).
if grep -q 'suites: [0-9]* passed, 0 failed' "$WORK/build.log"; then
    ok "unit tests passed in the build stage"
elif grep -A1 'STEP .*RUN make .*run-tests.sh' "$WORK/build.log" | grep -q '^--> Using cache'; then
    ok "unit tests passed in the build stage (cached: same sources as a passing build)"
else
    bad "unit tests passed in the build stage (no 'passed, 0 failed' in the build log)"
fi

# ---------------------------------------------------------------- 4. run
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + $$ % 20000)))
URL="http://127.0.0.1:$PORT"
# Explicit, modest ulimits: podman's defaults (RLIMIT_NOFILE/NPROC of 1048576) can be above
# what runc is allowed to set on a machine like this one ("error setting rlimits for ready
# process: error setting rlimit type 7/6: operation not permitted").
lim() { h=$(ulimit -H "$1" 2>/dev/null); case $h in ''|unlimited) echo "$2" ;; *) [ "$h" -lt "$2" ] && echo "$h" || echo "$2" ;; esac; }
NOFILE=$(lim -n 16384)
NPROC=$(lim -u 4096)
if ! $P run -d --name "$NAME" --network=host --ulimit "nofile=$NOFILE:$NOFILE" \
        --ulimit "nproc=$NPROC:$NPROC" -e MNEMOD_LISTEN="0.0.0.0:$PORT" \
        -e MEMU_RECENCY_HALF_LIFE=90 "$IMAGE" >"$WORK/run.log" 2>&1; then
    cat "$WORK/run.log"
    die "podman run"
fi
ok "podman run --network=host on port $PORT"

wait_healthy() {
    i=0
    while [ $i -lt 300 ]; do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" = 200 ]; then return 0; fi
        [ "$($P inspect -f '{{.State.Running}}' "$NAME" 2>/dev/null)" = true ] || return 1
        sleep 0.2
        i=$((i + 1))
    done
    return 1
}
if wait_healthy; then
    ok "/healthz answers 200"
else
    $P logs "$NAME" 2>&1 | tail -20
    die "/healthz did not answer 200 within 60 s"
fi

# MEMU_RECENCY_HALF_LIFE=90 (days) reached the server: its config line shows it in seconds.
hl=$($P logs "$NAME" 2>&1 | sed -n 's/.*event=config .* half_life_s=\([^ ]*\) .*/\1/p' | head -1)
if awk -v v="${hl:-x}" 'BEGIN { exit !(v + 0 == 7776000) }'; then
    ok "environment honoured (MEMU_RECENCY_HALF_LIFE=90 -> half_life_s=7776000)"
else
    $P logs "$NAME" 2>&1 | head -5
    bad "environment honoured (MEMU_RECENCY_HALF_LIFE=90 -> half_life_s=7776000)"
fi
uid=$($P exec "$NAME" id -u 2>/dev/null)
[ "$uid" = 10001 ] && ok "runs as non-root (uid $uid)" || bad "runs as non-root (uid '$uid')"
if $P healthcheck run "$NAME" >"$WORK/hc.log" 2>&1; then
    ok "HEALTHCHECK passes (podman healthcheck run)"
else
    cat "$WORK/hc.log"
    bad "HEALTHCHECK passes (podman healthcheck run)"
fi

code=$(curl -s -o "$WORK/ins.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"id":"pw-1","text":"the database password was rotated on friday","source":"docker-test"}' \
    "$URL/v1/namespaces/docker/segments")
if [ "$code" = 201 ] && grep -q '"id": *"pw-1"' "$WORK/ins.json"; then
    ok "insert answers 201"
else
    bad "insert answers 201 (got $code: $(cat "$WORK/ins.json"))"
fi
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
    -d '{"id":"host-1","text":"host alpha was decommissioned"}' "$URL/v1/namespaces/docker/segments"
code=$(curl -s -o "$WORK/ret.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"query":"database password rotated","k":1,"half_life":"90d"}' \
    "$URL/v1/namespaces/docker/retrieve")
if [ "$code" = 200 ] && grep -q '"id": *"pw-1"' "$WORK/ret.json"; then
    ok "retrieve finds the inserted memory"
else
    bad "retrieve finds the inserted memory (got $code: $(cat "$WORK/ret.json"))"
fi

# The admin commands inside the container: an online backup to the volume, then its check.
if $P exec "$NAME" mnemod backup /data/backup.db >"$WORK/backup.log" 2>&1 \
        && [ "$($P exec "$NAME" mnemod --check --data /data/backup.db 2>&1)" = ok ]; then
    ok "mnemod backup while serving, and --check of the copy, inside the container"
else
    cat "$WORK/backup.log"
    bad "mnemod backup while serving, and --check of the copy, inside the container"
fi

# ---------------------------------------------------------------- 5. stop, restart, stop
stop_clean() { # what
    if ! $P stop -t 30 "$NAME" >/dev/null 2>&1; then bad "$1: podman stop"; return; fi
    rc=$($P inspect -f '{{.State.ExitCode}}' "$NAME" 2>/dev/null)
    if [ "$rc" = 0 ]; then
        ok "$1: SIGTERM -> exit status 0"
    else
        $P logs "$NAME" 2>&1 | tail -10
        bad "$1: SIGTERM -> exit status '$rc', want 0"
    fi
}
stop_clean "stop"
if $P start "$NAME" >/dev/null 2>&1 && wait_healthy; then
    code=$(curl -s -o "$WORK/get.json" -w '%{http_code}' "$URL/v1/namespaces/docker/segments/pw-1")
    if [ "$code" = 200 ] && grep -q 'password was rotated' "$WORK/get.json"; then
        ok "after a restart the segment is still in the /data volume"
    else
        bad "after a restart the segment is still in the /data volume (got $code)"
    fi
    stop_clean "second stop"
else
    $P logs "$NAME" 2>&1 | tail -10
    bad "restart of the stopped container"
fi
if $P rm -v "$NAME" >/dev/null 2>&1; then ok "container removed"; else bad "container removed"; fi

finish
