"""make bench-icount: the seed's network table and the per-call cost of the
allocation fast paths the series changes, measured under QEMU instruction
counting (scenario accel = icount: guest time is a function of the
instructions executed, 1 ns per instruction), stock against series, with and
without a memalloc socket; and, as a second view, the same network runs on
plain TCG, timed by the wall clock.

Everything runs in one invocation, configurations interleaved boot by boot
(A B A B ...). Every run's lines go to a JSON-lines file; `bench --report
FILE` rebuilds every table and the plot from it. Benchmarks report; nothing
here passes or fails on speed."""

import json
import os
import statistics
import subprocess
import time

from . import bench, console, run, scenario
from .bench import say
from .scenario import ROOT

CONFIGS = (("stock", 0), ("series", 0), ("stock", 1), ("series", 1))
QUICK_SIZES = "64,1024,16384"
NBD_WHAT = {0: "no memalloc socket", 1: "nbd attached (memalloc sockets exist)"}

METHOD_NET = """Method: `tools/loopbench` in the guest (scenario `bench-icount`), QEMU
`-accel tcg,thread=single -icount shift=0,sleep=off`, one vCPU, no
RDRAND/RDSEED, RTC on the virtual clock: guest time is the number of guest
instructions executed (1 ns each), so Mbit/s here is bytes per instruction,
whatever else the host is doing. One connection (TCP) or socket pair (UDP)
per size: an untimed warm-up of four repetitions' worth, then timed
repetitions of 65536 messages (16 MB at most) each, printed only after the
last; `i8042.noaux` (no PS/2 mouse probe, whose outcome followed the host's
timing). The sender
runs under SCHED_FIFO above the receiver (which of the two runs is fixed),
RT throttling off; UDP is paced (the sender waits for the receiver's word
every min(128, 65536 / size) datagrams: nothing is dropped, `stalls` counts
words that did not come). Each cell: median of every repetition of every
boot; spread = (max - min) / median over those samples. A row counts as a
cost (or a gain) only when the difference is larger than both spreads."""

METHOD_FASTPATH = """Method: the fast-path fixture (`test/fixtures/fastpath-bench.patch`, a
test-only kernel: variants `stock-bench`, `series-bench`; never in
`patches/`), scenario `fastpath-bench`, under the same instruction counting.
Each benchmark allocates a batch of 64 objects, then frees them, 2000 rounds
after one untimed round; the clock is read around each half and one clock
read is subtracted per interval. NAPI calls run inside `local_bh_disable()`,
the others in process context as a socket's sendmsg would. First with the
memalloc sockets' static key as found (off), then switched on with
`static_branch_inc(&memalloc_socks_key)` as `sk_set_memalloc()` does. Figures
are guest instructions per call (1 ns = 1 instruction); cell = median over
boots and in-boot repetitions, spread = (max - min) / median. `frag_refill`
256 reuses the page every round; 1024 allocates a new 32 KB page every 32
calls."""

METHOD_JL = """Method: as above, on the variants `stock-bench-jl` and `series-bench-jl`
(`test/fixtures/jump-label.config`). The rig's guest config (tinyconfig +
`kconfig/guest.config`) has no `CONFIG_JUMP_LABEL`, so there a disabled
`static_branch_unlikely()` is a load, a test and a branch (3 instructions);
with jump labels it is one 5-byte NOP, as in Debian's kernels. The
difference between the two tables is what the rig's config adds."""

METHOD_WALL = """Second view, TCG wall clock: the same scenario and tool with `accel = tcg`
(`-accel tcg,thread=multi`, one vCPU), timed by the guest's clock, which
follows the host's: the figures move with whatever else the 2-core host runs
(kernel builds, other guests) and are shown only to compare with the table
above. Same cell and spread definitions."""


def parse_net(text):
    """loopbench's lines ("NETSWAP: bench proto=... rep=...") of a console."""
    out = []
    for line in text.splitlines():
        if "NETSWAP: bench proto=" not in line:
            continue
        f = console.kv(line.split("NETSWAP: bench ", 1)[1])
        try:
            out.append({"proto": f["proto"], "size": int(f["size"]), "rep": int(f["rep"]),
                        "bytes": int(f["bytes"]), "sent": int(f["sent"]), "ns": int(f["ns"]),
                        "bps": float(f["bits_per_second"]), "window": int(f.get("window", 0)),
                        "stalls": int(f.get("stalls", 0))})
        except (KeyError, ValueError):
            continue      # a line cut by the console: not a sample
    return out


