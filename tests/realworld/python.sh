#!/usr/bin/env bash
# Real-world shared objects: CPython C extension modules built from their sdists by pip into a fresh venv, with
# LDFLAGS=-B DIR making gcc (the LDSHARED driver) link them with rivet through a logging wrapper in DIR/ld. Every
# extension module installed for a package must have the sha256 of an output rivet wrote; the compiled modules must
# be the ones in use (msgpack._cmsgpack, yaml.__with_libyaml__, markupsafe._speedups); then each package's own test
# suite (pytest on the sdist's tests) runs against the installed package.
#
# Knobs: RIVET, RIVET_RW_DIR (see lib.sh); PYTHON (interpreter with headers and the venv module; default python3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PY="${PYTHON:-python3}"
apt_need gcc libc6-dev libyaml-dev
if [ "$(command -v "$PY")" = /usr/bin/python3 ]; then apt_need python3-dev python3-venv; fi

W="$RW_DIR/python"
mkdir -p "$W"
make_ld_wrapper "$W/bin" "$W/links.log" hash

declare -A VERSION=([msgpack]=1.1.0 [pyyaml]=6.0.2 [markupsafe]=3.0.2)
declare -A TESTDIR=([msgpack]=test [pyyaml]=tests [markupsafe]=tests)
# Python code that must print "ok" when the compiled module is the one in use.
declare -A CHECK=(
    [msgpack]='import msgpack, msgpack._cmsgpack as c; assert msgpack.Packer is c.Packer and msgpack.Unpacker is c.Unpacker; assert msgpack.unpackb(msgpack.packb({"a": [1, 2.5, None, b"x"]})) == {"a": [1, 2.5, None, b"x"]}; print("ok")'
    [pyyaml]='import yaml; assert yaml.__with_libyaml__; from yaml import CLoader, CDumper; d = yaml.load("a: [1, {b: c}]\n", Loader=CLoader); assert d == {"a": [1, {"b": "c"}]}, d; assert yaml.load(yaml.dump(d, Dumper=CDumper), Loader=CLoader) == d; print("ok")'
    [markupsafe]='import markupsafe, markupsafe._speedups as s; assert markupsafe._escape_inner is s._escape_inner; assert str(markupsafe.escape("<a href=\"x\">&</a>")) == "&lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt;"; print("ok")'
)
PKGS="${RIVET_RW_PYPKGS:-msgpack pyyaml markupsafe}"

log "creating a fresh venv with $("$PY" --version)"
rm -rf "$W/venv"
"$PY" -m venv "$W/venv"
VPY="$W/venv/bin/python"
# Build tools and the test runner may be wheels; the packages under test are built from source below.
"$VPY" -m pip install -q --no-cache-dir --upgrade pip setuptools wheel Cython pytest

mkdir -p "$W/sdist"
for p in $PKGS; do
    if ! ls "$W/sdist/$p-${VERSION[$p]}".tar.gz >/dev/null 2>&1; then
        "$VPY" -m pip download -q --no-cache-dir --no-binary :all: --no-deps -d "$W/sdist" "$p==${VERSION[$p]}"
    fi
done

for p in $PKGS; do
    v="${VERSION[$p]}"
    sdist="$(ls "$W/sdist/$p-$v".tar.gz)"
    t0=$SECONDS
    before=$(links_in "$W/links.log")
    log "$p $v: pip install from source"
    rc=0
    LDFLAGS="-B$W/bin/" PYYAML_FORCE_LIBYAML=1 "$VPY" -m pip install -v --no-cache-dir --no-binary :all: \
        --no-build-isolation --no-deps --force-reinstall "$sdist" >"$W/$p.install.log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        grep -iE 'error|rivet' "$W/$p.install.log" | head -n 20 >&2 || true
        record "$p-$v build" FAIL "pip exited $rc (see $W/$p.install.log)"
        continue
    fi
    links=$(($(links_in "$W/links.log") - before))
    # Every extension module of the installed package must be byte-identical to an output rivet wrote.
    site="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
    pkgdir="$site/$("$VPY" -c "import importlib.util as u; print(u.find_spec('${p/pyyaml/yaml}').submodule_search_locations[0].rsplit('/', 1)[1])")"
    total=0 ok=0
    while read -r so; do
        total=$((total + 1))
        h="$(sha256sum <"$so" | cut -d' ' -f1)"
        if cut -f3 "$W/links.log" | grep -qx "$h"; then ok=$((ok + 1)); else log "not linked by rivet: $so"; fi
    done < <(find "$pkgdir" -name '*.so')
    if [ $total -gt 0 ] && [ $ok -eq $total ]; then
        record "$p-$v build" PASS "$ok/$total extension modules linked by rivet (-shared, $links links); $((SECONDS - t0)) s"
    else
        record "$p-$v build" FAIL "$ok/$total extension modules linked by rivet"
    fi

    rc=0
    out="$(cd "$W" && "$VPY" -c "${CHECK[$p]}" 2>&1)" || rc=$?
    if [ $rc -eq 0 ] && [ "$out" = ok ]; then
        record "$p-$v compiled module in use" PASS "import check"
    else
        record "$p-$v compiled module in use" FAIL "python exited $rc$( [ $rc -gt 128 ] && echo " (signal $((rc - 128)))"): $(tail -n1 <<<"$out")"
    fi

    # The sdist's tests, copied out of the source tree so that the installed package is the one imported.
    t0=$SECONDS
    rm -rf "$W/tests/$p"
    mkdir -p "$W/tests/$p"
    tar -xzf "$sdist" -C "$W/tests/$p" --strip-components=1 "$p-$v/${TESTDIR[$p]}"
    rc=0
    (cd "$W/tests/$p" && "$VPY" -m pytest -p no:cacheprovider -q --junitxml="$W/$p.junit.xml" "${TESTDIR[$p]}") \
        >"$W/$p.test.log" 2>&1 || rc=$?
    read -r n f e s < <("$VPY" - "$W/$p.junit.xml" <<'EOF' || echo "0 0 0 0"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
suites = [r] if r.tag == "testsuite" else list(r)
print(*(sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")))
EOF
    )
    passed=$((n - f - e - s))
    if [ $rc -eq 0 ] && [ $((f + e)) -eq 0 ] && [ $passed -gt 0 ]; then
        record "$p-$v tests" PASS "$passed passed, $((f + e)) failed, $s skipped; $((SECONDS - t0)) s"
    else
        tail -n 20 "$W/$p.test.log" >&2
        record "$p-$v tests" FAIL "$passed passed, $((f + e)) failed, $s skipped; pytest exited $rc (see $W/$p.test.log)"
    fi
done

echo
echo "links logged by the rivet wrapper: $(links_in "$W/links.log") in $W/links.log"
print_summary "python.sh"
