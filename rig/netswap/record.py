"""What one run produces: its verdict and its result record.

A record is one JSON line (results files) and a result.json in the run's
folder: the settings the run was asked for (`Settings`), then what happened
(`Outcome`), flattened into one object with a `schema` number. Schema 1 is
the record before kernel reports were judged (no `schema` key); readers of
old files get None for what it lacks. Every key is described here, once.
"""

import enum
from dataclasses import asdict, dataclass, field, fields
from typing import Optional

from . import console

SCHEMA = 2


class Verdict(enum.StrEnum):
    """What the workload did. Whether the kernel stayed clean is judged apart
    (`Outcome.kernel_clean`): a completed run with a WARN is still completed,
    and it still fails (see `met_expectation`)."""
    COMPLETED = "completed"        # the workload exited 0, every page verified
    HUNG = "hung"                  # no progress for hang_after s, guest still alive
    CORRUPT = "corrupt"            # the workload found a page that came back wrong
    FAILED = "failed"              # the workload exited non-zero
    CRASHED = "crashed"            # QEMU exited without the guest's exit line
    TIMEOUT = "timeout"            # still running at max_time
    SETUP_FAILED = "setup-failed"  # no workload: boot, nbd attach or swapon failed


@dataclass
class Settings:
    """What the run was asked for (from its scenario)."""
    run_id: str
    scenario: str
    description: str
    variant: str
    series: bool                 # the variant's kernel carries patches/series
    nic: str
    ram_mb: int
    cpus: int
    accel: str
    swap: str
    nbd_connections: int
    min_free_kbytes: Optional[int]
    workload: str
    rep: int
    expect: str
    hang_after: int
    kernel_allow: list
    started_at: str
    rundir: str
    nbd_timeout: int
    host_lo_rate: str
    sysctl: str
    kernel_args: str
    env: str
    host_lo: str
    net: str
    mtu: int
    tap_rate: str
    tap_queue_ms: int
    tap_loss: int
    tap: str


@dataclass
class Outcome:
    """What happened."""
    verdict: Verdict
    booted: bool
    rc: Optional[int]                    # the guest command's exit status
    workload_result: Optional[str]       # swapstress' own word
    boot_s: Optional[float]              # host seconds to the workload's start
    wall_s: Optional[float]              # host seconds of the workload
    time_to_hang_s: Optional[float]      # workload seconds to the last progress (hung)
    guest_elapsed_s: Optional[float]
    guest_last_progress_s: Optional[float]
    verified: Optional[int]
    corrupt: Optional[int]
    killed: Optional[int]                # workload processes killed by a signal
    corrupt_reports: list
    stalls: list                         # silences > hang_after that ended
    errors: list                         # the guest's own error lines
    kernel: dict                         # count of every kind of kernel report
    kernel_reports: dict                 # kind -> {count, first lines}
    kernel_fatal: list                   # fatal kinds seen and not allowed
    kernel_clean: bool
    kernel_splat: list                   # console lines after the first fatal report
    nic_driver: Optional[str]
    min_free_kbytes_effective: Optional[int]
    guest_ktap: list                     # a guest test script's KTAP lines
    vm_ticks: list
    vm_min_free_pages: Optional[int]
    vm_max_writeback_pages: Optional[int]
    vm_max_tcp_mem_pages: Optional[int]
    pswpin: Optional[int] = None
    pswpout: Optional[int] = None
    pgscan_direct_throttle: Optional[int] = None
    pgscan_direct: Optional[int] = None
    allocstall_normal: Optional[int] = None
    allocstall_dma32: Optional[int] = None
    oom_kill: Optional[int] = None
    pfmemalloc_drop: Optional[int] = None
    tcp_retrans_segs: Optional[int] = None
    udp_received: Optional[int] = None
    udp_sent: Optional[int] = None
    squeeze: dict = field(default_factory=dict)          # console.squeeze_summary
    server_pause: Optional[dict] = None
    server_restart: Optional[dict] = None
    link_outage: Optional[dict] = None
    nbd_kernel_reconnect: Optional[str] = None   # the attach tool's word: yes / no
    nbd_reconnects: Optional[int] = None         # nbd's debugfs count at the end
    met_expectation: Optional[bool] = None