def parse_fastpath(text):
    """The fixture's result lines, as guest/tests/fastpath-bench.sh prints them."""
    out = []
    for line in text.splitlines():
        if "NETSWAP: fastpath rep=" not in line or " op=" not in line:
            continue
        f = console.kv(line.split("NETSWAP: fastpath ", 1)[1])
        try:
            out.append({"rep": int(f["rep"]), "name": f["name"], "len": int(f["len"]),
                        "memalloc": int(f["memalloc"]), "op": f["op"], "calls": int(f["calls"]),
                        "ns": int(f["ns"]), "ns_per_call": float(f["ns_per_call"]),
                        "clock_ns": int(f["clock_ns"])})
        except (KeyError, ValueError):
            continue
    return out


def info(text, prefix):
    """Fields of the last "NETSWAP: info PREFIX k=v ..." line."""
    fields = {}
    for line in text.splitlines():
        if f"NETSWAP: info {prefix} " in line:
            fields = console.kv(line.split(f"NETSWAP: info {prefix} ", 1)[1])
    return fields


def one(name, sets, outdir, kernels, base):
    """One boot of scenario NAME; its record and console. KUnit stays off on
    kernels with the series (run_once's series flag), as on stock."""
    sc = scenario.load(name, sets)
    if sc.variant not in kernels:
        kernels[sc.variant] = run.build_kernel(sc.variant)
    rec = run.run_once(sc, 1, kernels[sc.variant], base, outdir, quiet=True,
                       series=run.variant_has_series(sc.variant))
    rundir = rec["rundir"] if os.path.isabs(rec["rundir"]) else os.path.join(ROOT, rec["rundir"])
    with open(os.path.join(rundir, "console.log"), errors="replace") as f:
        return rec, f.read()


def _run_row(phase, rec, text, boot, **kw):
    i = info(text, "bench") or info(text, "fastpath")
    return dict(kw, phase="run", of=phase, boot=boot, run_id=rec["run_id"],
                verdict=rec["verdict"], wall_s=rec["wall_s"], accel=rec["accel"],
                clocksource=i.get("clocksource"), memalloc_sockets=i.get("memalloc_sockets"),
                loopbench_opts=i.get("loopbench_opts"),
                errors=[line for line in text.splitlines() if "NETSWAP: error" in line][:5])


def net_phase(accel, boots, quick, outdir, kernels, base, jl):
    phase = f"net-{accel}"
    rows = []
    for boot in range(1, boots + 1):
        for variant, nbd in CONFIGS:
            say(f"{phase}: {variant} nbd={nbd} boot {boot}/{boots}")
            sets = [f"variant={variant}", f"bench_nbd={nbd}", f"accel={accel}"]
            if quick:
                sets.append(f"bench_sizes={QUICK_SIZES}")
            rec, text = one("bench-icount", sets, outdir, kernels, base)
            out = [_run_row(phase, rec, text, boot, variant=variant, nbd=nbd)]
            out += [dict(r, phase=phase, variant=variant, nbd=nbd, boot=boot) for r in parse_net(text)]
            for r in out:
                jl.write(json.dumps(r) + "\n")
            jl.flush()
            rows += out
    return rows


# fast-path kernels: the rig's guest config, and the same with jump labels
FASTPATH_CONFIGS = (("rig", ""), ("jump_label", "-jl"))


def fastpath_phase(boots, outdir, kernels, base, jl, config="rig"):
    suffix = dict(FASTPATH_CONFIGS)[config]
    rows = []
    for boot in range(1, boots + 1):
        for variant in ("stock", "series"):
            kernel = f"{variant}-bench{suffix}"
            say(f"fastpath: {kernel} boot {boot}/{boots}")
            rec, text = one("fastpath-bench", [f"variant={kernel}"], outdir, kernels, base)
            out = [_run_row("fastpath", rec, text, boot, variant=variant, kernel=kernel, config=config)]
            out += [dict(r, phase="fastpath", variant=variant, boot=boot, config=config)
                    for r in parse_fastpath(text)]
            for r in out:
                jl.write(json.dumps(r) + "\n")
            jl.flush()
            rows += out
    return rows


