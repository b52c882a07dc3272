"""Unit tests of the rig's host side: scenario files, console parsing, verdicts, reports."""

import contextlib
import io
import json
import os
import queue
import tempfile
import time
import unittest

import dataclasses

from netswap import console, netns, report, run, scenario, watchdog
from netswap.errors import RigError

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
# a console captured from a real smoke run on the series kernel (data/README.md)
with open(os.path.join(DATA, "smoke-series.log"), errors="replace") as _f:
    LOG = _f.read()
LINES = LOG.splitlines()
RUN_AT = next(i for i, line in enumerate(LINES) if "NETSWAP: phase=run" in line)
STARTED = LINES[:RUN_AT + 4]          # the workload started and made some progress


class ScenarioTest(unittest.TestCase):
    def test_defaults_and_workload(self):
        sc = scenario.parse_text("variant = stock\ncpus = 2\n")
        self.assertEqual(sc.variant, "stock")
        self.assertEqual(sc.ram, 256)
        self.assertEqual(sc.workload, "swapstress -p 32 -s 4x -l 2")

    def test_sizes_and_options(self):
        sc = scenario.parse_text("ram = 1G\nprocs = 8\nsize = 512M\nloops = 1\nwrite_frac = 0.25\n"
                                 "min_free_kbytes = 8192\nduration = 30\n")
        self.assertEqual(sc.ram, 1024)
        self.assertEqual(sc.min_free_kbytes, 8192)
        self.assertEqual(sc.workload, "swapstress -p 8 -s 512M -l 1 -d 30 -w 0.25")

    def test_comments_and_blank_lines(self):
        sc = scenario.parse_text("# a comment\n\nnic = e1000  # trailing\n")
        self.assertEqual(sc.nic, "e1000")

    def test_unknown_key_names_line(self):
        with self.assertRaisesRegex(scenario.ScenarioError, r"x.scn:2: unknown key 'swappiness'"):
            scenario.parse_text("ram = 256M\nswappiness = 10\n", "x.scn")

    def test_bad_values(self):
        for text, msg in (("ram = lots", "bad value 'lots' for ram"),
                          ("nic = rtl8139", "expected one of"),
                          ("cpus = 0", "in 1..8"),
                          ("write_frac = 2", "in 0..1"),
                          ("variant = nosuch", "unknown kernel variant"),
                          ("min_free_kbytes = 12", "default"),
                          ("export = relative.img", "absolute path"),
                          ("just words", "expected 'key = value'")):
            with self.assertRaisesRegex(scenario.ScenarioError, msg):
                scenario.parse_text(text)

    def test_host_link_keys(self):
        sc = scenario.parse_text("host_lo_rate = 80mbit\nnbd_timeout = 600\n")
        self.assertEqual((sc.host_lo_rate, sc.nbd_timeout), ("80mbit", 600))
        self.assertEqual(scenario.parse_text("host_lo_rate = none\n").host_lo_rate, "")
        self.assertEqual(scenario.parse_text("").host_lo_rate, "")
        for bad in ("80", "8.5mbit", "80mbit; reboot", "0mbit", "80 mbit"):
            with self.assertRaisesRegex(scenario.ScenarioError, "tc rate"):
                scenario.parse_text(f"host_lo_rate = {bad}\n")
        self.assertEqual(netns.qdisc_args("80mbit"),
                         ["tbf", "rate", "80mbit", "burst", "256k", "latency", "500ms"])

    def test_server_pause_key(self):
        self.assertEqual(scenario.parse_text("server_pause = 20:30\n").server_pause, (20, 30))
        self.assertIsNone(scenario.parse_text("server_pause = none\n").server_pause)
        for bad in ("20", "20:0", "-1:5", "a:b", "20:30:40"):
            with self.assertRaisesRegex(scenario.ScenarioError, "AT:SECONDS"):
                scenario.parse_text(f"server_pause = {bad}\n")

    def test_server_pause_needs_an_nbd_server(self):
        from netswap import __main__ as cli
        err = io.StringIO()
        real = run.run_scenarios
        run.run_scenarios = lambda *a, **k: self.fail("a run was started")
        try:
            with contextlib.redirect_stderr(err):
                rc = cli.main(["run", "server-pause", "--set", "swap=vblk"])
        finally:
            run.run_scenarios = real
        self.assertEqual(rc, 2)
        self.assertIn("server_pause needs swap = nbd", err.getvalue())

    def test_shaped_namespace_is_checked_not_reentered(self):
        shown = {"v": "qdisc noqueue 0: root refcnt 2"}
        old_env, old_describe = os.environ.get(netns.ENV), netns.describe
        netns.describe = lambda dev="lo": shown["v"]
        k = netns.key(scenario.parse_text("host_lo_rate = 80mbit\n"))
        self.assertEqual(k, "lo rate=80mbit")
        try:
            os.environ.pop(netns.ENV, None)
            self.assertFalse(netns.inside(k))        # not yet: re-exec
            os.environ[netns.ENV] = k
            with self.assertRaisesRegex(RigError, "shaped namespace expected"):
                netns.inside(k)                       # never a second re-exec
            shown["v"] = "qdisc tbf 8001: root refcnt 2 rate 80Mbit burst 256Kb lat 500ms"
            self.assertTrue(netns.inside(k))
            # a tap namespace must have its tap, and its tbf when a rate is set
            t = netns.key(scenario.parse_text("net = tap\nmtu = 9000\ntap_rate = 40mbit\n"))
            self.assertEqual(t, "tap mtu=9000 loss=0 queue=500ms rate=40mbit")
            os.environ[netns.ENV] = t
            shown["v"] = ""
            with self.assertRaisesRegex(RigError, "no nstap0"):
                netns.inside(t)
            shown["v"] = "qdisc fq_codel 0: root refcnt 2"
            with self.assertRaisesRegex(RigError, "shaped namespace expected"):
                netns.inside(t)
            shown["v"] = "qdisc tbf 8001: root refcnt 2 rate 40Mbit"   # both directions
            self.assertTrue(netns.inside(t))
            # only the tap's own direction shaped: the ifb lost its tbf
            netns.describe = lambda dev="lo": ("qdisc tbf 8001: root rate 40Mbit"
                                               if dev == netns.TAP else "qdisc noqueue 0: root")
            with self.assertRaisesRegex(RigError, "shaped namespace expected"):
                netns.inside(t)
            netns.describe = lambda dev="lo": shown["v"]
            t = netns.key(scenario.parse_text("net = tap\n"))
            os.environ[netns.ENV] = t
            self.assertTrue(netns.inside(t))
        finally:
            netns.describe = old_describe
            if old_env is None:
                os.environ.pop(netns.ENV, None)
            else:
                os.environ[netns.ENV] = old_env

    def test_tap_keys(self):
        self.assertEqual(netns.key(scenario.parse_text("")), "")
        sc = scenario.parse_text("net = tap\nmtu = 9000\n")
        self.assertEqual((sc.net, sc.mtu, sc.tap_rate), ("tap", 9000, ""))
        for bad, msg in (("mtu = 9000\n", "mtu needs net = tap"),
                         ("tap_rate = 40mbit\n", "tap_rate needs net = tap"),
                         ("net = tap\nhost_lo_rate = 40mbit\n", "use tap_rate"),
                         ("net = tap\nmtu = 9001\n", "bad value"),
                         ("net = slirp\n", "bad value")):
            with self.assertRaisesRegex(scenario.ScenarioError, msg):
                scenario.parse_text(bad)
        script = netns.setup_script("tap mtu=9000 loss=0 queue=2000ms rate=40mbit")
        for part in ("ip tuntap add dev nstap0 mode tap", "mtu 9000", "10.0.2.2/24",
                     "route_localnet", "nft -f -",
                     "tc qdisc add dev nstap0 root tbf rate 40mbit burst 256k latency 2000ms",
                     "redirect dev nsifb0",
                     "tc qdisc add dev nsifb0 root tbf rate 40mbit burst 256k latency 2000ms"):
            self.assertIn(part, script)
        self.assertNotIn("tbf", netns.setup_script("tap mtu=1500 loss=0 queue=500ms rate=none"))
        self.assertEqual(netns.key(scenario.parse_text("net = tap\ntap_queue_ms = 2000\n")),
                         "tap mtu=1500 loss=0 queue=2000ms rate=none")
        self.assertIn("dnat to 127.0.0.1", netns.nft_rules())
        self.assertNotIn("numgen", netns.nft_rules())
        self.assertEqual(netns.nft_rules(20).count("numgen random mod 1000 < 20 drop"), 2)
        with self.assertRaisesRegex(scenario.ScenarioError, "tap_loss needs net = tap"):
            scenario.parse_text("tap_loss = 20\n")

    def test_kunit_runs_only_when_asked(self):
        """Kernels with the series carry KUnit suites that drain memory and flip
        global keys at boot: off (kunit.enable=0) unless the scenario asks."""
        plain = scenario.parse_text("kernel_args = foo=1\n")
        self.assertEqual(run.kernel_args(plain, True), run.KERNEL_ARGS + " kunit.enable=0 foo=1")
        self.assertEqual(run.kernel_args(plain, False), run.KERNEL_ARGS + " foo=1")
        self.assertNotIn("kunit.enable", run.kernel_args(scenario.load("kunit", []), True))

    def test_duplicate_key(self):
        with self.assertRaisesRegex(scenario.ScenarioError, "duplicate key 'ram'"):
            scenario.parse_text("ram = 256M\nram = 512M\n")

    def test_overrides_win(self):
        sc = scenario.parse_text("ram = 256M\n", overrides=["ram=512M", "runs=3"])
        self.assertEqual((sc.ram, sc.runs), (512, 3))

    def test_every_shipped_scenario_parses(self):
        for d in scenario.SCENARIO_DIRS:
            for f in sorted(os.listdir(d)):
                if f != "bad-key.scn":          # bad on purpose (case 03)
                    scenario.load(os.path.join(d, f))

    def test_missing_file(self):
        with self.assertRaisesRegex(scenario.ScenarioError, "no scenario file"):
            scenario.load("/nonexistent.scn")


