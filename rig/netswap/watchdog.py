"""Follow a guest's console while it runs and judge it: progress, hangs
(observed lack of progress, then a sysrq dump), timeouts, the server pause."""

import queue
import signal
import subprocess
import sys
import time

from . import console, netns, record
from .record import Verdict

DUMP_WAIT = 20   # seconds of console collected after the sysrq dump


def info(msg, quiet=False):
    if not quiet:
        print(f"[netswap {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


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


def watch(sc, qemu, label, quiet, nbd=None):
    """Follow the console until the guest powers off or the run is judged;
    returns the run's record.Outcome."""
    st = console.ConsoleState()
    status = Status(label, quiet)
    t0 = time.monotonic()
    verdict = None
    stalls = []
    # a server pause (SIGSTOP/SIGCONT) or restart (kill, start again): the
    # same bookkeeping, a different step
    pause = None
    for key, step in (("server_pause", server_pause_step), ("server_restart", server_restart_step),
                      ("link_outage", link_outage_step)):
        if sc[key] and (nbd or key == "link_outage"):
            pause = {"at": sc[key][0], "for": sc[key][1], "stopped": None, "resumed": None,
                     "work": None, "recovered": None, "key": key, "step": step,
                     "clock": sc.server_clock}

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
            st.flush(now)
            break                      # QEMU exited
        if line:
            st.feed(line, now)
        status.show(now, t0, st)
        if pause:
            pause["step"](pause, st, nbd, now, label, quiet)
        # silence while the server is stopped is not the guest's; after it
        # goes on, the guest gets hang_after seconds from that moment
        since = st.last_work_time
        if pause and pause["stopped"] is not None:
            since = max(since or 0, pause["resumed"] or now)
        if st.phase in ("boot", "swapon") and now - t0 > sc.boot_timeout:
            info(f"{label} no workload after {sc.boot_timeout}s: dumping state", quiet)
            dump()
            verdict = Verdict.SETUP_FAILED
        elif st.phase == "run" and now - since > sc.hang_after:
            work_before = st.work
            idle = now - since
            info(f"{label} no progress for {idle:.0f}s: asking the guest for "
                 f"sysrq {sc.sysrq_dump}", quiet)
            alive = dump()
            if alive and st.work > work_before:
                stalls.append({"at_s": round(st.last_work_time - t0, 1), "idle_s": round(idle, 1)})
                info(f"{label} progress resumed during the dump: a stall, not a hang", quiet)
                continue
            verdict = Verdict.HUNG if alive else None
            if not alive:
                break
        elif now - t0 > sc.max_time:
            info(f"{label} still running after max_time={sc.max_time}s", quiet)
            dump()
            verdict = Verdict.TIMEOUT
    if verdict is None:
        # QEMU exited: drain what is left, then judge from what the guest said
        drain(time.monotonic() + 0.5)
        # an error before the workload reported its end is a setup failure;
        # after it (the guest's script killed when the swap device is lost
        # under it, a detach that failed), the workload's own end decides
        if st.errors and st.result is None:
            verdict = Verdict.SETUP_FAILED
        elif st.exit_rc is None:
            verdict = Verdict.CRASHED
        elif st.result and st.result.get("result") == "corrupt":
            verdict = Verdict.CORRUPT
        elif st.exit_rc == 0 and not st.errors:
            verdict = Verdict.COMPLETED
        else:
            verdict = Verdict.FAILED
    status.show(time.monotonic(), t0, st, force=True)
    out = record.outcome(st, verdict, t0, stalls, sc.kernel_allow)
    if pause:
        run_t = st.phases.get(pause["clock"])

        def r(a, b):
            return round(a - b, 1) if (a is not None and b is not None) else None
        setattr(out, pause["key"], {
            "asked_at_s": pause["at"], "asked_for_s": pause["for"], "clock": pause["clock"],
            "stopped_at_s": r(pause["stopped"], run_t),
            "stopped_for_s": r(pause["resumed"], pause["stopped"]),
            "progress_after_resume_s": r(pause["recovered"], pause["resumed"]),
            "work_at_stop": pause.get("work_stop"),      # verified + filled pages
            "work_at_resume": pause["work"],
        })
    return out


def server_pause_step(pause, st, nbd, now, label, quiet):
    """Stop nbd-server `at` s into the workload, let it go on `for` s later,
    and note when the guest's work first grows again."""
    run_t = st.phases.get(pause["clock"])
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
    """Kill nbd-server `at` s into the workload (SIGKILL to its process group,
    as a crash would), start a fresh one on the same port and export `for` s
    later, and note when the guest's work first grows again."""
    run_t = st.phases.get(pause["clock"])
    if run_t is None:
        return
    if pause["stopped"] is None:
        if now - run_t >= pause["at"]:
            nbd.kill()
            pause["stopped"] = now
            pause["work_stop"] = st.work
            info(f"{label} nbd-server killed, restart in {pause['for']}s", quiet)
    elif pause["resumed"] is None:
        if now - pause["stopped"] >= pause["for"]:
            nbd.start(keep_export=True)
            pause["resumed"] = now
            pause["work"] = st.work
            info(f"{label} nbd-server restarted on port {nbd.port}", quiet)
    elif pause["recovered"] is None and st.work > pause["work"]:
        pause["recovered"] = now


def set_link(up):
    """The tap of net = tap, inside the run's own namespace."""
    subprocess.run(["ip", "link", "set", "dev", netns.TAP, "up" if up else "down"], check=True)


def link_outage_step(pause, st, nbd, now, label, quiet):
    """Take the tap down `at` s into the workload and up again `for` s later
    (the server keeps running: a cable pulled and put back)."""
    run_t = st.phases.get(pause["clock"])
    if run_t is None:
        return
    if pause["stopped"] is None:
        if now - run_t >= pause["at"]:
            set_link(False)
            pause["stopped"] = now
            pause["work_stop"] = st.work
            info(f"{label} link down for {pause['for']}s", quiet)
    elif pause["resumed"] is None:
        if now - pause["stopped"] >= pause["for"]:
            set_link(True)
            pause["resumed"] = now
            pause["work"] = st.work
            info(f"{label} link up", quiet)
    elif pause["recovered"] is None and st.work > pause["work"]:
        pause["recovered"] = now
