"""make bench: the seed's netperf table (iperf3 on the guest's loopback), the
cost of swapping over NBD against a local disk, and scaling with connections
and processes. Everything runs in one invocation, configurations interleaved
(A B A B ...) so that drift affects all alike. TCG figures are only meaningful
as ratios measured in the same run. Benchmarks report; nothing here passes or
fails on speed."""

import json
import os
import statistics
import subprocess
import sys
import time

from . import console, run, scenario
from .scenario import ROOT

RESULTS = os.path.join(ROOT, "docs", "results")
SIZES = [64, 128, 256, 1024, 2048, 3312, 4096, 8192, 16384]


def say(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def one(name, sets, outdir, kernels, base):
    sc = scenario.load(name, sets)
    if sc.variant not in kernels:
        kernels[sc.variant] = run.build_kernel(sc.variant)
    rec = run.run_once(sc, 1, kernels[sc.variant], base, outdir, quiet=True)
    rundir = rec["rundir"] if os.path.isabs(rec["rundir"]) else os.path.join(ROOT, rec["rundir"])
    with open(os.path.join(rundir, "console.log"), errors="replace") as f:
        text = f.read()
    return rec, text


def bench_lines(text):
    out = []
    for line in text.splitlines():
        if "NETSWAP: bench " in line:
            f = console.kv(line.split("NETSWAP: bench ", 1)[1])
            out.append({"proto": f["proto"], "size": int(f["size"]),
                        "bps": float(f["bits_per_second"] or 0)})
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2 or not statistics.median(xs):
        return 0.0
    return (max(xs) - min(xs)) / statistics.median(xs) * 100


def net_phase(quick, reps, outdir, kernels, base, jl):
    sizes = [64, 1024, 16384] if quick else SIZES
    secs = 1 if quick else 3
    configs = [("stock", 0), ("series", 0), ("stock", 1), ("series", 1)]
    rows = []
    for rep in range(1, reps + 1):
        for variant, nbd in configs:
            say(f"net: {variant} nbd={nbd} rep {rep}/{reps}")
            rec, text = one("bench-net", [f"variant={variant}", f"bench_nbd={nbd}",
                                          f"bench_seconds={secs}",
                                          f"bench_sizes={','.join(map(str, sizes))}"],
                            outdir, kernels, base)
            for b in bench_lines(text):
                r = dict(b, phase="net", variant=variant, nbd=nbd, rep=rep, verdict=rec["verdict"])
                rows.append(r)
                jl.write(json.dumps(r) + "\n")
            jl.flush()
    return rows


def net_table(rows):
    out = []
    for nbd in (0, 1):
        for proto in ("udp", "tcp"):
            what = "nbd attached (memalloc sockets exist)" if nbd else "no memalloc socket"
            out.append(f"\n**{proto.upper()}, {what}** "
                       "— Mbit/s, median of the repetitions (spread = (max-min)/median)\n")
            out.append("| size | stock | spread | series | spread | series/stock |")
            out.append("|---:|---:|---:|---:|---:|---:|")
            sizes = sorted({r["size"] for r in rows})
            for size in sizes:
                a = [r["bps"] / 1e6 for r in rows if r["proto"] == proto and r["size"] == size
                     and r["variant"] == "stock" and r["nbd"] == nbd]
                b = [r["bps"] / 1e6 for r in rows if r["proto"] == proto and r["size"] == size
                     and r["variant"] == "series" and r["nbd"] == nbd]
                ma, mb = med(a), med(b)
                ratio = f"{(mb / ma - 1) * 100:+.2f}%" if ma and mb else "-"
                out.append(f"| {size} | {ma or 0:.1f} | {spread(a):.1f}% | {mb or 0:.1f} | "
                           f"{spread(b):.1f}% | {ratio} |")
    return "\n".join(out)


def swap_phase(quick, reps, outdir, kernels, base, jl):
    sizes = ["1x", "2x"] if quick else ["1x", "2x", "4x"]
    configs = [("series", "nbd"), ("stock", "nbd"), ("series", "vblk")]
    rows = []
    for rep in range(1, reps + 1):
        for size in sizes:
            for variant, swap in configs:
                say(f"swap: {variant} swap={swap} size={size} rep {rep}/{reps}")
                rec, _ = one("seed", [f"variant={variant}", f"swap={swap}", f"size={size}",
                                      "procs=16" if quick else "procs=auto", "loops=1"],
                             outdir, kernels, base)
                pages = (rec["pswpin"] or 0) + (rec["pswpout"] or 0)
                r = {"phase": "swap", "variant": variant, "swap": swap, "size": size, "rep": rep,
                     "verdict": rec["verdict"], "wall_s": rec["wall_s"],
                     "pswpin": rec["pswpin"], "pswpout": rec["pswpout"],
                     "pages_per_s": round(pages / rec["wall_s"]) if rec["wall_s"] else None,
                     "ticks": rec["vm_ticks"]}
                rows.append(r)
                jl.write(json.dumps(r) + "\n")
                jl.flush()
    return rows


def swap_table(rows):
    cols = ["size", "series over NBD (s)", "stock over NBD (s)", "series, local virtio-blk (s)",
            "NBD / local", "series / stock", "swap pages/s NBD (series)", "local"]
    out = ["| " + " | ".join(cols) + " |", "|---|" + "---:|" * (len(cols) - 1)]
    for size in sorted({r["size"] for r in rows}, key=lambda s: float(s[:-1])):
        def m(v, sw, key="wall_s"):
            return med([r[key] for r in rows if r["size"] == size and r["variant"] == v
                        and r["swap"] == sw and r["verdict"] == "completed"])
        sn, st, sl = m("series", "nbd"), m("stock", "nbd"), m("series", "vblk")

        def f1(x):
            return f"{x:.1f}" if x else "-"

        def f0(x):
            return f"{x:.0f}" if x else "-"
        out.append(f"| {size} | {f1(sn)} | {f1(st)} | {f1(sl)} | "
                   f"{f'{sn / sl:.2f}x' if sn and sl else '-'} | {f'{sn / st:.2f}x' if sn and st else '-'} | "
                   f"{f0(m('series', 'nbd', 'pages_per_s'))} | {f0(m('series', 'vblk', 'pages_per_s'))} |")
    return "\n".join(out)


def scaling_phase(quick, outdir, kernels, base, jl):
    rows = []
    for conns in ([1, 4] if quick else [1, 2, 4, 8]):
        say(f"scaling: nbd -C {conns}")
        rec, text = one("seed", ["variant=series", f"nbd_connections={conns}", "size=2x", "loops=1"],
                        outdir, kernels, base)
        st = console.parse_log(text)
        r = {"phase": "conns", "conns": conns, "verdict": rec["verdict"], "wall_s": rec["wall_s"],
             "reserve_kbytes": console.num(st.info.get("memalloc_reserve_kbytes")),
             "throttled": rec["pgscan_direct_throttle"]}
        rows.append(r)
        jl.write(json.dumps(r) + "\n")
        jl.flush()
    for procs in ([8, 32] if quick else [8, 16, 32, 64]):
        say(f"scaling: {procs} processes")
        rec, _ = one("seed", ["variant=series", f"procs={procs}", "size=2x", "loops=1"],
                     outdir, kernels, base)
        r = {"phase": "procs", "procs": procs, "verdict": rec["verdict"], "wall_s": rec["wall_s"],
             "throttled": rec["pgscan_direct_throttle"]}
        rows.append(r)
        jl.write(json.dumps(r) + "\n")
        jl.flush()
    return rows


def scaling_tables(rows):
    out = ["| nbd connections | completion (s) | memalloc reserve (kB) | throttled | verdict |",
           "|---:|---:|---:|---:|---|"]
    for r in rows:
        if r["phase"] == "conns":
            out.append(f"| {r['conns']} | {r['wall_s']} | {r['reserve_kbytes']} | {r['throttled']} | {r['verdict']} |")
    out += ["", "| processes | completion (s) | throttled | verdict |", "|---:|---:|---:|---|"]
    for r in rows:
        if r["phase"] == "procs":
            out.append(f"| {r['procs']} | {r['wall_s']} | {r['throttled']} | {r['verdict']} |")
    return "\n".join(out)


def plots(net, swap, scaling, outdir, tag):
    """PNG plots with gnuplot (Debian's gnuplot-nox)."""
    made = []
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode:
        say("gnuplot not found: no plots")
        return made
    data = os.path.join(outdir, "plotdata")
    os.makedirs(data, exist_ok=True)
    for proto in ("tcp", "udp"):
        fn = os.path.join(data, f"net-{proto}.dat")
        with open(fn, "w") as f:
            for size in sorted({r["size"] for r in net}):
                vals = []
                for v, nbd in (("stock", 0), ("series", 0), ("stock", 1), ("series", 1)):
                    vals.append(med([r["bps"] / 1e6 for r in net if r["proto"] == proto and
                                     r["size"] == size and r["variant"] == v and r["nbd"] == nbd]) or 0)
                f.write(f"{size} " + " ".join(f"{x:.1f}" for x in vals) + "\n")
        png = os.path.join(RESULTS, f"bench-{tag}-net-{proto}.png")
        script = f"""set terminal png size 800,500
set output '{png}'
set title '{proto.upper()} on guest loopback (iperf3), TCG: compare ratios only'
set xlabel 'message size (bytes)'; set ylabel 'Mbit/s'; set logscale x 2; set key left top
plot '{fn}' u 1:2 w lp t 'stock', '' u 1:3 w lp t 'series', \\
     '' u 1:4 w lp t 'stock + nbd', '' u 1:5 w lp t 'series + nbd'
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=False)
        made.append(png)
    if swap:
        fn = os.path.join(data, "swap.dat")
        sizes = sorted({r["size"] for r in swap}, key=lambda s: float(s[:-1]))
        with open(fn, "w") as f:
            for i, size in enumerate(sizes):
                vals = [med([r["wall_s"] for r in swap if r["size"] == size and r["variant"] == v and
                             r["swap"] == sw and r["verdict"] == "completed"]) or 0
                        for v, sw in (("series", "nbd"), ("stock", "nbd"), ("series", "vblk"))]
                f.write(f"{i} {size} " + " ".join(str(x) for x in vals) + "\n")
        png = os.path.join(RESULTS, f"bench-{tag}-swap.png")
        script = f"""set terminal png size 800,500
set output '{png}'
set title 'seed workload completion time by size (TCG)'
set style data histogram; set style histogram cluster gap 1; set style fill solid 0.7
set ylabel 'seconds'; set xlabel 'anonymous memory, x guest RAM'; set key left top
plot '{fn}' u 3:xtic(2) t 'series, NBD', '' u 4 t 'stock, NBD', '' u 5 t 'series, local virtio-blk'
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=False)
        made.append(png)
        # swap throughput over time, one run of each config at the largest size
        fn = os.path.join(data, "swap-ticks.dat")
        big = sizes[-1]
        with open(fn, "w") as f:
            for v, sw in (("series", "nbd"), ("stock", "nbd"), ("series", "vblk")):
                rr = [r for r in swap if r["size"] == big and r["variant"] == v and r["swap"] == sw]
                if not rr:
                    continue
                ticks = rr[0]["ticks"]
                f.write(f"# {v} {sw}\n")
                prev = None
                for t in ticks:
                    tt, pi, po = (console.num(t.get(k)) for k in ("t", "pswpin", "pswpout"))
                    if None in (tt, pi, po):
                        continue
                    if prev:
                        dt = tt - prev[0]
                        if dt > 0:
                            f.write(f"{tt} {(pi + po - prev[1]) / dt:.0f}\n")
                    prev = (tt, pi + po)
                f.write("\n\n")
        png = os.path.join(RESULTS, f"bench-{tag}-swap-rate.png")
        script = f"""set terminal png size 800,500
set output '{png}'
set title 'swap pages/s (pswpin + pswpout) over time, {big} RAM (TCG)'
set xlabel 'guest uptime (s)'; set ylabel 'pages/s'; set key right top
plot '{fn}' index 0 w l t 'series, NBD', '' index 1 w l t 'stock, NBD', '' index 2 w l t 'series, local virtio-blk'
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=False)
        made.append(png)
    conns = [r for r in scaling if r["phase"] == "conns"]
    if conns:
        fn = os.path.join(data, "conns.dat")
        with open(fn, "w") as f:
            for r in conns:
                f.write(f"{r['conns']} {r['wall_s'] or 0} {r['reserve_kbytes'] or 0}\n")
        png = os.path.join(RESULTS, f"bench-{tag}-scaling.png")
        script = f"""set terminal png size 800,500