class ConsoleTest(unittest.TestCase):
    def test_parse_full_log(self):
        st = console.parse_log(LOG)
        self.assertEqual(st.exit_rc, 0)
        self.assertEqual(st.phase, "done")
        self.assertEqual(st.info["driver"], "virtio_net")
        self.assertEqual(st.result["result"], "completed")
        self.assertEqual(st.vm_delta("pswpout"), 94211)
        self.assertEqual(st.vm_delta("TcpExt.PFMemallocDrop"), 0)
        self.assertEqual(st.kernel["hung_task"], 0)
        self.assertEqual(st.klog.fatal(), [])
        self.assertEqual(st.progress_count, 29)

    def test_progress_is_work_that_grows(self):
        st = console.ConsoleState()
        st.feed("NETSWAP: phase=run cmd=x", now=10)
        self.assertEqual(st.last_work_time, 10)
        st.feed("swapstress: progress t=1 verified=0 filled=100", now=12)
        self.assertEqual(st.last_work_time, 12)
        st.feed("swapstress: progress t=3 verified=0 filled=100", now=20)
        self.assertEqual(st.last_work_time, 12, "no new work: the clock must not move")
        st.feed("noise [ 1.0] swapstress: progress t=5 verified=1 filled=100", now=30)
        self.assertEqual(st.last_work_time, 30)
        self.assertEqual(st.last_work_guest_t, 5)

    def test_generic_progress_lines(self):
        st = console.ConsoleState()
        st.feed("NETSWAP: phase=run cmd=x", now=1)
        st.feed("NETSWAP: progress n=5 t=2", now=4)
        self.assertEqual((st.work, st.last_work_time), (5, 4))

    def test_corrupt_and_errors(self):
        st = console.parse_log("NETSWAP: error nbd-client failed\n"
                               "swapstress: corrupt proc=1 page=5 addr=0x1 pass=1 kind=zero\n")
        self.assertEqual(st.errors, ["nbd-client failed"])
        self.assertEqual(len(st.corrupt_lines), 1)


