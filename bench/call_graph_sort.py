#!/usr/bin/env python3
"""What the call graph sort costs: a corpus workload (default clang-tool) linked by rivet and ld.lld-19 without
a profile, and with a generated call graph (--call-graph-ordering-file: EDGES edges between the output's global
functions, callees skewed towards a few hot ones, random weights) sorted by cdsort (both linkers' default) and by
hfsort. Timed with hyperfine (alternating, --no-fork for rivet); prints hyperfine's table.

Usage: bench/call_graph_sort.py RIVET [--workload clang-tool] [--edges 200000] [--runs 7]
"""
import argparse
import os
import random
import shlex
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
p = argparse.ArgumentParser()
p.add_argument("rivet")
p.add_argument("--workload", default="clang-tool")
p.add_argument("--edges", type=int, default=200000)
p.add_argument("--runs", type=int, default=7)
a = p.parse_args()
rivet = os.path.realpath(a.rivet)
corpus = os.path.join(os.environ.get("BENCH_CACHE", os.path.expanduser("~/.cache/linker-bench")), "corpus")
os.chdir(os.path.join(corpus, a.workload))

stripped = subprocess.run([sys.executable, os.path.join(here, "strip_response.py"), "response.txt"],
                          check=True, capture_output=True, text=True).stdout
open("response.cgsort.txt", "w").write(stripped)
subprocess.run([rivet, "--no-fork", "-o", "out.cgsort", "@response.cgsort.txt"], check=True)
nm = subprocess.run(["nm", "--defined-only", "out.cgsort"], check=True, capture_output=True, text=True).stdout
funcs = sorted({l.split()[2] for l in nm.splitlines() if len(l.split()) == 3 and l.split()[1] == "T"})
rng = random.Random(35)
hot = rng.sample(funcs, max(1, len(funcs) // 50))
with open("cg.cgsort.txt", "w") as f:
    for _ in range(a.edges):
        callee = rng.choice(hot) if rng.random() < 0.7 else rng.choice(funcs)
        f.write(f"{rng.choice(funcs)} {callee} {int(rng.paretovariate(1.2) * 10)}\n")
print(f"{a.workload}: {len(funcs)} global functions, {a.edges} edges", flush=True)

lld = ["ld.lld-19", "@response.ld.lld-19.txt", "-o", "out.cgsort.lld"]
ours = [rivet, "--no-fork", "-o", "out.cgsort", "@response.cgsort.txt"]
cg = "--call-graph-ordering-file=cg.cgsort.txt"
hf = "--call-graph-profile-sort=hfsort"
quiet = "--no-warn-symbol-ordering"
cmds = {
    "rivet": ours,
    "rivet-cdsort": ours + [cg, quiet],
    "rivet-hfsort": ours + [cg, hf, quiet],
    "lld": lld,
    "lld-cdsort": lld + [cg, quiet],
    "lld-hfsort": lld + [cg, hf, quiet],
}
args = ["hyperfine", "-N", "--warmup", "1", "--runs", str(a.runs), "--style", "basic"]
for name, cmd in cmds.items():
    args += ["-n", name, " ".join(shlex.quote(c) for c in cmd)]
subprocess.run(args + ["--export-markdown", "/dev/stdout"], check=True)
for f in ("out.cgsort", "out.cgsort.lld", "response.cgsort.txt", "cg.cgsort.txt"):
    os.remove(f)
