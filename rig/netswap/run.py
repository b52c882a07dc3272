"""Run scenarios: build what they need, start nbd-server and QEMU, watch the
console (watchdog.py), judge the run, write one JSON line per run
(record.py)."""

import datetime
import json
import os
import signal
import subprocess

from . import guestenv, initrd, netns, procs, record, watchdog
from .errors import RigError
from .scenario import ROOT
from .watchdog import info

CACHE = os.environ.get("NETSWAP_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "netswap")
OUT = os.environ.get("NETSWAP_OUT") or os.path.join(ROOT, "out")
Verdict = record.Verdict
build_initramfs = initrd.build_initramfs


def build_kernel(variant):
    """rig/kernel.sh prints the bzImage path on stdout, progress on stderr."""
    r = subprocess.run([os.path.join(ROOT, "rig", "kernel.sh"), variant],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RigError(f"kernel build for variant {variant} failed")
    return r.stdout.strip().splitlines()[-1]


def variant_has_series(variant):
    """Does the variant's kernel carry patches/series (directly or through
    an included variant)?"""
    r = subprocess.run([os.path.join(ROOT, "rig", "tree.sh"), "--list", variant, "patch"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    series = []
    with open(os.path.join(ROOT, "patches", "series")) as f:
        series = [f"patches/{line.split()[0]}" for line in f if line.strip() and not line.startswith("#")]
    listed = set(r.stdout.split())
    return bool(series) and all(p in listed for p in series)


def settings(sc, rep, run_id, rundir, series):
    return record.Settings(
        run_id=run_id, scenario=sc.name, description=sc.description,
        variant=os.path.basename(sc.variant), series=series, nic=sc.nic, ram_mb=sc.ram, cpus=sc.cpus,
        accel=sc.accel, swap=sc.swap, nbd_connections=sc.nbd_connections,
        min_free_kbytes=sc.min_free_kbytes, workload=sc.workload,
        rep=rep, expect=sc.expect, hang_after=sc.hang_after,
        kernel_allow=list(sc.kernel_allow),
        started_at=datetime.datetime.now().isoformat(timespec="seconds"),
        rundir=os.path.relpath(rundir, ROOT) if rundir.startswith(ROOT) else rundir,
        nbd_timeout=sc.nbd_timeout, host_lo_rate=sc.host_lo_rate,
        sysctl=" ".join(sc.sysctl), kernel_args=sc.kernel_args, env=" ".join(sc.env),
        host_lo=netns.describe() if sc.host_lo_rate else "",
        net=sc.net, mtu=sc.mtu, tap_rate=sc.tap_rate, tap_queue_ms=sc.tap_queue_ms,
        tap_loss=sc.tap_loss,
        tap=(netns.describe(netns.TAP) + "\n" + netns.describe(netns.IFB)).strip()
        if sc.net == "tap" else "")


# panic=-1, oops=panic: a crashed guest ends the run at once instead of idling.
# initramfs_async=0: series kernels run their KUnit suites at boot, before the
# kernel waits for the initramfs; the mm suites squeeze free memory below min
# for a moment, which must not race with the unpack (seen once: "System is
# deadlocked on memory" in do_populate_rootfs)
KERNEL_ARGS = ("console=ttyS0,115200 tsc=unstable panic=-1 oops=panic "
               "softlockup_panic=0 initramfs_async=0")


def kernel_args(sc, series):
    """The guest's command line: the rig's own, KUnit off unless the scenario
    runs it (kernels with the series have the suites built in), then the
    scenario's."""
    args = [KERNEL_ARGS]
    if series and not sc.kunit:
        args.append("kunit.enable=0")
    if sc.kernel_args:
        args.append(sc.kernel_args)
    return " ".join(args)


def run_once(sc, rep, kernel, base_initrd, outdir, quiet=False, series=False):
    outdir = os.path.abspath(outdir)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    vname = os.path.basename(sc.variant)    # a generated variant is a path
    run_id = f"{stamp}-{sc.name}-{vname}-{sc.nic}-r{rep}"
    rundir = os.path.join(outdir, "runs", run_id)
    os.makedirs(rundir, exist_ok=True)
    label = f"[{sc.name} {vname} {sc.nic} run {rep}/{sc.runs}]"
    st = settings(sc, rep, run_id, rundir, series)
    nbd = qemu = flood = None
    disk = None
    try:
        nbd_port = udp_port = ""
        if sc.swap in ("nbd", "nbd-manual"):
            nbd = procs.NbdServer(rundir, sc.export, sc.export_size, sc.nbd_port,
                                  sc.nbd_server)
            nbd_port = nbd.start()
        elif sc.swap == "vblk":
            disk = os.path.join(rundir, "swap.img")
            with open(disk, "wb") as f:
                f.truncate(sc.export_size << 20)
        hostfwd = []
        if sc.udp_flood_port:
            udp_port = sc.udp_flood_port
            if sc.net == "tap":     # straight to the guest over the tap
                dest = (netns.GUEST_ADDR, sc.udp_flood_port)
            else:                   # through QEMU's forward on 127.0.0.1
                flood_port = procs.free_port()
                hostfwd.append(f"udp:127.0.0.1:{flood_port}-:{sc.udp_flood_port}")
                dest = ("127.0.0.1", flood_port)
            flood = procs.UdpFlood(dest, sc.udp_flood_rate, sc.udp_flood_size)
        script = os.path.join(ROOT, sc.test_script) if sc.test_script else None
        conf = guestenv.conf(sc, nbd_port, udp_port)
        img = initrd.make_run_initrd(base_initrd, rundir, conf, script)
        qemu = procs.Qemu(rundir, kernel, img, sc.ram, sc.cpus, sc.nic,
                          sc.accel, kernel_args(sc, series), disk,
                          hostfwd, tap=netns.TAP if sc.net == "tap" else None)
        info(f"{label} booting ({sc.accel}, {sc.ram}M, {sc.cpus} vCPUs, {sc.nic}, "
             f"swap={sc.swap}); console: {os.path.join(rundir, 'console.log')}", quiet)
        qemu.start()
        if flood:
            flood.start()
        out = watchdog.watch(sc, qemu, label, quiet, nbd)
        if flood:
            flood.stop()
            out.udp_sent = flood.sent
        if out.verdict == Verdict.CRASHED and not out.booted and qemu.proc.returncode:
            raise RigError(f"QEMU failed (exit {qemu.proc.returncode}): "
                           + " | ".join(qemu.first_lines[:3]))
        out.met_expectation = record.met_expectation(sc.expect, out)
    finally:
        if flood:
            flood.stop()
        if qemu:
            qemu.stop()
        if nbd:
            if sc.server_pause or sc.server_restart:
                try:
                    nbd.signal_group(signal.SIGCONT)   # a stopped daemon ignores SIGTERM
                except (RigError, OSError):
                    pass
            nbd.stop()
        if disk and os.path.exists(disk):
            os.unlink(disk)
    rec = record.flatten(st, out)
    with open(os.path.join(rundir, "result.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return rec


def run_scenarios(scenarios, outdir=OUT, quiet=False, results=None, first_run=1):
    os.makedirs(outdir, exist_ok=True)
    kernels, series = {}, {}
    for sc in scenarios:
        if sc.swap in ("nbd", "nbd-manual"):
            procs.NbdServer.preflight(sc.export, sc.nbd_port, sc.nbd_server)
    for sc in scenarios:
        if sc.variant not in kernels:
            info(f"kernel variant {sc.variant}: building or reusing", quiet)
            kernels[sc.variant] = build_kernel(sc.variant)
            series[sc.variant] = variant_has_series(sc.variant)
    base = build_initramfs()
    if results is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        results = os.path.join(outdir, "results", f"{stamp}.jsonl")
    os.makedirs(os.path.dirname(results), exist_ok=True)
    recs = []
    # interleave scenarios run by run (A B A B ...) so drift affects all alike
    # first_run > 1 resumes an interrupted series into the same results file
    for rep in range(first_run, max(sc.runs for sc in scenarios) + 1):
        for sc in scenarios:
            if rep > sc.runs:
                continue
            rec = run_once(sc, rep, kernels[sc.variant], base, outdir, quiet,
                           series[sc.variant])
            recs.append(rec)
            with open(results, "a") as f:
                f.write(json.dumps(rec, sort_keys=True) + "\n")
            info(f"[{sc.name} {rec['variant']} {sc.nic} run {rep}/{sc.runs}] verdict={rec['verdict']}"
                 f" wall={rec['wall_s']}s corrupt={rec['corrupt']}"
                 f" pswpout={rec['pswpout']}"
                 + ("" if rec["kernel_clean"] else f" KERNEL: {','.join(rec['kernel_fatal'])}"),
                 quiet)
    return recs, results