def watch(*args, **kw):
    """watchdog.watch's Outcome as the flat dict a record holds."""
    d = dataclasses.asdict(watchdog.watch(*args, **kw))
    d.update(d.pop("squeeze"))
    return d


class FakeQemu:
    def __init__(self, lines):
        self.lines = queue.Queue()
        for line in lines:
            self.lines.put(line)
        self.sysrqs = []

    def sysrq(self, k):
        self.sysrqs.append(k)


class VerdictTest(unittest.TestCase):
    def sc(self, **kw):
        return scenario.parse_text("\n".join(f"{k} = {v}" for k, v in kw.items()))

    def test_completed(self):
        q = FakeQemu(LINES + [None])
        r = watch(self.sc(), q, "t", quiet=True)
        self.assertEqual(r["verdict"], "completed")
        self.assertEqual(r["corrupt"], 0)
        self.assertEqual(r["pswpout"], 94211)
        self.assertEqual(r["pgscan_direct_throttle"], 0)
        self.assertEqual(r["verified"], 90864)
        self.assertEqual(q.sysrqs, [])

    def test_memory_extremes_from_the_ticks(self):
        r = watch(self.sc(), FakeQemu(LINES + [None]), "t", quiet=True)
        # the lowest free memory, the most writeback and TCP memory of the 12 samples
        self.assertEqual((r["vm_min_free_pages"], r["vm_max_writeback_pages"],
                          r["vm_max_tcp_mem_pages"]), (2996, 7810, 255))
        self.assertEqual(len(r["vm_ticks"]), 12)
        self.assertEqual(r["vm_ticks"][1]["nr_free_pages"], "3660")
        older = [line.replace(" Sockstat.TCP.mem=", " Sockstat_was=") for line in LINES]
        r = watch(self.sc(), FakeQemu(older + [None]), "t", quiet=True)
        self.assertIsNone(r["vm_max_tcp_mem_pages"])       # older vmwatch: not known, not 0

    def test_corrupt(self):
        lines = [line.replace("result=completed", "result=corrupt").replace("corrupt=0 killed", "corrupt=3 killed")
                 .replace("exit rc=0", "exit rc=1") for line in LINES]
        r = watch(self.sc(), FakeQemu(lines + [None]), "t", quiet=True)
        self.assertEqual((r["verdict"], r["corrupt"]), ("corrupt", 3))

    def test_crash_without_exit_line(self):
        r = watch(self.sc(), FakeQemu(STARTED + ["Kernel panic - not syncing", None]),
                  "t", quiet=True)
        self.assertEqual(r["verdict"], "crashed")
        self.assertEqual(r["kernel"]["panic"], 1)

    def test_setup_error(self):
        r = watch(self.sc(), FakeQemu(["NETSWAP: phase=boot", "NETSWAP: error nbd-client failed",
                                       "NETSWAP: exit rc=11", None]), "t", quiet=True)
        self.assertEqual(r["verdict"], "setup-failed")

    def test_error_after_the_workload_ended_is_not_a_setup_failure(self):
        """Captured: the server gone past the dead-connection timeout; every
        worker killed by SIGBUS, swapstress reports its end, then the guest's
        script (its pages on the lost device too) dies: the workload failed,
        the setup did not."""
        with open(os.path.join(DATA, "gave-up-series.log"), errors="replace") as f:
            lines = f.read().splitlines()
        r = watch(self.sc(), FakeQemu(lines + [None]), "t", quiet=True)
        self.assertEqual((r["verdict"], r["killed"], r["rc"]), ("failed", 32, 139))

    def test_hung_needs_observed_silence(self):
        """No progress for hang_after seconds (and none during the dump) -> hung, with sysrq sent."""
        watchdog.DUMP_WAIT = 1
        q = FakeQemu(STARTED)    # run started, then silence; QEMU stays up
        r = watch(self.sc(hang_after=5, sysrq_dump="w"), q, "t", quiet=True)
        self.assertEqual(r["verdict"], "hung")
        self.assertEqual(q.sysrqs, ["w"])
        self.assertIsNotNone(r["time_to_hang_s"])

    def test_server_pause_is_not_the_guests_silence(self):
        """The server is stopped and continued on time; silence while it is
        stopped is not judged, and hang_after counts from SIGCONT."""
        import signal
        watchdog.DUMP_WAIT = 1

        class FakeNbd:
            def __init__(self):
                self.sent = []

            def signal_group(self, sig):
                self.sent.append((sig, time.monotonic()))

        nbd = FakeNbd()
        q = FakeQemu(STARTED)    # run started, then silence
        t = time.monotonic()
        r = watch(self.sc(hang_after=5, sysrq_dump="w", server_pause="1:6"), q, "t",
                  quiet=True, nbd=nbd)
        self.assertEqual([s for s, _ in nbd.sent], [signal.SIGSTOP, signal.SIGCONT])
        stop_t, cont_t = nbd.sent[0][1], nbd.sent[1][1]
        self.assertGreaterEqual(cont_t - stop_t, 5.5)
        self.assertEqual(r["verdict"], "hung")                 # silence after SIGCONT
        self.assertGreaterEqual(time.monotonic() - cont_t, 5)  # judged >= hang_after after it
        self.assertGreaterEqual(time.monotonic() - t, 1 + 6 + 5)
        self.assertEqual(r["server_pause"]["stopped_for_s"], round(cont_t - stop_t, 1))
        self.assertIsNone(r["server_pause"]["progress_after_resume_s"])


