#!/usr/bin/env python3
"""How rivet, wild and mold scale with threads on the corpus workloads.

    bench/scaling.py run [-w W,W] [-t 1,2,4,8,16] [-n ROUNDS] [--timing 1,16] [--from DIR] [--out FILE]
    bench/scaling.py pack DIR [-w W,W]
    bench/scaling.py ab [-w W,W] [-t 2,8,16] [-n ROUNDS] [--from DIR] [--out FILE] [VAR=VALUE,...@]RIVET...

`run` links each workload (a corpus directory built by ../shared/bench/corpus.sh) with rivet, wild and mold at
each thread count (`--threads=N --no-fork` for all three, so each link's whole work is in the measured process;
wild also gets `--no-gc-sections` where the workload does not ask for `--gc-sections`), in ROUNDS interleaved
rounds after one warm-up round, and prints per linker and thread count the median wall time, its speed-up over
the same linker's `--threads=1`, the median CPU time (user + sys) and the peak resident set. It checks that
rivet's outputs are the same bytes at every thread count, and ends with rivet's `--print-timing` phase report at
the `--timing` thread counts (default: the first and the last; of three links, the median one), for seeing which
phases stop scaling. A thread count of 0 stands for each linker's default (no `--threads`). A linker that fails
(one that cannot run on that machine, say) is left out of the workload, with its error in the report.

Each linker and thread count writes its own output file in the workload's directory, reused from round to
round (an in-place link, rivet's and mold's default).

`pack` gathers what `run` needs onto a machine that has neither the corpus nor the network: the three linkers
(mold with the shared libraries it needs beyond glibc's), and each workload as an xz-compressed tar of its
inputs. `run --from DIR` unpacks them under /tmp and runs from there. A 16-core machine lent for one command
(the device tool) runs it as

    bench/scaling.py pack .scaling -w c-gc,rg-release,rg-debug     # here; .scaling is git-ignored, ~55 MB
    python3 bench/scaling.py run --from .scaling --out $OUT/scaling.md   # there, carrying .scaling

`ab` compares rivet builds (paths, `.xz` ones unpacked first, each optionally with environment variables) phase
by phase: per workload and thread count, the median process wall time and the median of every `--print-timing`
phase, interleaved, and whether the builds' outputs are the same bytes. Carry the builds in the pack directory
(xz-compressed) to compare them on a lent machine within one command.

Linkers are looked up as: `--rivet` (default target/release/rivet), `--wild` (default the peers' bin folder of
../shared/bench/peers.sh, else PATH), `--mold` (default PATH).
"""
import argparse
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.expanduser("~/.cache/linker-bench/corpus")
PEERS_BIN = os.path.expanduser("~/.cache/linker-bench/peers/bin")
LINKERS = ("rivet", "wild", "mold")
# Libraries every x86-64 glibc system has; mold's others travel with it.
SYSTEM_LIBS = ("linux-vdso", "libc.so", "libm.so", "libgcc_s.so", "ld-linux", "libpthread", "libdl.so", "librt.so")


def find(name, given):
    if given:
        return os.path.abspath(given)
    if name == "rivet":
        return os.path.abspath(os.path.join(HERE, "..", "target", "release", "rivet"))
    if name == "wild" and os.path.exists(os.path.join(PEERS_BIN, "wild")):
        return os.path.join(PEERS_BIN, "wild")
    path = shutil.which(name)
    if not path:
        sys.exit(f"scaling.py: {name} not found (give --{name})")
    return path


def link_args(workload_dir):
    """The workload's link arguments without `--chroot DIR` and `-o FILE` (paths are relative to the directory)."""
    args = shlex.split(open(os.path.join(workload_dir, "response.txt")).read())
    kept, i = [], 0
    while i < len(args):
        if args[i] in ("--chroot", "-o"):
            i += 2
            continue
        kept.append(args[i])
        i += 1
    path = os.path.join(workload_dir, "response.scaling.txt")
    with open(path, "w") as f:
        f.write("\n".join(shlex.quote(a) for a in kept) + "\n")
    return path, "--gc-sections" in kept


