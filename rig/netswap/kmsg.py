"""Kernel reports on a guest console: what kind each one is, and which kinds
end a run that should have completed cleanly.

The patterns follow the kernel's own wording (kernel/panic.c, lib/bug.c,
kernel/locking/lockdep.c, kernel/sched/core.c, kernel/workqueue.c,
kernel/rcu/tree_stall.h, kernel/watchdog*.c, kernel/hung_task.c,
mm/kasan/report.c, lib/ubsan.c, mm/kfence/report.c, lib/debugobjects.c,
lib/list_debug.c, mm/page_alloc.c), and blktests' dmesg check: the first
pattern that matches a line names its kind, so the specific kinds come before
the generic `WARNING:` and `BUG:`.
"""

import re
from dataclasses import dataclass, field
from typing import Optional

FIRST_LINES = 3      # lines kept per kind
SPLAT_LINES = 40     # console lines kept after the first fatal report


@dataclass(frozen=True)
class Kind:
    name: str
    pattern: re.Pattern
    fatal: bool
    what: str


def _k(name, regex, fatal, what):
    return Kind(name, re.compile(regex), fatal, what)


KINDS = (
    _k("init_killed", r"Attempted to kill init", True, "panic: PID 1 was killed"),
    _k("panic", r"Kernel panic - not syncing", True, "kernel panic"),
    _k("lockdep", r"WARNING: (possible circular locking dependency|inconsistent lock state|"
       r"possible recursive locking|possible irq lock inversion|"
       r"suspicious RCU usage|bad unlock balance|held lock freed|lock held when returning)|"
       r"INFO: possible (circular|recursive|irq) lock", True, "lockdep report"),
    _k("atomic_sleep", r"BUG: (sleeping function called from invalid context|"
       r"scheduling while atomic)|Voluntary context switch within RCU", True,
       "sleep in atomic context"),
    _k("wq_flush", r"workqueue: WQ_MEM_RECLAIM \S+ is flushing !WQ_MEM_RECLAIM", True,
       "reclaim workqueue flushes a non-reclaim one"),
    _k("kasan", r"BUG: KASAN: ", True, "KASAN report"),
    _k("kfence", r"BUG: KFENCE: ", True, "KFENCE report"),
    _k("ubsan", r"UBSAN: ", True, "UBSAN report"),
    _k("soft_lockup", r"BUG: soft lockup", True, "soft lockup"),
    _k("hard_lockup", r"[Hh]ard LOCKUP", True, "hard lockup"),
    _k("rcu_stall", r"rcu: INFO: \S+ (self-)?detected stall|"
       r"rcu_\w+ (self-)?detected stall|rcu: INFO: \S+ detected expedited stalls",
       True, "RCU stall"),
    _k("wq_lockup", r"BUG: workqueue lockup", True, "workqueue lockup"),
    _k("hung_task", r"INFO: task \S+ blocked for more than", True, "hung task"),
    _k("debug_objects", r"ODEBUG: ", True, "debugobjects report"),
    _k("list_corruption", r"list_(add|del) corruption|list_add double add", True,
       "list corruption"),
    _k("bad_page", r"BUG: Bad (page|rss)", True, "bad page state"),
    _k("oops", r"BUG: (unable to handle|kernel NULL pointer)|Oops: |"
       r"general protection fault", True, "oops"),
    _k("kernel_bug", r"kernel BUG at ", True, "BUG()"),
    _k("bug", r"BUG: ", True, "other BUG: report"),
    _k("warning", r"WARNING: CPU: \d+ PID: \d+ |WARNING: at ", True, "WARN()"),
    # counted, never fatal by themselves
    _k("alloc_failure", r"page allocation failure", False, "page allocation failure"),
    _k("oom_kill", r"Out of memory: Killed process|oom-kill:", False, "OOM kill"),
    _k("swap_io_error", r"(Read|Write)-error on swap-device", False, "swap I/O error"),
    _k("nbd_stuck", r"Possible stuck request", False, "nbd request stuck"),
    _k("nbd_conn_lost", r"nbd\d+: connection \d+ lost", False, "nbd connection lost"),
    _k("nbd_reconnected", r"nbd\d+: connection \d+ reconnected", False, "nbd reconnected in the kernel"),
    _k("nbd_reconnect_failed", r"nbd\d+: reconnect: ", False, "nbd reconnect attempt failed"),
    _k("nbd_bad_reply", r"nbd\d+: (Wrong magic|Unexpected reply|Receive control failed|"
       r"Double reply|Command already handled)", False,
       "nbd dropped a connection over a reply it could not use"),
    _k("nbd_gave_up", r"nbd\d+: no connection after \d+ s", False, "nbd gave up (dead_conn_timeout)"),
    _k("nbd_export_changed", r"nbd\d+: export changed on reconnect", False, "nbd export changed"),
    _k("nbd_dead_conn", r"Dead connection, failed to find a fallback", False,
       "nbd request found no live connection (it fails unless a dead-connection timeout is set)"),
    _k("block_io_error", r"I/O error, dev \S+, sector", False, "block I/O error"),
    _k("throttle_msg", r"[Tt]hrottl(ing|ed) .*reclaim", False, "throttled reclaim message"),
    _k("sysrq", r"sysrq: ", False, "sysrq handled"),
    _k("kunit_fail", r"(^|\] )\s*not ok \d+ ", False, "KUnit case failed"),
    # never matched by a line: what a whole KASAN report is judged to be
    _k("kasan_la57_identify_cpu", r"(?!x)x", False,
       "KASAN false positive: interrupt during identify_boot_cpu() under 5-level paging"),
)
BY_NAME = {k.name: k for k in KINDS}
FATAL = tuple(k.name for k in KINDS if k.fatal)


