#!/usr/bin/env bash
# install.sh: install everything fred and its tests need on Debian 12
# (bookworm, amd64), as root. Run by `make deps` as `check.sh || install.sh`.
#
#   1. the Debian packages check.sh lists (gdb, gcc, lldb, ...) from the machine's own apt
#      (apt-get update only when something has to be installed);
#   2. Go, if no go >= FRED_GO_MIN is in PATH or $FRED_GO_DIR: Debian 13's
#      golang-1.NN-go and golang-1.NN-src, unpacked into $FRED_GO_DIR/root,
#      with $FRED_GO_DIR/bin/go pointing into it (default
#      /usr/local/libexec/fred/go). Go's binaries are static: they need
#      nothing of the system's libc.
#   3. Debian 13's CRIU 4.x with Debian 13's glibc and every library it needs,
#      unpacked into a private root $FRED_CRIU_DIR/root and run through the
#      wrapper $FRED_CRIU_DIR/criu (default /usr/local/libexec/fred/criu).
#      Debian 12's own criu 3.17 fails `criu check` on kernels with a
#      [vvar_vclock] mapping.
#
# Debian 13's packages come from the mirror the machine's own apt sources
# name for its own suite, with only the suite changed: the project names no
# mirror, so a local mirror or a caching proxy the machine's owner set up is
# what is used. The machine's apt sources are not touched: apt is pointed at
# a private config, sources list, list dir and cache.
#
# Idempotent: if check.sh's checks all pass it exits 0 at once, offline.
# Environment (all optional):
#   FRED_GO_DIR=/usr/local/libexec/fred/go   FRED_CRIU_DIR=/usr/local/libexec/fred/criu
#   FRED_FORCE_GO=1 / FRED_FORCE_CRIU=1   reinstall that part even if present
#   FRED_DEBIAN_MIRROR   the Debian mirror to take Debian 13's packages from
#                        (default: the one the machine's apt sources name)
#   FRED_DEBIAN_SUITE=trixie
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=check.sh
source "$here/check.sh"

: "${FRED_FORCE_GO:=}"
: "${FRED_FORCE_CRIU:=}"
: "${FRED_DEBIAN_MIRROR:=}"
: "${FRED_DEBIAN_SUITE:=${FRED_CRIU_SUITE:-trixie}}"
keyring_dir=/usr/share/keyrings
suite_keyrings=("$keyring_dir/debian-archive-$FRED_DEBIAN_SUITE-automatic.gpg"
                "$keyring_dir/debian-archive-$FRED_DEBIAN_SUITE-stable.gpg")

step() { printf '==> %s\n' "$*"; }
die() { printf 'install.sh: FAILED: %s\n' "$*" >&2; exit 1; }
trap 'die "line $LINENO: command \"$BASH_COMMAND\" exited with status $?"' ERR

tmpdirs=()
cleanup() { local d; for d in "${tmpdirs[@]}"; do rm -rf -- "$d"; done; }
trap cleanup EXIT
# newtmp VAR DIR: make a temporary directory inside DIR, removed on exit, and
# set VAR to its path (no $(...): the subshell would lose tmpdirs).
newtmp() { local -n _v=$1; _v=$(mktemp -d "$2/.fred-deps.XXXXXX") || die "mktemp in $2"; tmpdirs+=("$_v"); }

# run LOG WHAT CMD...: run CMD with its output in LOG; on failure show the
# end of LOG and stop, naming WHAT failed.
run() {
    local log=$1 what=$2; shift 2
    if ! "$@" >"$log" 2>&1; then
        tail -n 25 "$log" >&2
        die "$what (command: $*)"
    fi
}

apt_sys() { DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 "$@"; }

# apt_source_uris SUITE: print the URI of every enabled "deb" source of the
# machine's apt configuration that serves SUITE, one-line and deb822 formats
# alike, in the order apt reads them.
apt_source_uris() {
    local suite=$1 f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f ]] || continue
        # deb [opts] URI SUITE COMPONENT...
        awk -v suite="$suite" '
            $1 == "deb" {
                i = 2
                if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) == suite) print $i
            }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        # Stanzas of "Field: value" lines, separated by blank lines; a line
        # that starts with white space continues the field before it.
        awk -v suite="$suite" '
            function flush(  n, i, s, u) {
                if (f["types"] ~ /(^|[ \t])deb([ \t]|$)/ && tolower(f["enabled"]) != "no") {
                    n = split(f["suites"], s, /[ \t]+/)
                    for (i = 1; i <= n; i++) if (s[i] == suite) { split(f["uris"], u, /[ \t]+/); print u[1]; break }
                }
                delete f; key = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]/   { if (key != "") f[key] = f[key] " " $0; next }
            {
                c = index($0, ":"); key = tolower(substr($0, 1, c - 1))
                f[key] = substr($0, c + 1)
                gsub(/^[ \t]+|[ \t]+$/, "", f[key])
            }
            END { flush() }' "$f"
    done
}

