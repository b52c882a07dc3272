"""make bench-swap-profile: where an NBD-swapped page's guest CPU goes, per
function and per layer (issue 15). The seed workload (2 x RAM, one pass) on
the series kernel swapping to a local virtio-blk disk and to NBD over the tap
(-C 1), tools/kprof sampling the guest kernel during the workload (scenario
key `profile`); configurations interleaved boot by boot, each run in its own
`netswap-run run` (the tap's network namespace). Rows with the profiler off
are run beside them as a control of its cost.

kprof prints, per chain of function names (leaf<caller<caller<caller), how
many samples landed there. The host finds each function's object file in the
kernel's build tree (`nm` over its *.o) and puts the sample in a layer by that
path (LAYERS; a few names first: idle, the scheduler's section start). Two
views: *self*, the layer of the function the sample landed in, and *by
caller*, where a sample in a shared service (locks, clock reads, the virtio
ring, cross-CPU calls, lib/) is charged to the first caller in its chain that
is not one. Every run's line (the chains and the object of every name in
them) goes to a JSON-lines file; `bench --report FILE` rebuilds the page
without the build tree."""

import json
import os
import subprocess
import time

from . import benchswap, console, run
from .bench import RESULTS, med, say, spread

HZ = 1000
CONFIGS = (
    ("local virtio-blk", ["swap=vblk"]),
    ("NBD, tap, -C 1", ["net=tap", "nbd_connections=1"]),
    # virtio_net without its TX NAPI: start_xmit frees sent buffers itself,
    # so the receive softirq no longer takes the TX queue's lock
    ("NBD, tap, -C 1, napi_tx=0", ["net=tap", "nbd_connections=1",
                                   "kernel_args=virtio_net.napi_tx=0"]),
)
CONTROLLED = CONFIGS[:2]      # also run with the profiler off
CONTROL = " (profile off)"
TOP = 15
BASE = benchswap.BASE

# (key, label, object-path prefixes); the first prefix that matches wins,
# longest prefixes are tried first (LAYER_OF)
LAYERS = (
    ("mm", "swap + mm (reclaim, swap cache, faults, page allocation)", ("mm/", "arch/x86/mm/")),
    ("block", "block (blk-mq, virtio_blk)", ("block/", "drivers/block/virtio_blk.o")),
    ("nbd", "nbd", ("drivers/block/nbd.o",)),
    ("net", "net (TCP/IP, net core, virtio_net)", ("net/", "drivers/net/")),
    ("copy", "copy, clear, checksum (arch/x86/lib, iov_iter)", ("arch/x86/lib/", "lib/iov_iter.o")),
    ("virtio", "virtio ring and PCI transport (disk and NIC)", ("drivers/virtio/",)),
    ("core", "kernel core (sched, irq, timers, locks, entry)", ("kernel/", "arch/x86/")),
    ("other", "other (lib/, fs/, other drivers, unresolved)", ("",)),
    ("idle", "idle", ()),
    ("user", "user space", ()),
)
LABEL = {k: label for k, label, _ in LAYERS}
PREFIXES = sorted(((p, k) for k, _, ps in LAYERS for p in ps), key=lambda x: -len(x[0]))

# where the CPU halts or runs the idle loop
IDLE_LEAVES = {"default_idle", "amd_e400_idle", "pv_native_safe_halt", "native_safe_halt",
               "arch_cpu_idle", "default_idle_call", "do_idle", "cpu_idle_poll", "mwait_idle",
               "acpi_idle_do_entry", "cpuidle_enter_state", "cpu_startup_entry"}
# names no object file defines (linker symbols at the start of a section)
NAME_LAYER = {"__sched_text_start": "core", "__lock_text_start": "core",
              "__irqentry_text_start": "core", "__softirqentry_text_start": "core"}
# shared services: in the by-caller view their samples go to the caller
SHARED = ("kernel/locking/", "kernel/time/", "kernel/smp.o", "kernel/workqueue.o",
          "kernel/sched/build_utility.o", "arch/x86/kernel/hpet.o", "arch/x86/kernel/tsc.o",
          "arch/x86/kernel/apic/", "drivers/virtio/", "lib/")
