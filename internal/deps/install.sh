#!/usr/bin/env bash
# install.sh: install everything fred and its tests need on Debian 12
# (bookworm, amd64), as root. Run by `make deps` as `check.sh || install.sh`.
#
#   1. gdb gcc make python3 perl libc6-dev binutils from the machine's own apt
#      (apt-get update only when something has to be installed);
#   2. Go (if no go >= 1.24 in PATH or $FRED_GOROOT) from the Go module proxy's
#      toolchain zip, into $FRED_GOROOT (default /usr/local/go);
#   3. Debian 13's CRIU 4.x with Debian 13's glibc and every library it needs,
#      unpacked into a private root $FRED_CRIU_DIR/root and run through the
#      wrapper $FRED_CRIU_DIR/criu (default /usr/local/libexec/fred/criu).
#      Debian 12's own criu 3.17 fails `criu check` on kernels with a
#      [vvar_vclock] mapping. The machine's apt sources are not touched: apt
#      is pointed at a private config, sources list, list dir and cache.
#
# Idempotent: if check.sh's checks all pass it exits 0 at once, offline.
# Environment (all optional):
#   FRED_GOROOT=/usr/local/go   FRED_CRIU_DIR=/usr/local/libexec/fred/criu
#   FRED_FORCE_GO=1 / FRED_FORCE_CRIU=1   reinstall that part even if present
#   FRED_GO_VERSION, FRED_GO_URL, FRED_GO_SHA256 (empty: skip the hash check)
#   FRED_DEBIAN_MIRROR=http://deb.debian.org/debian   FRED_CRIU_SUITE=trixie
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=check.sh
source "$here/check.sh"

: "${FRED_FORCE_GO:=}"
: "${FRED_FORCE_CRIU:=}"
: "${FRED_GO_VERSION:=1.26.8}"
: "${FRED_GO_URL:=https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go${FRED_GO_VERSION}.linux-amd64.zip}"
if [[ $FRED_GO_VERSION == 1.26.8 ]]; then
    : "${FRED_GO_SHA256=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7}"
else
    : "${FRED_GO_SHA256=}"
fi
: "${FRED_DEBIAN_MIRROR:=http://deb.debian.org/debian}"
: "${FRED_CRIU_SUITE:=trixie}"
keyring_dir=/usr/share/keyrings
criu_keyrings=("$keyring_dir/debian-archive-$FRED_CRIU_SUITE-automatic.gpg"
               "$keyring_dir/debian-archive-$FRED_CRIU_SUITE-stable.gpg")

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

# ---------------------------------------------------------------- quick check
if [[ -z $FRED_FORCE_GO$FRED_FORCE_CRIU ]] && check_all >/dev/null 2>&1; then
    step "all dependencies present (gdb gcc make python3 perl, $(find_go), CRIU in $FRED_CRIU_DIR): nothing to do"
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
if [[ -n $need_go ]]; then want+=(curl ca-certificates unzip); fi
mapfile -t missing < <(apt_missing "${want[@]}")
if [[ -n $need_criu ]]; then
    for k in "${criu_keyrings[@]}"; do
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

