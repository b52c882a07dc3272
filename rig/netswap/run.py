"""Run scenarios: build what they need, start nbd-server and QEMU, watch the
console, judge the run, write one JSON line per run."""

import datetime
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import console, netns, procs
from .procs import RigError
from .scenario import ROOT

CACHE = os.environ.get("NETSWAP_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "netswap")
DUMP_WAIT = 20   # seconds of console collected after the sysrq dump
OUT = os.environ.get("NETSWAP_OUT") or os.path.join(ROOT, "out")

# verdicts
COMPLETED, HUNG, CORRUPT, FAILED, CRASHED, TIMEOUT, SETUP_FAILED = (
    "completed", "hung", "corrupt", "failed", "crashed", "timeout", "setup-failed")


def info(msg, quiet=False):
    if not quiet:
        print(f"[netswap {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_kernel(variant):
    """rig/kernel.sh prints the bzImage path on stdout, progress on stderr."""
    r = subprocess.run([os.path.join(ROOT, "rig", "kernel.sh"), variant],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RigError(f"kernel build for variant {variant} failed")
    return r.stdout.strip().splitlines()[-1]


def build_initramfs():
    r = subprocess.run([os.path.join(ROOT, "guest", "build-initramfs.sh")],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RigError("initramfs build failed")
    return r.stdout.strip().splitlines()[-1]


def make_run_initrd(base, rundir, conf, script=None):
    """base initramfs + a second cpio holding /etc/netswap/run.conf (and test.sh)."""
    tmp = tempfile.mkdtemp(dir=rundir)
    try:
        d = os.path.join(tmp, "etc", "netswap")
        os.makedirs(d)
        with open(os.path.join(d, "run.conf"), "w") as f:
            for k, v in conf.items():
                f.write(f"{k}={shlex.quote(str(v))}\n")
        if script:
            shutil.copy(script, os.path.join(d, "test.sh"))
            os.chmod(os.path.join(d, "test.sh"), 0o755)
        files = subprocess.run("find etc | LC_ALL=C sort", shell=True, cwd=tmp,
                               stdout=subprocess.PIPE, check=True).stdout
        extra = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"],
                               cwd=tmp, input=files, stdout=subprocess.PIPE,
                               check=True).stdout
    finally:
        shutil.rmtree(tmp)
    path = os.path.join(rundir, "initrd.img")
    with open(path, "wb") as out, open(base, "rb") as b:
        shutil.copyfileobj(b, out)
        # the kernel unpacks concatenated archives in order; an uncompressed
        # one must start 4-byte aligned (zero padding is skipped)
        out.write(b"\0" * (-out.tell() % 4))
        out.write(extra)
    return path


class Status:
    """One progress line every `every` seconds while a run is going."""

    def __init__(self, label, quiet, every=15):
        self.label, self.quiet, self.every = label, quiet, every
        self.last = 0

    def show(self, now, t0, st, force=False):
        if self.quiet or (not force and now - self.last < self.every):
            return
        self.last = now
        p = st.progress or {}
        vm = st.vm_last or {}
        msg = f"{self.label} t={now - t0:.0f}s phase={st.phase}"
        if p:
            msg += (f" verified={p.get('verified')} rate={p.get('rate')}/s"
                    f" passes={p.get('passes')} corrupt={p.get('corrupt')}")
        if vm:
            msg += f" pswpin={vm.get('pswpin')} pswpout={vm.get('pswpout')}"
        if st.phase == "run" and st.last_work_time:
            idle = now - st.last_work_time
            if idle > 10:
                msg += f" no-progress-for={idle:.0f}s"
        info(msg)


def run_once(sc, rep, kernel, base_initrd, outdir, quiet=False):
    outdir = os.path.abspath(outdir)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_id = f"{stamp}-{sc.name}-{sc.variant}-{sc.nic}-r{rep}"
    rundir = os.path.join(outdir, "runs", run_id)
    os.makedirs(rundir, exist_ok=True)
    label = f"[{sc.name} {sc.variant} {sc.nic} run {rep}/{sc.runs}]"
    rec = {
        "run_id": run_id, "scenario": sc.name, "description": sc.description,
        "variant": sc.variant, "nic": sc.nic, "ram_mb": sc.ram, "cpus": sc.cpus,
        "accel": sc.accel, "swap": sc.swap, "nbd_connections": sc.nbd_connections,
        "min_free_kbytes": sc.min_free_kbytes, "workload": sc.workload,
        "rep": rep, "expect": sc.expect, "hang_after": sc.hang_after,
        "started_at": datetime.datetime.now().isoformat(timespec="seconds"),
        "rundir": os.path.relpath(rundir, ROOT) if rundir.startswith(ROOT) else rundir,
        "nbd_timeout": sc.nbd_timeout, "host_lo_rate": sc.host_lo_rate,
        "sysctl": " ".join(sc.sysctl), "kernel_args": sc.kernel_args, "env": " ".join(sc.env),
        "host_lo": netns.describe() if sc.host_lo_rate else "",
        "net": sc.net, "mtu": sc.mtu, "tap_rate": sc.tap_rate, "tap_queue_ms": sc.tap_queue_ms,
        "tap_loss": sc.tap_loss, "server_restart_at": sc.server_restart,
        "tap": (netns.describe(netns.TAP) + "\n" + netns.describe(netns.IFB)).strip()
        if sc.net == "tap" else "",
    }
    nbd = qemu = flood = None
    disk = None
    try:
        conf = {
            "NS_SWAP": sc.swap, "NS_NBD_HOST": "10.0.2.2",
            "NS_NBD_EXPORT": procs.NbdServer.EXPORT_NAME,
            "NS_NBD_CONNS": sc.nbd_connections, "NS_NBD_BS": sc.nbd_blocksize,
            "NS_NBD_TIMEOUT": sc.nbd_timeout,
            "NS_MIN_FREE_KBYTES": sc.min_free_kbytes or "",
            "NS_HUNG_TASK_TIMEOUT": sc.hung_task_timeout,
            "NS_VMWATCH_INTERVAL": sc.vmwatch_interval,
            "NS_SYSCTL": " ".join(sc.sysctl), "NS_RUN": sc.workload, "NS_MTU": sc.mtu,
        }
        for w in sc.env:
            k, v = w.split("=", 1)
            conf[k] = v
        if sc.swap in ("nbd", "nbd-attach", "nbd-manual"):
            nbd = procs.NbdServer(rundir, sc.export, sc.export_size, sc.nbd_port,
                                  sc.nbd_server)
            conf["NS_NBD_PORT"] = nbd.start()
        elif sc.swap == "vblk":
            disk = os.path.join(rundir, "swap.img")
            with open(disk, "wb") as f:
                f.truncate(sc.export_size << 20)
        hostfwd = []
        if sc.udp_flood_port:
            conf["NS_UDP_PORT"] = sc.udp_flood_port
            if sc.net == "tap":     # straight to the guest over the tap
                dest = (netns.GUEST_ADDR, sc.udp_flood_port)
            else:                   # through QEMU's forward on 127.0.0.1
                flood_port = procs.free_port()
                hostfwd.append(f"udp:127.0.0.1:{flood_port}-:{sc.udp_flood_port}")
                dest = ("127.0.0.1", flood_port)
            flood = procs.UdpFlood(dest, sc.udp_flood_rate, sc.udp_flood_size)
        script = os.path.join(ROOT, sc.test_script) if sc.test_script else None
        initrd = make_run_initrd(base_initrd, rundir, conf, script)
        # initramfs_async=0: series kernels run their KUnit suites at boot,
        # before the kernel waits for the initramfs; the mm suites squeeze free
        # memory below min for a moment, which must not race with the unpack
        # (seen once: "System is deadlocked on memory" in do_populate_rootfs)
        append = ("console=ttyS0,115200 tsc=unstable panic=-1 oops=panic "
                  "softlockup_panic=0 initramfs_async=0 " + sc.kernel_args).strip()
        qemu = procs.Qemu(rundir, kernel, initrd, sc.ram, sc.cpus, sc.nic,
                          sc.accel, append, disk, hostfwd,
                          tap=netns.TAP if sc.net == "tap" else None)
        info(f"{label} booting ({sc.accel}, {sc.ram}M, {sc.cpus} vCPUs, {sc.nic}, "
             f"swap={sc.swap}); console: {os.path.join(rundir, 'console.log')}", quiet)
        qemu.start()
        if flood:
            flood.start()
        res = watch(sc, qemu, label, quiet, nbd)
        if flood:
            flood.stop()
            res["udp_sent"] = flood.sent
        if res["verdict"] == CRASHED and not res["booted"] and qemu.proc.returncode:
            raise RigError(f"QEMU failed (exit {qemu.proc.returncode}): "
                           + " | ".join(qemu.first_lines[:3]))
        rec.update(res)
    finally:
        if flood:
            flood.stop()
        if qemu:
            qemu.stop()
        if nbd:
            if sc.server_pause:
                try:
                    nbd.signal_group(signal.SIGCONT)   # a stopped daemon ignores SIGTERM
                except (RigError, OSError):
                    pass
            nbd.stop()
        if disk and os.path.exists(disk):
            os.unlink(disk)
    with open(os.path.join(rundir, "result.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return rec


def watch(sc, qemu, label, quiet, nbd=None):
    """Follow the console until the guest powers off or the run is judged."""
    st = console.ConsoleState()
    status = Status(label, quiet)
    t0 = time.monotonic()
    verdict = None
    stalls = []
    dump_at = None
    pause = ({"at": sc.server_pause[0], "for": sc.server_pause[1], "stopped": None,
              "resumed": None, "work": None, "recovered": None}
             if sc.server_pause and nbd else None)
    if sc.server_restart and nbd:   # same bookkeeping as a pause; kill + restart
        pause = {"at": sc.server_restart[0], "for": sc.server_restart[1], "stopped": None,
                 "resumed": None, "work": None, "recovered": None, "restart": True}

    def drain(until):
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return True
            try:
                line = qemu.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if line is None:
                return False
            st.feed(line, time.monotonic())

    def dump():
        for k in sc.sysrq_dump:
            qemu.sysrq(k)
            time.sleep(1)
        return drain(time.monotonic() + DUMP_WAIT)

    while verdict is None:
        try:
            line = qemu.lines.get(timeout=1.0)
        except queue.Empty:
            line = ""
        now = time.monotonic()
        if line is None:
            break                      # QEMU exited
        if line:
            st.feed(line, now)
        status.show(now, t0, st)
        if pause and pause.get("restart"):
            server_restart_step(pause, st, nbd, now, label, quiet)
        elif pause:
            server_pause_step(pause, st, nbd, now, label, quiet)
        # silence while the server is stopped is not the guest's; after it
        # goes on, the guest gets hang_after seconds from that moment
        since = st.last_work_time
        if pause and pause["stopped"] is not None:
            since = max(since or 0, pause["resumed"] or now)
        if st.phase in ("boot", "swapon") and now - t0 > sc.boot_timeout:
            info(f"{label} no workload after {sc.boot_timeout}s: dumping state", quiet)
            dump()
            verdict = SETUP_FAILED
        elif st.phase == "run" and now - since > sc.hang_after:
            work_before = st.work
            idle = now - since
            info(f"{label} no progress for {idle:.0f}s: asking the guest for "
                 f"sysrq {sc.sysrq_dump}", quiet)
            dump_at = now
            alive = dump()
            if alive and st.work > work_before:
                stalls.append({"at_s": round(st.last_work_time - t0, 1), "idle_s": round(idle, 1)})
                info(f"{label} progress resumed during the dump: a stall, not a hang", quiet)
                continue
            verdict = HUNG if alive else None
            if not alive:
                break
        elif now - t0 > sc.max_time:
            info(f"{label} still running after max_time={sc.max_time}s", quiet)
            dump()
            verdict = TIMEOUT
    if verdict is None:
        # QEMU exited: drain what is left, then judge from what the guest said
        drain(time.monotonic() + 0.5)
        if st.errors:
            verdict = SETUP_FAILED
        elif st.exit_rc is None:
            verdict = CRASHED
        elif st.result and st.result.get("result") == "corrupt":
            verdict = CORRUPT
        elif st.exit_rc == 0:
            verdict = COMPLETED
        else:
            verdict = FAILED
    status.show(time.monotonic(), t0, st, force=True)
    out = summarize(st, verdict, t0, stalls, dump_at)
    if pause:
        run_t = st.phases.get("run")
        r = lambda a, b: round(a - b, 1) if (a is not None and b is not None) else None
        out["server_restart" if pause.get("restart") else "server_pause"] = {
            "stopped_at_s": r(pause["stopped"], run_t),
            "stopped_for_s": r(pause["resumed"], pause["stopped"]),
            "progress_after_resume_s": r(pause["recovered"], pause["resumed"]),
            "work_at_stop": pause.get("work_stop"),      # verified + filled pages
            "work_at_resume": pause["work"],
        }
    return out


def server_pause_step(pause, st, nbd, now, label, quiet):
    """Stop nbd-server `at` s into the workload, let it go on `for` s later,
    and note when the guest's work first grows again."""
    run_t = st.phases.get("run")
    if run_t is None:
        return
    if pause["stopped"] is None:
        if now - run_t >= pause["at"]:
            nbd.signal_group(signal.SIGSTOP)
            pause["stopped"] = now
            pause["work_stop"] = st.work
            info(f"{label} nbd-server stopped (SIGSTOP) for {pause['for']}s", quiet)
    elif pause["resumed"] is None:
        if now - pause["stopped"] >= pause["for"]:
            nbd.signal_group(signal.SIGCONT)
            pause["resumed"] = now
            pause["work"] = st.work
            info(f"{label} nbd-server continued (SIGCONT)", quiet)
    elif pause["recovered"] is None and st.work > pause["work"]:
        pause["recovered"] = now


def server_restart_step(pause, st, nbd, now, label, quiet):
    """Kill nbd-server `at` s into the workload, start a fresh one on the same
    port and export `for` s later, and note when the guest's work grows again."""
    run_t = st.phases.get("run")
    if run_t is None:
        return
    if pause["stopped"] is None:
        if now - run_t >= pause["at"]:
            nbd.kill()
            pause["stopped"] = now
            pause["work_stop"] = st.work
            info(f"{label} nbd-server killed (SIGKILL to its group), restart in {pause['for']}s", quiet)
    elif pause["resumed"] is None:
        if now - pause["stopped"] >= pause["for"]:
            nbd.start(keep_export=True)
            pause["resumed"] = now
            pause["work"] = st.work
            info(f"{label} nbd-server restarted on port {nbd.port}", quiet)
    elif pause["recovered"] is None and st.work > pause["work"]:
        pause["recovered"] = now


def summarize(st, verdict, t0, stalls, dump_at):
    run_t = st.phases.get("run")
    done_t = st.phases.get("done")
    r = st.result or {}
    out = {
        "verdict": verdict,
        "booted": st.lines > 0 and ("boot" in st.phases or st.kernel_seen),
        "rc": st.exit_rc,
        "workload_result": r.get("result"),
        "boot_s": round(run_t - t0, 1) if run_t else None,
        "wall_s": round(done_t - run_t, 1) if (run_t and done_t) else None,
        "time_to_hang_s": (round(st.last_work_time - run_t, 1)
                           if verdict == HUNG and run_t and st.last_work_time else None),
        "guest_elapsed_s": console.num(r.get("elapsed")),
        "guest_last_progress_s": st.last_work_guest_t,
        "verified": console.num(r.get("verified")) if r else
        console.num((st.progress or {}).get("verified")),
        "corrupt": console.num(r.get("corrupt")) if r else
        console.num((st.progress or {}).get("corrupt")),
        "corrupt_reports": st.corrupt_lines[:20],
        "stalls": stalls,
        "errors": st.errors,
        "kernel": st.kernel,
        "nic_driver": st.info.get("driver"),
        "min_free_kbytes_effective": console.num(st.info.get("min_free_kbytes")),
        "nbd_reconnects": console.num(st.info.get("nbd_reconnects")),
    }
    for key, name in (("pswpin", "pswpin"), ("pswpout", "pswpout"),
                      ("pgscan_direct_throttle", "pgscan_direct_throttle"),
                      ("pgscan_direct", "pgscan_direct"),
                      ("allocstall_normal", "allocstall_normal"),
                      ("allocstall_dma32", "allocstall_dma32"),
                      ("oom_kill", "oom_kill"),
                      ("TcpExt.PFMemallocDrop", "pfmemalloc_drop"),
                      ("Tcp.RetransSegs", "tcp_retrans_segs")):
        out[name] = st.vm_delta(key)
    out["udp_received"] = st.udp_received
    sq = console.squeeze_summary(st.squeeze)
    if sq:
        out.update(sq)
    out["vm_ticks"] = [{k: t.get(k) for k in ("t", "nr_free_pages", "pswpin", "pswpout",
                                              "pgscan_direct_throttle", "nr_writeback",
                                              "Sockstat.TCP.mem") if k in t}
                       for t in st.vm_ticks]
    # where the run went: the lowest free memory and the most memory that TCP
    # and writeback held at any sample (pages; None when vmwatch did not say)
    for name, key, pick in (("vm_min_free_pages", "nr_free_pages", min),
                            ("vm_max_writeback_pages", "nr_writeback", max),
                            ("vm_max_tcp_mem_pages", "Sockstat.TCP.mem", max)):
        vals = [console.num(t.get(key)) for t in st.vm_ticks]
        vals = [v for v in vals if v is not None]
        out[name] = pick(vals) if vals else None
    return out


def run_scenarios(scenarios, outdir=OUT, quiet=False, results=None, first_run=1):
    os.makedirs(outdir, exist_ok=True)
    kernels = {}
    for sc in scenarios:
        if sc.variant not in kernels:
            info(f"kernel variant {sc.variant}: building or reusing", quiet)
            kernels[sc.variant] = build_kernel(sc.variant)
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
            rec = run_once(sc, rep, kernels[sc.variant], base, outdir, quiet)
            recs.append(rec)
            with open(results, "a") as f:
                f.write(json.dumps(rec, sort_keys=True) + "\n")
            info(f"[{sc.name} {sc.variant} {sc.nic} run {rep}/{sc.runs}] verdict={rec['verdict']}"
                 f" wall={rec['wall_s']}s corrupt={rec['corrupt']}"
                 f" pswpout={rec['pswpout']}", quiet)
    return recs, results