class ServerRestartTest(unittest.TestCase):
    def sc(self, **kw):
        return scenario.parse_text("\n".join(f"{k} = {v}" for k, v in kw.items()))

    def test_key(self):
        self.assertEqual(self.sc(server_restart="10:5").server_restart, (10, 5))
        self.assertIsNone(self.sc().server_restart)
        with self.assertRaises(scenario.ScenarioError):
            self.sc(server_restart="10")
        self.assertEqual(self.sc(nbd_client="nbd-client").nbd_client, "nbd-client")
        with self.assertRaisesRegex(scenario.ScenarioError, "exclude each other"):
            self.sc(server_restart="10:5", server_pause="10:5")

    def test_kill_then_fresh_server_on_time(self):
        """The server is killed AT s into the run and started again (same
        export kept) DOWN s later; silence while it is down is not judged."""
        watchdog.DUMP_WAIT = 1

        class FakeNbd:
            port = 12345

            def __init__(self):
                self.calls = []

            def kill(self):
                self.calls.append(("kill", time.monotonic()))

            def start(self, keep_export=False):
                self.calls.append(("start", time.monotonic(), keep_export))

        nbd = FakeNbd()
        q = FakeQemu(STARTED)    # run started, then silence
        r = watch(self.sc(hang_after=5, sysrq_dump="w", server_restart="1:4"), q, "t",
                  quiet=True, nbd=nbd)
        self.assertEqual([c[0] for c in nbd.calls], ["kill", "start"])
        self.assertTrue(nbd.calls[1][2], "the restarted server must keep the export")
        self.assertGreaterEqual(nbd.calls[1][1] - nbd.calls[0][1], 3.5)
        self.assertEqual(r["verdict"], "hung")
        self.assertIsNotNone(r["server_restart"])
        self.assertIsNone(r["server_pause"])

    def test_clock_can_be_the_squeeze_hold(self):
        """server_clock = squeeze: AT counts from the guest's "squeeze begin";
        a run whose hold never starts never kills the server."""
        watchdog.DUMP_WAIT = 1

        class FakeNbd:
            port = 1

            def __init__(self):
                self.calls = []

            def kill(self):
                self.calls.append("kill")

            def start(self, keep_export=False):
                self.calls.append("start")

        sc = self.sc(hang_after=5, sysrq_dump="w", server_restart="1:1", server_clock="squeeze")
        nbd = FakeNbd()
        watch(sc, FakeQemu(STARTED), "t", quiet=True, nbd=nbd)
        self.assertEqual(nbd.calls, [])
        nbd = FakeNbd()
        r = watch(sc, FakeQemu(STARTED + ["NETSWAP: squeeze begin permille=250 seconds=30"]), "t",
                  quiet=True, nbd=nbd)
        self.assertEqual(nbd.calls, ["kill", "start"])
        self.assertEqual(r["server_restart"]["clock"], "squeeze")

    def test_clock_can_be_the_end_of_the_fill(self):
        """server_clock = verify: AT counts from the first progress line whose
        filled pages reach procs x pages_per_proc (every page written once; the
        workload only reads back from then on), whatever the fill took."""
        watchdog.DUMP_WAIT = 1

        class FakeNbd:
            port = 1

            def __init__(self):
                self.calls = []

            def kill(self):
                self.calls.append("kill")

            def start(self, keep_export=False):
                self.calls.append("start")

        start = next(line for line in LINES if "swapstress: start" in line)
        total = int(start.split("procs=")[1].split()[0]) * int(start.split("pages_per_proc=")[1].split()[0])
        reading = next(line for line in LINES if "swapstress: progress" in line
                       and int(line.split("filled=")[1].split()[0]) >= total)
        self.assertNotIn(reading, STARTED)
        sc = self.sc(hang_after=5, sysrq_dump="w", server_restart="1:1", server_clock="verify")
        nbd = FakeNbd()
        watch(sc, FakeQemu(STARTED), "t", quiet=True, nbd=nbd)
        self.assertEqual(nbd.calls, [])
        nbd = FakeNbd()
        r = watch(sc, FakeQemu(STARTED + [reading]), "t", quiet=True, nbd=nbd)
        self.assertEqual(nbd.calls, ["kill", "start"])
        self.assertEqual(r["server_restart"]["clock"], "verify")

    def test_reconnect_lines_counted(self):
        st = console.ConsoleState()
        for line in ["[   14.1] block nbd0: connection 0 lost, reconnecting",
                     "[   14.2] block nbd0: reconnect: connection 0 to 10.0.2.2:1: cannot connect (-111)",
                     "[   21.4] block nbd0: connection 0 reconnected to 10.0.2.2:45619 (attempt 4)",
                     "[   35.9] block nbd0: no connection after 20 s (dead_conn_timeout), failing I/O",
                     "[   36.0] block nbd0: export changed on reconnect (size 1 -> 2, flags 0x1 -> 0x1), "
                     "not reconnecting",
                     "[   37.0] WARNING: CPU: 1 PID: 77 at net/core/sock.c:1 f+0x1/0x2"]:
            st.feed(line)
        for k in ("nbd_conn_lost", "nbd_reconnect_failed", "nbd_reconnected", "nbd_gave_up",
                  "nbd_export_changed", "warning"):
            self.assertEqual(st.kernel[k], 1, k)


