#!/usr/bin/env python3
"""A 2-rank MPI job against one process with 2 threads, same workload.

Both sides use the same file set on tmpfs and the same total concurrency: the
job's two ranks split the files (`--mpi-shared-files`, one thread each), the
single process runs two threads over all of them. What differs is only how
the load is spread (processes and MPI vs threads), so the gap between the two
is the cost (or gain) of running as a job. The sides alternate (A B A B ...)
for several rounds so machine noise hits both alike; the table gives the
median and range of ops/s, MiB/s and p99 event latency.

    benches/mpi.py                  # 3 rounds of 5 s per workload
    benches/mpi.py --rounds 5 --time 10
    benches/mpi.py --workloads rndrd

Needs: Open MPI (`mpirun`) and an MPI release build, made here in
target/mpi (kept apart from target/release so the default binary stays
MPI-free). Runs as root too (adds --allow-run-as-root).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "target", "mpi")
TB = os.path.join(TARGET, "release", "tankbench")

WORKLOADS = {
    # name: fileio options
    "rndrd": ["--file-test-mode=rndrd", "--file-block-size=4K"],
    "rndwr": ["--file-test-mode=rndwr", "--file-block-size=4K", "--file-fsync-freq=0"],
    "seqrd": ["--file-test-mode=seqrd", "--file-block-size=1M"],
}


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def run_json(cmd, cwd):
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout)


def mpirun(np):
    cmd = ["mpirun", "--oversubscribe", "-np", str(np), "--mca", "btl", "self,vader"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def figures(result):
    secs = result["total_time_s"]
    c = result["counts"]
    ops = (c["reads"] + c["writes"]) / secs
    mib = (c["bytes_read"] + c["bytes_written"]) / 1048576 / secs
    p99 = next(p["ms"] for p in result["latency"]["event"]["percentiles"] if p["p"] == 99.0)
    return ops, mib, p99


def spread(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=5, help="seconds per run")
    ap.add_argument("--size", default="256M", help="file set size (on /dev/shm)")
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    args = ap.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("mpirun not found: apt-get install openmpi-bin libopenmpi-dev libclang-dev")
    note("building the MPI release binary (target/mpi) ...")
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "tankbench", "--features", "mpi",
         "--target-dir", TARGET],
        cwd=ROOT, check=True,
    )
    common = [f"--file-total-size={args.size}", f"--file-num={args.files}"]
    measure = [f"--time={args.time}", "--events=0", "--percentiles=50,99", "--format=json"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tb-bench-mpi-", dir="/dev/shm") as d:
        # One file set serves both sides: the single process uses all of it,
        # the job's ranks split it.
        subprocess.run([TB, "fileio", *common, "prepare"], cwd=d, check=True,
                       stdout=subprocess.DEVNULL)
        for name in args.workloads.split(","):
            opts = WORKLOADS[name]
            single = [TB, "fileio", *common, *opts, *measure, "--threads=2", "run"]
            job = [*mpirun(2), TB, "fileio", *common, *opts, *measure, "--threads=1",
                   "--mpi-shared-files", "run"]
            got = {"1 process x 2 threads": [], "MPI job, 2 ranks x 1 thread": []}
            for r in range(args.rounds):
                note(f"{name}: round {r + 1}/{args.rounds}")
                got["1 process x 2 threads"].append(figures(run_json(single, d)))
                got["MPI job, 2 ranks x 1 thread"].append(figures(run_json(job, d)))
            for setup, runs in got.items():
                rows.append((name, setup, [x[0] for x in runs], [x[1] for x in runs],
                             [x[2] for x in runs]))
        subprocess.run([TB, "fileio", *common, "cleanup"], cwd=d, check=True,
                       stdout=subprocess.DEVNULL)
    print(f"{args.size} in {args.files} files on /dev/shm, {args.time} s per run, "
          f"{args.rounds} rounds; median (min-max)")
    print(f"{'workload':<9}{'setup':<30}{'ops/s':>30}{'MiB/s':>26}{'p99 ms':>24}")
    for name, setup, ops, mib, p99 in rows:
        print(f"{name:<9}{setup:<30}{spread(ops, '{:.0f}'):>30}{spread(mib, '{:.1f}'):>26}"
              f"{spread(p99, '{:.4f}'):>24}")


if __name__ == "__main__":
    main()