def pack(a):
    # The linkers (and mold's libraries) as bin/ and lib/ of one compressed tar: 40 MB as files, 7 MB packed.
    os.makedirs(a.dir, exist_ok=True)
    with tarfile.open(os.path.join(a.dir, "linkers.tar.xz"), "w:xz", preset=9) as tar:
        for name in LINKERS:
            src = find(name, getattr(a, name))
            tar.add(src, arcname=f"bin/{name}")
            if name == "mold":
                out = subprocess.run(["ldd", src], capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    parts = line.split()
                    if "=>" in parts and not any(s in parts[0] for s in SYSTEM_LIBS):
                        lib = os.path.realpath(parts[parts.index("=>") + 1])
                        tar.add(lib, arcname=f"lib/{parts[0]}")
    for w in a.workloads.split(","):
        src = os.path.join(CORPUS, w)
        dst = os.path.join(a.dir, f"{w}.tar.xz")

        def inputs_only(info):
            base = os.path.basename(info.name)
            # Only the inputs and the original response file: no outputs, no per-linker response files.
            if base.startswith("out.") or (base.startswith("response.") and base != "response.txt"):
                return None
            return info

        with tarfile.open(dst, "w:xz", preset=9) as tar:
            tar.add(src, arcname=w, filter=inputs_only)
        print(f"{dst}: {os.path.getsize(dst) / 1e6:.1f} MB")
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(a.dir) for f in fs)
    print(f"{a.dir}: {total / 1e6:.1f} MB in all")


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    # The file system the outputs go to: tmpfs and a disk differ in how a fresh output's pages are allocated.
    fs, best = "?", ""
    try:
        for line in open("/proc/mounts"):
            _, mnt, kind = line.split()[:3]
            if "/tmp/".startswith(mnt.rstrip("/") + "/") and len(mnt) > len(best):
                fs, best = kind, mnt
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model}), Linux {platform.release()}, /tmp on {fs}"


def run_one(cmd, cwd, env):
    """(wall ms, user + sys ms, peak RSS MiB) of one link, or the error text of a failed one."""
    t = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as e:
        return f"{shlex.join(cmd)}: {e}"
    # stderr is read after the exit: a link's diagnostics are far below a pipe's capacity.
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if status != 0:
        return f"{shlex.join(cmd)}: exit status {status}\n{err.strip()}"
    return wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_maxrss / 1024


def unpack(from_dir, names):
    """Unpacks `names` (workloads, or "linkers") from a `pack` directory under /tmp; returns that root."""
    src = os.path.abspath(from_dir)
    root = "/tmp/rivet-scaling"
    os.makedirs(root, exist_ok=True)
    for w in names:
        if not os.path.exists(os.path.join(root, w)):
            # In a child process: the peak resident set that wait4 reports for a link includes the memory of the
            # Python process it was forked from, which unpacking in-process would grow to ~55 MiB.
            dst = os.path.join(root, "linkers") if w == "linkers" else root
            subprocess.run([sys.executable, "-c", "import sys, tarfile; "
                            "tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='tar')",
                            os.path.join(src, f"{w}.tar.xz"), dst], check=True)
    return root