class ReportTest(unittest.TestCase):
    def test_tables(self):
        recs = []
        base = dict(scenario="seed", nic="virtio-net", ram_mb=256, cpus=2, accel="tcg",
                    workload="w", hang_after=90, boot_s=3, guest_elapsed_s=1, verified=1,
                    pswpin=1, pswpout=1, pgscan_direct_throttle=0, pfmemalloc_drop=0, rundir="x")
        for i, (v, verdict, wall, tth) in enumerate((("stock", "completed", 70, None),
                                                     ("stock", "completed", 80, None),
                                                     ("baseline", "hung", None, 30),
                                                     ("baseline", "crashed", None, None))):
            recs.append(dict(base, run_id=f"r{i}", variant=v, verdict=verdict, wall_s=wall,
                             time_to_hang_s=tth, corrupt=0))
        t = report.ab_table(recs)
        self.assertIn("| seed | stock | virtio-net | 2 | 2 | 0 | 0 | 75 | - | 0 |", t)
        self.assertIn("| seed | baseline | virtio-net | 2 | 0 | 1 | 1 (crashed) | - | 30 | 0 |", t)
        self.assertIn("VERDICT" if False else "COMPLETED", report.human(recs[0]))
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
            f.write("not json\n")
        with self.assertRaisesRegex(ValueError, ":5: not a JSON line"):
            report.load([f.name])
        os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()


