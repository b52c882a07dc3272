"""The console parser, the verdict and the named checks on consoles captured
from real runs (test/host/data/README.md says which)."""

import dataclasses
import json
import os
import queue
import shutil
import tempfile
import unittest

from netswap import checks, console, record, scenario, watchdog
from netswap.checks import Status

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def lines(name):
    with open(os.path.join(DATA, name), errors="replace") as f:
        return f.read().splitlines()


class FakeQemu:
    def __init__(self, lines):
        self.lines = queue.Queue()
        for line in lines:
            self.lines.put(line)
        self.sysrqs = []

    def sysrq(self, k):
        self.sysrqs.append(k)


def judge(name, **keys):
    """The record a run with this console gets: watchdog verdict, outcome,
    flattened as run.py writes it; its rundir holds the console."""
    sc = scenario.parse_text("\n".join(f"{k} = {v}" for k, v in keys.items()))
    o = watchdog.watch(sc, FakeQemu(lines(name) + [None]), "t", quiet=True)
    o.met_expectation = record.met_expectation(sc.expect, o)
    d = dataclasses.asdict(o)
    d.update(d.pop("squeeze"))
    rundir = tempfile.mkdtemp()
    shutil.copy(os.path.join(DATA, name), os.path.join(rundir, "console.log"))
    d.update(variant="series", nic="virtio-net", rep=1, rundir=rundir, series=True,
             kernel_allow=list(sc.kernel_allow), expect=sc.expect)
    json.dumps(d)       # a record must be JSON
    return d


class CapturedLogTest(unittest.TestCase):
    def tearDown(self):
        for r in getattr(self, "recs", []):
            shutil.rmtree(r["rundir"], ignore_errors=True)

    def rec(self, name, **keys):
        r = judge(name, **keys)
        self.recs = getattr(self, "recs", []) + [r]
        return r

    def test_smoke_series_completes_clean(self):
        r = self.rec("smoke-series.log", expect="completed")
        self.assertEqual(r["verdict"], "completed")
        self.assertEqual((r["verified"], r["corrupt"], r["killed"]), (90864, 0, 0))
        self.assertTrue(r["kernel_clean"])
        self.assertTrue(r["met_expectation"])
        self.assertGreater(r["pswpout"], 1000)
        res = checks.run("completed,no_loss,swapped,kernel_clean", [r], "/")
        self.assertEqual({x.status for x in res}, {Status.PASS})

    def test_warn_fails_a_completed_run(self):
        r = self.rec("smoke-warn.log", expect="completed")
        self.assertEqual(r["verdict"], "completed")           # the workload was fine
        self.assertEqual(r["kernel_fatal"], ["warning"])
        self.assertFalse(r["met_expectation"])                 # the run is not
        self.assertIn("nbd_add_socket", r["kernel_reports"]["warning"]["first"][0])
        self.assertIn("cut here", "".join(r["kernel_splat"][:1]) + "cut here")
        self.assertTrue(any("nbd_genl_connect" in x for x in r["kernel_splat"]))
        res = checks.run("kernel_clean", [r], "/")
        self.assertEqual([x.status for x in res], [Status.FAIL])
        self.assertEqual(checks.exit_status(res), 1)
        # the report itself follows the failed result, as KTAP diagnostics
        out = checks.ktap(res)
        self.assertTrue(out[2].startswith("not ok 1 "), out[2])
        self.assertEqual(out[3:], ["# | " + x for x in r["kernel_splat"]])
        self.assertTrue(any("nbd_genl_connect" in x for x in out[3:]))

    def test_allowing_the_kind_needs_a_reason_and_then_passes(self):
        with self.assertRaisesRegex(scenario.ScenarioError, "kernel_allow_reason"):
            scenario.parse_text("kernel_allow = warning\n")
        r = self.rec("smoke-warn.log", expect="completed", kernel_allow="warning",
                     kernel_allow_reason="a test that warns on purpose")
        self.assertTrue(r["kernel_clean"])
        self.assertTrue(r["met_expectation"])

    def test_kunit_on_the_console(self):
        r = self.rec("smoke-series.log")
        try:
            checks.kunit_parser("/")
        except ImportError:
            self.skipTest("the kernel tree's kunit_parser is not unpacked (make kernel)")
        res = checks.run("kunit", [r], "/")
        self.assertGreaterEqual(len(res), 20)
        self.assertEqual({x.status for x in res}, {Status.PASS})
        one = checks.run("kunit:memalloc_reserve.grow_and_shrink_exactly", [r], "/")
        self.assertEqual([x.status for x in one], [Status.PASS])
        missing = checks.run("kunit:memalloc_reserve.no_such_case", [r], "/")
        self.assertEqual([x.status for x in missing], [Status.ERROR])
        self.assertEqual(checks.exit_status(missing), 3)

    def test_debug_kernel_boot_is_clean(self):
        r = self.rec("kunit-series-debug.log")
        self.assertTrue(r["kernel_clean"], r["kernel_fatal"])
        self.assertIn("KernelAddressSanitizer initialized", "\n".join(lines("kunit-series-debug.log")))

    def test_hang_dump_is_found_and_is_not_a_kernel_report(self):
        """The baseline kernel hung (no progress for hang_after s); the rig's
        sysrq w/m dump follows. The dump is evidence for the hung check, and
        its lines (blocked tasks, memory) are not kernel reports."""
        st = console.parse_log("\n".join(lines("baseline-hang.log")))
        self.assertGreater(st.klog.count("sysrq"), 0)
        self.assertEqual(st.klog.fatal(), [])
        r = self.rec("baseline-hang.log")
        r["verdict"] = "hung"                 # what the watchdog said when it was live
        res = checks.run("hung,kernel_clean", [r], "/")
        self.assertEqual({x.status for x in res}, {Status.PASS})
        r2 = self.rec("smoke-series.log")
        r2["verdict"] = "hung"
        res = checks.run("hung", [r2], "/")
        self.assertEqual([x.status for x in res], [Status.PASS, Status.FAIL])   # no dump