NOT_SHARED = ("lib/iov_iter.o",)


# single costs worth a row of their own: (label, test on the chain's names)
HOTSPOTS = (
    ("NIC doorbell: vp_notify from virtio_net's start_xmit",
     lambda n: n[0] == "vp_notify" and "start_xmit" in n),
    ("NIC TX lock spun on in virtnet_poll_tx",
     lambda n: n[0] == "queued_spin_lock_slowpath" and "virtnet_poll_tx" in n),
    ("socket lock spun on (lock_sock, sk_wait_data, tcp_v4_rcv)",
     lambda n: n[0] == "queued_spin_lock_slowpath" and
     bool({"lock_sock_nested", "__lock_sock", "sk_wait_data", "tcp_v4_rcv"} & set(n))),
    ("disk doorbell: vp_notify from virtio_blk",
     lambda n: n[0] == "vp_notify" and bool({"virtio_queue_rqs", "virtio_queue_rq"} & set(n))),
    ("clock reads (read_hpet) for TCP", lambda n: n[0] == "read_hpet" and
     any(x.startswith("tcp_") for x in n)),
    ("clock reads (read_hpet) for blk-mq", lambda n: n[0] == "read_hpet" and
     any(x.startswith(("blk_", "__blk_")) for x in n)),
    ("TCP/IP, net core, virtio_net functions themselves (self)", None),
    ("nbd's own functions (self)", None),
    ("page fault entry (exc_page_fault itself)", lambda n: n[0] == "exc_page_fault"),
    ("clearing pages (clear_page_erms)", lambda n: n[0] == "clear_page_erms"),
    ("TLB shootdown IPIs (smp_call_function_many_cond)",
     lambda n: n[0] == "smp_call_function_many_cond"),
    ("after a context switch (finish_task_switch)",
     lambda n: n[0].startswith("finish_task_switch")),
)
SELF_HOTSPOT = {"TCP/IP, net core, virtio_net functions themselves (self)": "net",
                "nbd's own functions (self)": "nbd"}


def hotspots(chains, objs):
    """{hotspot label: samples}."""
    out = {label: 0 for label, _ in HOTSPOTS}
    for chain, n in chains.items():
        names = chain.split("<")
        for label, test in HOTSPOTS:
            if test is None:
                hit = chain != "user" and _self_layer(chain, objs) == SELF_HOTSPOT[label]
            else:
                hit = test(names)
            if hit:
                out[label] += n
    return out


def _self_layer(chain, objs):
    return classify(chain, objs)[0]


def layer_of_path(path):
    if path is None:
        return "other"
    for p, k in PREFIXES:
        if path.startswith(p):
            return k
    return "other"


def is_shared(path):
    return bool(path) and path.startswith(SHARED) and not path.startswith(NOT_SHARED)


def frame_layer(name, objs):
    if name in NAME_LAYER:
        return NAME_LAYER[name]
    return layer_of_path(objs.get(name))


def classify(chain, objs):
    """(self layer, by-caller layer) of one chain 'leaf<caller<...'; "user"
    is the user-space bucket."""
    if chain == "user":
        return "user", "user"
    names = chain.split("<")
    leaf = names[0]
    if leaf in IDLE_LEAVES or ("do_idle" in names[1:] and
                               (objs.get(leaf) or "").startswith(("kernel/sched/", "kernel/time/"))):
        return "idle", "idle"
    own = frame_layer(leaf, objs)
    by = own
    for n in names:
        if n in NAME_LAYER or not is_shared(objs.get(n)):
            by = frame_layer(n, objs)
            break
    return own, by


def parse(text):
    """kprof's lines of one console log -> (summary dict, {chain: samples}).
    User-space samples appear as the chain "user"."""
    summary, chains = {}, {}
    for line in text.splitlines():
        i = line.find("NETSWAP: info kprof_")
        if i < 0:
            continue
        f = console.kv(line[i + len("NETSWAP: info "):])
        if "kprof_n" in f and "kprof_f" in f:
            n = console.num(f["kprof_n"]) or 0
            chains[f["kprof_f"]] = chains.get(f["kprof_f"], 0) + n
        elif "kprof_hz" in f:
            summary = {k[len("kprof_"):]: console.num(v) for k, v in f.items()}
        elif "kprof_end" in f:
            summary["printed"] = console.num(f.get("kprof_printed"))
    if summary.get("user"):
        chains["user"] = summary["user"]
    return summary, chains


