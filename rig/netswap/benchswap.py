"""make bench-swap: where an NBD-swapped page's time goes. The seed workload
(2 x RAM, one pass) on the series kernel, swapping to a local virtio-blk disk
and to NBD over QEMU's user networking and over the tap link, with 1, 2 and 4
connections, with swap readahead off (vm.page-cluster=0) and with nbdkit's
file plugin in place of nbd-server; configurations
interleaved boot by boot (A B C ... A B C ...), TCG wall clock.

For each run the guest prints its CPU time and the swap device's block-layer
counters when the workload starts and ends (ns_cost_snapshot in
guest/lib.sh); the host adds the CPU time of the run's child processes (QEMU:
the vCPUs, its I/O thread and user networking; and the rig's own `netswap-run
run`, which starts each run in its own process). The table splits the run into
guest CPU (user, system, softirq), time the guest waited idle for I/O, the
mean latency of a swap request at the block layer (submission to completion:
for NBD that is nbd, TCP, the link, the server and the way back) and the
request sizes. Every run's line goes to a JSON-lines file; `bench --report
FILE` rebuilds the tables. Benchmarks report; nothing here passes or fails on
speed."""

import json
import os
import resource
import subprocess
import time

from . import console
from .bench import RESULTS, med, say, spread
from . import run
from .scenario import ROOT

# label -> scenario settings (over scenario seed, variant=series)
CONFIGS = (
    ("local virtio-blk", ["swap=vblk"]),
    ("NBD, user net, -C 1", ["net=user", "nbd_connections=1"]),
    ("NBD, tap, -C 1", ["net=tap", "nbd_connections=1"]),
    ("NBD, tap, -C 2", ["net=tap", "nbd_connections=2"]),
    ("NBD, tap, -C 4", ["net=tap", "nbd_connections=4"]),
    ("NBD, user net, -C 4", ["net=user", "nbd_connections=4"]),
    ("NBD, tap, -C 1, page-cluster 0", ["net=tap", "nbd_connections=1", "sysctl=vm.page-cluster=0"]),
    ("NBD, tap, -C 1, nbdkit", ["net=tap", "nbd_connections=1", "nbd_server=nbdkit"]),
    ("NBD, tap, -C 4, nbdkit", ["net=tap", "nbd_connections=4", "nbd_server=nbdkit"]),
    # BENCH_SWAP_ONLY only (not in the default set): more connections than vCPUs
    ("NBD, tap, -C 8", ["net=tap", "nbd_connections=8"]),
)
DEFAULT = tuple(label for label, _ in CONFIGS if label != "NBD, tap, -C 8")
BASE = ["variant=series", "size=2x", "loops=1", "hang_after=180"]
USER_HZ = 100

METHOD = """Method: scenario `seed` on the series kernel, `size=2x loops=1` (16 x 2
processes each map an equal slice of twice the guest's 256 MB and read it
through once: everything beyond RAM goes out to swap and comes back), QEMU
TCG (`thread=multi`, 2 vCPUs) on the 2-core host, nbd-server on the host's
127.0.0.1 (user networking) or in the run's network namespace (tap) (nbdkit
1.32 with its file plugin where the row says so), attached
with `tools/nbd-swap-attach`. Configurations interleaved boot by boot.
*wall*: host seconds from the workload's start to its end (the rig's
`wall_s`). Guest columns are differences of `/proc/stat` (CPU, in shares of
the 2 vCPUs' time over the workload) and `/sys/block/DEV/stat` (requests,
sectors, and the milliseconds requests spent between submission and
completion, summed) between the workload's start and end. *host CPU*: CPU
seconds of the run's processes (QEMU and the rig's `netswap-run run` that
starts it; nbd-server is a daemon and not counted, nbdkit is) over the whole
run including boot, divided by the run's duration:
2.0 = both host cores busy. Cells: median over the repetitions; spread =
(max - min) / median of the wall time."""


def _fields(s):
    try:
        return [int(x) for x in s.split(",")]
    except (AttributeError, ValueError):
        return None


def costs(text):
    """The begin/end snapshots of one console log -> dict of differences."""
    info = console.parse_log(text).info
    c0, c1 = _fields(info.get("cost_begin_cpu")), _fields(info.get("cost_end_cpu"))
    b0, b1 = _fields(info.get("cost_begin_blk")), _fields(info.get("cost_end_blk"))
    out = {"dev": info.get("cost_dev")}
    if c0 and c1:
        d = [b - a for a, b in zip(c0, c1)]
        for k, v in zip(("user", "nice", "system", "idle", "iowait", "irq", "softirq"), d):
            out[f"cpu_{k}"] = v
    if b0 and b1:
        d = [b - a for a, b in zip(b0, b1)]
        for k, v in zip(("rd", "rd_merged", "rd_sectors", "rd_ms", "wr", "wr_merged",
                         "wr_sectors", "wr_ms", "in_flight", "io_ms", "queue_ms"), d):
            out[f"blk_{k}"] = v
    return out


