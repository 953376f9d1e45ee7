#!/bin/sh
# test_install.sh - `make install` into a temporary DESTDIR, then check what landed:
# files and modes, the binary's --version, the man page, the sample config, and the systemd
# unit (`systemd-analyze verify`, and `systemd-analyze security --offline=true` exposure
# <= 2.0). Run from the repository root: sh tests/install/test_install.sh
# MAKE may name the make program; KEEP=1 keeps the temporary directory.
set -u
MAKE=${MAKE:-make}
fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mnemod-install.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT INT TERM
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { # description, command...
    d=$1; shift
    if "$@" >"$tmp/out" 2>&1; then ok "$d"; else bad "$d"; sed 's/^/     /' "$tmp/out"; fi
}

D="$tmp/root"
if ! $MAKE --no-print-directory install DESTDIR="$D" PREFIX=/usr/local >"$tmp/make.log" 2>&1; then
    bad "make install DESTDIR=$D"
    sed 's/^/     /' "$tmp/make.log"
    exit 1
fi
ok "make install DESTDIR=..."

BIN="$D/usr/local/bin/mnemod"
UNIT="$D/usr/local/lib/systemd/system/mnemod.service"
MAN="$D/usr/local/share/man/man1/mnemod.1"
check "binary is executable" test -x "$BIN"
check "unit installed 0644" sh -c "[ \"\$(stat -c %a '$UNIT')\" = 644 ]"
check "man page installed" test -f "$MAN"
check "sample config installed" test -f "$D/etc/mnemod/mnemod.conf.sample"
check "config installed (from the sample)" cmp "$D/etc/mnemod/mnemod.conf" etc/mnemod.conf.sample

version=$(sed -n 's/^VERSION *:= *//p' Makefile)
check "mnemod --version prints 'mnemod $version'" \
    sh -c "[ \"\$('$BIN' --version)\" = 'mnemod $version' ]"
check "unit ExecStart names the installed binary" \
    grep -q '^ExecStart=/usr/local/bin/mnemod --config /etc/mnemod/mnemod.conf --data /var/lib/mnemod/mnemod.db$' "$UNIT"

# A second install keeps a changed config file.
echo "max-batch = 5" >>"$D/etc/mnemod/mnemod.conf"
$MAKE --no-print-directory install DESTDIR="$D" PREFIX=/usr/local >"$tmp/make2.log" 2>&1
check "reinstall keeps an edited mnemod.conf" grep -q '^max-batch = 5$' "$D/etc/mnemod/mnemod.conf"

# PREFIX moves the binary and the unit's ExecStart with it.
$MAKE --no-print-directory install DESTDIR="$tmp/root2" PREFIX=/opt/mnemod >"$tmp/make3.log" 2>&1
check "PREFIX=/opt/mnemod rewrites ExecStart" \
    grep -q '^ExecStart=/opt/mnemod/bin/mnemod ' "$tmp/root2/opt/mnemod/lib/systemd/system/mnemod.service"

if command -v man >/dev/null 2>&1; then
    check "man page renders without warnings" \
        sh -c "man --warnings -l -Tutf8 '$MAN' 2>&1 >/dev/null | grep . && exit 1 || exit 0"
    for flag in config listen data half-life recency-bias decay decay-offset embed-dim \
        coherence-threshold coherence-weight api-key-file keys-file metrics-public \
        allowed-origins allowed-hosts max-body max-batch \
        max-future-skew threads sync max-connections idle-timeout request-timeout max-queue \
        max-namespaces log-level log-format simd embedder embedder-model embedder-key-file \
        embedder-timeout embedder-batch; do
        LC_ALL=C man -l "$MAN" 2>/dev/null | grep -q -- "--$flag" || bad "man page lacks --$flag"
    done
    ok "man page lists every flag"
else
    echo "skip man page checks: man is not installed"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
    # verify needs ExecStart's binary to exist: point a copy of the unit at the staged one.
    mkdir -p "$tmp/units"
    sed "s|^ExecStart=/usr/local/bin/mnemod|ExecStart=$BIN|" "$UNIT" >"$tmp/units/mnemod.service"
    check "systemd-analyze verify" sh -c "MANPATH='$D/usr/local/share/man' \
        systemd-analyze verify '$tmp/units/mnemod.service' >'$tmp/verify.log' 2>&1; \
        rc=\$?; cat '$tmp/verify.log'; [ \$rc -eq 0 ] && ! grep -q . '$tmp/verify.log'"
    systemd-analyze security --offline=true "$tmp/units/mnemod.service" >"$tmp/sec.log" 2>&1
    level=$(sed -n 's/.*Overall exposure level for mnemod.service: \([0-9.]*\).*/\1/p' "$tmp/sec.log")
    if [ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
        ok "systemd-analyze security exposure $level <= 2.0"
    else
        bad "systemd-analyze security exposure '${level:-?}' > 2.0"
        grep '✗' "$tmp/sec.log" | sed 's/^/     /'
    fi
    # The API-key credential variant (commented out in the unit) must verify as well.
    sed -e 's/^#LoadCredential=/LoadCredential=/' -e 's/^#Environment=/Environment=/' \
        "$tmp/units/mnemod.service" >"$tmp/units/mnemod-key.service"
    check "systemd-analyze verify (LoadCredential variant)" sh -c "MANPATH='$D/usr/local/share/man' \
        systemd-analyze verify '$tmp/units/mnemod-key.service' >'$tmp/verify2.log' 2>&1; \
        rc=\$?; cat '$tmp/verify2.log'; [ \$rc -eq 0 ] && ! grep -q . '$tmp/verify2.log'"
    for key in 'Type=notify' 'DynamicUser=yes' 'StateDirectory=mnemod' \
        'EnvironmentFile=-/etc/mnemod/mnemod.env' 'NoNewPrivileges=yes' 'ProtectSystem=strict' \
        'ProtectHome=yes' 'PrivateTmp=yes' 'SystemCallFilter=@system-service'; do
        grep -qx "$key" "$UNIT" || bad "unit lacks $key"
    done
    grep -q '^RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX$' "$UNIT" ||
        bad "unit lacks RestrictAddressFamilies"
    ok "unit carries the required hardening"
else
    bad "systemd-analyze not found (apt-get install -y systemd)"
fi

echo "install checks: $fails failed"
[ "$fails" -eq 0 ]
