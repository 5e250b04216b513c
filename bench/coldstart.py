#!/usr/bin/env python3
"""Cold-start measurement of programs that differ only in how they were linked (bench/coldstart.sh drives it).

  coldstart.py run [-n RUNS] [--cold-libs] [--cwd DIR] [--json FILE] LABEL=PROGRAM... -- ARG...
      Runs every PROGRAM with the same ARGs, RUNS rounds, interleaved (the order rotates each round), each run from
      a cold page cache: the program file is written back and dropped (fsync, posix_fadvise DONTNEED; with
      --cold-libs its shared libraries too, as far as no other process maps them) and checked with mincore().
      Prints per program the medians of: time to main() and to exit, major and minor page faults, bytes the
      process read from storage (/proc/PID/io read_bytes, read before the child is reaped) until main() and in all,
      and the machine-wide pgpgin delta (noisy on a shared machine: a cross-check of read_bytes).
      Time to main comes from bench/coldstart_main.c, an LD_PRELOAD library that wraps main() (the program is not
      relinked); both times count from just before the runner forks the child that executes the program.

  coldstart.py where [--cwd DIR] PROGRAM -- ARG...
      One cold run under `perf record -e major-faults -c 1 -d` (every fault): which sections of the program (by
      file offset) and which other files the major page faults fell in, before main() and after. Each major fault
      reads a read-ahead window around it, so this shows what the start-up touches that a layout could bring
      together.

  coldstart.py order [--cwd DIR] [-o FILE] PROGRAM -- ARG...
      Runs PROGRAM once under valgrind's exp-bbv tool, which numbers basic blocks in the order they first run,
      and prints the program's functions in that first-execution order, one symbol name a line: an ordering file
      for --symbol-ordering-file (startup functions first, then the rest in the order the run needed them).
"""
import argparse
import bisect
import ctypes
import json
import mmap
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def build_preload(tmp):
    so = os.path.join(tmp, "coldstart_main.so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, os.path.join(HERE, "coldstart_main.c"), "-ldl"],
                   check=True)
    return so


