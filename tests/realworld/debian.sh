#!/usr/bin/env bash
# Real-world proof on Debian source packages: each package is built from its bookworm source with
# `dpkg-buildpackage` twice, once with rivet as the only linker and once with GNU ld, each time running the
# package's own test suite (`dh_auto_test`), as an unprivileged user (several suites refuse root). A wrapper named
# `ld` (and `ld.bfd`, `x86_64-linux-gnu-ld`, `x86_64-linux-gnu-ld.bfd`) first in PATH logs every link and runs
# the linker under test; gcc and clang find `ld` through PATH, so the log shows that rivet did every link. A
# package passes when both builds succeed, rivet linked at least one output, and the test summaries (automake,
# CTest, pytest, and the packages' own "OK" lines) are the same for both linkers.
#
# Knobs: RIVET (see lib.sh); RIVET_DEBIAN_DIR, the work directory (default /var/tmp/rivet-debian: the build user
# must reach it, which it cannot under root's home); RIVET_DEBIAN_PACKAGES="zlib nettle" builds a subset;
# RIVET_DEBIAN_SKIP_LD=1 builds with rivet only (no comparison: for a quick check).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# Source package, then the build profiles it needs. C: zlib (with `nobiarch`: its 32-bit build needs
# `-m elf_i386`, which rivet does not link yet), xz-utils (libtool), libpng1.6, pcre2 (with its JIT), libyaml,
# jansson; hand-written assembly: nettle (x86-64 asm for AES, SHA, GCM...), libffi (unix64.S; its DejaGnu suite
# compiles and links a few hundred programs); C++: libjsoncpp, snappy; a Python extension: brotli (its
# python3-brotli module, built by pybuild and tested with the library). (libzstd's suite compresses gigabytes:
# too slow to run twice here.)
ALL_PACKAGES="zlib:nobiarch xz-utils libpng1.6 pcre2 libyaml jansson nettle libffi libjsoncpp snappy brotli"
PACKAGES="${RIVET_DEBIAN_PACKAGES:-$ALL_PACKAGES}"

W="${RIVET_DEBIAN_DIR:-/var/tmp/rivet-debian}"
mkdir -p "$W"
BUILDER=rivetbuild
# The build user runs the linker from here.
cp "$RIVET" "$W/rivet"
chmod 755 "$W" "$W/rivet"
RIVET="$W/rivet"

setup_machine() {
    if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
        log "adding deb-src for bookworm"
        cat >/etc/apt/sources.list.d/rivet-deb-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
        apt-get update
    fi
    apt_need dpkg-dev devscripts fakeroot build-essential
    id "$BUILDER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$BUILDER"
    chown "$BUILDER" "$W"
}