# ---- tables (rebuilt from the raw lines) ----

def spread(xs):
    """(max - min) / median in percent; 0 for fewer than two samples."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2 or not statistics.median(xs):
        return 0.0
    return (max(xs) - min(xs)) / statistics.median(xs) * 100


def judge(a, b, sa, sb, higher_is_better=True):
    """'cost', 'gain' or '-' (within the spreads) for series b against stock a."""
    if not a or not b:
        return "no data"
    diff = (b / a - 1) * 100
    if abs(diff) <= max(sa, sb):
        return "-"
    worse = diff < 0 if higher_is_better else diff > 0
    return "**cost**" if worse else "gain"


def net_cells(rows, phase):
    """{(nbd, proto, size): {variant: [Mbit/s, ...]}} of one phase's samples."""
    cells = {}
    for r in rows:
        if r.get("phase") != phase or "bps" not in r:
            continue
        c = cells.setdefault((r["nbd"], r["proto"], r["size"]), {})
        c.setdefault(r["variant"], []).append(r["bps"] / 1e6)
    return cells


def net_table(rows, phase):
    cells = net_cells(rows, phase)
    out = []
    for nbd in (0, 1):
        for proto in ("tcp", "udp"):
            sizes = sorted(s for n, p, s in cells if n == nbd and p == proto)
            if not sizes:
                continue
            samples = len(cells[(nbd, proto, sizes[0])].get("stock", []))
            out.append(f"\n**{proto.upper()}, {NBD_WHAT[nbd]}** — Mbit/s, median of {samples} "
                       "samples (repetitions x boots); spread = (max-min)/median\n")
            out.append("| size | stock | spread | series | spread | series/stock | outside both spreads |")
            out.append("|---:|---:|---:|---:|---:|---:|---|")
            for size in sizes:
                a = cells[(nbd, proto, size)].get("stock", [])
                b = cells[(nbd, proto, size)].get("series", [])
                ma = statistics.median(a) if a else None
                mb = statistics.median(b) if b else None
                sa, sb = spread(a), spread(b)
                ratio = f"{(mb / ma - 1) * 100:+.2f}%" if ma and mb else "-"
                out.append(f"| {size} | {ma or 0:.2f} | {sa:.2f}% | {mb or 0:.2f} | {sb:.2f}% | "
                           f"{ratio} | {judge(ma, mb, sa, sb)} |")
    return "\n".join(out)


def net_summary(rows, phase):
    """One line: which rows count as a cost or a gain (outside both spreads)."""
    cells = net_cells(rows, phase)
    costs, gains, total = [], [], 0
    for (nbd, proto, size), c in sorted(cells.items()):
        a, b = c.get("stock", []), c.get("series", [])
        if not a or not b:
            continue
        total += 1
        ma, mb = statistics.median(a), statistics.median(b)
        v = judge(ma, mb, spread(a), spread(b))
        what = f"{proto.upper()} {size}{' + nbd' if nbd else ''} ({(mb / ma - 1) * 100:+.2f}%)"
        (costs if v == "**cost**" else gains if v == "gain" else []).append(what)
    return (f"Rows outside both spreads: {len(costs) + len(gains)} of {total}. "
            f"Costs: {', '.join(costs) or 'none'}. Gains: {', '.join(gains) or 'none'}.")


def fastpath_cells(rows, config="rig"):
    cells = {}
    for r in rows:
        if r.get("phase") != "fastpath" or "ns_per_call" not in r or r.get("config", "rig") != config:
            continue
        c = cells.setdefault((r["memalloc"], r["name"], r["len"], r["op"]), {})
        c.setdefault(r["variant"], []).append(r["ns_per_call"])
    return cells


def _zero(d):
    """A difference that prints as 0.0 is +0.0, not -0.0."""
    return 0.0 if abs(d) < 0.05 else d


