#!/usr/bin/env bash
# Cold-start benchmark: how fast a large program linked by rivet starts and runs from a cold page cache, with and
# without a function order derived from a profile of that run, against GNU ld, lld and mold links of the same job.
#
# Usage: bench/coldstart.sh [WORKLOAD_DIR [-- PROGRAM_ARGS...]]
#   WORKLOAD_DIR  a corpus workload (response.txt in lld --reproduce form, relative paths); default: the corpus's
#                 clang-tool, run as `clang-tool input.cpp -- -std=c++17 -resource-dir ...` on a generated C++ file
#                 that includes <map>, <string>, <vector>, <iostream>, <algorithm> (a syntax-only parse, ~0.35 s warm)
#   PROGRAM_ARGS  the arguments the linked program runs with (in $WORK), for a workload other than clang-tool
# Env:
#   RIVET     the rivet binary (default: target/release/rivet of this checkout, or $CARGO_TARGET_DIR's)
#   RUNS      cold runs per variant, interleaved (default 11)
#   VARIANTS  what to link and run (default "rivet rivet-order ld.bfd ld.lld-19 lld-order mold"); known labels:
#               rivet, rivet-order (--symbol-ordering-file from the profile), rivet-noseparate (-z noseparate-code),
#               ld.bfd, ld.lld-19, lld-order, mold; or LABEL=COMMAND,ARG,... (run as COMMAND ARG... -o OUT @response)
#   ORDER     an ordering file to use instead of deriving one (bench/coldstart.py order, under valgrind, ~30 s)
#   WORK      where outputs, the ordering file and the report go (default $WORKLOAD_DIR/coldstart)
#   WHERE=1   then, per variant, one cold run under perf: its major faults by section, before main() and after
#   COLD_LIBS=1  evict the program's shared libraries too (those no other process maps)
#   RA_KB=N   run the programs from a scratch ext4 file system on a loop device (direct I/O to the backing file,
#             root only) whose read-ahead is N KiB, instead of from $WORK's device with its own read_ahead_kb: a
#             page fault reads a window of the read-ahead size around it, so this sets the I/O granularity
#             (Linux's default is 128; the development VMs' disk has 8192) without touching the real disk's setting
# Prints a table of medians (bench/coldstart.py run); the report is also kept in $WORK/report.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CORPUS=${BENCH_CACHE:-$HOME/.cache/linker-bench}/corpus
DIR=${1:-$CORPUS/clang-tool}
[ $# -gt 0 ] && shift
[ "${1:-}" = -- ] && shift
DIR=$(cd "$DIR" && pwd)
[ -f "$DIR/response.txt" ] || { echo "coldstart: no response.txt in $DIR (run ../shared/bench/corpus.sh)" >&2; exit 2; }
if [ -z "${RIVET:-}" ]; then
    RIVET=${CARGO_TARGET_DIR:-$HERE/../target}/release/rivet
fi
RIVET=$(realpath "$RIVET")
RUNS=${RUNS:-11}
VARIANTS=${VARIANTS:-rivet rivet-order ld.bfd ld.lld-19 lld-order mold}
WORK=${WORK:-$DIR/coldstart}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

args=("$@")
if [ ${#args[@]} -eq 0 ] && [ "$(basename "$DIR")" = clang-tool ]; then
    cat > "$WORK/input.cpp" <<'EOF'
#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>
int main() {
    std::map<std::string, std::vector<int>> m;
    m["a"].push_back(1);
    for (auto &p : m) std::cout << p.first << std::count(p.second.begin(), p.second.end(), 1) << '\n';
    return 0;
}
EOF
    args=(input.cpp -- -std=c++17 -resource-dir "$(clang-19 -print-resource-dir)")
fi

python3 "$HERE/strip_response.py" "$DIR/response.txt" > "$WORK/response.txt"
resp=$WORK/response.txt

link() { # LABEL OUTPUT: links the workload in $DIR
    local label=$1 out=$2 order=${ORDER:-$WORK/order.txt}
    rm -f "$out"
    case $label in
    rivet) "$RIVET" --no-fork -o "$out" @"$resp" ;;
    rivet-order) "$RIVET" --no-fork --symbol-ordering-file="$order" --no-warn-symbol-ordering -o "$out" @"$resp" ;;
    rivet-noseparate) "$RIVET" --no-fork -z noseparate-code -o "$out" @"$resp" ;;
    ld.bfd) ld.bfd -o "$out" @"$resp" ;;
    ld.lld-19 | lld) ld.lld-19 -o "$out" @"$resp" ;;
    lld-order) ld.lld-19 --symbol-ordering-file="$order" --no-warn-symbol-ordering -o "$out" @"$resp" ;;
    mold) mold -o "$out" @"$resp" ;;
    *=*) local cmd=${label#*=}; ${cmd//,/ } -o "$out" @"$resp" ;;
    *) echo "coldstart: unknown variant $label" >&2; return 2 ;;
    esac
}