# vmwatch counter -> Outcome field (increase from the begin snapshot)
VM_DELTAS = (("pswpin", "pswpin"), ("pswpout", "pswpout"),
             ("pgscan_direct_throttle", "pgscan_direct_throttle"),
             ("pgscan_direct", "pgscan_direct"),
             ("allocstall_normal", "allocstall_normal"),
             ("allocstall_dma32", "allocstall_dma32"),
             ("oom_kill", "oom_kill"),
             ("TcpExt.PFMemallocDrop", "pfmemalloc_drop"),
             ("Tcp.RetransSegs", "tcp_retrans_segs"))
TICK_KEYS = ("t", "nr_free_pages", "pswpin", "pswpout", "pgscan_direct_throttle",
             "nr_writeback", "Sockstat.TCP.mem")


def outcome(st, verdict, t0, stalls, allowed=()):
    """The Outcome of a run from its console state (console.ConsoleState)."""
    run_t = st.phases.get("run")
    done_t = st.phases.get("done")
    r = st.result or {}
    p = st.progress or {}
    fatal = st.klog.fatal(allowed)
    ticks = [{k: t.get(k) for k in TICK_KEYS if k in t} for t in st.vm_ticks]

    def extreme(key, pick):
        vals = [console.num(t.get(key)) for t in st.vm_ticks]
        vals = [v for v in vals if v is not None]
        return pick(vals) if vals else None

    o = Outcome(
        verdict=Verdict(verdict),
        booted=st.lines > 0 and ("boot" in st.phases or st.kernel_seen),
        rc=st.exit_rc,
        workload_result=r.get("result"),
        boot_s=round(run_t - t0, 1) if run_t else None,
        wall_s=round(done_t - run_t, 1) if (run_t and done_t) else None,
        time_to_hang_s=(round(st.last_work_time - run_t, 1)
                        if verdict == Verdict.HUNG and run_t and st.last_work_time else None),
        guest_elapsed_s=console.num(r.get("elapsed")),
        guest_last_progress_s=st.last_work_guest_t,
        verified=console.num((r or p).get("verified")),
        corrupt=console.num((r or p).get("corrupt")),
        killed=console.num(r.get("killed")),
        corrupt_reports=st.corrupt_lines[:20],
        stalls=stalls,
        errors=st.errors,
        kernel=st.kernel,
        kernel_reports=st.klog.as_dict(),
        kernel_fatal=fatal,
        kernel_clean=not fatal,
        kernel_splat=[line[:300] for line in st.klog.splat],
        nic_driver=st.info.get("driver"),
        min_free_kbytes_effective=console.num(st.info.get("min_free_kbytes")),
        guest_ktap=st.ktap,
        vm_ticks=ticks,
        # where the run went: the lowest free memory and the most memory that
        # TCP and writeback held at any sample (pages)
        vm_min_free_pages=extreme("nr_free_pages", min),
        vm_max_writeback_pages=extreme("nr_writeback", max),
        vm_max_tcp_mem_pages=extreme("Sockstat.TCP.mem", max),
        udp_received=st.udp_received,
        nbd_kernel_reconnect=st.info.get("nbd_kernel_reconnect"),
        nbd_reconnects=console.num(st.info.get("nbd_reconnects")),
        squeeze=console.squeeze_summary(st.squeeze) or {},
    )
    for key, name in VM_DELTAS:
        setattr(o, name, st.vm_delta(key))
    return o


def met_expectation(expect, o):
    """Did the run do what its scenario expects? `any` always does; a run
    expected to complete or to hang must also leave a clean kernel (no fatal
    report the scenario did not allow)."""
    if expect == "any":
        return True
    return o.verdict == expect and o.kernel_clean


def flatten(settings, o):
    """One JSON-ready dict: schema, settings, outcome (squeeze fields inline,
    as schema 1 had them)."""
    d = {"schema": SCHEMA, **asdict(settings), **asdict(o)}
    sq = d.pop("squeeze") or {}
    d.update(sq)
    for k in ("server_pause", "server_restart", "link_outage"):
        if d.get(k) is None:
            d.pop(k)
    return d


def keys():
    """Every key a record may have (for docs and tests)."""
    return ["schema"] + [f.name for f in fields(Settings)] + [
        f.name for f in fields(Outcome) if f.name != "squeeze"]