set output '{png}'
set title 'series: completion (2x RAM) and memalloc reserve by nbd connections (TCG)'
set xlabel 'nbd connections (-C)'; set ylabel 'seconds'; set y2label 'reserve (kB)'; set y2tics; set ytics nomirror
plot '{fn}' u 1:2 w lp t 'completion (s)', '' u 1:3 axes x1y2 w lp t 'memalloc reserve (kB)'
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=False)
        made.append(png)
    return made


READING = """How to read it. The spread columns show how much TCG moves between
repetitions of one configuration (often 20-50 %); a series/stock ratio inside
that spread is noise, not a cost. The seed's question is whether anything
moves consistently in one direction: look for rows where both spreads are
small and the ratio is still large.

Swap cost rows: the workload's 32 processes each map an equal slice; at 1 x
RAM each slice is small enough that a process fills, verifies and exits
within its time slice, so the processes never hold 1 x RAM at once and
nothing is swapped (pswpout 0) — that row measures no swapping at all. At
2 x and 4 x the whole excess goes through swap.
"""


def write_md(tag, reps, elapsed, path, net, swap, scaling, pngs):
    md = os.path.join(RESULTS, f"bench-{tag}.md")
    with open(md, "w") as f:
        f.write(f"# Benchmarks ({tag}, {time.strftime('%Y-%m-%d')}, {elapsed:.0f} s)\n\n")
        f.write("Guest: 256 MB, 2 vCPUs, QEMU TCG on a 2-core host. **TCG figures are only "
                "meaningful as ratios measured in the same run**; configurations were run "
                "interleaved (A B A B ...). Benchmarks report; they do not pass or fail.\n\n")
        f.write(READING + "\n")
        f.write("## Network overhead, TCG wall clock (iperf3 on the guest's loopback; the seed's "
                "netperf table)\n\n")
        f.write("A second view: the host's load moves these figures. The same table under "
                "instruction counting, which it does not move: `bench-icount.md` "
                "(`make bench-icount`).\n\n")
        f.write(f"Repetitions: {reps}; raw samples: `{os.path.basename(path)}`.\n")
        f.write(net_table(net) + "\n\n")
        f.write("## Swap cost: NBD against a local disk (seed workload, one pass)\n\n")
        f.write("All times are TCG wall seconds from workload start to end; ratios are the point.\n\n")
        f.write(swap_table(swap) + "\n\n")
        f.write("## Scaling\n\n" + scaling_tables(scaling) + "\n\n")
        for p in pngs:
            f.write(f"![{os.path.basename(p)}]({os.path.basename(p)})\n")
    return md