def run(a):
    bins, envs = {}, {n: dict(os.environ) for n in LINKERS}
    root = CORPUS
    if a.from_dir:
        # The linkers afresh every time (a few seconds); a workload's inputs once.
        shutil.rmtree("/tmp/rivet-scaling/linkers", ignore_errors=True)
        root = unpack(a.from_dir, ["linkers"] + a.workloads.split(","))
        bins = {n: os.path.join(root, "linkers", "bin", n) for n in LINKERS}
        envs["mold"]["LD_LIBRARY_PATH"] = os.path.join(root, "linkers", "lib")
    else:
        bins = {n: find(n, getattr(a, n)) for n in LINKERS}
    # 0 stands for each linker's default thread count (no --threads flag).
    threads = [int(t) for t in a.threads.split(",")]
    timing = [int(t) for t in a.timing.split(",")] if a.timing else sorted({threads[0], threads[-1]})
    label = {t: f"t{t}" if t else "default" for t in threads}
    if a.out and os.path.exists(a.out):
        os.remove(a.out)
    report = [f"# Thread scaling: rivet, wild, mold\n", f"Machine: {machine()}. Medians of {a.rounds} interleaved "
              f"rounds after a warm-up, `--no-fork`, in-place outputs.\n"]
    for n in LINKERS:
        try:
            v = subprocess.run([bins[n], "--version"], capture_output=True, text=True, env=envs[n]).stdout.strip()
        except OSError as e:
            v = f"cannot run: {e}"
        report.append(f"- {n}: `{v.splitlines()[0] if v else '?'}`")
    report.append("")
    for w in a.workloads.split(","):
        wdir = os.path.join(root, w)
        resp, gc = link_args(wdir)
        jobs = []
        for t in threads:
            for n in LINKERS:
                extra = ["--no-gc-sections"] if n == "wild" and not gc else []
                tflag = [f"--threads={t}"] if t else []
                cmd = [bins[n], "@" + resp, "-o", f"out.{n}.t{t}", "--no-fork"] + tflag + extra
                jobs.append(((n, t), cmd))
        samples = {key: [] for key, _ in jobs}
        # A linker that fails (one that cannot run on this machine, say) is left out of the rest of the workload
        # and the report says why, so that one command still brings back the others' figures.
        failed = {}
        for r in range(a.rounds + 1):
            k = r % len(jobs)
            for (n, t), cmd in jobs[k:] + jobs[:k]:
                if n in failed:
                    continue
                s = run_one(cmd, wdir, envs[n])
                if isinstance(s, str):
                    failed[n] = s
                elif r:
                    samples[(n, t)].append(s)
        linkers = [n for n in LINKERS if n not in failed]
        med = {key: [statistics.median(x[i] for x in v) for i in range(3)] for key, v in samples.items() if v}
        report.append(f"## {w}\n")
        for n, why in failed.items():
            report.append(f"{n} failed and is left out:\n\n```\n{why[-2000:]}\n```\n")
        report.append("Wall ms (speed-up over the same linker's first thread count):\n")
        report.append("| linker | " + " | ".join(label[t] for t in threads) + " |")
        report.append("|---" * (len(threads) + 1) + "|")
        for n in linkers:
            base = med[(n, threads[0])][0]
            cells = [f"{med[(n, t)][0]:.1f} ({base / med[(n, t)][0]:.2f}×)" for t in threads]
            report.append(f"| {n} | " + " | ".join(cells) + " |")
        report.append("\nCPU ms (user + sys) / peak RSS MiB:\n")
        report.append("| linker | " + " | ".join(label[t] for t in threads) + " |")
        report.append("|---" * (len(threads) + 1) + "|")
        for n in linkers:
            cells = [f"{med[(n, t)][1]:.0f} / {med[(n, t)][2]:.0f}" for t in threads]
            report.append(f"| {n} | " + " | ".join(cells) + " |")
        if "rivet" in linkers:
            first = open(os.path.join(wdir, f"out.rivet.t{threads[0]}"), "rb").read()
            same = [t for t in threads if open(os.path.join(wdir, f"out.rivet.t{t}"), "rb").read() == first]
            verdict = "yes" if len(same) == len(threads) else f"NO (same as t{threads[0]} only at {same})"
            report.append(f"\nrivet's outputs byte-identical at every thread count: {verdict}\n")
            for t in timing:
                # One report is one sample: of three, the one whose whole link took the median time.
                cmd = [bins["rivet"], "@" + resp, "-o", f"out.rivet.timing", "--no-fork", f"--threads={t}",
                       "--print-timing"]
                runs = []
                for _ in range(3):
                    p = subprocess.run(cmd, cwd=wdir, env=envs["rivet"], capture_output=True, text=True)
                    link = [l.split() for l in p.stderr.splitlines() if l.rstrip().endswith(" link")]
                    runs.append((float(link[0][1]) if link else 0.0, p.stderr.rstrip()))
                runs.sort(key=lambda r: r[0])
                report.append(f"rivet --threads={t} --print-timing (median of 3 by link time):\n\n```\n{runs[1][1]}\n```\n")
        emit(report, a.out)
        report = []
    return 0


