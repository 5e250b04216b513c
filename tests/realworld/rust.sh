#!/usr/bin/env bash
# Real-world Rust links: ripgrep, regex and serde_json from crates.io (pinned versions) built with rivet as the
# linker, and each crate's own test suite run with every test binary, build script and proc-macro (-shared) linked
# by rivet. Release builds link through gcc (-B DIR with DIR/ld -> rivet), debug builds and tests through clang-19
# (--ld-path). A wrapper in front of rivet logs every link; each executable cargo reports must be one of them.
#
# Knobs: RIVET, RIVET_RW_DIR (see lib.sh); RIVET_RW_CRATES="ripgrep regex serde_json" (subset to run);
# RIVET_RW_DOCTESTS=1 also builds and runs the doctests (linked by rivet through RUSTDOCFLAGS; slow).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

apt_need gcc libc6-dev clang-19
command -v cargo >/dev/null || { echo "error: cargo is required (rustup toolchain)" >&2; exit 2; }

W="$RW_DIR/rust"
mkdir -p "$W"
# The wrapper directory is named after rivet's hash: RUSTFLAGS then differ per rivet binary, so cargo relinks
# everything with a new rivet, while a rerun with the same rivet can reuse the builds (and their logged links).
WRAP="$W/ld-$(sha256sum "$RIVET" | cut -c1-12)"
# The wrapper is rewritten each run (it names $RIVET's path); its log of earlier runs is kept.
LINKLOG="$WRAP/links.log"
mkdir -p "$WRAP" && touch "$LINKLOG" && mv "$LINKLOG" "$LINKLOG.keep"
make_ld_wrapper "$WRAP" "$LINKLOG"
mv "$LINKLOG.keep" "$LINKLOG"
RF_GCC="-C linker=gcc -C link-arg=-B$WRAP/ -C linker-features=-lld"
RF_CLANG="-C linker=clang-19 -C link-arg=--ld-path=$WRAP/ld -C linker-features=-lld"

CRATES="${RIVET_RW_CRATES:-ripgrep regex serde_json}"
declare -A VERSION=([ripgrep]=14.1.1 [regex]=1.11.1 [serde_json]=1.0.133)

# Fetch the pinned crate sources with cargo itself (a throwaway package depending on them).
log "fetching crate sources"
mkdir -p "$W/fetch/src"
: >"$W/fetch/src/lib.rs"
{
    printf '[package]\nname = "rivet-rw-fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n'
    for c in $CRATES; do printf '%s = "=%s"\n' "$c" "${VERSION[$c]}"; done
} >"$W/fetch/Cargo.toml"
(cd "$W/fetch" && cargo fetch -q 2>&1 | grep -v 'missing a lib target' || true)
REGSRC="${CARGO_HOME:-$HOME/.cargo}/registry/src"

# link_check NAME JSON: every executable in cargo's JSON messages must have been linked by rivet (same inode as a
# logged output). Prints "<linked by rivet>/<executables>".
link_check() {
    local json="$1" exe ino total=0 ok=0 missing=()
    declare -A logged=()
    while IFS=$'\t' read -r _ out; do
        [ -e "$out" ] && logged[$(stat -c %d:%i "$out")]=1
    done <"$LINKLOG"
    while read -r exe; do
        total=$((total + 1))
        ino="$(stat -c %d:%i "$exe")"
        if [ -n "${logged[$ino]:-}" ]; then ok=$((ok + 1)); else missing+=("$exe"); fi
    done < <(grep -o '"executable":"[^"]*"' "$json" | sed 's/^"executable":"//; s/"$//' | sort -u)
    for exe in "${missing[@]}"; do log "not linked by rivet: $exe"; done
    echo "$ok/$total"
}

# links_under DIR: how many logged links (and how many of them -shared) wrote into DIR.
links_under() {
    awk -F'\t' -v d="$1/" 'index($2, d) == 1 { n++; if ($1 == 1) s++ } END { printf "%d links (%d -shared)", n, s }' \
        "$LINKLOG"
}

# test_counts LOG: sums libtest's "test result:" lines into "P F I" (passed failed ignored).
test_counts() {
    sed -n 's/.*test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$1" |
        awk '{ p += $1; f += $2; i += $3 } END { printf "%d %d %d\n", p, f, i }'
}

