#!/usr/bin/env bash
# check.sh: exit 0 iff every tool fred and its tests need is present.
#
#   internal/deps/check.sh            print what is missing (nothing if all ok)
#   internal/deps/check.sh --go-path  print the path of a Go >= FRED_GO_MIN
#
# The Makefile runs `check.sh || install.sh`. install.sh sources this file for
# the same checks, so both always agree on what "present" means.
# No network access, no root needed, about 0.1 s when everything is present.
set -euo pipefail

: "${FRED_GO_DIR:=/usr/local/libexec/fred/go}"          # where install.sh puts Go (bin/go)
: "${FRED_GO_MIN:=1.24}"                                # oldest Go accepted
: "${FRED_CRIU_DIR:=/usr/local/libexec/fred/criu}"      # private CRIU root + wrapper
: "${FRED_CRIU_MIN_MAJOR:=4}"                           # 3.x fails on kernels with [vvar_vclock]

# Debian packages fred and its tests need (libc6-dev and binutils so that gcc and g++
# can build the fixture programs; MariaDB's server and client, the -core
# packages, which start no service, for the test on a real server; dpkg-dev,
# with patch and xz-utils, for make bench's gzip built from its Debian source;
# lldb, the fourth debugger, with python3-six, which its Python module imports).
FRED_APT_PACKAGES=(gdb gcc g++ make python3 perl libc6-dev binutils libpadwalker-perl mariadb-server-core mariadb-client-core dpkg-dev lldb python3-six)

# The editor tests drive `fred dap` with VS Code's own DebugClient, an npm
# package pinned (with its lock file) in a directory of its own.
FRED_DAP_JS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../dap/js" && pwd)

# dap_js_ok: that package is installed as the lock file pins it.
dap_js_ok() {
    [[ -f $FRED_DAP_JS/node_modules/@vscode/debugadapter-testsupport/package.json ]] &&
        [[ -f $FRED_DAP_JS/node_modules/.package-lock.json ]] &&
        grep -q '"version": "1.68.0"' "$FRED_DAP_JS/node_modules/@vscode/debugadapter-testsupport/package.json"
}

# go_version_ok GO: true if GO runs and reports a version >= FRED_GO_MIN.
go_version_ok() {
    local go=$1 v
    [[ -x $go ]] || return 1
    # `go env GOVERSION` would honour GOTOOLCHAIN and might try the network;
    # `go version` prints the running toolchain. Keep GOTOOLCHAIN=local.
    v=$(GOTOOLCHAIN=local "$go" version 2>/dev/null) || return 1
    v=${v#go version go}; v=${v%% *}                    # 1.26.8, 1.24rc1, ...
    [[ $v =~ ^([0-9]+)\.([0-9]+) ]] || return 1
    local maj=${BASH_REMATCH[1]} min=${BASH_REMATCH[2]}
    local wmaj=${FRED_GO_MIN%%.*} wmin=${FRED_GO_MIN#*.}
    (( maj > wmaj || (maj == wmaj && min >= wmin) ))
}

# find_go: print the first Go >= FRED_GO_MIN: in PATH, where install.sh puts
# it, or where Go's own archives are unpacked.
find_go() {
    local c
    for c in "$(command -v go 2>/dev/null || true)" "$FRED_GO_DIR/bin/go" /usr/local/go/bin/go; do
        [[ -n $c ]] && go_version_ok "$c" && { printf '%s\n' "$c"; return 0; }
    done
    return 1
}

# criu_ok: the private CRIU is installed, is FRED_CRIU_MIN_MAJOR.x, and
# `criu check` passes on the running kernel (about 70 ms, so it is not cached).
criu_ok() {
    local w=$FRED_CRIU_DIR/criu v
    [[ -x $w ]] || { CRIU_WHY="$w is missing"; return 1; }
    v=$("$w" --version 2>&1) || { CRIU_WHY="$w --version failed: $v"; return 1; }
    [[ $v =~ Version:\ ([0-9]+)\. ]] && (( BASH_REMATCH[1] >= FRED_CRIU_MIN_MAJOR )) ||
        { CRIU_WHY="$w is not CRIU ${FRED_CRIU_MIN_MAJOR}.x: $v"; return 1; }
    if [[ $(id -u) != 0 ]]; then
        CRIU_WHY="criu check needs root (run as root)"; return 1
    fi
    v=$("$w" check 2>&1) || { CRIU_WHY="$w check failed: ${v//$'\n'/ }"; return 1; }
    return 0
}

# apt_missing PKG...: print the PKGs that dpkg does not list as installed
# (nothing on a machine without dpkg).
apt_missing() {
    command -v dpkg-query >/dev/null 2>&1 || return 0
    { dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true; } |
        awk -v want="$*" '$2 == "installed" { ok[$1] = 1 }
            END { n = split(want, w, " "); for (i = 1; i <= n; i++) if (!(w[i] in ok)) print w[i] }'
}

# check_all: print one line per missing thing; return 0 iff nothing is missing.
check_all() {
    local missing=0 t pk
    pk=$(apt_missing "${FRED_APT_PACKAGES[@]}")
    [[ -z $pk ]] || { echo "missing: Debian packages: "$pk; missing=1; }
    for t in gdb gcc g++ make python3 perl node npm; do
        command -v "$t" >/dev/null 2>&1 || { echo "missing: $t (not in PATH)"; missing=1; }
    done
    dap_js_ok || { echo "missing: VS Code's DebugClient (npm ci in $FRED_DAP_JS)"; missing=1; }
    find_go >/dev/null || { echo "missing: go >= $FRED_GO_MIN (looked in PATH, $FRED_GO_DIR/bin and /usr/local/go/bin)"; missing=1; }
    CRIU_WHY=
    criu_ok || { echo "missing: private CRIU >= $FRED_CRIU_MIN_MAJOR passing 'criu check': $CRIU_WHY"; missing=1; }
    return $missing
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    case ${1:-} in
    --go-path) find_go || { echo "no go >= $FRED_GO_MIN found" >&2; exit 1; } ;;
    "") check_all || { echo "run: make deps   (or, as root: internal/deps/install.sh)" >&2; exit 1; } ;;
    *) echo "usage: $0 [--go-path]" >&2; exit 2 ;;
    esac
fi