def one_run(sets, outdir):
    """One run of scenario seed in its own `netswap-run run` (a tap run needs
    the private network namespace that command enters): its record and console."""
    res = os.path.join(outdir, "bench-swap-run.jsonl")
    if os.path.exists(res):
        os.unlink(res)
    cmd = [os.path.join(ROOT, "rig", "netswap-run"), "run", "seed", "--quiet", "--out", outdir,
           "--results", res]
    for s in sets:
        cmd += ["--set", s]
    with open(os.path.join(outdir, "bench-swap-run.log"), "ab") as log:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        with open(res) as f:
            rec = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, IndexError, ValueError):
        return {"verdict": "error", "wall_s": None, "pswpin": None, "pswpout": None,
                "rundir": "none"}, ""
    rundir = rec["rundir"] if os.path.isabs(rec["rundir"]) else os.path.join(ROOT, rec["rundir"])
    with open(os.path.join(rundir, "console.log"), errors="replace") as f:
        return rec, f.read()


def selected(only=None):
    """The configurations a run measures: BENCH_SWAP_ONLY's labels
    (separated by ";", measured in CONFIGS' order), else the default set."""
    only = os.environ.get("BENCH_SWAP_ONLY", "") if only is None else only
    want = [w.strip() for w in only.split(";") if w.strip()] or list(DEFAULT)
    unknown = [w for w in want if w not in dict(CONFIGS)]
    if unknown:
        raise SystemExit(f"BENCH_SWAP_ONLY: unknown configuration(s) {unknown}; known: "
                         f"{[label for label, _ in CONFIGS]}")
    return [(label, sets) for label, sets in CONFIGS if label in want]


def swap_runs(reps, outdir, jl):
    rows = []
    configs = selected()
    for rep in range(1, reps + 1):
        for label, sets in configs:
            say(f"swap cost: {label}, rep {rep}/{reps}")
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.time()
            rec, text = one_run(BASE + sets, outdir)
            elapsed = time.time() - t0
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            host_cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            r = {"phase": "swapcost", "config": label, "sets": sets, "rep": rep,
                 "verdict": rec["verdict"], "wall_s": rec["wall_s"],
                 "pswpin": rec["pswpin"], "pswpout": rec["pswpout"],
                 "run_s": round(elapsed, 1), "host_cpu_s": round(host_cpu, 1),
                 "run_id": os.path.basename(rec["rundir"])}
            r.update(costs(text))
            rows.append(r)
            jl.write(json.dumps(r) + "\n")
            jl.flush()
    return rows


def _cpu_share(r, keys):
    every = ("user", "nice", "system", "idle", "iowait", "irq", "softirq")
    tot = sum(r.get(f"cpu_{k}", 0) for k in every)
    return sum(r.get(f"cpu_{k}", 0) for k in keys) / tot * 100 if tot else None


def _ms_per(r, ms, n):
    return r[ms] / r[n] if r.get(n) else None


def _kb_per(r, sectors, n):
    return r[sectors] / 2 / r[n] if r.get(n) else None


