#!/usr/bin/env python3
"""tankbench beside sysbench 1.0.20, fio and a minimal pread loop, in one run.

Every case runs each tool alternately (A B A B ...) for several rounds so that
machine noise hits all of them alike; the table gives min/median/max of ops/s
and the ratio of medians. Peak RSS comes from wait4(2). A missing peer is
skipped with a message.

    benches/compare.py                 # everything (about 10 minutes)
    benches/compare.py --quick         # fewer rounds, shorter runs
    benches/compare.py --cases rndrd1,prepare --rounds 7
    benches/compare.py --scaling       # threads x files scaling table
    benches/compare.py --cases fio     # `tankbench fio` beside fio, one job per engine

Needs: a release build (made here), gcc for the minimal loop, /dev/shm (tmpfs)
for the page-cache cases, root for the zfs-fuse case.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.path.join(ROOT, "target", "release", "tankbench")
SYSBENCH = shutil.which("sysbench")
FIO = shutil.which("fio")
LOOP = os.path.join(ROOT, "target", "release", "pread_loop")


def note(msg):
    print(msg, file=sys.stderr, flush=True)


TIME = "/usr/bin/time"


def run(cmd, cwd):
    """Run a command; return (stdout, peak RSS in KiB, wall seconds).

    Peak RSS comes from GNU time (%M): the rusage of a child forked from this
    Python process would include Python's own pages from before the exec."""
    start = time.monotonic()
    with tempfile.NamedTemporaryFile("r") as rss_file:
        full = [TIME, "-q", "-f", "%M", "-o", rss_file.name, *cmd] if os.path.exists(TIME) else cmd
        proc = subprocess.run(full, cwd=cwd, capture_output=True)
        wall = time.monotonic() - start
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout.decode()}\n{proc.stderr.decode()}")
        text = rss_file.read().strip()
    peak = int(text.splitlines()[-1]) if text else 0
    return proc.stdout.decode(), peak, wall


def sysbench_like_ops(text, what=("reads/s:", "writes/s:")):
    total = 0.0
    for label in what:
        m = re.search(re.escape(label) + r"\s+([0-9.]+)", text)
        total += float(m.group(1)) if m else 0.0
    return total


def writes_per_s(text):
    return sysbench_like_ops(text, ("writes/s:",))


def fio_iops(text):
    data = json.loads(text)
    job = data["jobs"][0]
    return job["read"]["iops"] + job["write"]["iops"]


class Case:
    def __init__(self, name, title, directory, tools, metric="ops/s"):
        self.name = name
        self.title = title
        self.directory = directory
        self.tools = tools  # list of (tool name, argv builder, parser)
        self.metric = metric


def file_opts(total, files):
    return [f"--file-total-size={total}", f"--file-num={files}"]


def prepare_files(directory, total, files):
    run([TB, "fileio", *file_opts(total, files), "prepare"], directory)


def fio_cmd(directory, files, rw, bs, depth, seconds, threads=1):
    names = ":".join(f"test_file.{i}" for i in range(files))
    return [
        FIO, "--name=tb", f"--directory={directory}", f"--filename={names}",
        "--file_service_type=random", f"--rw={rw}", f"--bs={bs}", "--ioengine=io_uring",
        f"--iodepth={depth}", f"--numjobs={threads}", "--group_reporting", "--time_based",
        f"--runtime={seconds}", "--norandommap", "--randrepeat=0", "--output-format=json",
        "--thread",
    ]


def build():
    note("building release binaries ...")
    subprocess.run(["cargo", "build", "--release", "-p", "tankbench"], cwd=ROOT, check=True)
    if shutil.which("gcc"):
        subprocess.run(["gcc", "-O2", "-pthread", "-o", LOOP, os.path.join(ROOT, "benches", "pread_loop.c")], check=True)


def measure(case, rounds):
    """Alternate the tools of a case for `rounds` rounds."""
    results = {t[0]: [] for t in case.tools}
    rss = {t[0]: [] for t in case.tools}
    for r in range(rounds):
        for name, argv, parse in case.tools:
            out, peak, wall = run(argv(), case.directory)
            results[name].append(parse(out, wall))
            rss[name].append(peak)
        note(f"  {case.name} round {r + 1}/{rounds}: " + ", ".join(f"{n}={results[n][-1]:.0f}" for n in results))
    return results, rss