def object_map(builddir, names):
    """Function name -> object file (path in the build tree) for the names
    asked about, from `nm` over the tree's *.o. A name several objects
    define (static functions) gets the first in path order."""
    objs = []
    for d, dirs, files in os.walk(builddir):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("tools", "scripts", "usr")]
        objs += [os.path.join(d, f) for f in files
                 if f.endswith(".o") and not f.startswith(".") and f != "vmlinux.o"]
    want, out = set(names), {}
    objs.sort()
    for i in range(0, len(objs), 200):
        r = subprocess.run(["nm", "-A", "--defined-only"] + objs[i:i + 200],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) != 3 or parts[1] not in "tTwW":
                continue
            path, name = parts[0].rsplit(":", 1)[0], parts[2]
            if name in want and name not in out:
                out[name] = os.path.relpath(path, builddir)
    return out


def layer_samples(chains, objs):
    """{layer: samples} in both views."""
    own, by = {}, {}
    for chain, n in chains.items():
        a, b = classify(chain, objs)
        own[a] = own.get(a, 0) + n
        by[b] = by.get(b, 0) + n
    return own, by


def leaves(chains, objs):
    """{leaf function: [samples, {self layer: samples}]} (a leaf's chains may
    differ in layer: the idle loop's own functions are idle under do_idle)."""
    out = {}
    for chain, n in chains.items():
        leaf = chain.split("<")[0]
        e = out.setdefault(leaf, [0, {}])
        e[0] += n
        own = classify(chain, objs)[0]
        e[1][own] = e[1].get(own, 0) + n
    return out


def _read(path):
    with open(path) as f:
        return f.read()


def _pct(a, b):
    return a / b * 100 if b else None


def _f(x, fmt="{:.1f}"):
    return fmt.format(x) if x is not None else "-"


def _pages(r):
    return (r.get("pswpin") or 0) + (r.get("pswpout") or 0)


def _ms_per_kpage(r, n):
    """n of the run's samples as vCPU milliseconds per 1000 pages swapped:
    their share of the samples times the vCPU time of the profile's window
    (seconds x CPUs), over pswpin + pswpout."""
    s, tot = r.get("kprof") or {}, r.get("_tot")
    ms = (s.get("secs") or 0) * (s.get("cpus") or 0) * 1000
    if not tot or not ms or not _pages(r):
        return None
    return n / tot * ms / _pages(r) * 1000