# fetch PKG: unpacks the source once into $W/src/PKG-VERSION (owned by the build user) and installs its build
# dependencies; prints the directory.
fetch() {
    local pkg="$1" profiles="$2" dir
    mkdir -p "$W/src/$pkg"
    chown "$BUILDER" "$W/src/$pkg"
    dir=$(find "$W/src/$pkg" -mindepth 1 -maxdepth 1 -type d | head -1)
    if [ -z "$dir" ]; then
        (cd "$W/src/$pkg" && runuser -u "$BUILDER" -- apt-get source --download-only "$pkg" >&2 &&
            runuser -u "$BUILDER" -- dpkg-source -x ./*.dsc >&2)
        dir=$(find "$W/src/$pkg" -mindepth 1 -maxdepth 1 -type d | head -1)
    fi
    DEBIAN_FRONTEND=noninteractive apt-get build-dep -y ${profiles:+--build-profiles="$profiles"} "$pkg" >&2
    echo "$dir"
}

# build PKG PROFILES SRCDIR LINKER TAG: copies the source tree and builds it as the build user with LINKER behind
# the `ld` wrappers; the build log goes to $W/PKG.TAG.log and each link to $W/PKG.TAG.links.
build() {
    local pkg="$1" profiles="$2" src="$3" linker="$4" tag="$5"
    local tree="$W/build/$pkg.$tag" bin="$W/bin.$pkg.$tag" logf="$W/$pkg.$tag.log" links="$W/$pkg.$tag.links"
    rm -rf "$tree" "$bin"
    mkdir -p "$tree"
    cp -a "$src" "$tree/"
    RIVET="$linker" make_ld_wrapper "$bin" "$links"
    for alias in ld.bfd x86_64-linux-gnu-ld x86_64-linux-gnu-ld.bfd; do ln -sf ld "$bin/$alias"; done
    chown -R "$BUILDER" "$tree" "$bin"
    chmod a+w "$links"
    local rc=0
    (cd "$tree/$(basename "$src")" &&
        runuser -u "$BUILDER" -- env PATH="$bin:$PATH" DEB_BUILD_OPTIONS="parallel=$(nproc)" \
            ${profiles:+DEB_BUILD_PROFILES="$profiles"} \
            dpkg-buildpackage -b -uc -us -rfakeroot) >"$logf" 2>&1 || rc=$?
    return $rc
}

# test_summary LOG: the test-result lines of a build log, normalised (timings dropped), one per line.
test_summary() {
    grep -aE '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR): |tests passed, [0-9]+ tests failed out of|[0-9]+ (passed|failed)( |,|$).* in [0-9.]+s|^[[:space:]]*\*\*\* .* test OK \*\*\*|^All [0-9]+ tests passed|^# of (expected|unexpected) (passes|failures)|^\[  (PASSED|FAILED)  \] [0-9]+ tests?' "$1" |
        sed -E 's/ in [0-9.]+s.*//; s/\(([0-9.]+) (sec|ms)\)//; s/^[ \t]+//; s/[ \t]+$//; s/^=+ //; s/ =+$//' || true
}

setup_machine
for entry in $PACKAGES; do
    pkg="${entry%%:*}"
    profiles=""
    [ "$entry" != "$pkg" ] && profiles="${entry#*:}"
    log "== $pkg ${profiles:+(profiles: $profiles)}"
    if ! src=$(fetch "$pkg" "$profiles") || [ -z "$src" ]; then
        record "$pkg" FAIL "could not fetch the source or install its build dependencies"
        continue
    fi
    version=$(cd "$src" && dpkg-parsechangelog -S Version)
    start=$SECONDS
    if ! build "$pkg" "$profiles" "$src" "$RIVET" rivet; then
        record "$pkg $version" FAIL "build with rivet failed: see $W/$pkg.rivet.log"
        continue
    fi
    rivet_time=$((SECONDS - start))
    nlinks=$(links_in "$W/$pkg.rivet.links")
    if [ "$nlinks" -eq 0 ]; then
        record "$pkg $version" FAIL "no link went through rivet"
        continue
    fi
    test_summary "$W/$pkg.rivet.log" >"$W/$pkg.rivet.tests"
    if ! [ -s "$W/$pkg.rivet.tests" ]; then
        record "$pkg $version" FAIL "no test results found in $W/$pkg.rivet.log"
        continue
    fi
    if [ "${RIVET_DEBIAN_SKIP_LD:-0}" = 1 ]; then
        record "$pkg $version" PASS "$nlinks links by rivet, $rivet_time s; tests: $(paste -sd';' "$W/$pkg.rivet.tests")"
        continue
    fi
    if ! build "$pkg" "$profiles" "$src" "$(command -v x86_64-linux-gnu-ld.bfd)" ld; then
        record "$pkg $version" FAIL "build with GNU ld failed (rivet's passed): see $W/$pkg.ld.log"
        continue
    fi
    test_summary "$W/$pkg.ld.log" >"$W/$pkg.ld.tests"
    if ! diff -u "$W/$pkg.ld.tests" "$W/$pkg.rivet.tests" >"$W/$pkg.tests.diff"; then
        record "$pkg $version" FAIL "test results differ from GNU ld's: see $W/$pkg.tests.diff"
        continue
    fi
    record "$pkg $version" PASS "$nlinks links by rivet ($rivet_time s); tests as with GNU ld: $(paste -sd';' "$W/$pkg.rivet.tests")"
done
print_summary "Debian packages"
