#!/usr/bin/env bash
# Makes the seed corpora of the cargo-fuzz targets under fuzz/corpus/ (README.md "Fuzzing"): objects and archives
# compiled by gcc and g++ from the program tests' sources (tests/programs), GNU ld's default linker scripts
# (`ld --verbose` for executables, PIEs and shared objects), the hand-written scripts and version scripts of
# fuzz/seeds/, and the program tests' version scripts.
set -euo pipefail
cd "$(dirname "$0")"
progs=../tests/programs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p corpus/object corpus/archive corpus/script corpus/version_script

# Objects: each program test's C and C++ sources in a few variants; an archive of each test's objects.
for d in "$progs"/*/; do
    name=$(basename "$d")
    objs=()
    for src in "$d"*.c "$d"*.cc; do
        [ -e "$src" ] || continue
        base=$(basename "$src")
        case "$src" in *.cc) cc=g++ ;; *) cc=gcc ;; esac
        flags=("-O1 -fPIC" "-O2 -g -gz=zlib -fno-pie -ffunction-sections -fdata-sections")
        for i in 0 1; do
            o="$tmp/$name-$i-$base.o"
            # shellcheck disable=SC2086
            if $cc ${flags[$i]} -pthread -I "$d" -c "$src" -o "$o" 2>/dev/null; then
                cp "$o" "corpus/object/$name-$i-$base.o"
                [ "$i" = 0 ] && objs+=("$o")
            fi
        done
    done
    if [ "${#objs[@]}" -gt 0 ]; then
        ar rcs "corpus/archive/$name.a" "${objs[@]}"
    fi
done

# Scripts: GNU ld's defaults and the hand-written ones.
for kind in "" -pie -shared; do
    ld.bfd $kind --verbose | sed -n '/^=====/,/^=====/p' | sed '1d;$d' >"corpus/script/default$kind.lds"
done
cp seeds/script/* corpus/script/

# Version scripts.
for m in "$progs"/*/*.map; do
    cp "$m" "corpus/version_script/$(basename "$(dirname "$m")")-$(basename "$m")"
done
cp seeds/version_script/* corpus/version_script/

for c in corpus/*; do
    echo "$c: $(ls "$c" | wc -l) files"
done