def resident_pages(path):
    """Pages of the file in the page cache (mincore over a shared read-only mapping)."""
    size = os.path.getsize(path)
    if size == 0:
        return 0
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vec = ctypes.create_string_buffer(pages)
    fd = os.open(path, os.O_RDONLY)
    try:
        p = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if p is None or p == ctypes.c_void_p(-1).value:
            raise OSError(ctypes.get_errno(), "mmap " + path)
        try:
            if libc.mincore(p, size, vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore " + path)
        finally:
            libc.munmap(p, size)
    finally:
        os.close(fd)
    return sum(b & 1 for b in vec.raw)


def evict(path):
    """Writes the file back and drops its clean pages from the page cache; returns the pages still resident
    (pages some process maps stay)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return resident_pages(path)


def shared_libs(program):
    out = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    return sorted({m.group(1) for m in re.finditer(r"(/\S+) \(0x", out) if os.path.exists(m.group(1))})


def pgpgin_bytes():
    with open("/proc/vmstat") as f:
        for line in f:
            if line.startswith("pgpgin "):
                return int(line.split()[1]) * 1024  # the kernel reports KiB
    return 0


def proc_io(pid):
    try:
        with open(f"/proc/{pid}/io") as f:
            return {k: int(v) for k, v in (line.split(": ") for line in f)}
    except OSError:
        return {}


def run_once(program, args, cwd, preload, mainfile):
    """One cold run of PROGRAM; returns its figures, or raises when it fails."""
    if os.path.exists(mainfile):
        os.unlink(mainfile)
    env = dict(os.environ, LD_PRELOAD=preload, COLDSTART_OUT=mainfile)
    sys_before = pgpgin_bytes()
    t0 = time.monotonic_ns()
    env["COLDSTART_T0"] = str(t0)
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execve(program, [program] + args, env)
        finally:
            os._exit(127)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    t_exit = time.monotonic_ns()
    io = proc_io(pid)  # still readable: the child is a zombie until wait4 reaps it
    _, status, ru = os.wait4(pid, 0)
    sys_read = pgpgin_bytes() - sys_before
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise RuntimeError(f"{program} {' '.join(args)}: exit status {status:#x}")
    try:
        with open(mainfile) as f:
            at_main = dict(kv.split("=") for kv in f.read().split())
    except OSError:
        raise RuntimeError(f"{program}: main() was never reached (is it dynamically linked against glibc?)")
    main_ns = int(at_main["main_ns"])
    return {
        "main_ms": main_ns / 1e6,
        "exit_ms": (t_exit - t0) / 1e6,
        "majflt_main": int(at_main["majflt"]),
        "minflt_main": int(at_main["minflt"]),
        "read_main": int(at_main["read_bytes"]),
        "majflt": ru.ru_majflt,
        "minflt": ru.ru_minflt,
        "read": io.get("read_bytes", -1),
        "sys_read": sys_read,
    }


COLUMNS = [
    ("main ms", lambda m: f"{m['main_ms']:.1f}"),
    ("exit ms", lambda m: f"{m['exit_ms']:.1f}"),
    ("major main/all", lambda m: f"{m['majflt_main']:.0f} / {m['majflt']:.0f}"),
    ("minor main/all", lambda m: f"{m['minflt_main']:.0f} / {m['minflt']:.0f}"),
    ("read MiB main/all", lambda m: f"{m['read_main'] / 2**20:.2f} / {m['read'] / 2**20:.2f}"),
    ("pgpgin MiB", lambda m: f"{m['sys_read'] / 2**20:.1f}"),
]


def report(labels, medians, runs, residue):
    print(f"medians of {runs} cold runs each (interleaved); 'main' = until main() is entered")
    head = ["program", "file MiB"] + [c[0] for c in COLUMNS]
    rows = [head]
    for label, path in labels:
        m = medians[label]
        rows.append([label, f"{os.path.getsize(path) / 2**20:.1f}"] + [f(m) for _, f in COLUMNS])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows[1:]:
        print("| " + " | ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]) + " |")
    if residue:
        print(f"note: pages still resident after eviction (mapped by other processes): {residue}")


def cmd_run(opts):
    labels = []
    for spec in opts.programs:
        label, _, path = spec.partition("=")
        if not path:
            sys.exit(f"coldstart: expected LABEL=PROGRAM, got {spec!r}")
        labels.append((label, os.path.abspath(path)))
    cwd = os.path.abspath(opts.cwd)
    with tempfile.TemporaryDirectory(prefix="coldstart.") as tmp:
        preload = build_preload(tmp)
        mainfile = os.path.join(tmp, "main.txt")
        libs = {path: shared_libs(path) if opts.cold_libs else [] for _, path in labels}
        samples = {label: [] for label, _ in labels}
        residue = {}
        for _, path in labels:  # warm everything else (inputs, libraries, the runner itself)
            run_once(path, opts.args, cwd, preload, mainfile)
        for rnd in range(opts.runs):
            k = rnd % len(labels)
            for label, path in labels[k:] + labels[:k]:
                left = evict(path)
                if left:
                    sys.exit(f"coldstart: {path} still has {left} of its pages in the page cache after "
                             "fsync and POSIX_FADV_DONTNEED (a tmpfs, or mapped by a running process?)")
                for lib in libs[path]:
                    n = evict(lib)
                    if n:
                        residue[os.path.basename(lib)] = n
                try:
                    samples[label].append(run_once(path, opts.args, cwd, preload, mainfile))
                except RuntimeError as e:
                    sys.exit(f"coldstart: {label}: {e}")
        medians = {label: {k: statistics.median(s[k] for s in runs) for k in runs[0]} for label, runs in
                   samples.items()}
    report(labels, medians, opts.runs, residue)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"runs": opts.runs, "args": opts.args, "medians": medians, "samples": samples}, f, indent=1)


def file_sections(program):
    """(file offset, size, name) of the program's loaded sections that occupy the file, by offset."""
    out = subprocess.run(["readelf", "-SW", program], capture_output=True, text=True, check=True).stdout
    secs = []
    row = r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([A-Za-z]*)\s"
    for m in re.finditer(row, out, re.M):
        name, kind, off, size = m.group(1), m.group(2), int(m.group(3), 16), int(m.group(4), 16)
        if kind != "NOBITS" and size and "A" in m.group(5):
            secs.append((off, size, name))
    return sorted(secs)


def cmd_where(opts):
    program = os.path.abspath(opts.program)
    if not shutil.which("perf"):
        sys.exit("coldstart: where needs perf")
    secs = file_sections(program)
    with tempfile.TemporaryDirectory(prefix="coldstart.") as tmp:
        preload = build_preload(tmp)
        mainfile, data = os.path.join(tmp, "main.txt"), os.path.join(tmp, "perf.data")
        run_once(program, opts.args, opts.cwd, preload, mainfile)  # warm the rest
        evict(program)
        # The preload goes to the program only (through env), not to perf.
        subprocess.run(["perf", "record", "-q", "-k", "mono", "-e", "major-faults", "-c", "1", "-d", "-o", data, "env",
                        f"LD_PRELOAD={preload}", f"COLDSTART_OUT={mainfile}", f"COLDSTART_T0={time.monotonic_ns()}",
                        program] + opts.args, cwd=opts.cwd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(mainfile) as f:
            main_s = int(dict(kv.split("=") for kv in f.read().split())["mono_ns"]) / 1e9
        trace = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events", "-F", "time,addr"],
                               capture_output=True, text=True, check=True).stdout
    maps, counts = [], {}
    for line in trace.splitlines():
        m = re.search(r"PERF_RECORD_MMAP2? [^\[]*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*?\]: \S+ (\S+)$",
                      line)
        if m:
            maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4)))
            continue
        parts = line.replace(":", " ").split()
        if len(parts) != 2:
            continue
        t, addr = float(parts[0]), int(parts[1], 16)
        where = "(anonymous or unknown)"
        for start, length, pgoff, path in reversed(maps):
            if start <= addr < start + length:
                where = os.path.basename(path)
                if path == program:
                    off = pgoff + addr - start
                    i = bisect.bisect_right([s[0] for s in secs], off) - 1
                    where = secs[i][2] if i >= 0 and off < secs[i][0] + secs[i][1] else "(headers, padding or .bss)"
                break
        c = counts.setdefault(where, [0, 0])
        c[0 if t < main_s else 1] += 1
    print(f"major faults of one cold run of {os.path.basename(program)}, by section (file offset) or file:")
    print("| where | before main | after |")
    print("|---|---:|---:|")
    for where, (before, after) in sorted(counts.items(), key=lambda kv: -sum(kv[1])):
        print(f"| {where} | {before} | {after} |")
    print(f"| total | {sum(c[0] for c in counts.values())} | {sum(c[1] for c in counts.values())} |")


