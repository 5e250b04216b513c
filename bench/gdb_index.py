#!/usr/bin/env python3
"""Times --gdb-index on a corpus workload: rivet, ld.lld-19 and mold, each with and without the option, in
interleaved runs (each round runs every row once); medians of wall and CPU time (user + system), the extra time of
the index over the plain link, and the index's size and contents (units, ranges, names, per readelf).

Usage: bench/gdb_index.py RIVET [WORKLOAD [RUNS]]   (default rg-debug, 7 runs)
"""
import os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
rivet = os.path.abspath(sys.argv[1])
workload = sys.argv[2] if len(sys.argv) > 2 else "rg-debug"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
corpus = os.path.join(os.environ.get("BENCH_CACHE", os.path.expanduser("~/.cache/linker-bench")), "corpus", workload)
os.chdir(corpus)
rsp = subprocess.run([sys.executable, os.path.join(HERE, "strip_response.py"), "response.txt"],
                     check=True, capture_output=True, text=True).stdout
open("response.gdbindex.txt", "w").write(rsp)

linkers = {"rivet": [rivet, "--no-fork"], "lld": ["ld.lld-19"], "mold": ["mold", "--no-fork"]}
rows = []
for name, cmd in linkers.items():
    rows.append((f"{name} plain", cmd))
    rows.append((f"{name} gdb-index", cmd + ["--gdb-index"]))


def index_facts(path):
    """Size of .gdb_index, and the numbers of units, ranges and names readelf lists."""
    sec = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    size = 0
    for line in sec.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1] == ".gdb_index":
            size = int(f[5], 16)
    dump = subprocess.run(["readelf", "--debug-dump=gdb_index", path], capture_output=True, text=True).stdout
    part, counts = None, {"CU table:": 0, "Address table:": 0, "Symbol table:": 0}
    for line in dump.splitlines():
        t = line.strip()
        if t in counts or t == "TU table:":
            part = t
        elif t and part in counts and (part != "Symbol table:" or t.startswith("[")):
            counts[part] += 1
    return size, counts["CU table:"], counts["Address table:"], counts["Symbol table:"]


times = {label: [] for label, _ in rows}
for r in range(runs):
    for label, cmd in rows:
        out = "out.gdbindex." + label.replace(" ", "-")
        t = time.perf_counter()
        p = subprocess.Popen(cmd + ["-o", out, "@response.gdbindex.txt"], stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if status != 0:
            sys.exit(f"{label}: link failed")
        times[label].append((wall, ru.ru_utime + ru.ru_stime))
med = {label: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for label, v in times.items()}
print(f"{workload}, {runs} interleaved runs, medians: wall s, cpu s; extra of --gdb-index; .gdb_index bytes, units, ranges, names")
for name in linkers:
    pw, pc = med[f"{name} plain"]
    gw, gc = med[f"{name} gdb-index"]
    size, units, areas, names = index_facts("out.gdbindex." + f"{name}-gdb-index")
    print(f"{name:6} plain {pw:7.3f} {pc:7.3f}  gdb-index {gw:7.3f} {gc:7.3f}  extra {gw - pw:+7.3f} {gc - pc:+7.3f}"
          f"  {size:9d} B {units:5d} units {areas:6d} ranges {names:7d} names")
for label, _ in rows:
    os.remove("out.gdbindex." + label.replace(" ", "-"))
os.remove("response.gdbindex.txt")
