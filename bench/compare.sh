#!/usr/bin/env bash
# Side-by-side comparison of rivet with its peers on the shared benchmark corpus (issue 5's table).
#
# Usage: bench/compare.sh [WORKLOAD...]        (default: all five workloads)
#
# Needs the peers and the corpus from ../shared/bench (peers.sh, corpus.sh; see bench/README.md). Builds rivet in
# release mode, then runs ../shared/bench/run.sh once per workload with: rivet (default threads), rivet
# --threads=1, wild, mold and ld.lld-19, all linking in the measured process (--no-fork; run.sh adds it for wild
# and mold), wild and mold with --threads=1 (rivet-t1's peers), wild --no-gc-sections on the workloads that do
# not ask for --gc-sections (wild collects garbage by default; there its --threads=1 and --update-in-place rows
# get --no-gc-sections too), the @read/@write I/O floor, and rivet, wild and
# mold with --fork (each one's default: the caller waits only until the output is written, so only their wall
# time means anything), wild with --update-in-place (rivet and mold update an existing output in place by
# default) and rivet with --no-update-in-place (a new output file every time, wild's default).
# ROUNDS (default 7) and the other run.sh variables pass through.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SHARED=${SHARED_BENCH:-$(cd "$ROOT/../shared/bench" 2>/dev/null && pwd || true)}
[ -x "$SHARED/run.sh" ] || { echo "compare.sh: ../shared/bench/run.sh not found (set SHARED_BENCH)" >&2; exit 2; }
PEERS=${BENCH_CACHE:-$HOME/.cache/linker-bench}/peers/bin
export PATH="$PEERS:$PATH"

(cd "$ROOT" && cargo build --release)
RIVET="$ROOT/target/release/rivet"

workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(rg-release rg-debug c-gc clang-tool clang-so)
for w in "${workloads[@]}"; do
    # Like-for-like with run.sh's default (--no-fork for mold and wild): every linker links in the measured
    # process. The *-fork rows are each linker's default, where only wall time is meaningful.
    specs=("rivet=$RIVET --no-fork" "rivet-t1=$RIVET --no-fork --threads=1" wild mold ld.lld-19
        "rivet-fork=$RIVET --fork" "wild-fork=wild --fork" "mold-fork=mold --fork" "mold-t1=mold --threads=1"
        "rivet-fresh=$RIVET --no-fork --no-update-in-place")
    # wild collects garbage unless told not to: on the workloads that do not ask for --gc-sections, its
    # single-thread and in-place rows (rivet-t1's and rivet's like-for-like peers) run with --no-gc-sections.
    case "$w" in
        clang-tool|clang-so) specs+=("wild-nogc=wild --no-gc-sections"
            "wild-nogc-t1=wild --no-gc-sections --threads=1"
            "wild-nogc-inplace=wild --no-gc-sections --update-in-place") ;;
        *) specs+=("wild-t1=wild --threads=1" "wild-inplace=wild --update-in-place") ;;
    esac
    # run.sh rotates the order, so each row always runs right after the same one. The I/O floor goes last, @read
    # after @write: @write leaves an output's worth of dirty page cache, which the kernel writes back while the
    # next row runs, and that row used to be rivet-fork.
    specs+=(@write @read)
    "$SHARED/run.sh" "$w" "${specs[@]}"
done
