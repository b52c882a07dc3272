"""Kernel report classification (rig/netswap/kmsg.py) and the verdict rule
built on it: line formats as the 6.1 kernel prints them, and whole console
logs captured from real runs (test/host/data/)."""

import os
import unittest

from netswap import kmsg

# one line per kind, in the format of the 6.1 source that prints it
LINES = {
    "[   12.3] ------------[ cut here ]------------": None,
    "[   12.3] WARNING: CPU: 1 PID: 77 at drivers/block/nbd.c:1146 nbd_add_socket+0x4a/0x2b0": "warning",
    "[    3.1] WARNING: possible circular locking dependency detected": "lockdep",
    "[    3.1] WARNING: inconsistent lock state": "lockdep",
    "[    3.1] WARNING: possible recursive locking detected": "lockdep",
    "[    3.1] WARNING: suspicious RCU usage": "lockdep",
    "[    4.0] BUG: sleeping function called from invalid context at mm/page_alloc.c:5178": "atomic_sleep",
    "[    4.0] BUG: scheduling while atomic: kworker/0:1/12/0x00000002": "atomic_sleep",
    "[    5.0] workqueue: WQ_MEM_RECLAIM xprtiod:xs_connect is flushing !WQ_MEM_RECLAIM events:0x0": "wq_flush",
    "[    6.0] BUG: KASAN: use-after-free in __sk_destruct+0x1c/0x2c0": "kasan",
    "[    6.0] BUG: KFENCE: out-of-bounds read in test_func+0x12/0x40": "kfence",
    "[    6.0] UBSAN: shift-out-of-bounds in mm/page_alloc.c:8731:20": "ubsan",
    "[   30.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [swapstress:88]": "soft_lockup",
    "[   30.0] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1": "hard_lockup",
    "[   40.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:": "rcu_stall",
    "[   40.0] rcu: INFO: rcu_sched self-detected stall on CPU": "rcu_stall",
    "[   50.0] BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 31s!": "wq_lockup",
    "[   60.0] INFO: task swapstress:77 blocked for more than 60 seconds.": "hung_task",
    "[    7.0] ODEBUG: free active (active state 0) object type: work_struct hint: fn+0x0/0x10": "debug_objects",
    "[    7.0] list_add corruption. prev->next should be next (ffff8880), but was 0000000000000000.":
        "list_corruption",
    "[    7.0] BUG: Bad page state in process swapstress  pfn:0a2b3": "bad_page",
    "[    8.0] BUG: kernel NULL pointer dereference, address: 0000000000000008": "oops",
    "[    8.0] general protection fault, probably for non-canonical address 0xdead": "oops",
    "[    8.0] Oops: 0000 [#1] PREEMPT SMP NOPTI": "oops",
    "[    8.0] kernel BUG at mm/slub.c:412!": "kernel_bug",
    "[    8.0] BUG: unable to handle page fault for address: ffffc90000a3f000": "oops",
    "[    8.0] BUG: Dentry 00000000c2f2b8a8{i=0,n=/} still in use (1) [unmount of tmpfs tmpfs]": "bug",
    "[    9.0] Kernel panic - not syncing: Fatal exception": "panic",
    "[    9.0] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000007": "init_killed",
    "[   10.0] kworker/u4:2: page allocation failure: order:0, mode:0x820(GFP_ATOMIC)": "alloc_failure",
    "[   10.0] Out of memory: Killed process 88 (swapstress) total-vm:9000kB": "oom_kill",
    "[   10.0] Write-error on swap-device (43:0:1234)": "swap_io_error",
    "[   10.0] I/O error, dev nbd0, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 2":
        "block_io_error",
    "[   10.0] block nbd0: Dead connection, failed to find a fallback": "nbd_dead_conn",
    "[   10.0] block nbd0: Possible stuck request 00000000: control (write@1234,4096B). Runtime 30 seconds":
        "nbd_stuck",
    "[   10.0] sysrq: Show Blocked State": "sysrq",
    "[   11.6] vmscan: swapstress (pid 119) throttled in direct reclaim: node 0 has 1674 free pages, "
    "below half of its pfmemalloc reserve of 4562 pages": "throttle_msg",
    "[    1.0]     not ok 3 grow_and_shrink_exactly": "kunit_fail",
    # our own lines are never kernel reports
    "swapstress: progress t=4.0 verified=50 rate=25 filled=242304 passes=0/64 corrupt=0 running=32": None,
    "NETSWAP: ktap not ok 3 reserve-grew # reserve=0": None,
}


