#!/usr/bin/env python3
"""Prints a corpus workload's captured command line (response.txt) without its output name and without lld's
--chroot/--reproduce, for the scripts that link it with rivet's own output names (identical.sh, determinism.sh).

Usage: strip_response.py response.txt > response.X.txt
"""
import shlex
import sys

args, out, i = shlex.split(open(sys.argv[1]).read()), [], 0
while i < len(args):
    a = args[i]
    if a in ("-o", "--output", "--chroot", "--reproduce"):
        i += 2
        continue
    if a.startswith(("--chroot=", "--reproduce=")) or a == "":
        i += 1
        continue
    out.append(a)
    i += 1
print("\n".join(shlex.quote(a) for a in out))
