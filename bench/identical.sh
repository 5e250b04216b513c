#!/usr/bin/env bash
# Checks that two rivet builds give byte-identical outputs on the corpus workloads (the rule for changes that
# must not change output, such as refactorings), at --threads=1 and at the default thread count.
#
# Usage: bench/identical.sh OLD_RIVET NEW_RIVET [WORKLOAD...]   (default: all five workloads)
# Needs the corpus from ../shared/bench/corpus.sh. Prints one line per workload and thread setting; exits 1 on any
# difference or failed link.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 OLD_RIVET NEW_RIVET [WORKLOAD...]" >&2; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2"); shift 2
CORPUS=${BENCH_CACHE:-$HOME/.cache/linker-bench}/corpus
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(rg-release rg-debug c-gc clang-tool clang-so)
status=0
for w in "${workloads[@]}"; do
    cd "$CORPUS/$w"
    # The captured command line, with rivet's own output names and without lld's --chroot/--reproduce.
    python3 "$HERE/strip_response.py" response.txt > response.identical.txt
    for threads in --threads=1 ""; do
        for side in old new; do
            bin=$old; [ $side = new ] && bin=$new
            rm -f "out.identical.$side"
            "$bin" $threads --no-fork -o "out.identical.$side" @response.identical.txt || { echo "$w ${threads:-default}: $side link failed"; status=1; }
        done
        if cmp -s out.identical.old out.identical.new; then
            echo "$w ${threads:---threads=default}: identical ($(stat -c %s out.identical.new) bytes)"
        else
            echo "$w ${threads:---threads=default}: DIFFERENT"; status=1
        fi
    done
    rm -f out.identical.old out.identical.new response.identical.txt
done
exit $status