def tables(rows):
    ok = [r for r in rows if r.get("verdict") == "completed"]
    local = med([r["wall_s"] for r in ok if r["config"] == CONFIGS[0][0]])
    out = ["| configuration | runs (completed) | wall (s) | spread | / local | swap pages/s | "
           "guest user | guest system | guest softirq | guest idle+iowait | "
           "write latency (ms) | read latency (ms) | write KB/request | read KB/request | "
           "host CPU (cores) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, _ in CONFIGS:
        rs = [r for r in ok if r["config"] == label]
        n_all = len([r for r in rows if r["config"] == label])
        if not n_all:
            continue
        w = med([r["wall_s"] for r in rs])

        def m(f):
            return med([f(r) for r in rs])

        def f1(x, suffix=""):
            return f"{x:.1f}{suffix}" if x is not None else "-"
        pages = m(lambda r: ((r["pswpin"] or 0) + (r["pswpout"] or 0)) / r["wall_s"]
                  if r["wall_s"] else None)
        host = m(lambda r: r["host_cpu_s"] / r["run_s"] if r.get("run_s") else None)
        out.append(
            f"| {label} | {n_all} ({len(rs)}) | {f1(w)} | {spread([r['wall_s'] for r in rs]):.0f}% | "
            f"{f'{w / local:.2f}x' if w and local else '-'} | {f'{pages:.0f}' if pages else '-'} | "
            f"{f1(m(lambda r: _cpu_share(r, ('user', 'nice'))), '%')} | "
            f"{f1(m(lambda r: _cpu_share(r, ('system', 'irq'))), '%')} | "
            f"{f1(m(lambda r: _cpu_share(r, ('softirq',))), '%')} | "
            f"{f1(m(lambda r: _cpu_share(r, ('idle', 'iowait'))), '%')} | "
            f"{f1(m(lambda r: _ms_per(r, 'blk_wr_ms', 'blk_wr')))} | "
            f"{f1(m(lambda r: _ms_per(r, 'blk_rd_ms', 'blk_rd')))} | "
            f"{f1(m(lambda r: _kb_per(r, 'blk_wr_sectors', 'blk_wr')))} | "
            f"{f1(m(lambda r: _kb_per(r, 'blk_rd_sectors', 'blk_rd')))} | "
            f"{f'{host:.2f}' if host else '-'} |")
    raw = ["| run | configuration | verdict | wall (s) | pswpin | pswpout | cpu user/sys/idle/iowait/softirq "
           "(ticks) | writes | write ms | reads | read ms | host CPU s / run s |",
           "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|"]
    for r in rows:
        raw.append(f"| {r['run_id']} | {r['config']} | {r['verdict']} | {r['wall_s']} | {r['pswpin']} | "
                   f"{r['pswpout']} | {r.get('cpu_user')}/{r.get('cpu_system')}/{r.get('cpu_idle')}/"
                   f"{r.get('cpu_iowait')}/{r.get('cpu_softirq')} | {r.get('blk_wr')} | "
                   f"{r.get('blk_wr_ms')} | {r.get('blk_rd')} | {r.get('blk_rd_ms')} | "
                   f"{r['host_cpu_s']} / {r['run_s']} |")
    return "\n".join(out), "\n".join(raw)


def write_md(path, rows, elapsed, date=None):
    md = os.path.splitext(path)[0] + ".md"
    summary, raw = tables(rows)
    reps = max((r["rep"] for r in rows), default=0)
    with open(md, "w") as f:
        f.write(f"# Swap cost: where an NBD-swapped page's time goes ({date or time.strftime('%Y-%m-%d')}, "
                f"{elapsed:.0f} s)\n\n")
        f.write(f"Generated by `make bench-swap` (`rig/netswap-run bench --swap`); raw lines: "
                f"`{os.path.basename(path)}`; `rig/netswap-run bench --report "
                f"docs/results/{os.path.basename(path)}` rebuilds this file. "
                f"Repetitions: {reps}. Benchmarks report; they do not pass or fail.\n\n")
        measured = list(dict.fromkeys(r["config"] for r in rows))
        if measured != list(DEFAULT):
            name = os.path.splitext(os.path.basename(path))[0]
            f.write(f"Not the default set: `BENCH_SWAP_ONLY=\"{'; '.join(measured)}\" "
                    f"BENCH_SWAP_TAG={name} make bench-swap`.\n\n")
        f.write(METHOD + "\n\n")
        f.write(summary + "\n\n## Every run\n\n" + raw + "\n")
    return md


def report(path):
    rows = [json.loads(line) for line in open(path)]
    old = os.path.splitext(path)[0] + ".md"
    elapsed, date = 0.0, None
    if os.path.exists(old):  # keep the date and the measured duration of the run
        with open(old) as f:
            head = f.readline()
        try:
            date = head.rsplit("(", 1)[1].split(",")[0]
            elapsed = float(head.rsplit(", ", 1)[1].split(" s)")[0])
        except (IndexError, ValueError):
            pass
    md = write_md(path, [r for r in rows if r.get("phase") == "swapcost"], elapsed, date)
    print(open(md).read())
    return 0


def setup(argv):
    """Repetitions (BENCH_REPS, 1 with --quick) and the runs' folder, made,
    for the swap benchmarks (this one and swapprofile)."""
    reps = 1 if "--quick" in argv else int(os.environ.get("BENCH_REPS", "3"))
    outdir = os.path.join(run.OUT, "bench")
    os.makedirs(RESULTS, exist_ok=True)
    os.makedirs(outdir, exist_ok=True)
    return reps, outdir


def main(argv):
    reps, outdir = setup(argv)
    run.build_kernel("series")
    run.build_initramfs()
    t0 = time.time()
    # BENCH_SWAP_TAG=NAME: docs/results/NAME.{jsonl,md} instead of bench-swap.*
    path = os.path.join(RESULTS, os.environ.get("BENCH_SWAP_TAG", "bench-swap") + ".jsonl")
    with open(path, "w") as jl:
        rows = swap_runs(reps, outdir, jl)
    md = write_md(path, rows, time.time() - t0)
    say(f"done in {time.time() - t0:.0f}s: {md}")
    print(open(md).read())
    return 0
