#!/usr/bin/env python3
"""Times --icf=all links of corpus workloads: rivet against ld.lld-19 and mold, in interleaved rounds.

Usage: bench/icf.py RIVET [WORKLOAD...]   (default: clang-tool rg-release; ROUNDS=5)

Each round links the workload once with each linker (the captured command line from response.txt, without its
output name, plus --icf=all; rivet and mold with --no-fork, so the measured process does the whole link); prints
per linker the median wall time and the output's size, and the sizes of rivet's and lld's links without ICF.
"""
import os, shlex, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
rivet = os.path.abspath(sys.argv[1])
workloads = sys.argv[2:] or ["clang-tool", "rg-release"]
rounds = int(os.environ.get("ROUNDS", "5"))
corpus = os.path.join(os.environ.get("BENCH_CACHE", os.path.expanduser("~/.cache/linker-bench")), "corpus")
linkers = {
    "rivet": [rivet, "--no-fork", "--icf=all"],
    "ld.lld-19": ["ld.lld-19", "--icf=all"],
    "mold": ["/usr/bin/mold", "--no-fork", "--icf=all"],
}
for w in workloads:
    os.chdir(os.path.join(corpus, w))
    args = subprocess.run([sys.executable, os.path.join(HERE, "strip_response.py"), "response.txt"],
                          check=True, capture_output=True, text=True).stdout.split("\n")
    args = [shlex.split(a)[0] if a.strip() else None for a in args]
    args = [a for a in args if a is not None]
    times = {k: [] for k in linkers}
    for r in range(rounds):
        names = list(linkers)
        names = names[r % len(names):] + names[:r % len(names)]
        for k in names:
            out = f"out.icf.{k}"
            t = time.perf_counter()
            subprocess.run(linkers[k] + ["-o", out] + args, check=True, stdout=subprocess.DEVNULL)
            times[k].append(time.perf_counter() - t)
    sizes = {k: os.path.getsize(f"out.icf.{k}") for k in linkers}
    for k, base in [("rivet", [rivet, "--no-fork"]), ("ld.lld-19", ["ld.lld-19"])]:
        subprocess.run(base + ["-o", f"out.noicf.{k}"] + args, check=True)
        sizes[k + " (no ICF)"] = os.path.getsize(f"out.noicf.{k}")
    print(f"{w} (--icf=all, {rounds} rounds, median wall time):")
    for k in linkers:
        print(f"  {k:10} {statistics.median(times[k]) * 1000:8.0f} ms  {sizes[k]:>11,} bytes")
    for k in ["rivet (no ICF)", "ld.lld-19 (no ICF)"]:
        print(f"  {k:20} {sizes[k]:>11,} bytes")
    lld = sizes["ld.lld-19"]
    print(f"  rivet's output is {100 * (sizes['rivet'] - lld) / lld:+.2f}% of lld's")
    for f in os.listdir("."):
        if f.startswith(("out.icf.", "out.noicf.")):
            os.remove(f)