def report(path):
    """Rebuild bench-TAG.md and the plots from a results file (bench --report FILE)."""
    rows = [json.loads(line) for line in open(path)]
    if any(r.get("phase") == "swapprofile" for r in rows):
        from . import swapprofile      # a make bench-swap-profile results file
        return swapprofile.report(path)
    if any(r.get("phase") == "swapcost" for r in rows):
        from . import benchswap        # a make bench-swap results file
        return benchswap.report(path)
    if any(r.get("phase") in ("net-icount", "net-tcg", "fastpath") for r in rows):
        from . import benchicount      # a make bench-icount results file
        return benchicount.report(path)
    net = [r for r in rows if r.get("phase") == "net"]
    swap = [r for r in rows if r.get("phase") == "swap"]
    scaling = [r for r in rows if r.get("phase") in ("conns", "procs")]
    tag = "quick" if "quick" in os.path.basename(path) else "full"
    reps = max((r.get("rep", 1) for r in net), default=1)
    pngs = plots(net, swap, scaling, os.path.join(run.OUT, "bench"), tag)
    old = os.path.join(RESULTS, f"bench-{tag}.md")
    elapsed = 0.0
    if os.path.exists(old):  # keep the measured duration of the run
        head = open(old).readline()
        try:
            elapsed = float(head.rsplit(", ", 1)[1].split(" s)")[0])
        except (IndexError, ValueError):
            pass
    md = write_md(tag, reps, elapsed, path, net, swap, scaling, pngs)
    print(open(md).read())
    return 0