def ab(a):
    """Per-phase medians of rivet builds, interleaved: `--print-timing` of each build at each thread count."""
    root = unpack(a.from_dir, a.workloads.split(",")) if a.from_dir else CORPUS
    builds, envs = [], []
    for spec in a.builds:
        env = dict(os.environ)
        if "@" in spec:
            assigns, spec = spec.split("@", 1)
            env.update(kv.split("=", 1) for kv in assigns.split(","))
        if spec.endswith(".xz"):
            # A build carried compressed (a rivet binary is ~1 MB with xz, 4 MB without).
            import lzma
            path = os.path.join("/tmp", os.path.basename(spec)[:-3])
            with lzma.open(spec) as f, open(path, "wb") as out:
                out.write(f.read())
            os.chmod(path, 0o755)
            spec = path
        builds.append(os.path.abspath(spec))
        envs.append(env)
    if a.out and os.path.exists(a.out):
        os.remove(a.out)
    med = statistics.median
    emit([f"# rivet builds, phase by phase\n", f"Machine: {machine()}. Medians of {a.rounds} interleaved rounds after a "
          f"warm-up, `--no-fork`, in-place outputs.\n"] + [f"- v{i}: `{b}`" for i, b in enumerate(a.builds)], a.out)
    for w in a.workloads.split(","):
        wdir = os.path.join(root, w)
        resp, _ = link_args(wdir)
        for t in [int(t) for t in a.threads.split(",")]:
            walls = [[] for _ in builds]
            phases = [{} for _ in builds]
            order = []
            for r in range(a.rounds + 1):
                k = r % len(builds)
                for i in list(range(k, len(builds))) + list(range(k)):
                    cmd = [builds[i], "@" + resp, "-o", f"out.ab{i}.t{t}", "--no-fork", f"--threads={t}",
                           "--print-timing"]
                    t0 = time.perf_counter()
                    p = subprocess.run(cmd, cwd=wdir, env=envs[i], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True)
                    wall = (time.perf_counter() - t0) * 1e3
                    if p.returncode:
                        emit([f"{shlex.join(cmd)} failed:\n```\n{p.stderr[-2000:]}\n```"], a.out)
                        return 1
                    if not r:
                        continue
                    walls[i].append(wall)
                    seen = {}
                    for line in p.stderr.splitlines():
                        f = line.split()
                        if len(f) < 6 or f[0] != "rivet:" or not f[1][0].isdigit():
                            continue
                        # The phase name keeps its indentation (the report's nesting); a repeated name counts.
                        name = line[line.index(f[4]) + len(f[4]):].rstrip()[2:]
                        seen[name] = seen.get(name, 0) + 1
                        key = (name, seen[name])
                        if key not in order:
                            order.append(key)
                        phases[i].setdefault(key, []).append(float(f[1]))
            same = len({open(os.path.join(wdir, f"out.ab{i}.t{t}"), "rb").read() for i in range(len(builds))}) == 1
            rows = [f"\n## {w}, --threads={t} (outputs byte-identical across builds: {'yes' if same else 'NO'})\n",
                    "| ms | " + " | ".join(f"v{i}" for i in range(len(builds))) + " |",
                    "|---" * (len(builds) + 1) + "|",
                    "| process wall | " + " | ".join(f"{med(x):.2f}" for x in walls) + " |"]
            for key in order:
                name = key[0].lstrip()
                depth = (len(key[0]) - len(name)) // 2
                cells = [f"{med(ph[key]):.2f}" if key in ph else "" for ph in phases]
                rows.append(f"| {'. ' * depth}{name} | " + " | ".join(cells) + " |")
            emit(rows, a.out)
    return 0


def emit(lines, out):
    """Prints `lines` and appends them to `out`, workload by workload: a run cut short keeps what it measured."""
    text = "\n".join(lines) + "\n"
    print(text, flush=True)
    if out:
        with open(out, "a") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "pack", "ab"):
        p = sub.add_parser(name)
        p.add_argument("-w", "--workloads", default="c-gc,rg-release,rg-debug")
        if name != "ab":
            for n in LINKERS:
                p.add_argument(f"--{n}")
        if name == "pack":
            p.add_argument("dir")
            continue
        p.add_argument("-t", "--threads", default="1,2,4,8,16" if name == "run" else "2,8,16")
        p.add_argument("-n", "--rounds", type=int, default=7 if name == "run" else 15)
        p.add_argument("--from", dest="from_dir")
        p.add_argument("--out")
        if name == "run":
            p.add_argument("--timing", help="thread counts for rivet's --print-timing (default: first and last)")
        else:
            p.add_argument("builds", nargs="+", help="[VAR=VALUE,...@]RIVET (a path; .xz is unpacked first)")
    a = ap.parse_args()
    return {"pack": pack, "run": run, "ab": ab}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