# ---------------------------------------------------------------------- 2. Go
install_go() {
    local prefix=${FRED_GOROOT%/} parent tmp top v
    parent=$(dirname "$prefix")
    mkdir -p "$parent" || die "cannot create $parent"
    newtmp tmp "$parent"         # same filesystem as $prefix: mv is a rename
    step "downloading Go $FRED_GO_VERSION from $FRED_GO_URL"
    run "$logdir/go-download.log" "download of $FRED_GO_URL" \
        curl -fsSL --retry 3 --connect-timeout 20 -o "$tmp/go.zip" "$FRED_GO_URL"
    if [[ -n $FRED_GO_SHA256 ]]; then
        step "checking sha256 of the Go zip"
        echo "$FRED_GO_SHA256  $tmp/go.zip" | sha256sum -c --quiet - >/dev/null 2>&1 ||
            die "sha256 of $FRED_GO_URL is $(sha256sum <"$tmp/go.zip" | cut -d' ' -f1), expected $FRED_GO_SHA256"
    fi
    step "unpacking Go into $prefix"
    run "$logdir/go-unzip.log" "unzip of the Go toolchain zip" unzip -q "$tmp/go.zip" -d "$tmp/x"
    top=$tmp/x/golang.org/toolchain@v0.0.1-go$FRED_GO_VERSION.linux-amd64
    [[ -f $top/bin/go ]] || die "the Go zip has no golang.org/toolchain@v0.0.1-go$FRED_GO_VERSION.linux-amd64/bin/go"
    chmod -R a+rX "$top"
    chmod a+x "$top"/bin/* "$top"/pkg/tool/linux_*/*
    v=$(GOTOOLCHAIN=local "$top/bin/go" version 2>&1) || die "the unpacked go does not run: $v"
    [[ $v == "go version go$FRED_GO_VERSION "* ]] || die "the unpacked go says '$v', expected go$FRED_GO_VERSION"
    if [[ -e $prefix ]]; then mv "$prefix" "$tmp/old"; fi
    mv "$top" "$prefix"
    step "installed $(GOTOOLCHAIN=local "$prefix/bin/go" version) as $prefix"
    case ":$PATH:" in *":$prefix/bin:"*) ;; *)
        step "note: $prefix/bin is not in PATH; the Makefile finds go with internal/deps/check.sh --go-path" ;;
    esac
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
    local dest=${FRED_CRIU_DIR%/} parent stage a lib out deb pkgs=() bad
    parent=$(dirname "$dest")
    mkdir -p "$parent" || die "cannot create $parent"
    for k in "${criu_keyrings[@]}"; do
        [[ -f $k ]] || die "$k is missing: Debian's $FRED_CRIU_SUITE archive key is needed (debian-archive-keyring >= 2023.3+deb12u2)"
    done
    newtmp stage "$parent"       # becomes $dest by a rename
    newtmp a /tmp                   # private apt state
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/sources.list.d" \
        "$a/preferences.d" "$a/debs"
    local signed_by
    signed_by=$(IFS=,; echo "${criu_keyrings[*]}")
    echo "deb [arch=amd64 signed-by=$signed_by] $FRED_DEBIAN_MIRROR $FRED_CRIU_SUITE main" >"$a/sources.list"
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
    if id _apt >/dev/null 2>&1; then chown _apt "$a/debs"; fi

    step "apt-get update of a private $FRED_CRIU_SUITE sources list ($FRED_DEBIAN_MIRROR)"
    run "$logdir/criu-apt-update.log" "apt-get update of the private $FRED_CRIU_SUITE sources list" \
        env APT_CONFIG="$a/apt.conf" apt-get -q update
    # criu and everything it Depends on, recursively (libc6, libgnutls30t64, ...).
    APT_CONFIG="$a/apt.conf" apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances criu \
        >"$logdir/criu-depends.log" 2>&1 ||
        { tail -n 25 "$logdir/criu-depends.log" >&2; die "apt-cache depends criu (private $FRED_CRIU_SUITE lists)"; }
    mapfile -t pkgs < <(grep -E '^[a-z0-9]' "$logdir/criu-depends.log" | sort -u)
    [[ " ${pkgs[*]} " == *" criu "* && " ${pkgs[*]} " == *" libc6 "* ]] ||
        die "apt-cache depends criu gave no criu/libc6 from $FRED_CRIU_SUITE: ${pkgs[*]}"
    step "apt-get download (${#pkgs[@]} packages from $FRED_CRIU_SUITE): ${pkgs[*]}"
    pushd "$a/debs" >/dev/null         # apt-get download writes to the current dir
    run "$logdir/criu-download.log" "apt-get download of ${pkgs[*]} from $FRED_CRIU_SUITE" \
        env APT_CONFIG="$a/apt.conf" apt-get -q download "${pkgs[@]}"
    popd >/dev/null

    step "unpacking them with dpkg-deb -x into $dest/root"
    mkdir "$stage/root"
    : >"$stage/PACKAGES"
    for deb in "$a"/debs/*.deb; do
        run "$logdir/criu-unpack.log" "dpkg-deb -x $deb" dpkg-deb -x "$deb" "$stage/root"
        dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb" >>"$stage/PACKAGES"
    done
    chmod 755 "$stage" "$stage/root"
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

# ------------------------------------------------------------------- recheck
step "final check"
check_all || die "dependencies still missing after install (see above)"
step "all dependencies installed"