def data(name):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", name),
              errors="replace") as f:
        return f.read().splitlines()


class ClassifyTest(unittest.TestCase):
    def test_each_kind(self):
        for line, want in LINES.items():
            k = kmsg.classify(line)
            self.assertEqual(k.name if k else None, want, line)

    def test_every_fatal_kind_has_a_line(self):
        seen = {v for v in LINES.values() if v}
        for k in kmsg.FATAL:
            self.assertIn(k, seen, f"no test line for fatal kind {k}")

    def test_fatal_less_allowed_and_first_lines(self):
        log = kmsg.KernelLog()
        for i in range(5):
            log.feed(f"[   60.{i}] INFO: task swapstress:{70 + i} blocked for more than 60 seconds.")
        log.feed("[   61.0] kworker/u4:2: page allocation failure: order:0, mode:0x820(GFP_ATOMIC)")
        self.assertEqual(log.fatal(), ["hung_task"])
        self.assertEqual(log.fatal(allowed=["hung_task"]), [])
        d = log.as_dict()
        self.assertEqual(d["hung_task"]["count"], 5)
        self.assertEqual(len(d["hung_task"]["first"]), kmsg.FIRST_LINES)
        self.assertEqual(d["alloc_failure"]["count"], 1)

    def test_splat_follows_the_first_fatal_report(self):
        log = kmsg.KernelLog()
        log.feed("[    1.0] all fine")
        log.feed("[   12.3] WARNING: CPU: 1 PID: 77 at drivers/block/nbd.c:1146 nbd_add_socket+0x4a/0x2b0")
        for i in range(60):
            log.feed(f"[   12.3] line {i}")
        self.assertEqual(len(log.splat), kmsg.SPLAT_LINES)
        self.assertIn("WARNING: CPU: 1", log.splat[0])


class KasanFalsePositiveTest(unittest.TestCase):
    """The KASAN report under 5-level paging during identify_boot_cpu()
    (docs/debug-kernel.md, Findings), as a debug kernel printed it: counted
    as its own kind, not fatal; the same report with one of its marks
    changed is a KASAN report."""

    def judge(self, lines):
        log = kmsg.KernelLog()
        for line in lines:
            log.feed(line)
        return log

    def test_known_report_is_not_fatal(self):
        log = self.judge(data("kasan-la57-identify-cpu.log"))
        self.assertEqual(log.fatal(), [])
        self.assertEqual(log.count("kasan_la57_identify_cpu"), 1)
        self.assertEqual(log.count("kasan"), 0)
        self.assertEqual(log.splat, [])

    def test_any_other_kasan_report_stays_fatal(self):
        lines = data("kasan-la57-identify-cpu.log")
        for old, new in (("identify_boot_cpu+", "start_secondary+"),      # another context
                         ("at addr ff1100000016a0a8", "at addr ffff88800016a0a8"),  # shadowed either way
                         ("<IRQ>", "<NMI>"),
                         ("wild-memory-access", "use-after-free")):
            log = self.judge([line.replace(old, new) for line in lines])
            self.assertEqual(log.fatal(), ["kasan"], old)
            self.assertEqual(log.count("kasan_la57_identify_cpu"), 0, old)
            self.assertIn("BUG: KASAN", log.splat[0], old)
            self.assertTrue(any("kasan_report" in x for x in log.splat), old)

    def test_report_cut_short_is_judged_at_the_end(self):
        lines = data("kasan-la57-identify-cpu.log")
        start = next(i for i, x in enumerate(lines) if "BUG: KASAN" in x)
        log = self.judge(lines[:start + 3])           # the console ended inside it
        self.assertEqual(log.fatal(), ["kasan"])