# build_and_test CRATE PROFILE: builds the crate's tests, checks the links and runs them.
build_and_test() {
    local c="$1" profile="$2" dir="$W/src/$c-${VERSION[$c]}" tgt="$W/target/$c" rf pflag="" t0 rc
    local name="$c-${VERSION[$c]} $profile"
    if [ "$profile" = release ]; then rf="$RF_GCC"; pflag="--release"; else rf="$RF_CLANG"; fi
    local doc=(--tests)
    [ "${RIVET_RW_DOCTESTS:-0}" = 1 ] && doc=()
    local json="$W/$c.$profile.build.json" out="$W/$c.$profile.test.log"
    export CARGO_TARGET_DIR="$tgt" RUSTFLAGS="$rf" RUSTDOCFLAGS="$rf"

    t0=$SECONDS
    log "$name: building tests (cargo test --no-run $pflag)"
    rc=0
    (cd "$dir" && cargo test --locked $pflag --no-run "${doc[@]}" --message-format=json-render-diagnostics) \
        >"$json" 2>"$W/$c.$profile.build.err" || rc=$?
    if [ $rc -ne 0 ]; then
        tail -n 30 "$W/$c.$profile.build.err" >&2
        record "$name build" FAIL "cargo exited $rc (see $W/$c.$profile.build.err)"
        return
    fi
    local linked
    linked="$(link_check "$json")"
    if [ "${linked%/*}" = "${linked#*/}" ] && [ "${linked#*/}" -gt 0 ]; then
        record "$name build" PASS "$linked executables linked by rivet; $(links_under "$tgt") in target; $((SECONDS - t0)) s"
    else
        record "$name build" FAIL "only $linked executables linked by rivet"
    fi

    t0=$SECONDS
    log "$name: running tests"
    rc=0
    (cd "$dir" && cargo test --locked $pflag --no-fail-fast "${doc[@]}") >"$out" 2>&1 || rc=$?
    local p f i
    read -r p f i < <(test_counts "$out")
    if [ $rc -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ]; then
        record "$name tests" PASS "$p passed, $f failed, $i ignored; $((SECONDS - t0)) s"
    else
        grep -E '^test .* FAILED$|panicked|error' "$out" | head -n 20 >&2 || true
        local why
        why="$(grep -m1 -oE 'fatal runtime error: .*|signal: [0-9]+, SIG[A-Z]+' "$out" || true)"
        record "$name tests" FAIL "$p passed, $f failed, $i ignored; cargo exited $rc${why:+ ($why)} (see $out)"
    fi
}

# check_rg PROFILE: runs the built rg and compares its matches with grep's on ripgrep's own sources.
check_rg() {
    local profile="$1" rg="$W/target/ripgrep/$1/rg" dir="$W/src/ripgrep-${VERSION[ripgrep]}" a b
    if ! "$rg" --version >/dev/null 2>&1; then
        record "rg $profile run" FAIL "$rg --version failed"
        return
    fi
    a="$("$rg" -uuu -n --no-heading --sort path 'fn [a-z_]+\(' "$dir/crates" | sort)"
    b="$(grep -rnE 'fn [a-z_]+\(' "$dir/crates" | sort)"
    if [ -n "$a" ] && [ "$a" = "$b" ]; then
        record "rg $profile run" PASS "$(wc -l <<<"$a") matching lines, same as grep -rn"
    else
        record "rg $profile run" FAIL "rg and grep -rn disagree"
    fi
}

for c in $CRATES; do
    v="${VERSION[$c]}"
    src="$(ls -d "$REGSRC"/*/"$c-$v" | head -n1)"
    # A fresh copy of the crate source per run (tests may write into it); crates that ship no Cargo.lock get the
    # one pinned here.
    rm -rf "$W/src/$c-$v"
    mkdir -p "$W/src"
    cp -r "$src" "$W/src/$c-$v"
    if [ ! -f "$W/src/$c-$v/Cargo.lock" ]; then
        cp "$RW_SRC/rust/$c-$v.Cargo.lock" "$W/src/$c-$v/Cargo.lock"
    fi
    if [ "$c" = ripgrep ]; then
        # ripgrep: release binary (gcc driver) and debug build + test suite (clang driver).
        t0=$SECONDS
        log "ripgrep-$v release: cargo build --release"
        rc=0
        (cd "$W/src/$c-$v" && CARGO_TARGET_DIR="$W/target/$c" RUSTFLAGS="$RF_GCC" \
            cargo build --locked --release --message-format=json-render-diagnostics) \
            >"$W/$c.release.build.json" 2>"$W/$c.release.build.err" || rc=$?
        if [ $rc -ne 0 ]; then
            tail -n 30 "$W/$c.release.build.err" >&2
            record "ripgrep-$v release build" FAIL "cargo exited $rc"
        else
            linked="$(link_check "$W/$c.release.build.json")"
            st=FAIL
            [ "${linked%/*}" = "${linked#*/}" ] && st=PASS
            record "ripgrep-$v release build" $st "$linked executables linked by rivet;" \
                "$(links_under "$W/target/$c/release") in target; $((SECONDS - t0)) s"
            check_rg release
        fi
        build_and_test "$c" debug
        check_rg debug
    else
        build_and_test "$c" debug
    fi
done

echo
echo "links logged by the rivet wrapper: $(links_in "$LINKLOG") in $LINKLOG"
print_summary "rust.sh"