def tables(rows):
    """Markdown: the per-layer table, every run's line, top functions."""
    prof = [r for r in rows if r.get("verdict") == "completed" and r.get("chains")]
    labels = [label for label, _ in CONFIGS if any(r["config"] == label for r in rows)]
    per = {label: [r for r in prof if r["config"] == label] for label in labels}
    for label in labels:
        for r in per[label]:
            r["_own"], r["_by"] = layer_samples(r["chains"], r.get("objs", {}))
            r["_tot"] = sum(r["chains"].values())

    def diffs(per_k):
        return " | ".join(_f(x - per_k[0] if None not in (x, per_k[0]) else None, "{:+.1f}")
                          for x in per_k[1:])

    dhead = " | ".join(f"{c} - local, ms per 1000 pages" for c in labels[1:])
    cols = " | ".join(f"{c}: % of samples | {c}: ms per 1000 pages" for c in labels)
    out = [f"| layer (by caller) | {cols} | {dhead} |",
           "|---|" + "---:|" * (3 * len(labels) - 1)]
    own_t = ["| layer (self) | " + " | ".join(f"{c}: % of samples" for c in labels) + " |",
             "|---|" + "---:|" * len(labels)]
    for key, label, _ in LAYERS:
        cells, per_k, owns = [], [], []
        for c in labels:
            rs = per[c]
            owns.append(_f(med([_pct(r["_own"].get(key, 0), r["_tot"]) for r in rs]), "{:.1f}%"))
            by = med([_pct(r["_by"].get(key, 0), r["_tot"]) for r in rs])
            pk = med([_ms_per_kpage(r, r["_by"].get(key, 0)) for r in rs])
            per_k.append(pk)
            cells += [_f(by, "{:.1f}%"), _f(pk)]
        out.append(f"| {label} | " + " | ".join(cells) + f" | {diffs(per_k)} |")
        own_t.append(f"| {label} | " + " | ".join(owns) + " |")
    d = [med([_ms_per_kpage(r, r["_tot"]) for r in per[c]]) for c in labels]
    out.append("| all samples | " + " | ".join(f"100% | {_f(x)}" for x in d) + f" | {diffs(d)} |")
    out += [""] + own_t

    hot = [f"| single cost | {cols} | {dhead} |",
           "|---|" + "---:|" * (3 * len(labels) - 1)]
    for r in prof:
        r["_hot"] = hotspots(r["chains"], r.get("objs", {}))
    for label, _ in HOTSPOTS:
        cells, per_k = [], []
        for c in labels:
            rs = per[c]
            pk = med([_ms_per_kpage(r, r["_hot"][label]) for r in rs])
            per_k.append(pk)
            cells += [_f(med([_pct(r["_hot"][label], r["_tot"]) for r in rs]), "{:.1f}%"), _f(pk)]
        hot.append(f"| {label} | " + " | ".join(cells) + f" | {diffs(per_k)} |")

    runs = ["| run | configuration | verdict | host load | wall (s) | pages swapped | samples | "
            "of expected | lost | " + " | ".join(k for k, _, _ in LAYERS) +
            " (by caller, % of samples) |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(LAYERS)]
    for r in rows:
        s = r.get("kprof") or {}
        if r.get("chains"):
            own, by = layer_samples(r["chains"], r.get("objs", {}))
            t = sum(r["chains"].values())
            shares = [_f(_pct(by.get(k, 0), t)) for k, _, _ in LAYERS]
        else:
            shares = ["-"] * len(LAYERS)
        exp = (s.get("secs") or 0) * (s.get("hz") or 0) * (s.get("cpus") or 0)
        runs.append(f"| {r['run_id']} | {r['config']} | {r['verdict']} | {r.get('host_load', '-')} | "
                    f"{r.get('wall_s')} | "
                    f"{_pages(r)} | {s.get('samples', '-')} | "
                    f"{_f(_pct(s.get('samples') or 0, exp), '{:.0f}%') if exp else '-'} | "
                    f"{s.get('lost', '-')} | " + " | ".join(shares) + " |")

    wall = ["| configuration | runs (completed) | wall (s) | spread | guest user | guest system | "
            "guest softirq | guest idle+iowait |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in [x for label in labels for x in (label, label + CONTROL)]:
        allr = [r for r in rows if r["config"] == c]
        rs = [r for r in allr if r.get("verdict") == "completed"]
        if not allr:
            continue
        wall.append(
            f"| {c} | {len(allr)} ({len(rs)}) | {_f(med([r['wall_s'] for r in rs]))} | "
            f"{spread([r['wall_s'] for r in rs]):.0f}% | "
            + " | ".join(_f(med([benchswap._cpu_share(r, ks) for r in rs]), "{:.1f}%")
                         for ks in (("user", "nice"), ("system", "irq"), ("softirq",),
                                    ("idle", "iowait"))) + " |")

    tops = []
    for c in labels:
        rs = per[c]
        pooled, layer, objs = {}, {}, {}
        for r in rs:
            objs.update(r.get("objs", {}))
            for k, (n, ly) in leaves(r["chains"], r.get("objs", {})).items():
                pooled[k] = pooled.get(k, 0) + n
                for a, m in ly.items():
                    layer.setdefault(k, {})[a] = layer.get(k, {}).get(a, 0) + m
        total = sum(pooled.values())
        tops.append(f"#### {c} ({len(rs)} runs, {total} samples)\n")
        tops.append("| # | function (where the sample landed) | object | layer (self) | share |")
        tops.append("|---:|---|---|---|---:|")
        for i, (name, n) in enumerate(sorted(pooled.items(), key=lambda x: (-x[1], x[0]))[:TOP], 1):
            own = max(layer[name].items(), key=lambda x: x[1])[0]
            tops.append(f"| {i} | `{name}` | {objs.get(name, '-')} | {own} | {_pct(n, total):.1f}% |")
        tops.append("")
    return "\n".join(out), "\n".join(hot), "\n".join(runs), "\n".join(wall), "\n".join(tops)


METHOD = f"""Method: scenario `seed` on the series kernel, `size=2x loops=1` (the
workload of `make bench-swap`: 256 MB guest, 2 vCPUs, QEMU TCG
`thread=multi`), swapping to a local virtio-blk disk or to NBD over the tap
(`net=tap`, `-C 1`, nbd-server in the run's network namespace; the rig's
guests run with `tsc=unstable`, so their clock is the HPET), with
`profile={HZ}`: `tools/kprof` in the guest opens one perf event per CPU
(`PERF_COUNT_SW_CPU_CLOCK`, an hrtimer every {1000 // HZ} ms of that CPU's
time, idle or not; sampling the interrupted instruction pointer and three
callers) from just before the workload's begin snapshot to just after its
end one. A *sample* is one such tick: where the CPU was (a kernel function,
user space, or the idle loop). cpu-clock is not an NMI, so time with
interrupts disabled shows where they are enabled again (fault entry shows in
`exc_page_fault`, a context switch in `finish_task_switch`), and a tick that
comes late (interrupts off, or the vCPU thread not running on the host) is
one sample, not several ("of expected" below: samples / (seconds x CPUs x
{HZ})). Functions are placed in layers by the object file that defines them
in the build tree (`nm`); inlined code counts as its caller. *self*: the
layer of the function the sample landed in; *by caller*: a sample in a
shared service (`kernel/locking`, `kernel/time`, `kernel/smp.o`,
`kernel/workqueue.o`, wait queues (`kernel/sched/build_utility.o`), hpet, tsc,
apic, `drivers/virtio`, `lib/` except iov_iter) is charged to the first of
its three callers that is not one (the disk's or the NIC's driver for the
virtio ring, the block layer for the clock it reads). *ms per 1000 pages*:
the share of the samples times the vCPU time of the profile's window
(seconds x 2 CPUs), per 1000 pages swapped in or out (pswpin + pswpout):
guest time per page, idle included, so that a layer's rows add up to the
whole and the configurations' totals compare as their wall times do (it
assumes that the ticks that came late fell like the others). Cells: medians
over the runs. **TCG caveat**: every guest
instruction is emulated, and what emulation makes expensive (MMIO and port
I/O to a device model, TLB flushes, page-table switches, clock reads from the
HPET) is not what costs on hardware: these are shares of TCG time, not of a
real CPU's. Rows with the profiler off (same boots otherwise, interleaved)
show its cost in wall time. *host load*: the host's 1-minute load average
when the run started (2 cores; another engineer's guests and builds may
share them)."""


BEGIN, END = "<!-- generated by bench --swap-profile: begin -->", \
    "<!-- generated by bench --swap-profile: end -->"
PAGE = "swap-profile.md"


def generated(path, rows, elapsed):
    """The tables' part of the page, between BEGIN and END."""
    layers, hot, runs, wall, tops = tables(rows)
    reps = max((r["rep"] for r in rows), default=0)
    loads = [r["host_load"] for r in rows if r.get("host_load") is not None]
    return (f"{BEGIN}\n\n"
            f"Generated by `make bench-swap-profile` (`rig/netswap-run bench --swap-profile`, "
            f"{time.strftime('%Y-%m-%d')}, {elapsed:.0f} s); raw lines: `{os.path.basename(path)}`; "
            f"`rig/netswap-run bench --report docs/results/{os.path.basename(path)}` rebuilds "
            f"this part of the page (the text outside it is kept). Repetitions: {reps}; "
            f"host load at the runs' starts {_f(min(loads, default=None), '{:.2f}')}-"
            f"{_f(max(loads, default=None), '{:.2f}')}. "
            f"Benchmarks report; they do not pass or fail.\n\n"
            + METHOD + "\n\n### Guest CPU samples per layer\n\n" + layers + "\n\n"
            "### Single costs (samples whose chain matches; medians)\n\n" + hot + "\n\n"
            "### Wall time and /proc/stat, profiler on and off\n\n" + wall + "\n\n"
            "### Top functions (self; pooled over the runs)\n\n" + tops + "\n"
            "### Every run\n\n" + runs + f"\n\n{END}\n")


def write_md(path, rows, elapsed, md=None):
    """Write the generated part into the page, keeping the text around it."""
    md = md or os.path.join(RESULTS, PAGE)
    block = generated(path, rows, elapsed)
    old = _read(md) if os.path.exists(md) else \
        "# Where an NBD-swapped page's guest CPU goes, per layer (issue 15)\n\n" + BEGIN + END
    if BEGIN in old and END in old:
        a, rest = old.split(BEGIN, 1)
        text = a + block + rest.split(END, 1)[1].lstrip("\n")
    else:
        text = old.rstrip("\n") + "\n\n" + block
    with open(md, "w") as f:
        f.write(text)
    return md


def _elapsed(md):
    """The measured duration the page's generated part gives."""
    try:
        part = _read(md).split(BEGIN, 1)[1]
        return float(part.split(" s); raw lines", 1)[0].rsplit(", ", 1)[1])
    except (OSError, IndexError, ValueError):
        return 0.0


def report(path, md=None):
    """Rebuild the generated part of the page named after the results file
    (swap-profile.jsonl -> docs/results/swap-profile.md)."""
    rows = [json.loads(line) for line in _read(path).splitlines()]
    name = os.path.basename(path)
    md = md or os.path.join(RESULTS, (name[:-len(".jsonl")] if name.endswith(".jsonl") else name) + ".md")
    md = write_md(path, [r for r in rows if r.get("phase") == "swapprofile"], _elapsed(md), md)
    print(_read(md))
    return 0


def profile_runs(reps, outdir, builddir, jl, control=True):
    rows = []
    plan = [(label, sets, True) for label, sets in CONFIGS]
    if control:
        plan += [(label + CONTROL, sets, False) for label, sets in CONTROLLED]
    for rep in range(1, reps + 1):
        for label, sets, on in plan:
            say(f"swap profile: {label}, rep {rep}/{reps}")
            load = os.getloadavg()[0]
            t0 = time.time()
            rec, text = benchswap.one_run(BASE + sets + [f"profile={HZ if on else 0}"], outdir)
            r = {"phase": "swapprofile", "config": label, "sets": sets, "rep": rep,
                 "profile_hz": HZ if on else 0, "verdict": rec["verdict"], "wall_s": rec["wall_s"],
                 "pswpin": rec["pswpin"], "pswpout": rec["pswpout"],
                 "run_s": round(time.time() - t0, 1), "run_id": os.path.basename(rec["rundir"]),
                 "host_load": round(load, 2)}
            r.update(benchswap.costs(text))
            if on:
                summary, chains = parse(text)
                names = {n for c in chains for n in c.split("<")} - {"user", "?"}
                r.update({"kprof": summary, "chains": chains,
                          "objs": object_map(builddir, names)})
            rows.append(r)
            jl.write(json.dumps(r, sort_keys=True) + "\n")
            jl.flush()
    return rows


def main(argv):
    reps, outdir = benchswap.setup(argv)
    image = run.build_kernel("series")
    builddir = os.path.dirname(os.path.dirname(image))
    run.build_initramfs()
    t0 = time.time()
    path = os.path.join(RESULTS, "swap-profile.jsonl")
    with open(path, "w") as jl:
        rows = profile_runs(reps, outdir, builddir, jl,
                            control=os.environ.get("BENCH_PROFILE_CONTROL", "1") == "1")
    md = write_md(path, rows, time.time() - t0)
    say(f"done in {time.time() - t0:.0f}s: {md}")
    print(_read(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main([]))
