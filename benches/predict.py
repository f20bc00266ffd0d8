#!/usr/bin/env python3
"""How long the predicting commands take, whole process, in one run.

Each case runs several rounds, alternating with the others so that machine
noise hits all of them alike, and prints min/median/max wall seconds and
peak RSS. The targets (issue 21) are printed beside the medians:

- `plan --disks 200x8TB` under 0.1 s, and `plan` at 24 and 10,000 disks
  (10,000: every one of its 59 layouts simulated with all 10,000 disks;
  bounds of 2 s and 256 MiB, against 0.4 s and 21 MiB measured when they
  were set, catch a plan that stops being bounded);
- `plan`'s intervals: on by default for named layouts (the reference
  question's three), and asked for on all 62 layouts of 200 disks;
- the reference user's 12-cell matrix with intervals under 10 s (and
  without, for the cost of the intervals).

    benches/predict.py               # 5 rounds
    benches/predict.py --rounds 3 --cases plan-200,matrix-intervals

Needs a release build (made here).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.path.join(ROOT, "target", "release", "tankbench")
MATRIX = os.path.join(ROOT, "examples", "systems", "reference-matrix.toml")

# name, arguments, target median seconds, target peak RSS MiB (None: no
# target, reported only)
REFERENCE = ["--disks", "24x8TB", "--log", "10GB", "--link", "2x10G"]
CASES = [
    ("plan-24", ["plan"] + REFERENCE, None, None),
    ("plan-24-intervals", ["plan"] + REFERENCE + ["--layout", "1xraidz3-24,2xraidz2-12,3xraidz2-8"], None, None),
    ("plan-200", ["plan", "--disks", "200x8TB"], 0.1, None),
    ("plan-200-intervals", ["plan", "--disks", "200x8TB", "--intervals=on"], None, None),
    ("plan-10000", ["plan", "--disks", "10000x8TB", "--top", "5"], 2.0, 256),
    ("matrix-points", ["simulate", "matrix", MATRIX, "--intervals=off"], None, None),
    ("matrix-intervals", ["simulate", "matrix", MATRIX], 10.0, None),
]


def run_once(args):
    """Wall seconds and peak RSS (KiB) of one run; None when it failed."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [TB] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"  {' '.join(args)}: failed: {err.strip()[:300]}", file=sys.stderr)
        return None
    return wall, usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", default=",".join(c[0] for c in CASES))
    args = parser.parse_args()
    wanted = [c for c in CASES if c[0] in args.cases.split(",")]
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "tankbench"], cwd=ROOT, check=True
    )
    times = {name: [] for name, *_ in wanted}
    rss = {name: 0 for name, *_ in wanted}
    for r in range(args.rounds):
        for name, cmd, *_ in wanted:
            got = run_once(cmd)
            if got is not None:
                times[name].append(got[0])
                rss[name] = max(rss[name], got[1])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{'case':18} {'min s':>8} {'median s':>9} {'max s':>8} {'RSS MiB':>8}  target")
    for name, cmd, target, target_rss in wanted:
        t = times[name]
        if not t:
            print(f"{name:18} failed")
            continue
        med = statistics.median(t)
        mib = rss[name] / 1024
        verdicts = []
        if target is not None:
            verdicts.append(f"< {target} s: {'met' if med < target else 'NOT met'}")
        if target_rss is not None:
            verdicts.append(f"< {target_rss} MiB: {'met' if mib < target_rss else 'NOT met'}")
        print(
            f"{name:18} {min(t):8.3f} {med:9.3f} {max(t):8.3f} {mib:8.1f}  {'; '.join(verdicts)}"
        )
    print(f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