# debian_mirror: the mirror to take $FRED_DEBIAN_SUITE's packages from.
debian_mirror() {
    if [[ -n $FRED_DEBIAN_MIRROR ]]; then
        printf '%s\n' "$FRED_DEBIAN_MIRROR"; return 0
    fi
    local codename uri
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    [[ -n $codename ]] || die "/etc/os-release names no Debian release (VERSION_CODENAME); set FRED_DEBIAN_MIRROR to the URL of a Debian mirror"
    uri=$(apt_source_uris "$codename" | head -n 1)
    [[ -n $uri ]] || die "no apt source of this machine serves Debian's $codename (looked in /etc/apt/sources.list and /etc/apt/sources.list.d); set FRED_DEBIAN_MIRROR to the URL of a Debian mirror"
    printf '%s\n' "${uri%/}"
}

if [[ ${1:-} == --print-mirror ]]; then debian_mirror; exit 0; fi

# ---------------------------------------------------------------- quick check
if [[ -z $FRED_FORCE_GO$FRED_FORCE_CRIU ]] && check_all >/dev/null 2>&1; then
    step "all dependencies present (gdb gcc g++ make python3 perl node, $(find_go), CRIU in $FRED_CRIU_DIR, the DebugClient): nothing to do"
    exit 0
fi
step "checking what is missing"
check_all || true
[[ $(id -u) == 0 ]] || die "installing needs root: run 'sudo make deps' (or sudo $0)"
arch=$(dpkg --print-architecture 2>/dev/null) || die "dpkg not found: this installer is for Debian 12"
[[ $arch == amd64 ]] || die "this installer supports amd64 only (machine is $arch)"

need_go=; need_criu=
if [[ -n $FRED_FORCE_GO ]] || ! find_go >/dev/null; then need_go=1; fi
if [[ -n $FRED_FORCE_CRIU ]] || ! criu_ok; then need_criu=1; fi

newtmp logdir /tmp

# ------------------------------------------------------- 1. packages from apt
want=("${FRED_APT_PACKAGES[@]}")
mapfile -t missing < <(apt_missing "${want[@]}")
if [[ -n $need_go$need_criu ]]; then
    for k in "${suite_keyrings[@]}"; do
        # Debian 12 got the trixie archive keys in debian-archive-keyring
        # 2023.3+deb12u2; an older install needs the update from bookworm.
        [[ -f $k ]] || { missing+=(debian-archive-keyring); break; }
    done
