#!/usr/bin/env bash
# Checks that one rivet build gives byte-identical outputs at every thread count and on repeated runs (issue 34's
# determinism rule), on the corpus workloads: each is linked at --threads=1, 2, 3, 4, 8 and 16 and once more at
# the default, and the outputs' SHA-256 compared.
#
# Usage: bench/determinism.sh RIVET [WORKLOAD...]   (default: all five workloads); EXTRA="--gdb-index" (for
# example) adds options to every link.
# Needs the corpus from ../shared/bench/corpus.sh. Prints one line per workload; exits 1 on any difference.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 RIVET [WORKLOAD...]" >&2; exit 2; }
rivet=$(realpath "$1"); shift
CORPUS=${BENCH_CACHE:-$HOME/.cache/linker-bench}/corpus
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(rg-release rg-debug c-gc clang-tool clang-so)
status=0
for w in "${workloads[@]}"; do
    cd "$CORPUS/$w"
    python3 "$HERE/strip_response.py" response.txt > response.determinism.txt
    sums=()
    for threads in --threads=1 --threads=2 --threads=3 --threads=4 --threads=8 --threads=16 "" ""; do
        rm -f out.determinism
        "$rivet" $threads ${EXTRA:-} --no-fork -o out.determinism @response.determinism.txt
        sums+=("$(sha256sum out.determinism | cut -c1-16)")
    done
    if [ "$(printf '%s\n' "${sums[@]}" | sort -u | wc -l)" = 1 ]; then
        echo "$w: identical at 1, 2, 3, 4, 8, 16 threads and twice at the default (${sums[0]})"
    else
        echo "$w: DIFFERENT: ${sums[*]}"; status=1
    fi
    rm -f out.determinism response.determinism.txt
done
exit $status