def summarize(case, results, rss):
    rows = []
    base = statistics.median(results[case.tools[0][0]])
    for name, _, _ in case.tools:
        v = results[name]
        med = statistics.median(v)
        rows.append((case.title, name, min(v), med, max(v), med and base / med, max(rss[name]) / 1024))
    return rows


def print_table(rows):
    print(f"| case | tool | min {''} | median | max | tankbench ÷ tool | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for title, name, lo, med, hi, ratio, peak in rows:
        ratio_s = "—" if name == "tankbench" else f"{ratio:.3f}"
        print(f"| {title} | {name} | {lo:,.0f} | {med:,.0f} | {hi:,.0f} | {ratio_s} | {peak:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="3 rounds of 2 s")
    ap.add_argument("--cases", default="rndrd1,rndrd2,uring,rndwr1,fio,seed-ext4,seed-zfs,fio-sync,prepare,rss")
    ap.add_argument("--scaling", action="store_true", help="threads x files scaling instead of the cases")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds = 3, 2
    if not args.no_build:
        build()
    if not SYSBENCH:
        note("sysbench is not installed: sysbench columns are skipped (apt-get install sysbench)")
    if not FIO:
        note("fio is not installed: the io_uring case is skipped (apt-get install fio)")
    if not os.path.exists(LOOP):
        note("gcc is missing: the minimal pread loop is skipped")
    if args.scaling:
        return scaling(args)

    secs = args.seconds
    tmpfs = tempfile.mkdtemp(prefix="tb-bench-", dir="/dev/shm")
    disk = tempfile.mkdtemp(prefix="tb-bench-", dir="/var/tmp")
    rows = []
    wanted = set(args.cases.split(","))
    try:
        total, files = "1G", 128
        prepare_files(tmpfs, total, files)
        common = [*file_opts(total, files), "--file-block-size=4K", "--file-fsync-freq=0", f"--time={secs}"]
        ops = lambda out, wall: sysbench_like_ops(out)

        def sb_pair(mode, threads, extra=()):
            tools = [("tankbench", lambda: [TB, "fileio", *common, f"--file-test-mode={mode}", f"--threads={threads}", *extra, "run"], ops)]
            if SYSBENCH:
                tools.append(("sysbench", lambda: [SYSBENCH, "fileio", *common, f"--file-test-mode={mode}", f"--threads={threads}", *extra, "run"], ops))
            return tools

        cases = []
        if "rndrd1" in wanted:
            tools = sb_pair("rndrd", 1)
            if os.path.exists(LOOP):
                tools.append(("minimal pread loop", lambda: [LOOP, tmpfs, str(files), str(1 << 30), "4096", str(secs), "1"], lambda out, wall: float(out)))
            cases.append(Case("rndrd1", "rndrd 4K, 1 thread, sync (tmpfs)", tmpfs, tools))
        if "rndrd2" in wanted:
            tools = sb_pair("rndrd", 2)
            if os.path.exists(LOOP):
                tools.append(("minimal pread loop", lambda: [LOOP, tmpfs, str(files), str(1 << 30), "4096", str(secs), "2"], lambda out, wall: float(out)))
            cases.append(Case("rndrd2", "rndrd 4K, 2 threads, sync (tmpfs)", tmpfs, tools))
        if "uring" in wanted:
            tools = [("tankbench", lambda: [TB, "fileio", *common, "--file-test-mode=rndrd", "--file-io-mode=async", "--file-async-backlog=32", "run"], ops)]
            if FIO:
                tools.append(("fio io_uring", lambda: fio_cmd(tmpfs, files, "randread", "4k", 32, secs), lambda out, wall: fio_iops(out)))
            cases.append(Case("uring", "rndrd 4K, 1 thread, io_uring QD32 (tmpfs)", tmpfs, tools))
        if "rndwr1" in wanted:
            cases.append(Case("rndwr1", "rndwr 4K, 1 thread, sync (tmpfs)", tmpfs, sb_pair("rndwr", 1, ("--file-fsync-end=off",))))
        if "fio" in wanted and FIO:
            cases += fio_job_cases(tmpfs, secs)
        for case in cases:
            note(f"case {case.title}")
            rows += summarize(case, *measure(case, args.rounds))

        seed = ["--file-total-size=256M", "--file-test-mode=rndrw", "--file-block-size=4K", "--threads=4", "--file-fsync-all", f"--time={secs}"]
        wps = lambda out, wall: writes_per_s(out)

        def seed_case(name, title, directory):
            run([TB, "fileio", "--file-total-size=256M", "prepare"], directory)
            tools = [("tankbench", lambda: [TB, "fileio", *seed, "run"], wps)]
            if SYSBENCH:
                tools.append(("sysbench", lambda: [SYSBENCH, "fileio", *seed, "run"], wps))
            c = Case(name, title, directory, tools, metric="writes/s")
            note(f"case {title}")
            return summarize(c, *measure(c, args.rounds))

        if "seed-ext4" in wanted:
            rows += seed_case("seed-ext4", f"seed rndrw 4K 4 thr fsync-all, writes/s ({fs_type(disk)})", disk)
        if "seed-zfs" in wanted:
            pool = zfs_pool()
            if pool:
                try:
                    rows += seed_case("seed-zfs", "seed rndrw 4K 4 thr fsync-all, writes/s (zfs-fuse raidz+log)", pool[1])
                finally:
                    destroy_pool(*pool)
        if "fio-sync" in wanted and FIO:
            rows += fio_sync_rows(disk, secs, args.rounds)
        if "prepare" in wanted:
            rows += prepare_case(disk, args.rounds)
        if "rss" in wanted:
            rows += rss_case(tmpfs, secs)
    finally:
        shutil.rmtree(tmpfs, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)
    print()
    print_table(rows)


def fio_job_cases(directory, secs):
    """The same fio job run by `tankbench fio` and by fio, one case per
    engine, on tmpfs."""
    cases = []
    for engine, depth in (("psync", 1), ("io_uring", 32), ("mmap", 1)):
        job = ["--name=tb", "--rw=randread", "--bs=4k", "--size=1g", f"--ioengine={engine}",
               f"--iodepth={depth}", "--time_based", f"--runtime={secs}"]
        cases.append(fio_pair(f"fio job randread 4K, {engine} QD{depth} (tmpfs)", f"fio-{engine}", directory, job))
    return cases


def fio_pair(title, name, directory, job, metric="IOPS"):
    """A case of one fio job run by `tankbench fio` and by fio. Every run
    gets a new directory under `directory`, so both lay their files out anew
    (fio keeps the files it lays out, and a file written before syncs faster
    than a new one; tankbench removes the files it creates). IOPS come from
    each one's JSON report: the measured runtime, without the layout."""
    fresh = lambda prefix: tempfile.mkdtemp(prefix=prefix, dir=directory)
    job = [*job, "--output-format=json"]
    tools = [
        ("tankbench fio", lambda: [TB, "fio", f"--directory={fresh('tb-')}", *job], lambda out, wall: fio_iops(out)),
        ("fio", lambda: [FIO, f"--directory={fresh('fio-')}", *job], lambda out, wall: fio_iops(out)),
    ]
    return Case(name, title, directory, tools, metric=metric)


def fio_sync_rows(disk, secs, rounds):
    """The sync-write job of the published measurements (4K random writes,
    an fsync after each) by `tankbench fio` and by fio, on a disk file
    system and on a zfs-fuse pool (raidz with a log device, root only)."""
    job = ["--name=sync", "--rw=randwrite", "--bs=4k", "--size=256m", "--fsync=1",
           "--ioengine=psync", "--time_based", f"--runtime={secs}"]
    rows = []
    places = [(disk, fs_type(disk), None)]
    pool = zfs_pool()
    if pool:
        places.append((pool[1], "zfs-fuse raidz+log", pool))
    for directory, label, pool_handle in places:
        try:
            c = fio_pair(f"fio job randwrite 4K fsync=1, IOPS ({label})", "fio-sync", directory, job)
            note(f"case {c.title}")
            rows += summarize(c, *measure(c, rounds))
        finally:
            if pool_handle:
                destroy_pool(*pool_handle)
    return rows


def fs_type(directory):
    out = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", directory], capture_output=True, text=True).stdout.strip()
    return out or "?"


def destroy_pool(name, mountpoint):
    """scripts/zfs-pool-destroy: the retrying destroy the Rust tests use too.
    The pool's files are removed only once the pool is gone."""
    r = subprocess.run([os.path.join(ROOT, "scripts", "zfs-pool-destroy"), name], capture_output=True, text=True)
    if r.returncode != 0:
        note(f"WARNING: {r.stderr.strip()}; its files stay in {os.path.dirname(mountpoint)}")
        return
    shutil.rmtree(os.path.dirname(mountpoint), ignore_errors=True)


def zfs_pool():
    if os.geteuid() != 0 or not shutil.which("zpool"):
        note("zfs case skipped: needs root and zfs-fuse (apt-get install zfs-fuse)")
        return None
    subprocess.run([os.path.join(ROOT, "scripts", "zfs-fuse-up")], check=False)
    d = tempfile.mkdtemp(prefix="tb-bench-zfs-", dir="/var/tmp")
    disks = []
    for i in range(3):
        p = os.path.join(d, f"disk{i}")
        with open(p, "wb") as f:
            f.truncate(4 << 30)
        disks.append(p)
    log = os.path.join(d, "log")
    with open(log, "wb") as f:
        f.truncate(1 << 30)
    name = f"tb-bench-{os.getpid()}"
    mnt = os.path.join(d, "mnt")
    r = subprocess.run(["zpool", "create", "-f", "-m", mnt, name, "raidz", *disks, "log", log], capture_output=True, text=True)
    if r.returncode != 0:
        note(f"zfs case skipped: zpool create failed: {r.stderr.strip()}")
        return None
    return name, mnt


def prepare_case(directory, rounds):
    """prepare of 1 GiB (8 files) on a disk file system, MiB/s from the tools' own line."""
    note("case prepare 1 GiB")
    res = {"tankbench": [], "sysbench": []}
    rss = {"tankbench": [], "sysbench": []}
    tools = [("tankbench", TB)] + ([("sysbench", SYSBENCH)] if SYSBENCH else [])
    for r in range(rounds):
        for name, exe in tools:
            d = tempfile.mkdtemp(prefix="prep-", dir=directory)
            try:
                out, peak, _ = run([exe, "fileio", "--file-total-size=1G", "--file-num=8", "prepare"], d)
                m = re.search(r"\(([0-9.]+) MiB/sec\)", out)
                res[name].append(float(m.group(1)))
                rss[name].append(peak)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        note(f"  prepare round {r + 1}: " + ", ".join(f"{n}={res[n][-1]:.0f}" for n, _ in tools))
    c = Case("prepare", f"prepare 1 GiB, MiB/s ({fs_type(directory)})", directory, [(n, None, None) for n, _ in tools])
    return summarize(c, {k: v for k, v in res.items() if v}, {k: v for k, v in rss.items() if v})


def rss_case(directory, secs):
    rows = []
    for threads in (4, 64):
        res, rss = {}, {}
        for name, exe in [("tankbench", TB)] + ([("sysbench", SYSBENCH)] if SYSBENCH else []):
            out, peak, _ = run([exe, "fileio", "--file-total-size=1G", "--file-num=128", "--file-test-mode=rndrw",
                                "--file-block-size=4K", "--file-fsync-freq=0", f"--threads={threads}", "--time=2", "run"], directory)
            res[name] = [sysbench_like_ops(out)]
            rss[name] = [peak]
        c = Case("rss", f"peak RSS, rndrw {threads} threads", directory, [(n, None, None) for n in res])
        rows += summarize(c, res, rss)
    return rows


def scaling(args):
    tmpfs = tempfile.mkdtemp(prefix="tb-scale-", dir="/dev/shm")
    print("| files | threads | tankbench ops/s | sysbench ops/s | ratio | tankbench RSS MiB | sysbench RSS MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for files in (1, 128, 4096):
            for f in os.listdir(tmpfs):
                os.unlink(os.path.join(tmpfs, f))
            prepare_files(tmpfs, "1G", files)
            for threads in (1, 2, 4, 16, 64):
                opts = [*file_opts("1G", files), "--file-test-mode=rndrd", "--file-block-size=4K", "--file-fsync-freq=0",
                        f"--threads={threads}", f"--time={args.seconds}", "run"]
                tb_ops, sb_ops, tb_rss, sb_rss = [], [], [], []
                for _ in range(args.rounds):
                    out, peak, _ = run([TB, "fileio", *opts], tmpfs)
                    tb_ops.append(sysbench_like_ops(out)); tb_rss.append(peak)
                    if SYSBENCH:
                        out, peak, _ = run([SYSBENCH, "fileio", *opts], tmpfs)
                        sb_ops.append(sysbench_like_ops(out)); sb_rss.append(peak)
                t = statistics.median(tb_ops)
                s = statistics.median(sb_ops) if sb_ops else float("nan")
                print(f"| {files} | {threads} | {t:,.0f} | {s:,.0f} | {t / s:.3f} | {max(tb_rss) / 1024:.1f} | {max(sb_rss or [0]) / 1024:.1f} |", flush=True)
    finally:
        shutil.rmtree(tmpfs, ignore_errors=True)


if __name__ == "__main__":
    main()