def fastpath_order(rows):
    """(name, len, op) in the fixture's own order."""
    order = []
    for r in rows:
        k = (r.get("name"), r.get("len"), r.get("op"))
        if r.get("phase") == "fastpath" and "op" in r and k not in order:
            order.append(k)
    return order


def fastpath_table(rows, config="rig"):
    cells = fastpath_cells(rows, config)
    order = fastpath_order(rows)
    out = []
    for memalloc in (0, 1):
        if not any(k[0] == memalloc for k in cells):
            continue
        what = ("memalloc_socks_key on (as while a memalloc socket exists)" if memalloc
                else "memalloc_socks_key off (no memalloc socket)")
        out.append(f"\n**{what}** — guest instructions per call, median; "
                   "spread = (max-min)/median over boots and repetitions\n")
        out.append("| call | len | op | stock | spread | series | spread | series - stock | "
                   "series/stock | outside both spreads |")
        out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
        for name, length, op in order:
            c = cells.get((memalloc, name, length, op))
            if not c:
                continue
            a, b = c.get("stock", []), c.get("series", [])
            ma = statistics.median(a) if a else None
            mb = statistics.median(b) if b else None
            sa, sb = spread(a), spread(b)
            diff = f"{_zero(mb - ma):+.1f}" if ma is not None and mb is not None else "-"
            ratio = f"{(mb / ma - 1) * 100:+.2f}%" if ma and mb else "-"
            out.append(f"| {name} | {length} | {op} | {ma or 0:.1f} | {sa:.2f}% | {mb or 0:.1f} | "
                       f"{sb:.2f}% | {diff} | {ratio} | {judge(ma, mb, sa, sb, higher_is_better=False)} |")
    return "\n".join(out)


def memalloc_table(rows, config="rig"):
    """What switching the memalloc sockets' key on costs each kernel."""
    cells = fastpath_cells(rows, config)
    keys = fastpath_order(rows)
    out = ["| call | len | op | stock: on - off | series: on - off |", "|---|---:|---|---:|---:|"]
    for name, length, op in keys:
        vals = []
        for v in ("stock", "series"):
            off = cells.get((0, name, length, op), {}).get(v)
            on = cells.get((1, name, length, op), {}).get(v)
            vals.append(f"{_zero(statistics.median(on) - statistics.median(off)):+.1f}"
                        if off and on else "-")
        out.append(f"| {name} | {length} | {op} | {vals[0]} | {vals[1]} |")
    return "\n".join(out)


def runs_table(rows):
    out = ["| phase | variant | nbd | boot | verdict | wall s | clocksource | memalloc sockets | errors |",
           "|---|---|---:|---:|---|---:|---|---|---|"]
    for r in rows:
        if r.get("phase") == "run":
            out.append(f"| {r['of']} | {r.get('kernel') or r['variant']} | {r.get('nbd', '-')} | "
                       f"{r['boot']} | {r['verdict']} | {r['wall_s']} | {r.get('clocksource')} | "
                       f"{r.get('memalloc_sockets') or '-'} | {'; '.join(r.get('errors') or []) or '-'} |")
    return "\n".join(out)