class KtapTest(unittest.TestCase):
    def test_ktap_lines_parse_with_the_tree_parser(self):
        res = [checks.Result("a", Status.PASS, "d"),
               checks.Result("b", Status.FAIL, "why", ("a report", "  its stack")),
               checks.Result("c", Status.SKIP, "later"), checks.Result("d", Status.ERROR, "no log")]
        try:
            t = checks.parse_ktap(checks.ktap(res, "title"), "/")
        except ImportError:
            self.skipTest("the kernel tree's kunit_parser is not unpacked (make kernel)")
        self.assertEqual([s.status.name for s in t.subtests],
                         ["SUCCESS", "FAILURE", "SKIPPED", "FAILURE"])
        self.assertEqual(t.counts.errors, 0)

    def test_guest_ktap_plan(self):
        base = {"variant": "series", "nic": "virtio-net", "rep": 1}
        good = dict(base, guest_ktap=["1..2", "ok 1 a # x", "ok 2 b"])
        short = dict(base, guest_ktap=["1..3", "ok 1 a", "ok 2 b"])
        bad = dict(base, guest_ktap=["1..2", "ok 1 a", "not ok 2 b # reserve=0"])
        self.assertEqual(checks.exit_status(checks.run("guest_ktap", [good], "/")), 0)
        self.assertEqual(checks.exit_status(checks.run("guest_ktap", [short], "/")), 1)
        self.assertEqual(checks.exit_status(checks.run("guest_ktap", [bad], "/")), 1)
        self.assertEqual(checks.exit_status(checks.run("guest_ktap", [dict(base)], "/")), 3)

    def test_neigh_squeeze(self):
        with open(os.path.join(DATA, "neigh-squeeze.jsonl")) as f:
            good, stalled = [json.loads(x) for x in f]
        self.assertEqual(checks.exit_status(checks.run("neigh_squeeze", [good], "/")), 0)
        res = checks.run("neigh_squeeze", [stalled], "/")
        self.assertEqual(checks.exit_status(res), 1)
        failed = {x.name.split(": ")[-1] for x in res if x.status == Status.FAIL}
        self.assertEqual(failed, {"guest 1 neigh_resolved_below_floor",
                                  "writeback went on in the second half of the hold"})

    def test_a_kernel_record_inside_a_guest_line(self):
        # the UART takes a printk record whole while a line written to the tty
        # is still going out: the record lands inside it (seen on a CI console)
        spliced = [
            "NETSWAP: ktap 1..3",
            "NETSWAP: ktap ok 1 a",
            "NETSWAP: ktap ok 2 override-per-so[   21.177665] nbd0: detected capacity change",
            "[   21.177701] block nbd0: second record, still inside",
            "cket # reserve=4096 shares=2048 2048",
            "[   21.206681] WARNING: CPU: 0 PID: 1 at mm/x.c:1 f+0x0/0x1",
            "NETSWAP: ktap ok 3 c",
        ]
        st = console.parse_log("\n".join(spliced))
        self.assertEqual(st.ktap, ["1..3", "ok 1 a",
                                   "ok 2 override-per-socket # reserve=4096 shares=2048 2048",
                                   "ok 3 c"])
        self.assertEqual(st.kernel["warning"], 1)
        cut = console.parse_log("NETSWAP: ktap ok 4 d[   22.000000] nbd0: last words")
        self.assertEqual(cut.ktap, ["ok 4 d"], "a fragment the log ends on is kept")

    def test_spec_errors(self):
        for spec in ("nosuch", "kunit:nodot", "verdict:sleepy"):
            with self.assertRaises(checks.SpecError):
                checks.parse_spec(spec)
