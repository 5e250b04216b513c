#!/usr/bin/env bash
# Real-world C++ link: a small libTooling program (libtooling/astsummary.cpp) compiled with clang++-19 and linked
# statically against Debian's clang/LLVM 19 archives (libclangTooling.a & co. plus every LLVM component archive,
# in one --start-group/--end-group), once with rivet and once with ld.lld-19. Both programs parse a real C++ file
# (astsummary.cpp itself, which pulls in the clang AST headers) and a broken snippet; stdout and stderr must be
# identical.
#
# Knobs: RIVET, RIVET_RW_DIR (see lib.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

apt_need clang-19 lld-19 llvm-19-dev libclang-19-dev libstdc++-12-dev libz3-dev libzstd-dev libxml2-dev zlib1g-dev

W="$RW_DIR/libtooling"
mkdir -p "$W"
make_ld_wrapper "$W/bin" "$W/links.log"
LLVM=/usr/lib/llvm-19
SRC="$RW_SRC/libtooling/astsummary.cpp"

# The clang libraries libclangTooling needs (CMake's clangTooling link interface, transitively), then all of LLVM.
CLANG_LIBS=(clangTooling clangToolingInclusions clangToolingCore clangFormat clangRewrite clangFrontend clangDriver
    clangParse clangSerialization clangSema clangAPINotes clangEdit clangAnalysis clangASTMatchers clangAST
    clangSupport clangLex clangBasic)
ARCHIVES=()
for l in "${CLANG_LIBS[@]}"; do ARCHIVES+=("$LLVM/lib/lib$l.a"); done
# (minus Polly: Debian ships its archives in a separate package, and nothing here needs them)
read -ra LLVM_LIBS <<<"$(llvm-config-19 --link-static --libs | tr ' ' '\n' | grep -v '^-lPolly' | tr '\n' ' ')"
read -ra SYS_LIBS <<<"$(llvm-config-19 --link-static --system-libs)"
read -ra CXXFLAGS <<<"$(llvm-config-19 --cxxflags)"

t0=$SECONDS
log "compiling astsummary.cpp"
clang++-19 "${CXXFLAGS[@]}" -O1 -c "$SRC" -o "$W/astsummary.o"
record "compile astsummary.cpp" PASS "$((SECONDS - t0)) s"

# link NAME LINKER: links $W/astsummary.NAME with the given ld path; prints the wall time.
link() {
    local name="$1" ld="$2" start end rc=0
    rm -f "$W/astsummary.$name"
    start=$(date +%s.%N)
    clang++-19 --ld-path="$ld" "$W/astsummary.o" -o "$W/astsummary.$name" -L"$LLVM/lib" \
        -Wl,--start-group "${ARCHIVES[@]}" "${LLVM_LIBS[@]}" -Wl,--end-group "${SYS_LIBS[@]}" -lpthread \
        >"$W/link.$name.log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    if [ $rc -ne 0 ]; then
        head -n 30 "$W/link.$name.log" >&2
        record "link with $name" FAIL "exit $rc (see $W/link.$name.log)"
        return 1
    fi
    record "link with $name" PASS "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') s," \
        "$(($(stat -c %s "$W/astsummary.$name") / 1024 / 1024)) MiB"
}

ok=1
link rivet "$W/bin/ld" || ok=0
link lld "$(command -v ld.lld-19)" || ok=0
if [ $ok -eq 1 ] && [ "$(links_in "$W/links.log")" -eq 1 ] && grep -q "astsummary.rivet$" "$W/links.log"; then
    record "rivet did the link" PASS "1 link logged by the wrapper"
else
    record "rivet did the link" FAIL "$(links_in "$W/links.log") links logged"
    ok=0
fi

if [ $ok -eq 1 ]; then
    RES="$(clang-19 -print-resource-dir)"
    for name in rivet lld; do
        t0=$SECONDS
        rc=0
        (cd "$W" && "./astsummary.$name" --resource-dir="$RES" "$SRC" -- -std=c++17 -I"$LLVM/include" \
            >"run.$name.out" 2>"run.$name.err") || rc=$?
        echo "exit $rc" >>"$W/run.$name.out"
        log "astsummary.$name exited $rc in $((SECONDS - t0)) s"
    done
    lines=$(wc -l <"$W/run.rivet.out")
    decls=$(grep -c ' @[0-9]*:[0-9]*' "$W/run.rivet.out" || true)
    if ! grep -q '^-- ClangTool::run returned 0$' "$W/run.lld.out" || ! grep -q 'error:' "$W/run.lld.err"; then
        record "lld-linked astsummary sane" FAIL "see $W/run.lld.out and run.lld.err"
    elif cmp -s "$W/run.rivet.out" "$W/run.lld.out" && cmp -s "$W/run.rivet.err" "$W/run.lld.err"; then
        record "rivet vs lld output" PASS "identical stdout ($lines lines, $decls declarations) and stderr" \
            "($(grep -c 'error:' "$W/run.rivet.err") errors)"
    else
        diff "$W/run.lld.out" "$W/run.rivet.out" | head -n 20 >&2 || true
        diff "$W/run.lld.err" "$W/run.rivet.err" | head -n 20 >&2 || true
        record "rivet vs lld output" FAIL "outputs differ (see $W/run.{rivet,lld}.{out,err})"
    fi
fi

print_summary "libtooling.sh"
