"""Named checks: each claim the test suite makes about a run is one function
here, used by the test cases (`netswap-run verify CHECK RESULTS`), by the
mutation runner and by the host unit tests, so that a criterion is written
once.

A check takes the result records of one results file and yields Results,
each a named PASS, FAIL, SKIP or ERROR (could not be judged: no record, no
KTAP, a field missing). The KTAP the command line prints has one line per
Result.

Spec forms (`parse_spec`):
  NAME                 a check from CHECKS, on every record
  NAME,NAME,...        several
  kunit:SUITE.CASE     one KUnit case in each record's console log
  verdict:VERDICT      every record's verdict
"""

import enum
import os
import re
import sys
from dataclasses import dataclass

from .record import Verdict


class Status(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"


@dataclass(frozen=True)
class Result:
    name: str
    status: Status
    detail: str = ""
    diag: tuple = ()          # lines printed as KTAP diagnostics after a failure


CHECKS = {}


def check(fn):
    """Register a check under its function's name."""
    CHECKS[fn.__name__] = fn
    return fn


def label(r):
    v = os.path.basename(r.get("variant") or "")     # generated variants are paths
    return f"{v}/{r.get('nic')} r{r.get('rep')}"


def cond(r, what, ok, detail=""):
    return Result(f"{label(r)}: {what}", Status.PASS if ok else Status.FAIL, detail)


def need(r, *keys):
    """ERROR Results for keys a record lacks (an older schema, a run that
    did not get that far)."""
    return [Result(f"{label(r)}: {k}", Status.ERROR, "not in the record")
            for k in keys if r.get(k) is None]


def rundir(r, root):
    d = r.get("rundir") or ""
    return d if os.path.isabs(d) else os.path.join(root, d)


# --- generic claims about one run -----------------------------------------

@check
def completed(recs, root):
    """The workload ran to its end and exited 0."""
    for r in recs:
        yield cond(r, "completed", r.get("verdict") == Verdict.COMPLETED,
                   f"verdict={r.get('verdict')} rc={r.get('rc')}")


@check
def no_loss(recs, root):
    """Pages were verified and none came back wrong."""
    for r in recs:
        bad = need(r, "verified", "corrupt")
        if bad:
            yield from bad
            continue
        yield cond(r, "no page lost", r["corrupt"] == 0 and r["verified"] > 0,
                   f"verified={r['verified']} corrupt={r['corrupt']}")


@check
def swapped(recs, root):
    """The workload really swapped (pswpout > 1000)."""
    for r in recs:
        if r.get("pswpout") is None:
            yield from need(r, "pswpout")
            continue
        yield cond(r, "swapped", r["pswpout"] > 1000, f"pswpout={r['pswpout']}")


def record_count(recs, want):
    """As many runs as the case asked for (a run that never got a record
    is a failure, not a smaller sample)."""
    return Result("records", Status.PASS if len(recs) == want else Status.FAIL,
                  f"{len(recs)} judged, {want} expected")


@check
def kernel_clean(recs, root):
    """No fatal kernel report (WARN, BUG, lockdep, KASAN, ...) that the
    scenario did not allow."""
    for r in recs:
        if "kernel_clean" not in r:
            yield Result(f"{label(r)}: kernel clean", Status.ERROR,
                         "record predates kernel reports (schema 1)")
            continue
        reps = r.get("kernel_reports") or {}
        detail = "; ".join(f"{k} x{reps[k]['count']}: {reps[k]['first'][0]}"
                           for k in r["kernel_fatal"] if reps.get(k, {}).get("first"))
        allowed = [k for k in r.get("kernel_allow") or [] if k in reps]
        if not detail and allowed:
            detail = "allowed: " + ", ".join(f"{k} x{reps[k]['count']}" for k in allowed)
        res = cond(r, "kernel clean", r["kernel_clean"], detail)
        if res.status == Status.FAIL:
            # the report itself, so that a log that outlives the console
            # (CI's) still shows where it came from
            res = Result(res.name, res.status, res.detail,
                         tuple(r.get("kernel_splat") or ()))
        yield res


@check
def hung(recs, root):
    """Judged hung from observed lack of progress, with a blocked-task dump."""
    for r in recs:
        yield cond(r, "hung", r.get("verdict") == Verdict.HUNG,
                   f"verdict={r.get('verdict')} time_to_hang_s={r.get('time_to_hang_s')}")
        log = os.path.join(rundir(r, root), "console.log")
        try:
            with open(log, errors="replace") as f:
                dumped = "sysrq: Show Blocked State" in f.read()
        except OSError:
            yield Result(f"{label(r)}: blocked-task dump", Status.ERROR, f"no {log}")
            continue
        yield cond(r, "blocked-task dump", dumped, log)


@check
def throttled(recs, root):
    """Direct reclaimers were throttled (pgscan_direct_throttle > 0)."""
    for r in recs:
        if r.get("pgscan_direct_throttle") is None:
            yield from need(r, "pgscan_direct_throttle")
            continue
        yield cond(r, "direct reclaim throttled", r["pgscan_direct_throttle"] > 0,
                   f"pgscan_direct_throttle={r['pgscan_direct_throttle']}")


@check
def server_pause(recs, root):
    """The guest went on after the server was stopped and let go on again."""
    for r in recs:
        p = r.get("server_pause")
        if not p:
            yield Result(f"{label(r)}: server pause", Status.ERROR, "no server_pause in the record")
            continue
        asked = p.get("asked_for_s")
        yield cond(r, "server stopped for the time asked",
                   p.get("stopped_for_s") is not None and asked is not None
                   and p["stopped_for_s"] >= asked - 1,
                   f"stopped_for_s={p.get('stopped_for_s')} asked_for_s={asked}")
        yield cond(r, "progress after the server went on",
                   p.get("progress_after_resume_s") is not None,
                   f"progress_after_resume_s={p.get('progress_after_resume_s')} "
                   f"work_at_stop={p.get('work_at_stop')} work_at_resume={p.get('work_at_resume')}")


@check
def reconnect(recs, root):
    """The server went away and came back; the kernel saw the connection die,
    reconnected by itself (counted by nbd's debugfs), and no I/O failed."""
    for r in recs:
        k = r.get("kernel") or {}
        p = r.get("server_restart") or r.get("link_outage") or r.get("server_pause") or {}
        yield cond(r, "server or link went away and came back", p.get("stopped_for_s") is not None,
                   f"down_for_s={p.get('stopped_for_s')} asked={p.get('asked_for_s')}")
        yield cond(r, "connection loss seen", (k.get("nbd_conn_lost") or 0) >= 1,
                   f"lost={k.get('nbd_conn_lost')}")
        yield cond(r, "reconnected in the kernel",
                   (k.get("nbd_reconnected") or 0) >= 1 and (r.get("nbd_reconnects") or 0) >= 1,
                   f"log={k.get('nbd_reconnected')} debugfs={r.get('nbd_reconnects')}")
        # "Dead connection, failed to find a fallback" (nbd_dead_conn) is not a
        # failure while a dead-connection timeout is set: the request waits
        errs = {x: k.get(x) or 0 for x in ("swap_io_error", "block_io_error", "nbd_gave_up")}
        yield cond(r, "no I/O failed", not any(errs.values()),
                   " ".join(f"{x}={n}" for x, n in errs.items()))
        yield cond(r, "progress after the restart", p.get("progress_after_resume_s") is not None,
                   f"progress_after_resume_s={p.get('progress_after_resume_s')}")


@check
def gave_up_clean(recs, root):
    """The server stayed away longer than the dead-connection timeout: the
    kernel gave up with its one line, the I/O errors reached the workload
    (its processes killed by SIGBUS on swap-in, or a non-zero exit), and the
    guest stayed up and healthy: it reported the end itself (no crash, no
    hang, no panic) and the kernel printed no fatal report."""
    for r in recs:
        k = r.get("kernel") or {}
        yield cond(r, "the kernel gave up after the dead-connection timeout",
                   (k.get("nbd_gave_up") or 0) >= 1, f"gave_up={k.get('nbd_gave_up')}")
        yield cond(r, "errors reached the workload",
                   r.get("verdict") == Verdict.FAILED and ((r.get("killed") or 0) > 0
                                                           or (r.get("rc") or 0) != 0),
                   f"verdict={r.get('verdict')} rc={r.get('rc')} killed={r.get('killed')}")
        yield cond(r, "the guest reported the end itself (no crash, no hang)",
                   r.get("verdict") not in (Verdict.CRASHED, Verdict.HUNG, Verdict.TIMEOUT)
                   and r.get("rc") is not None, f"verdict={r.get('verdict')}")
        yield from kernel_clean([r], None)


@check
def survived_hostile(recs, root):
    """A server that broke the protocol in the transmission phase
    (test/fixtures/hostile-nbd-server.py): the kernel noticed (the
    connection was dropped), and whatever it did about the requests in
    flight, it did not crash or hang, returned no wrong page and printed no
    fatal report."""
    for r in recs:
        k = r.get("kernel") or {}
        yield cond(r, "the broken reply was noticed", (k.get("nbd_bad_reply") or 0) >= 1,
                   f"bad_reply={k.get('nbd_bad_reply')} lost={k.get('nbd_conn_lost')} "
                   f"reconnected={k.get('nbd_reconnected')}")
        yield cond(r, "no crash, no hang",
                   r.get("verdict") in (Verdict.COMPLETED, Verdict.FAILED),
                   f"verdict={r.get('verdict')} rc={r.get('rc')}")
        yield cond(r, "no page came back wrong", r.get("corrupt") == 0, f"corrupt={r.get('corrupt')}")
        yield from kernel_clean([r], None)


# a connection that ended is marked dead within this many seconds
PROMPT_S = 10


@check
def reconnect_prompt(recs, root):
    """The server ended the connection (its FIN: nbd's "Receive control
    failed") while a sender was blocked on the full send buffer of that
    half-open connection (test/fixtures/hostile-nbd-server.py, mode
    half-close): the kernel marked the connection dead within PROMPT_S
    seconds of the FIN, not a request timeout later, and reconnected."""
    for r in recs:
        reps = r.get("kernel_reports") or {}
        fin = (reps.get("nbd_bad_reply") or {}).get("first_t")
        lost = (reps.get("nbd_conn_lost") or {}).get("first_t")
        back = (reps.get("nbd_reconnected") or {}).get("first_t")
        d = (f"receive failed at {fin} s, connection lost at {lost} s, reconnected at {back} s, "
             f"request timeout {r.get('nbd_timeout') or 'default'}")
        if fin is None:
            yield Result(f"{label(r)}: the server's FIN was seen", Status.ERROR, d)
            continue
        yield cond(r, f"connection marked dead within {PROMPT_S} s of the FIN",
                   lost is not None and fin <= lost <= fin + PROMPT_S, d)
        yield cond(r, "reconnected after it", back is not None and lost is not None and back >= lost
                   and (r.get("nbd_reconnects") or 0) >= 1,
                   f"{d}, debugfs reconnects={r.get('nbd_reconnects')}")
        k = r.get("kernel") or {}
        errs = {x: k.get(x) or 0 for x in ("swap_io_error", "block_io_error", "nbd_gave_up")}
        yield cond(r, "no I/O failed", not any(errs.values()),
                   " ".join(f"{x}={n}" for x, n in errs.items()))


def _held_between(r, t0, t1, share=0.8):
    """Whether every zone stayed below the GFP_ATOMIC floor for at least
    `share` of the time between printk times t0 and t1, by the squeeze's
    per-second lines (from the last line at or before t0 to the last at or
    before t1). Returns (held, detail)."""
    series = r.get("squeeze_below_by_kt") or []
    before0 = [p for p in series if p[0] <= t0] or series[:1]
    before1 = [p for p in series if p[0] <= t1]
    if not before0 or not before1:
        return False, "no squeeze lines around the loss"
    (k0, ms0), (k1, ms1) = before0[-1], before1[-1]
    if k1 <= k0:
        return True, "loss and reconnect within one second of the hold"
    got, want = ms1 - ms0, share * (k1 - k0) * 1000
    return got >= want, (f"below the floor {got} ms of the {(k1 - k0) * 1000:.0f} ms "
                         f"from {k0} to {k1} s (wanted {want:.0f})")


@check
def reconnect_in_hold(recs, root):
    """The connection died while free memory was held below the GFP_ATOMIC
    floor (server_clock = squeeze) and the kernel reconnected before the
    hold ended: its handshake replies, received into reserve memory, reached
    the reconnecting socket because it was already a memalloc socket."""
    for r in recs:
        reps = r.get("kernel_reports") or {}
        lost = (reps.get("nbd_conn_lost") or {}).get("first_t")
        back = (reps.get("nbd_reconnected") or {}).get("first_t")
        b, e = r.get("squeeze_begin_kt"), r.get("squeeze_end_kt")
        d = f"hold {b}-{e} s, lost at {lost} s, reconnected at {back} s"
        if None in (lost, b, e):
            yield Result(f"{label(r)}: connection lost inside the hold", Status.ERROR, d)
            continue
        held, why = _held_between(r, lost, back if back is not None and back <= e else e)
        if not held:
            # the fixture ran out of pages to take (squeeze_extra) or memory
            # came back: the reconnect was not made below the floor, so the
            # run says nothing either way
            yield Result(f"{label(r)}: floor held from the loss to the reconnect", Status.ERROR,
                         f"{d}; {why}")
            continue
        yield cond(r, "connection lost inside the hold", b <= lost <= e, d)
        yield cond(r, "reconnected before the hold ended", back is not None and back <= e, d)


# --- the receive-reserve reproducer --------------------------------------

def _squeeze_line(r):
    return (f"{r.get('nic_driver') or r.get('nic')} verdict={r.get('verdict')} "
            f"below_floor_ms={r.get('squeeze_below_ms')} "
            f"writeback_below_floor={r.get('squeeze_written_below')} "
            f"rx_below_floor={r.get('squeeze_rx_below')} "
            f"writeback_late={r.get('squeeze_written_late')} rx_late={r.get('squeeze_rx_late')} "
            f"PFMemallocDrop={r.get('pfmemalloc_drop')} "
            f"throttled={r.get('pgscan_direct_throttle')} corrupt={r.get('corrupt')}")


def _protected_squeeze(r, jumbo):
    """With the series, receive goes on from the reserves while every zone
    is below its GFP_ATOMIC floor: writeback keeps completing there, the
    flood to an ordinary socket is dropped as pfmemalloc, and the workload
    finishes afterwards with no page lost."""
    d = _squeeze_line(r)
    yield cond(r, "recovered and completed", r.get("verdict") == Verdict.COMPLETED, d)
    yield from kernel_clean([r], None)
    yield cond(r, "no page lost", r.get("corrupt") == 0, d)
    yield cond(r, "writeback completed below the floor",
               (r.get("squeeze_written_below") or 0) >= 1000, d)
    yield cond(r, "pfmemalloc packets dropped for the ordinary socket",
               bool(r.get("pfmemalloc_drop")), d)
    if jumbo:
        yield cond(r, "writeback went on in the second half of the hold",
                   (r.get("squeeze_written_late") or 0) >= 1000, d)
    else:
        yield cond(r, "direct reclaimers throttled",
                   bool(r.get("pgscan_direct_throttle")), d)


@check
def rx_squeeze(recs, root):
    """Free memory held below the GFP_ATOMIC floor for 20 s while swap over
    NBD is busy and the host floods an ordinary UDP socket (MTU 1500).
    Kernels with the series receive through the reserves (see
    _protected_squeeze). Without it: virtio-net's ring cannot be refilled
    and refill_work waits in direct reclaim for swap I/O that needs this
    very ring, so the guest never recovers (hung); e1000's frag refills
    fail below the floor, so writeback all but stops while the floor is held
    (copybreak keeps a trickle going) and resumes afterwards."""
    for r in recs:
        if r.get("squeeze_written_below") is None:
            yield Result(f"{label(r)}: squeeze report", Status.ERROR, "no squeeze report in the console")
            continue
        if r.get("series"):
            yield from _protected_squeeze(r, jumbo=False)
            continue
        d = _squeeze_line(r)
        yield cond(r, "no page lost", not r.get("corrupt"), d)
        if r.get("verdict") == Verdict.HUNG:
            # the hang's blocked writers are reported by the hung-task
            # detector; nothing else may appear
            other = [k for k in r.get("kernel_fatal") or [] if k != "hung_task"]
            yield cond(r, "no kernel report but the hang's hung tasks", not other,
                       ", ".join(other) or "hung_task only")
        else:
            yield from kernel_clean([r], None)
        if r.get("nic") == "virtio-net":
            yield cond(r, "stock virtio-net hangs", r.get("verdict") == Verdict.HUNG, d)
        elif r.get("nic") == "e1000":
            yield cond(r, "stock e1000 held below the floor and stalls there",
                       (r.get("squeeze_below_ms") or 0) >= 10000
                       and r["squeeze_written_below"] < 1000, d)
        else:
            yield Result(f"{label(r)}: stock expectation", Status.SKIP,
                         f"no stock expectation for {r.get('nic')}")


@check
def rx_squeeze_reached(recs, root):
    """The squeeze's paths were taken, whatever the rate: free memory was
    held below the GFP_ATOMIC floor for 10 s or more, packets were received
    and writeback completed there, the flood was dropped as pfmemalloc, and
    the workload completed with no page lost on a clean kernel. For the
    debug kernel, whose instrumented receive path is several times slower
    under TCG than rx_squeeze's thresholds assume."""
    for r in recs:
        if r.get("squeeze_written_below") is None:
            yield Result(f"{label(r)}: squeeze report", Status.ERROR, "no squeeze report in the console")
            continue
        d = _squeeze_line(r)
        yield cond(r, "held below the floor for 10 s", (r.get("squeeze_below_ms") or 0) >= 10000, d)
        yield cond(r, "received and wrote back below the floor",
                   (r.get("squeeze_rx_below") or 0) > 0 and r["squeeze_written_below"] > 0, d)
        yield cond(r, "pfmemalloc packets dropped for the ordinary socket",
                   bool(r.get("pfmemalloc_drop")), d)
        yield cond(r, "completed, no page lost",
                   r.get("verdict") == Verdict.COMPLETED and r.get("corrupt") == 0, d)
        yield from kernel_clean([r], None)


@check
def neigh_squeeze(recs, root):
    """The squeeze with the guest's neighbour cache flushed a second into the
    hold (guest/tests/rx-squeeze.sh, NS_NEIGH_FLUSH): the nbd server's
    address must be resolved again while free memory is still held down
    (the guest's KTAP result), and swap writeback must go on in the second
    half of the hold (docs/results/neigh-squeeze.md: not yet seen to fail
    because of the neighbour timer)."""
    for r in recs:
        if r.get("squeeze_written_below") is None:
            yield Result(f"{label(r)}: squeeze report", Status.ERROR, "no squeeze report in the console")
            continue
        d = _squeeze_line(r)
        yield from guest_ktap([r], root)
        yield cond(r, "writeback went on in the second half of the hold",
                   (r.get("squeeze_written_late") or 0) >= 1000, d)
        yield cond(r, "completed, no page lost",
                   r.get("verdict") == Verdict.COMPLETED and r.get("corrupt") == 0, d)
        yield from kernel_clean([r], None)


@check
def rx_squeeze_jumbo(recs, root):
    """The same at MTU 9000 on e1000e over the tap, copybreak off: e1000e
    receives into packet-split pages, which stock 6.1 allocates with plain
    GFP_ATOMIC; below the floor they cannot be refilled and receive stops for
    the rest of the hold (nothing received, no writeback completed in its
    second half). With the series they come from the reserves."""
    for r in recs:
        if (r.get("net"), r.get("mtu"), r.get("nic_driver")) != ("tap", 9000, "e1000e"):
            yield Result(f"{label(r)}: e1000e at MTU 9000 over the tap", Status.ERROR,
                         f"net={r.get('net')} mtu={r.get('mtu')} driver={r.get('nic_driver')}")
            continue
        if r.get("squeeze_written_below") is None:
            yield Result(f"{label(r)}: squeeze report", Status.ERROR, "no squeeze report in the console")
            continue
        if r.get("series"):
            yield from _protected_squeeze(r, jumbo=True)
            continue
        d = _squeeze_line(r)
        yield cond(r, "no page lost", not r.get("corrupt"), d)
        yield cond(r, "stock held below the floor, receive stopped in the second half",
                   (r.get("squeeze_below_ms") or 0) >= 10000
                   and not r.get("squeeze_written_late") and not r.get("squeeze_rx_late"), d)


# --- KTAP from the guest and from the kernel -------------------------------

KTAP_RESULT = re.compile(r"^(ok|not ok) (\d+) (?:- )?([^#]*?)\s*(?:# (.*))?$")


@check
def guest_ktap(recs, root):
    """A guest test script's KTAP (guest/lib.sh): a plan, exactly that many
    results, each ok (or SKIP)."""
    for r in recs:
        lines = r.get("guest_ktap")
        if not lines:
            yield Result(f"{label(r)}: guest KTAP", Status.ERROR, "the guest printed no KTAP")
            continue
        plan = next((int(m.group(1)) for m in (re.match(r"^1\.\.(\d+)$", x) for x in lines) if m),
                    None)
        results = [m for m in (KTAP_RESULT.match(x) for x in lines) if m]
        for m in results:
            ok, n, name, directive = m.group(1) == "ok", m.group(2), m.group(3), m.group(4) or ""
            st = (Status.SKIP if directive.startswith("SKIP") else
                  Status.PASS if ok else Status.FAIL)
            yield Result(f"{label(r)}: guest {n} {name}", st, directive)
        yield cond(r, "guest plan fulfilled", plan is not None and plan == len(results),
                   f"plan={plan} results={len(results)}")


def kunit_parser(root):
    """The tree's own KTAP parser (tools/testing/kunit/kunit_parser.py)."""
    cache = os.environ.get("NETSWAP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "netswap")
    d = os.path.join(cache, "linux", "tools", "testing", "kunit")
    if d not in sys.path:
        sys.path.insert(0, d)
    import kunit_parser as kp      # noqa: E402 (found only at run time)
    return kp


def parse_ktap(lines, root):
    """The tree's KTAP parser on console lines, without its running report
    (it prints to the stream its printer was made with)."""
    kp = kunit_parser(root)
    import io
    import kunit_printer
    saved = kunit_printer.stdout._output
    kunit_printer.stdout._output = io.StringIO()
    try:
        return kp.parse_run_tests(lines)
    finally:
        kunit_printer.stdout._output = saved


def kunit_tree(r, root):
    """The KUnit results in a record's console log, or an error string."""
    log = os.path.join(rundir(r, root), "console.log")
    try:
        with open(log, errors="replace") as f:
            text = f.read().splitlines()
    except OSError:
        return None, f"no console log {log}"
    try:
        test = parse_ktap(text, root)
    except ImportError as e:
        return None, f"kunit_parser not found (build a kernel first): {e}"
    return test, None


def _kunit_cases(test, prefix=""):
    for t in test.subtests:
        name = f"{prefix}.{t.name}" if prefix else t.name
        if t.subtests:
            yield from _kunit_cases(t, name)
        else:
            yield name, t


def _kunit_status(kstatus):
    n = kstatus.name
    return {"SUCCESS": Status.PASS, "SKIPPED": Status.SKIP, "FAILURE": Status.FAIL}.get(
        n, Status.ERROR)


@check
def kunit(recs, root):
    """Every KUnit case on the console passed (or was skipped), and some ran."""
    for r in recs:
        test, err = kunit_tree(r, root)
        if err:
            yield Result(f"{label(r)}: kunit", Status.ERROR, err)
            continue
        cases = list(_kunit_cases(test))
        for name, t in cases:
            yield Result(f"{label(r)}: {name}", _kunit_status(t.status))
        yield cond(r, "KUnit cases ran", bool(cases), f"{len(cases)} cases")
        if test.counts.errors:
            yield Result(f"{label(r)}: KTAP parsed", Status.ERROR, f"{test.counts.errors} parse errors")


def kunit_case(suite_case):
    suite, _, case = suite_case.partition(".")

    def one(recs, root):
        for r in recs:
            test, err = kunit_tree(r, root)
            if err:
                yield Result(f"{label(r)}: {suite_case}", Status.ERROR, err)
                continue
            for s in test.subtests:
                if s.name != suite:
                    continue
                for c in s.subtests:
                    if c.name == case:
                        yield Result(f"{label(r)}: {suite_case}", _kunit_status(c.status))
                        break
                else:
                    yield Result(f"{label(r)}: {suite_case}", Status.ERROR,
                                 f"suite {suite} ran ({s.status.name}) without case {case}")
                break
            else:
                yield Result(f"{label(r)}: {suite_case}", Status.ERROR, f"suite {suite} did not run")
    return one


def verdict_is(want):
    def one(recs, root):
        for r in recs:
            yield cond(r, f"verdict {want}", r.get("verdict") == want,
                       f"verdict={r.get('verdict')}")
    return one


class SpecError(ValueError):
    pass


def parse_spec(spec):
    """A spec string -> list of (name, function)."""
    out = []
    for part in spec.split(","):
        part = part.strip()
        if part.startswith("kunit:"):
            sc = part[len("kunit:"):]
            if not re.fullmatch(r"\w+\.\w+", sc):
                raise SpecError(f"{part!r}: expected kunit:SUITE.CASE")
            out.append((part, kunit_case(sc)))
        elif part.startswith("verdict:"):
            v = part[len("verdict:"):]
            if v not in {x.value for x in Verdict}:
                raise SpecError(f"{part!r}: unknown verdict (known: {', '.join(x.value for x in Verdict)})")
            out.append((part, verdict_is(v)))
        elif part.startswith("check:"):
            out.extend(parse_spec(part[len("check:"):]))
        elif part in CHECKS:
            out.append((part, CHECKS[part]))
        else:
            raise SpecError(f"unknown check {part!r} (known: {', '.join(sorted(CHECKS))}, "
                            "kunit:SUITE.CASE, verdict:VERDICT)")
    return out


def select(recs, only):
    """Records whose fields match every KEY=VALUE of `only` (JSON spelling)."""
    import json
    conds = []
    for o in only:
        if "=" not in o:
            raise SpecError(f"--only {o!r}: expected KEY=VALUE")
        conds.append(o.split("=", 1))
    return [r for r in recs
            if all(json.dumps(r.get(k)).strip('"') == v for k, v in conds)]


def run(spec, recs, root):
    """All Results of a spec on the records, each name prefixed by its check."""
    results = []
    for name, fn in parse_spec(spec):
        if not recs:
            results.append(Result(name, Status.ERROR, "no result records"))
            continue
        for res in fn(recs, root):
            results.append(Result(f"{name}: {res.name}", res.status, res.detail, res.diag))
    return results


def ktap(results, title=None):
    """KTAP lines for a list of Results."""
    out = ["KTAP version 1"]
    if title:
        out.append(f"# {title}")
    out.append(f"1..{len(results)}")
    for i, r in enumerate(results, 1):
        name = r.name.replace("#", "")
        if r.status == Status.SKIP:
            out.append(f"ok {i} {name} # SKIP {r.detail}".rstrip())
        elif r.status == Status.PASS:
            out.append(f"ok {i} {name}" + (f" # {r.detail}" if r.detail else ""))
        else:
            tag = "ERROR " if r.status == Status.ERROR else ""
            out.append(f"not ok {i} {name} # {tag}{r.detail}".rstrip(" #"))
            out.extend(f"# | {line}" for line in r.diag)
    return out


def exit_status(results):
    """0 every Result passed or was skipped; 1 one failed; 3 none failed but
    one could not be judged."""
    sts = {r.status for r in results}
    if Status.FAIL in sts:
        return 1
    if Status.ERROR in sts or not results:
        return 3
    return 0
