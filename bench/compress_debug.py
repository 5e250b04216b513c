#!/usr/bin/env python3
"""Times --compress-debug-sections on a corpus workload: rivet, ld.lld-19 and mold, each value, at the default
thread count and at one thread; interleaved runs (each round runs every row once), medians of wall and CPU time
(user + system, children included), and the output's size and compressed debug bytes.

Usage: bench/compress_debug.py RIVET [WORKLOAD [RUNS]]   (default rg-debug, 5 runs)
"""
import os, shlex, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
rivet = os.path.abspath(sys.argv[1])
workload = sys.argv[2] if len(sys.argv) > 2 else "rg-debug"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
corpus = os.path.join(os.environ.get("BENCH_CACHE", os.path.expanduser("~/.cache/linker-bench")), "corpus", workload)
os.chdir(corpus)
rsp = subprocess.run([sys.executable, os.path.join(HERE, "strip_response.py"), "response.txt"],
                     check=True, capture_output=True, text=True).stdout
open("response.compress.txt", "w").write(rsp)

linkers = {"rivet": [rivet, "--no-fork"], "lld": ["ld.lld-19"], "mold": ["mold", "--no-fork"]}
rows = []
for value in ["none", "zlib", "zstd"]:
    for threads in [[], ["--threads=1"]]:
        for name, cmd in linkers.items():
            label = f"{name} {value}{' t1' if threads else ''}"
            rows.append((label, cmd + threads + [f"--compress-debug-sections={value}"]))


def debug_bytes(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    total = 0
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1].startswith(".debug_") and f[2] == "PROGBITS" and f[3] == "0000000000000000":
            total += int(f[5], 16)
    return total


times = {label: [] for label, _ in rows}
for r in range(runs):
    for label, cmd in rows:
        out = "out.compress." + label.replace(" ", "-")
        t = time.perf_counter()
        p = subprocess.Popen(cmd + ["-o", out, "@response.compress.txt"], stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if status != 0:
            sys.exit(f"{label}: link failed")
        times[label].append((wall, ru.ru_utime + ru.ru_stime))
print(f"{workload}, {runs} interleaved runs, medians: wall s, cpu s, output bytes, .debug_* bytes")
for label, _ in rows:
    out = "out.compress." + label.replace(" ", "-")
    w = statistics.median(x[0] for x in times[label])
    c = statistics.median(x[1] for x in times[label])
    print(f"{label:18} {w:7.3f} {c:7.3f} {os.path.getsize(out):10d} {debug_bytes(out):10d}")
    os.remove(out)
os.remove("response.compress.txt")
