"""Summaries of result lines: the human summary after a run and the A/B tables."""

import json
import statistics


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{p}:{n}: not a JSON line: {e}") from None
    return recs


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, unit=""):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.0f}{unit}" if abs(x) >= 10 else f"{x:.1f}{unit}"
    return f"{x}{unit}"


def human(rec):
    """The short summary `make demo` ends with."""
    v = rec["verdict"]
    lines = [
        f"netswap run {rec['run_id']}",
        f"  kernel variant   {rec['variant']} ({rec['nic']}, {rec['ram_mb']} MB, {rec['cpus']} vCPUs, {rec['accel']})",
        f"  workload         {rec['workload']}",
        f"  verdict          {v.upper()}" + (
            f" (no progress for {rec['hang_after']}s after {fmt(rec['time_to_hang_s'], 's')} of work)"
            if v == "hung" else ""),
        f"  wall time        {fmt(rec['wall_s'], ' s')} (boot + swapon {fmt(rec['boot_s'], ' s')})",
        f"  guest time       {fmt(rec['guest_elapsed_s'], ' s')}",
        f"  pswpin/pswpout   {fmt(rec['pswpin'])} / {fmt(rec['pswpout'])}",
        f"  pgscan_direct_throttle {fmt(rec['pgscan_direct_throttle'])}",
        f"  PFMemallocDrop   {fmt(rec['pfmemalloc_drop'])}",
        f"  pages verified   {fmt(rec['verified'])}",
        f"  corrupt pages    {fmt(rec['corrupt'])}",
        f"  logs             {rec['rundir']}",
    ]
    if rec.get("stalls"):
        lines.insert(4, f"  stalls           {len(rec['stalls'])} (progress resumed after >{rec['hang_after']}s)")
    return "\n".join(lines)


def kernel_cell(rs):
    """Fatal kernel reports of these runs: '-' for records that predate
    them, 'clean', or each kind with the number of runs that had it."""
    if any("kernel_clean" not in r for r in rs):
        return "-"
    kinds = {}
    for r in rs:
        for k in r["kernel_fatal"]:
            kinds[k] = kinds.get(k, 0) + 1
    return ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items())) or "clean"


def group_key(r):
    return (r["scenario"], r["variant"], r["nic"])


def ab_table(recs):
    """Markdown: per (scenario, variant, nic): runs, completed, hung, other,
    median completion time, median time-to-hang, corrupt pages."""
    groups = {}
    for r in recs:
        groups.setdefault(group_key(r), []).append(r)
    cols = ["scenario", "variant", "NIC", "runs", "completed", "hung", "other",
            "median completion (s)", "median time-to-hang (s)", "corrupt pages",
            "median pswpout", "median throttled", "kernel reports"]
    out = ["| " + " | ".join(cols) + " |", "|---|---|---|" + "---:|" * (len(cols) - 3)]
    for (s, v, n), rs in sorted(groups.items()):
        comp = [r for r in rs if r["verdict"] == "completed"]
        hung = [r for r in rs if r["verdict"] == "hung"]
        other = [r for r in rs if r["verdict"] not in ("completed", "hung")]
        corrupt = sum(r["corrupt"] or 0 for r in rs)
        out.append(f"| {s} | {v} | {n} | {len(rs)} | {len(comp)} | {len(hung)} | "
                   f"{len(other)}{' (' + ', '.join(sorted(set(r['verdict'] for r in other))) + ')' if other else ''} | "
                   f"{fmt(median(r['wall_s'] for r in comp))} | "
                   f"{fmt(median(r['time_to_hang_s'] for r in hung))} | {corrupt} | "
                   f"{fmt(median(r['pswpout'] for r in rs))} | "
                   f"{fmt(median(r['pgscan_direct_throttle'] for r in rs))} | {kernel_cell(rs)} |")
    return "\n".join(out)


def runs_table(recs):
    cols = ["run", "variant", "NIC", "verdict", "wall (s)", "time-to-hang (s)", "verified",
            "corrupt", "pswpin", "pswpout", "throttled", "PFMemallocDrop", "stalls", "kernel"]
    out = ["| " + " | ".join(cols) + " |", "|---|---|---|---|" + "---:|" * (len(cols) - 5) + "---|"]
    for r in recs:
        out.append(f"| {r['run_id']} | {r['variant']} | {r['nic']} | {r['verdict']} | {fmt(r['wall_s'])} | "
                   f"{fmt(r['time_to_hang_s'])} | {fmt(r['verified'])} | {fmt(r['corrupt'])} | "
                   f"{fmt(r['pswpin'])} | {fmt(r['pswpout'])} | {fmt(r['pgscan_direct_throttle'])} | "
                   f"{fmt(r['pfmemalloc_drop'])} | {len(r.get('stalls') or [])} | {kernel_cell([r])} |")
    return "\n".join(out)