def main(argv):
    if "--report" in argv:
        return report(argv[argv.index("--report") + 1])
    if "--icount" in argv:
        from . import benchicount      # make bench-icount
        return benchicount.main(argv)
    if "--swap-profile" in argv:
        from . import swapprofile      # make bench-swap-profile
        return swapprofile.main(argv)
    if "--swap" in argv:
        from . import benchswap        # make bench-swap
        return benchswap.main(argv)
    quick = os.environ.get("BENCH_QUICK") == "1" or "--quick" in argv
    reps = 1 if quick else int(os.environ.get("BENCH_REPS", "3"))
    outdir = os.path.join(run.OUT, "bench")
    os.makedirs(RESULTS, exist_ok=True)
    tag = "quick" if quick else "full"
    kernels = {}
    for v in ("stock", "series"):
        say(f"kernel {v}")
        kernels[v] = run.build_kernel(v)
    base = run.build_initramfs()
    t0 = time.time()
    path = os.path.join(RESULTS, f"bench-{tag}.jsonl")
    with open(path, "w") as jl:
        net = net_phase(quick, reps, outdir, kernels, base, jl)
        swap = swap_phase(quick, 1 if quick else 2, outdir, kernels, base, jl)
        scaling = scaling_phase(quick, outdir, kernels, base, jl)
    pngs = plots(net, swap, scaling, outdir, tag)
    md = write_md(tag, reps, time.time() - t0, path, net, swap, scaling, pngs)
    say(f"done in {time.time() - t0:.0f}s: {md}")
    print(open(md).read())
    return 0
