#!/usr/bin/env python3
"""Which of rivet's phases scale with threads and which stay serial.

    bench/phases.py [-n ROUNDS] [-t THREADS] [--rivet PATH] WORKLOAD

Links WORKLOAD (a corpus directory built by ../shared/bench/corpus.sh) with `--print-timing --no-fork`, alternating
`--threads=1` and `--threads=THREADS` (default: rivet's default thread count, that is, every CPU) for ROUNDS rounds
after one warm-up round, and prints per phase the median wall and CPU times of both, the speed-up, and the serial
time: the wall time a phase would keep with unlimited threads if its work split into a part that runs on one
thread and a part that runs on all of them, estimated as `(T * wall_T - cpu_T) / (T - 1)` from the run on T
threads (for T = 2: twice the wall time less the CPU time). Load imbalance and time waiting on locks count as
serial; CPU time spent spinning by idle workers hides some.

Each variant writes its own output file in /tmp, reused from round to round (an in-place link, rivet's default).
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys

LINE = re.compile(r"rivet:\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s(\s*)(\S.*)$")


def response_file(corpus):
    """The workload's response file without `--chroot DIR` (rivet reads the paths relative to the directory)."""
    path = os.path.join(corpus, "response.rivet.txt")
    if not os.path.exists(path):
        args = shlex.split(open(os.path.join(corpus, "response.txt")).read())
        kept, i = [], 0
        while i < len(args):
            if args[i] == "--chroot":
                i += 2
                continue
            kept.append(args[i])
            i += 1
        with open(path, "w") as f:
            f.write("\n".join(shlex.quote(a) for a in kept) + "\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("-n", "--rounds", type=int, default=7)
    ap.add_argument("-t", "--threads", type=int, default=0, help="0: rivet's default")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--rivet", default=os.path.join(here, "..", "target", "release", "rivet"))
    a = ap.parse_args()
    corpus = os.path.expanduser(f"~/.cache/linker-bench/corpus/{a.workload}")
    resp = response_file(corpus)
    threads = a.threads or os.cpu_count()
    variants = [["--threads=1"], [f"--threads={a.threads}"] if a.threads else []]
    samples = [{}, {}]
    order = []
    for r in range(a.rounds + 1):
        for v in (0, 1) if r % 2 == 0 else (1, 0):
            cmd = [a.rivet, "@" + resp, "-o", f"/tmp/rivet-phases.{a.workload}.{v}", "--print-timing",
                   "--no-fork"] + variants[v]
            p = subprocess.run(cmd, cwd=corpus, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode:
                sys.exit(f"link failed: {' '.join(cmd)}\n{p.stderr}")
            if r == 0:
                continue
            seen = {}
            for line in p.stderr.splitlines():
                m = LINE.match(line)
                if not m:
                    continue
                name = m.group(3) + m.group(4)
                seen[name] = seen.get(name, 0) + 1
                key = (name, seen[name])
                if key not in order:
                    order.append(key)
                samples[v].setdefault(key, []).append((float(m.group(1)), float(m.group(2))))
    print(f"{a.workload}: medians of {a.rounds} --no-fork links, ms; T = {threads}")
    print(f"{'phase':46s} {'wall 1':>8s} {'wall T':>8s} {'cpu T':>8s} {'speedup':>8s} {'serial':>8s}")
    for key in order:
        if not all(key in s for s in samples):
            continue
        w1 = statistics.median(x[0] for x in samples[0][key])
        wt = statistics.median(x[0] for x in samples[1][key])
        ct = statistics.median(x[1] for x in samples[1][key])
        serial = (threads * wt - ct) / (threads - 1) if threads > 1 else wt
        print(f"{key[0][:46]:46s} {w1:8.2f} {wt:8.2f} {ct:8.2f} {w1 / max(wt, 1e-3):8.2f} {max(serial, 0):8.2f}")


if __name__ == "__main__":
    main()