def plot(rows, tag):
    """series/stock by size under instruction counting, error bars = the larger spread."""
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode:
        say("gnuplot not found: no plot")
        return None
    cells = net_cells(rows, "net-icount")
    if not cells:
        return None
    data = os.path.join(run.OUT, "bench", "plotdata")
    os.makedirs(data, exist_ok=True)
    fn = os.path.join(data, f"{tag}-net.dat")
    blocks = []
    with open(fn, "w") as f:
        for nbd in (0, 1):
            for proto in ("tcp", "udp"):
                sizes = sorted(s for n, p, s in cells if n == nbd and p == proto)
                if not sizes:
                    continue
                blocks.append(f"{proto.upper()}, {'nbd attached' if nbd else 'no memalloc socket'}")
                f.write(f"# {blocks[-1]}\n")
                for size in sizes:
                    a = cells[(nbd, proto, size)].get("stock", [])
                    b = cells[(nbd, proto, size)].get("series", [])
                    if a and b:
                        r = (statistics.median(b) / statistics.median(a) - 1) * 100
                        f.write(f"{size} {r:.4f} {max(spread(a), spread(b)):.4f}\n")
                f.write("\n\n")
    png = os.path.join(bench.RESULTS, f"{tag}-net.png")
    curves = ", ".join(f"'{fn}' index {i} u ($1*{1 + 0.04 * i:.2f}):2:3 w yerrorlines t '{t}'"
                       for i, t in enumerate(blocks))
    script = f"""set terminal png size 900,520
set output '{png}'
set title 'series vs stock, guest loopback, instruction counting (bars: larger spread)' noenhanced
set xlabel 'message size (bytes)'; set ylabel 'series/stock - 1 (%)'; set logscale x 2
set key outside right; set grid ytics; set yrange [-3:3]
plot {curves}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=False)
    return png


def write_md(path, rows):
    tag = os.path.basename(path).rsplit(".", 1)[0]
    meta = meta_of(rows)
    md = os.path.join(bench.RESULTS, f"{tag}.md")
    png = plot(rows, tag)
    boots = meta.get("boots", {})
    with open(md, "w") as f:
        elapsed = f"{meta['elapsed_s']:.0f} s" if meta.get("elapsed_s") else "time not recorded"
        f.write(f"# Benchmarks under instruction counting ({meta.get('date', '?')}, {elapsed})\n\n")
        f.write("Generated by `make bench-icount` (`rig/netswap-run bench --icount`); "
                f"`rig/netswap-run bench --report docs/results/{os.path.basename(path)}` rebuilds "
                f"this page from the raw JSON lines in `{os.path.basename(path)}` (one line per "
                "sample, one `phase: run` line per boot). Guest: 256 MB, 1 vCPU; host: "
                f"{meta.get('qemu', 'QEMU')} on 2 cores shared with other work. Configurations "
                "interleaved boot by boot (stock, series, stock + nbd, series + nbd, ...). "
                "Benchmarks report; they do not pass or fail. What the figures say, in words: "
                "`bench-icount-findings.md`; what is left nondeterministic and how the method "
                "was chosen: `bench-icount-determinism.md`.\n\n")
        f.write("## Network overhead under instruction counting (the seed's netperf table)\n\n")
        f.write(f"Boots per configuration: {boots.get('net-icount', '?')}.\n\n")
        f.write(METHOD_NET + "\n")
        f.write(net_table(rows, "net-icount") + "\n\n")
        f.write(net_summary(rows, "net-icount") + "\n\n")
        if png:
            f.write(f"![{os.path.basename(png)}]({os.path.basename(png)})\n\n")
        for config, _ in FASTPATH_CONFIGS:
            if not fastpath_cells(rows, config):
                continue
            if config == "rig":
                f.write("## Per-call cost of the fast paths the series changes\n\n")
                f.write(f"Boots per kernel: {boots.get('fastpath', '?')}.\n\n")
                f.write(METHOD_FASTPATH + "\n")
            else:
                f.write("## The same with jump labels (`CONFIG_JUMP_LABEL=y`, as Debian builds)\n\n")
                f.write(f"Boots per kernel: {boots.get('fastpath-jl', '?')}.\n\n")
                f.write(METHOD_JL + "\n")
            f.write(fastpath_table(rows, config) + "\n\n")
            f.write("What switching the key on costs each kernel (instructions per call, "
                    "medians, on minus off):\n\n")
            f.write(memalloc_table(rows, config) + "\n\n")
        if any(r.get("phase") == "net-tcg" for r in rows):
            f.write("## Second view: the same network runs on TCG, wall clock\n\n")
            f.write(f"Boots per configuration: {boots.get('net-tcg', '?')}.\n\n")
            f.write(METHOD_WALL + "\n")
            f.write(net_table(rows, "net-tcg") + "\n\n")
            f.write(net_summary(rows, "net-tcg") + "\n\n")
        f.write("## Runs\n\n" + runs_table(rows) + "\n")
    return md


def report(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    md = write_md(path, rows)
    print(open(md).read())
    return 0


def qemu_version():
    r = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else "QEMU"


PHASES = ("fastpath", "fastpath-jl", "net-icount", "net-tcg")
PHASE_KERNELS = {"fastpath": ("stock-bench", "series-bench"),
                 "fastpath-jl": ("stock-bench-jl", "series-bench-jl"),
                 "net-icount": ("stock", "series"), "net-tcg": ("stock", "series")}


def _arg(argv, name):
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def meta_of(rows):
    """The runs' meta lines merged: boots per phase, elapsed time summed."""
    meta = {"boots": {}, "elapsed_s": 0}
    for r in rows:
        if r.get("phase") == "meta":
            meta.update({k: v for k, v in r.items() if k not in ("boots", "elapsed_s")})
            meta["boots"].update(r.get("boots", {}))
            meta["elapsed_s"] += r.get("elapsed_s", 0)
    # A run stopped before its end wrote no meta line: say what its run lines show
    runs = [r for r in rows if r.get("phase") == "run"]
    for phase in sorted({r.get("of") for r in runs} - set(meta["boots"]) - {None}):
        seen = max(r.get("boot", 0) for r in runs if r.get("of") == phase)
        meta["boots"][phase] = (f"{seen} at most (no meta line: the run was stopped "
                                "before its end; each table says its samples)")
    if "date" not in meta and runs:
        rid = runs[0].get("run_id", "")
        meta["date"] = f"{rid[0:4]}-{rid[4:6]}-{rid[6:8]}" if rid[:8].isdigit() else "?"
    return meta