PRINTK_TIME = re.compile(r"^\[\s*(\d+\.\d+)\]")


def printk_time(line):
    """The kernel's timestamp of a console line (seconds since boot), or None."""
    m = PRINTK_TIME.match(line)
    return float(m.group(1)) if m else None


# KASAN reports the kernel prints in error, recognised whole: the first line
# starts a block that ends at KASAN's closing rule, and a block matching every
# pattern of an entry counts as that entry's kind (not fatal) instead of
# "kasan". Each entry names the mechanism; docs/debug-kernel.md has the
# evidence.
KASAN_END = re.compile(r"^(\[\s*\d+\.\d+\] )?={60,}\s*$")
KASAN_BLOCK_MAX = 80          # lines; a block not closed by then is judged as it is


def _kasan_addr_5level_only(block):
    """The accessed address has KASAN shadow under 5-level paging and none
    under 4-level: [0xff00000000000000, 0xffff800000000000)."""
    for line in block:
        m = re.search(r"at addr ([0-9a-f]{16})\b", line)
        if m:
            return 0xff00000000000000 <= int(m.group(1), 16) < 0xffff800000000000
    return False


KASAN_FALSE_POSITIVES = (
    # x86-64 with 5-level paging: identify_boot_cpu() clears boot_cpu_data's
    # feature words with interrupts on, before alternatives are applied, so
    # KASAN's pgtable_l5_enabled() reads LA57 as 0 and takes the 4-level
    # bounds; an interrupt in that window that touches the 5-level direct
    # map is reported as a wild access (the access itself is valid).
    ("kasan_la57_identify_cpu",
     (re.compile(r"BUG: KASAN: wild-memory-access"), re.compile(r"<IRQ>"),
      re.compile(r"\bidentify_boot_cpu\+")),
     _kasan_addr_5level_only),
)


@dataclass
class Report:
    count: int = 0
    first: list = field(default_factory=list)
    first_t: Optional[float] = None        # printk time of the first one


class KernelLog:
    """Counts the kernel reports of one console, keeps each kind's first lines
    and the console lines that follow the first fatal report (the splat)."""

    def __init__(self):
        self.reports = {}          # kind -> Report
        self.splat = []            # lines from the first fatal report on
        self._splat_left = 0
        self._kasan = None         # lines of a KASAN report not yet closed

    def feed(self, line):
        if self._splat_left:
            self.splat.append(line)
            self._splat_left -= 1
        if self._kasan is not None:
            self._kasan.append(line)
            if KASAN_END.match(line.strip()) or len(self._kasan) >= KASAN_BLOCK_MAX:
                self._close_kasan()
            return None
        kind = classify(line)
        if kind is None:
            return None
        if kind.name == "kasan":
            self._kasan = [line]   # judged whole, when KASAN closes it
            return kind
        self._count(kind, line)
        return kind

    def _count(self, kind, line, splat=None):
        r = self.reports.setdefault(kind.name, Report())
        r.count += 1
        if r.first_t is None:
            r.first_t = printk_time(line)
        if len(r.first) < FIRST_LINES:
            r.first.append(line.strip()[:300])
        if kind.fatal and not self.splat:
            self.splat = list(splat or [line])[:SPLAT_LINES]
            self._splat_left = SPLAT_LINES - len(self.splat)

    def _close_kasan(self):
        block, self._kasan = self._kasan, None
        text = "\n".join(block)
        for name, patterns, check in KASAN_FALSE_POSITIVES:
            if all(p.search(text) for p in patterns) and check(block):
                self._count(BY_NAME[name], block[0])
                return
        self._count(BY_NAME["kasan"], block[0], block)

    def finish(self):
        """Judge a KASAN report the console ended in."""
        if self._kasan is not None:
            self._close_kasan()

    def count(self, name):
        self.finish()
        r = self.reports.get(name)
        return r.count if r else 0

    def fatal(self, allowed=()):
        """Fatal kinds seen, less those the scenario allows."""
        self.finish()
        return sorted(k for k in self.reports if BY_NAME[k].fatal and k not in allowed)

    def as_dict(self):
        self.finish()
        return {k: {"count": r.count, "first": r.first, "first_t": r.first_t}
                for k, r in sorted(self.reports.items())}


def classify(line):
    for k in KINDS:
        if k.pattern.search(line):
            return k
    return None