fi
if ((${#missing[@]})); then
    step "apt-get update (system sources)"
    run "$logdir/apt-update.log" "apt-get update of the system's sources" apt_sys update
    step "apt-get install ${missing[*]}"
    run "$logdir/apt-install.log" "apt-get install ${missing[*]}" \
        apt_sys install --no-install-recommends "${missing[@]}"
else
    step "Debian packages present: ${want[*]}"
fi

# ------------------------------------- 2. a private apt for Debian 13's packages
# papt ARGS...: apt-get or apt-cache with the private config (set up once).
papt_dir=
papt_setup() {
    [[ -z $papt_dir ]] || return 0
    local mirror signed_by k
    for k in "${suite_keyrings[@]}"; do
        [[ -f $k ]] || die "$k is missing: Debian's $FRED_DEBIAN_SUITE archive key is needed (debian-archive-keyring >= 2023.3+deb12u2)"
    done
    mirror=$(debian_mirror) || exit 1     # debian_mirror said why
    newtmp papt_dir /tmp
    local a=$papt_dir
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/sources.list.d" \
        "$a/preferences.d" "$a/debs"
    signed_by=$(IFS=,; echo "${suite_keyrings[*]}")
    echo "deb [arch=amd64 signed-by=$signed_by] $mirror $FRED_DEBIAN_SUITE main" >"$a/sources.list"
    # Read after /etc/apt/apt.conf{,.d} (so proxies set there still apply):
    # only the private sources, lists and cache; no pins, no update hooks.
    cat >"$a/apt.conf" <<EOF
Dir::Etc::SourceList "$a/sources.list";
Dir::Etc::SourceParts "$a/sources.list.d";
Dir::Etc::Preferences "$a/preferences";
Dir::Etc::PreferencesParts "$a/preferences.d";
Dir::State::Lists "$a/lists";
Dir::Cache "$a/cache";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
Acquire::IndexTargets::deb::DEP-11::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled "false";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
#clear APT::Update::Pre-Invoke;
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
EOF
    chmod 755 "$a"                  # apt downloads as _apt: it must reach lists/partial and debs
    step "apt-get update of a private $FRED_DEBIAN_SUITE sources list ($mirror, from this machine's apt sources${FRED_DEBIAN_MIRROR:+: no, from FRED_DEBIAN_MIRROR})"
    run "$logdir/papt-update.log" "apt-get update of the private $FRED_DEBIAN_SUITE sources list" \
        env APT_CONFIG="$a/apt.conf" apt-get -q update
}
papt() { env APT_CONFIG="$papt_dir/apt.conf" "$@"; }

# punpack STAGE WHAT PKG...: download PKGs from the private suite and unpack
# them all into STAGE/root (dpkg-deb -x), listing their versions in
# STAGE/PACKAGES.
punpack() {
    local stage=$1 what=$2 d deb; shift 2
    d=$(mktemp -d "$papt_dir/debs/XXXXXX")
    chmod 755 "$d"
    if id _apt >/dev/null 2>&1; then chown _apt "$d"; fi
    step "apt-get download ($# packages from $FRED_DEBIAN_SUITE): $*"
    pushd "$d" >/dev/null             # apt-get download writes to the current dir
    run "$logdir/$what-download.log" "apt-get download of $* from $FRED_DEBIAN_SUITE" \
        papt apt-get -q download "$@"
    popd >/dev/null
    step "unpacking them with dpkg-deb -x into $stage/root"
    mkdir -p "$stage/root"
    : >"$stage/PACKAGES"
    for deb in "$d"/*.deb; do
        run "$logdir/$what-unpack.log" "dpkg-deb -x $deb" dpkg-deb -x "$deb" "$stage/root"
        dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb" >>"$stage/PACKAGES"
    done
    chmod 755 "$stage" "$stage/root"
}

# ---------------------------------------------------------------------- 3. Go
install_go() {
    local dest=${FRED_GO_DIR%/} parent stage v best= n min pkgs goroot l t
    parent=$(dirname "$dest")
    mkdir -p "$parent" || die "cannot create $parent"
    papt_setup
    # The newest golang-1.NN-go of the suite that is at least FRED_GO_MIN.
    min=${FRED_GO_MIN#*.}
    while read -r v; do
        n=${v#golang-1.}; n=${n%-go}
        if [[ $n =~ ^[0-9]+$ ]] && (( n >= min )) && [[ -z $best || $n -gt $best ]]; then best=$n; fi
    done < <(papt apt-cache pkgnames golang-1. 2>/dev/null | grep -E '^golang-1\.[0-9]+-go$' || true)
    [[ -n $best ]] || die "Debian's $FRED_DEBIAN_SUITE has no golang-1.NN-go package of Go >= $FRED_GO_MIN"
    pkgs=("golang-1.$best-go" "golang-1.$best-src")
    newtmp stage "$parent"       # becomes $dest by a rename
    punpack "$stage" go "${pkgs[@]}"
    goroot=$stage/root/usr/lib/go-1.$best
    [[ -x $goroot/bin/go ]] || die "golang-1.$best-go has no usr/lib/go-1.$best/bin/go"
    # The packages link parts of GOROOT to /usr/share/go-1.NN with absolute
    # symlinks: point them into the private root, relatively, so that they
    # survive the rename into place.
    while IFS= read -r l; do
        t=$(readlink -- "$l")
        [[ $t == /* ]] || continue
        ln -sfn -- "$(realpath -m --relative-to="$(dirname "$l")" "$stage/root$t")" "$l"
    done < <(find "$stage/root" -type l)
    # go finds its GOROOT from the resolved path of its own binary.
    mkdir "$stage/bin"
    ln -s "../root/usr/lib/go-1.$best/bin/go" "$stage/bin/go"
    ln -s "../root/usr/lib/go-1.$best/bin/gofmt" "$stage/bin/gofmt"
    v=$(env -u GOROOT GOTOOLCHAIN=local "$goroot/bin/go" version 2>&1) || die "the unpacked go does not run: $v"
    [[ $v == "go version go1.$best"* ]] || die "the unpacked go says '$v', expected go1.$best"
    if [[ -e $dest ]]; then mv "$dest" "$stage.old"; tmpdirs+=("$stage.old"); fi
    mv "$stage" "$dest"
    v=$(env -u GOROOT GOTOOLCHAIN=local "$dest/bin/go" env GOROOT 2>&1) || die "$dest/bin/go env GOROOT failed: $v"
    [[ $v == "$dest/root/usr/lib/go-1.$best" ]] || die "$dest/bin/go takes $v for its GOROOT, expected $dest/root/usr/lib/go-1.$best"
    step "installed $(GOTOOLCHAIN=local "$dest/bin/go" version) as $dest/bin/go (the Makefile finds it with internal/deps/check.sh --go-path)"
}
if [[ -n $need_go ]]; then
    install_go
else
    step "Go present: $(find_go) ($(GOTOOLCHAIN=local "$(find_go)" version))"
fi

# -------------------------------------------------------------------- 3. CRIU
# The wrapper go-criu and fred run. It must exec and leave every fd alone:
# go-criu runs `criu swrk FD` and fred passes extra fds for --inherit-fd.
write_criu_wrapper() {
    cat >"$1" <<'EOF'
#!/bin/sh
# Debian 13's CRIU from the private root next to this script, started through
# that root's own dynamic loader and libraries (the system glibc is too old).
# Written by fred's internal/deps/install.sh. It must stay a plain exec with
# no redirections: go-criu runs `criu swrk FD` and fred passes --inherit-fd fds.
d=$(readlink -f -- "$0") || exit 127
d=${d%/*}
lib=$d/root/usr/lib/x86_64-linux-gnu
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$d/root/usr/sbin/criu" "$@"
EOF
    chmod 755 "$1"
}

install_criu() {
    local dest=${FRED_CRIU_DIR%/} parent stage lib out pkgs=() bad
    parent=$(dirname "$dest")
    mkdir -p "$parent" || die "cannot create $parent"
    papt_setup
    newtmp stage "$parent"       # becomes $dest by a rename
    # criu and everything it Depends on, recursively (libc6, libgnutls30t64, ...).
    papt apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances criu \
        >"$logdir/criu-depends.log" 2>&1 ||
        { tail -n 25 "$logdir/criu-depends.log" >&2; die "apt-cache depends criu (private $FRED_DEBIAN_SUITE lists)"; }
    mapfile -t pkgs < <(grep -E '^[a-z0-9]' "$logdir/criu-depends.log" | sort -u)
    [[ " ${pkgs[*]} " == *" criu "* && " ${pkgs[*]} " == *" libc6 "* ]] ||
        die "apt-cache depends criu gave no criu/libc6 from $FRED_DEBIAN_SUITE: ${pkgs[*]}"
    punpack "$stage" criu "${pkgs[@]}"
    write_criu_wrapper "$stage/criu"

    step "checking that every library criu needs resolves inside the private root"
    lib=$stage/root/usr/lib/x86_64-linux-gnu
    [[ -x $lib/ld-linux-x86-64.so.2 && -x $stage/root/usr/sbin/criu ]] ||
        die "the unpacked packages have no usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 or usr/sbin/criu"
    out=$("$lib/ld-linux-x86-64.so.2" --library-path "$lib" --list "$stage/root/usr/sbin/criu" 2>&1) ||
        die "ld.so --list of the private criu failed: $out"
    # Every "name => path" must be found, and found under the private root
    # (anything else would mean a library fell through to the system's).
    bad=$(awk '/=>/ && $3 !~ /^\(/ && index($3, root) != 1 { print }
               /not found/ { print }' root="$stage/root/" <<<"$out")
    [[ -z $bad ]] || die "criu's libraries do not all resolve inside the private root: $bad"

    out=$("$stage/criu" --version 2>&1) || die "the private criu does not run: $out"
    [[ $out =~ Version:\ ([0-9]+)\. ]] && (( BASH_REMATCH[1] >= FRED_CRIU_MIN_MAJOR )) ||
        die "the private criu is not ${FRED_CRIU_MIN_MAJOR}.x: $out"
    step "running '$dest/criu check' ($(head -n1 <<<"$out"))"
    out=$("$stage/criu" check 2>&1) ||
        die "the private criu fails 'criu check' on kernel $(uname -r): $out"

    if [[ -e $dest ]]; then mv "$dest" "$stage.old"; tmpdirs+=("$stage.old"); fi
    mv "$stage" "$dest"
    step "installed CRIU $(sed -n 's/^Version: //p' <<<"$("$dest/criu" --version)") as $dest/criu (private root $dest/root)"
}
if [[ -n $need_criu ]]; then
    install_criu
else
    step "CRIU present: $FRED_CRIU_DIR/criu passes 'criu check'"
fi

# ------------------------------------- 4. node, npm and VS Code's DebugClient
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    step "apt-get install nodejs npm"
    run "$logdir/apt-node.log" "apt-get install nodejs npm" apt_sys install --no-install-recommends nodejs npm
fi
if ! dap_js_ok; then
    # npm ci installs exactly what package-lock.json pins, from the
    # registry npm is configured with on this machine.
    step "npm ci in $FRED_DAP_JS (@vscode/debugadapter-testsupport, as package-lock.json pins it)"
    run "$logdir/npm-ci.log" "npm ci in $FRED_DAP_JS" npm ci --prefix "$FRED_DAP_JS" --no-audit --no-fund
else
    step "VS Code's DebugClient present in $FRED_DAP_JS"
fi

# ------------------------------------------------------------------- recheck
step "final check"
check_all || die "dependencies still missing after install (see above)"
step "all dependencies installed"