cd "$DIR"
# The profile: the default rivet link, run once under valgrind on the same input.
if [ -z "${ORDER:-}" ] && [[ " $VARIANTS " == *-order* ]]; then
    link rivet "$WORK/out.profile"
    python3 "$HERE/coldstart.py" order --cwd "$WORK" -o "$WORK/order.txt" "$WORK/out.profile" -- "${args[@]}"
    rm -f "$WORK/out.profile"
fi
programs=()
for v in $VARIANTS; do
    label=${v%%=*}
    start=$(date +%s%N)
    link "$v" "$WORK/out.$label" > "$WORK/link.$label.log" 2>&1 || {
        echo "coldstart: the $label link failed:" >&2; tail -n 5 "$WORK/link.$label.log" >&2; exit 1; }
    echo "coldstart: linked $label in $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2
    programs+=("$label=$WORK/out.$label")
done
cold=(); [ "${COLD_LIBS:-0}" = 1 ] && cold=(--cold-libs)
dev=$(basename "$(df --output=source "$WORK" | tail -n 1)")
if [ -n "${RA_KB:-}" ]; then
    # A scratch file system of its own, so that its read-ahead can be set without affecting anyone else's disk.
    mnt=$WORK/mnt
    img=$WORK/loop.img
    size=$(du -cm "${programs[@]#*=}" | tail -n 1 | cut -f 1)
    rm -f "$img"; truncate -s $((size * 2 + 64))M "$img"
    mkfs.ext4 -q -F "$img"
    loopdev=$(losetup --find --show --direct-io=on "$img")
    cleanup() { umount "$mnt" 2>/dev/null || true; losetup -d "$loopdev" 2>/dev/null || true; rm -f "$img"; }
    trap cleanup EXIT
    mkdir -p "$mnt"; mount "$loopdev" "$mnt"
    echo "$RA_KB" > "/sys/block/$(basename "$loopdev")/queue/read_ahead_kb"
    dev="$(basename "$loopdev") (ext4 on $dev, direct I/O)"
    moved=()
    for p in "${programs[@]}"; do cp "${p#*=}" "$mnt/"; moved+=("${p%%=*}=$mnt/$(basename "${p#*=}")"); done
    programs=("${moved[@]}")
fi
ra=${RA_KB:-$(cat "/sys/block/$dev/queue/read_ahead_kb" 2>/dev/null || echo '?')}
{
    echo "coldstart: $(basename "$DIR") on $(uname -r), $(nproc) CPUs, device $dev, read_ahead_kb=$ra;" \
        "$("$RIVET" --version | head -n 1)"
    python3 "$HERE/coldstart.py" run -n "$RUNS" "${cold[@]}" --cwd "$WORK" --json "$WORK/report.json" \
        "${programs[@]}" -- "${args[@]}"
} | tee "$WORK/report.md"
if [ "${WHERE:-0}" = 1 ]; then
    for p in "${programs[@]}"; do
        echo
        python3 "$HERE/coldstart.py" where --cwd "$WORK" "${p#*=}" -- "${args[@]}"
    done | tee -a "$WORK/report.md"
fi