def main(argv):
    """bench --icount [--quick] [--only PHASE,...] [--append]: PHASE of
    fastpath, fastpath-jl, net-icount, net-tcg (default: all); --append adds
    to the results file instead of starting it again (a phase run later)."""
    quick = os.environ.get("BENCH_QUICK") == "1" or "--quick" in argv
    boots = {"net-icount": 1 if quick else int(os.environ.get("BENCH_BOOTS", "4")),
             "fastpath": 1 if quick else int(os.environ.get("BENCH_FASTPATH_BOOTS", "3")),
             "fastpath-jl": 1 if quick else int(os.environ.get("BENCH_FASTPATH_BOOTS", "3")),
             "net-tcg": 1 if quick else int(os.environ.get("BENCH_WALL_BOOTS", "2"))}
    only = (_arg(argv, "--only") or ",".join(PHASES)).split(",")
    bad = [p for p in only if p not in PHASES]
    if bad:
        say(f"unknown phase {', '.join(bad)}; phases: {', '.join(PHASES)}")
        return 2
    boots = {p: n for p, n in boots.items() if p in only}
    outdir = os.path.join(run.OUT, "bench")
    os.makedirs(bench.RESULTS, exist_ok=True)
    # BENCH_ICOUNT_TAG names the results file (docs/results/TAG.jsonl), e.g.
    # to measure one phase on another version of the series without mixing
    # its samples into the main table
    tag = os.environ.get("BENCH_ICOUNT_TAG") or ("bench-icount-quick" if quick else "bench-icount")
    kernels = {}
    for p in PHASES:
        for v in PHASE_KERNELS[p] if p in only else ():
            if v not in kernels:
                say(f"kernel {v}")
                kernels[v] = run.build_kernel(v)
    base = run.build_initramfs()
    t0 = time.time()
    path = os.path.join(bench.RESULTS, f"{tag}.jsonl")
    with open(path, "a" if "--append" in argv else "w") as jl:
        if "fastpath" in only:
            fastpath_phase(boots["fastpath"], outdir, kernels, base, jl)
        if "fastpath-jl" in only:
            fastpath_phase(boots["fastpath-jl"], outdir, kernels, base, jl, config="jump_label")
        for accel in ("icount", "tcg"):
            if f"net-{accel}" in only:
                net_phase(accel, boots[f"net-{accel}"], quick, outdir, kernels, base, jl)
        jl.write(json.dumps({"phase": "meta", "date": time.strftime("%Y-%m-%d"),
                             "elapsed_s": round(time.time() - t0), "boots": boots,
                             "qemu": qemu_version(), "quick": quick}) + "\n")
    md = write_md(path, [json.loads(line) for line in open(path)])
    say(f"done in {time.time() - t0:.0f}s: {md}")
    print(open(md).read())
    return 0
