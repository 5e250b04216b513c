#!/usr/bin/env bash
# Runs every real-world test script (rust.sh, libtooling.sh, python.sh) with the linker in $RIVET and prints one
# summary. Exits non-zero if any script failed. RIVET_RW_ONLY="rust python" runs a subset.
set -euo pipefail
cd "$(dirname "$0")"

SCRIPTS="${RIVET_RW_ONLY:-rust libtooling python}"
declare -A RESULT TIME
failed=0
for s in $SCRIPTS; do
    echo "######## $s.sh"
    start=$SECONDS
    rc=0
    "./$s.sh" || rc=$?
    TIME[$s]=$((SECONDS - start))
    if [ $rc -eq 0 ]; then RESULT[$s]=PASS; else RESULT[$s]="FAIL (exit $rc)"; failed=$((failed + 1)); fi
done

echo
echo "######## real-world tests: summary"
for s in $SCRIPTS; do printf '%-14s %-16s %5d s\n' "$s.sh" "${RESULT[$s]}" "${TIME[$s]}"; done
if [ $failed -eq 0 ]; then
    echo "######## real-world tests: PASS ($SECONDS s)"
else
    echo "######## real-world tests: FAIL ($failed of $(wc -w <<<"$SCRIPTS") scripts failed, $SECONDS s)"
    exit 1
fi