class BenchTest(unittest.TestCase):
    def test_bench_lines_and_table(self):
        from netswap import bench
        text = ("junk\nNETSWAP: bench proto=tcp size=64 bits_per_second=1000000\n"
                "[ 1.0] NETSWAP: bench proto=udp size=1024 bits_per_second=2500000\n")
        rows = bench.bench_lines(text)
        self.assertEqual(rows, [{"proto": "tcp", "size": 64, "bps": 1e6},
                                {"proto": "udp", "size": 1024, "bps": 2.5e6}])
        data = []
        for v, bps in (("stock", 100e6), ("series", 101e6), ("stock", 102e6), ("series", 99e6)):
            data.append({"proto": "tcp", "size": 64, "bps": bps, "variant": v, "nbd": 0})
        t = bench.net_table(data)
        self.assertIn("| 64 | 101.0 | 2.0% | 100.0 | 2.0% | -0.99% |", t)

    def test_swap_table_ratios(self):
        from netswap import bench
        rows = [{"size": "1x", "variant": v, "swap": sw, "verdict": "completed", "wall_s": w,
                 "pages_per_s": 100}
                for v, sw, w in (("series", "nbd", 30.0), ("stock", "nbd", 20.0),
                                 ("series", "vblk", 10.0))]
        t = bench.swap_table(rows)
        self.assertIn("| 1x | 30.0 | 20.0 | 10.0 | 3.00x | 1.50x |", t)

    def test_report_rebuilds_markdown_from_results(self):
        import tempfile
        from netswap import bench, run
        rows = [{"phase": "net", "proto": p, "size": 64, "bps": 1e6 * (1 + i), "variant": v,
                 "nbd": 0, "rep": 1, "verdict": "completed"}
                for i, (p, v) in enumerate((("tcp", "stock"), ("tcp", "series"),
                                            ("udp", "stock"), ("udp", "series")))]
        rows += [{"phase": "swap", "variant": v, "swap": sw, "size": "2x", "rep": 1,
                  "verdict": "completed", "wall_s": w, "pswpin": 10, "pswpout": 10,
                  "pages_per_s": 20 / w, "ticks": []}
                 for v, sw, w in (("series", "nbd", 30.0), ("stock", "nbd", 20.0),
                                  ("series", "vblk", 10.0))]
        # two runs whose median is 0.8500000000000001: printed as 0.9
        rows += [{"phase": "swap", "variant": "series", "swap": "nbd", "size": "4x", "rep": r,
                  "verdict": "completed", "wall_s": w, "pswpin": 0, "pswpout": 0,
                  "pages_per_s": 0, "ticks": []} for r, w in ((1, 0.8), (2, 0.9))]
        rows.append({"phase": "conns", "conns": 1, "verdict": "completed", "wall_s": 5.0,
                     "reserve_kbytes": 4072, "throttled": 0})
        with tempfile.TemporaryDirectory() as d:
            old = (bench.RESULTS, run.OUT)
            bench.RESULTS, run.OUT = d, d
            try:
                path = os.path.join(d, "bench-full.jsonl")
                with open(path, "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
                with contextlib.redirect_stdout(io.StringIO()):
                    self.assertEqual(bench.report(path), 0)
                md = open(os.path.join(d, "bench-full.md")).read()
            finally:
                bench.RESULTS, run.OUT = old
        self.assertIn("| 2x | 30.0 | 20.0 | 10.0 | 3.00x | 1.50x |", md)
        self.assertIn("| 4x | 0.9 | - | - |", md)
        self.assertIn("| 1 | 5.0 | 4072 |", md)
        self.assertIn("bench-full-net-tcp.png", md)


class ReconnectInHoldTest(unittest.TestCase):
    """checks.reconnect_in_hold judges a reconnect below the floor only when
    the squeeze held the floor from the loss to the reconnect."""

    def rec(self, below, back):
        # a hold from 8 s to 38 s, the connection lost at 10.0 s; below: the
        # squeeze's cumulative ms below the floor at 8, 9, ... 38 s
        return {"run_id": "r", "variant": "series-squeeze", "nic": "virtio-net", "run": 1,
                "squeeze_begin_kt": 8.0, "squeeze_end_kt": 38.0,
                "squeeze_below_by_kt": [[8.0 + i, ms] for i, ms in enumerate(below)],
                "kernel_reports": {"nbd_conn_lost": {"first_t": 10.0},
                                   "nbd_reconnected": {"first_t": back}}}

    def statuses(self, r):
        from netswap import checks
        return {res.name.split(": ", 1)[1]: res.status for res in checks.reconnect_in_hold([r], None)}

    def test_held_floor_judges_the_reconnect(self):
        from netswap.checks import Status
        held = [i * 1000 for i in range(31)]
        self.assertEqual(self.statuses(self.rec(held, 14.5)),
                         {"connection lost inside the hold": Status.PASS,
                          "reconnected before the hold ended": Status.PASS})
        self.assertEqual(self.statuses(self.rec(held, 40.0))["reconnected before the hold ended"],
                         Status.FAIL)

    def test_squeeze_that_ran_out_judges_nothing(self):
        from netswap.checks import Status
        # below the floor for the first second only (the fixture's top-up
        # budget used up), then a reconnect 3 s after the loss
        ran_out = [0, 440, 880] + [880] * 28
        self.assertEqual(self.statuses(self.rec(ran_out, 13.1)),
                         {"floor held from the loss to the reconnect": Status.ERROR})
        self.assertEqual(self.statuses(self.rec([], 13.1)),
                         {"floor held from the loss to the reconnect": Status.ERROR})