def function_symbols(program):
    """(address, size, name) of the program's defined functions, by address."""
    out = subprocess.run(["nm", "-S", "--defined-only", program], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwWiI":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms.sort()
    return syms


def cmd_order(opts):
    program = os.path.abspath(opts.program)
    if not shutil.which("valgrind"):
        sys.exit("coldstart: order needs valgrind (its exp-bbv tool)")
    with tempfile.TemporaryDirectory(prefix="coldstart.") as tmp:
        pc = os.path.join(tmp, "pc.out")
        subprocess.run(["valgrind", "--tool=exp-bbv", "--demangle=no", f"--pc-out-file={pc}",
                        "--bb-out-file=/dev/null", program] + opts.args, cwd=opts.cwd, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        blocks = []  # (first-execution id, runtime address, function name valgrind gives)
        with open(pc) as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 3)
                if len(parts) == 4 and parts[0] == "F":
                    blocks.append((int(parts[1]), int(parts[2], 16), parts[3]))
    syms = function_symbols(program)
    by_name = {}
    for addr, _, name in syms:
        by_name.setdefault(name, addr)
    # valgrind maps a PIE at its own base: the load bias is the most common (runtime - link) address of the
    # blocks whose function valgrind named.
    lowest = {}
    for _, addr, name in blocks:
        if name in by_name:
            lowest[name] = min(addr, lowest.get(name, addr))
    biases = [addr - by_name[name] for name, addr in lowest.items()]
    if not biases:
        sys.exit("coldstart: no executed block maps to a symbol of the program (stripped?)")
    bias = statistics.mode(biases)
    starts = [s[0] for s in syms]
    seen, order = set(), []
    for _, addr, _ in sorted(blocks):
        a = addr - bias
        i = bisect.bisect_right(starts, a) - 1
        if i < 0:
            continue
        start, size, name = syms[i]
        if a >= start + max(size, 1) or start in seen:
            continue
        seen.add(start)
        order.append(name)
    out = open(opts.output, "w") if opts.output else sys.stdout
    out.write("".join(n + "\n" for n in order))
    if opts.output:
        out.close()
    print(f"coldstart: {len(order)} functions in first-execution order ({len(blocks)} blocks)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("-n", "--runs", type=int, default=11)
    r.add_argument("--cold-libs", action="store_true")
    r.add_argument("--cwd", default=".")
    r.add_argument("--json")
    r.add_argument("programs", nargs="+")
    w = sub.add_parser("where")
    w.add_argument("--cwd", default=".")
    w.add_argument("program")
    o = sub.add_parser("order")
    o.add_argument("--cwd", default=".")
    o.add_argument("-o", "--output")
    o.add_argument("program")
    argv = sys.argv[1:]
    args = []
    if "--" in argv:
        i = argv.index("--")
        argv, args = argv[:i], argv[i + 1:]
    opts = ap.parse_args(argv)
    opts.args = args
    {"run": cmd_run, "where": cmd_where, "order": cmd_order}[opts.cmd](opts)


if __name__ == "__main__":
    main()
