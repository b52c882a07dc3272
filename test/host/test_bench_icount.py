"""Unit tests of make bench-icount's host side (rig/netswap/benchicount.py):
parsing the guest's lines, the tables and their verdicts, and rebuilding the
page from the raw JSON lines (bench --report)."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from netswap import bench, benchicount, run

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _read(name):
    with open(os.path.join(DATA, name), errors="replace") as f:
        return f.read()


def net_rows(variant, nbd, proto, size, mbits, phase="net-icount"):
    return [{"phase": phase, "variant": variant, "nbd": nbd, "proto": proto, "size": size,
             "boot": 1 + i // 2, "rep": 1 + i % 2, "bps": m * 1e6} for i, m in enumerate(mbits)]


def fp_rows(variant, memalloc, name, length, op, values):
    return [{"phase": "fastpath", "variant": variant, "memalloc": memalloc, "name": name,
             "len": length, "op": op, "boot": 1, "rep": i + 1, "ns_per_call": v}
            for i, v in enumerate(values)]


class ParseTest(unittest.TestCase):
    def test_net_lines_of_a_real_console(self):
        # a bench-icount boot on the series kernel (data/README.md)
        text = _read("bench-icount-series.log")
        rows = benchicount.parse_net(text)
        lines = [ln for ln in text.splitlines() if ln.startswith("NETSWAP: bench proto=")]
        self.assertEqual(len(rows), len(lines))
        self.assertGreater(len(rows), 0)
        first = dict(kv.split("=", 1) for kv in lines[0].split()[2:])
        self.assertEqual(rows[0]["proto"], first["proto"])
        self.assertEqual(rows[0]["size"], int(first["size"]))
        self.assertEqual(rows[0]["ns"], int(first["ns"]))
        self.assertEqual(rows[0]["bps"], float(first["bits_per_second"]))
        self.assertEqual({r["proto"] for r in rows}, {"tcp", "udp"})
        self.assertEqual(benchicount.info(text, "bench").get("clocksource"), "hpet")

    def test_net_line_cut_or_documented_is_not_a_sample(self):
        text = ("(the rig's bench tag, then):\n"
                "  proto=P size=N rep=I bytes=B sent=S ns=T bits_per_second=X window=N stalls=K\n"
                "NETSWAP: bench proto=tcp size=64 rep=1 bytes=4194304 sent=41943\n")
        self.assertEqual(benchicount.parse_net(text), [])

    def test_fastpath_lines_of_a_real_console(self):
        # a fastpath-bench boot on the series-bench kernel (data/README.md)
        text = _read("fastpath-series.log")
        rows = benchicount.parse_fastpath(text)
        self.assertGreater(len(rows), 0)
        self.assertEqual({r["op"] for r in rows}, {"alloc", "free"})
        self.assertEqual({r["memalloc"] for r in rows}, {0, 1})
        self.assertIn("napi_alloc_skb", {r["name"] for r in rows})
        self.assertTrue(all(r["ns_per_call"] > 0 and r["calls"] > 0 for r in rows))
        # begin/end lines are not samples
        self.assertFalse(any("begin" in r["name"] for r in rows))


class TableTest(unittest.TestCase):
    def test_net_row_counts_only_outside_both_spreads(self):
        rows = (net_rows("stock", 0, "udp", 64, [100.0, 100.1, 100.0, 100.1])
                + net_rows("series", 0, "udp", 64, [98.0, 98.1, 98.0, 98.1])
                + net_rows("stock", 0, "udp", 128, [100.0, 101.0])
                + net_rows("series", 0, "udp", 128, [100.5, 100.4])
                + net_rows("stock", 0, "tcp", 64, [100.0, 100.0])
                + net_rows("series", 0, "tcp", 64, [103.0, 103.0]))
        t = benchicount.net_table(rows, "net-icount")
        self.assertIn("| 64 | 100.05 | 0.10% | 98.05 | 0.10% | -2.00% | **cost** |", t)
        # 0.45 % apart, but stock moved by 1 %: not a cost
        self.assertIn("| 128 | 100.50 | 1.00% | 100.45 | 0.10% | -0.05% | - |", t)
        self.assertIn("| 64 | 100.00 | 0.00% | 103.00 | 0.00% | +3.00% | gain |", t)
        self.assertIn("**UDP, no memalloc socket** — Mbit/s, median of 4 samples", t)
        self.assertNotIn("nbd attached", t)
        self.assertEqual(benchicount.net_summary(rows, "net-icount"),
                         "Rows outside both spreads: 2 of 3. Costs: UDP 64 (-2.00%). "
                         "Gains: TCP 64 (+3.00%).")
        # the wall-clock view is its own phase
        self.assertEqual(benchicount.net_table(rows, "net-tcg"), "")

    def test_fastpath_more_instructions_is_a_cost(self):
        rows = (fp_rows("stock", 0, "build_skb", 1500, "alloc", [50.0, 50.0, 50.1])
                + fp_rows("series", 0, "build_skb", 1500, "alloc", [52.0, 52.0, 52.0])
                + fp_rows("stock", 1, "build_skb", 1500, "alloc", [50.0, 50.0])
                + fp_rows("series", 1, "build_skb", 1500, "alloc", [55.0, 55.0]))
        t = benchicount.fastpath_table(rows)
        self.assertIn("| build_skb | 1500 | alloc | 50.0 | 0.20% | 52.0 | 0.00% | +2.0 | +4.00% | **cost** |", t)
        self.assertIn("| build_skb | 1500 | alloc | 50.0 | 0.00% | 55.0 | 0.00% | +5.0 | +10.00% | **cost** |", t)
        m = benchicount.memalloc_table(rows)
        self.assertIn("| build_skb | 1500 | alloc | +0.0 | +3.0 |", m)

    def test_meta_of_a_file_extended_later(self):
        rows = [{"phase": "meta", "date": "2026-12-06", "elapsed_s": 100, "boots": {"fastpath": 3}},
                {"phase": "meta", "date": "2026-12-07", "elapsed_s": 50, "boots": {"fastpath-jl": 2}}]
        m = benchicount.meta_of(rows)
        self.assertEqual(m["boots"], {"fastpath": 3, "fastpath-jl": 2})
        self.assertEqual(m["elapsed_s"], 150)
        self.assertEqual(m["date"], "2026-12-07")

    def test_meta_of_a_run_stopped_before_its_end(self):
        # the first lines of docs/results/bench-icount.jsonl: a run without its meta line
        rows = [json.loads(line) for line in open(os.path.join(DATA, "bench-icount-stopped.jsonl"))]
        m = benchicount.meta_of(rows)
        self.assertEqual(m["date"], "2026-12-06")
        self.assertTrue(m["boots"]["fastpath"].startswith("2 at most (no meta line"))
        self.assertNotIn("net-icount", m["boots"])

    def test_spread(self):
        self.assertEqual(benchicount.spread([10.0]), 0.0)
        self.assertAlmostEqual(benchicount.spread([9.0, 10.0, 11.0]), 20.0)


class ReportTest(unittest.TestCase):
    def test_report_rebuilds_every_table_from_the_raw_lines(self):
        rows = [{"phase": "run", "of": "net-icount", "variant": "stock", "nbd": 0, "boot": 1,
                 "run_id": "x", "verdict": "completed", "wall_s": 200.0, "accel": "icount",
                 "clocksource": "hpet", "memalloc_sockets": "0", "loopbench_opts": "-P:2,1",
                 "errors": []}]
        rows += net_rows("stock", 0, "tcp", 1024, [2300.0, 2301.0])
        rows += net_rows("series", 0, "tcp", 1024, [2302.0, 2303.0])
        rows += net_rows("stock", 1, "udp", 1024, [1100.0, 1100.0])
        rows += net_rows("series", 1, "udp", 1024, [1090.0, 1090.0])
        rows += net_rows("stock", 0, "tcp", 1024, [2000.0, 2600.0], phase="net-tcg")
        rows += net_rows("series", 0, "tcp", 1024, [2100.0, 2500.0], phase="net-tcg")
        rows += fp_rows("stock", 0, "kmem_cache_alloc", 64, "alloc", [30.0, 30.0])
        rows += fp_rows("series", 0, "kmem_cache_alloc", 64, "alloc", [30.0, 30.0])
        rows += [dict(r, config="jump_label") for r in
                 fp_rows("stock", 0, "kmem_cache_alloc", 64, "alloc", [25.0, 25.0])
                 + fp_rows("series", 0, "kmem_cache_alloc", 64, "alloc", [27.0, 27.0])]
        rows.append({"phase": "meta", "date": "2026-12-06", "elapsed_s": 4000,
                     "boots": {"net-icount": 1, "fastpath": 1, "net-tcg": 1}, "qemu": "QEMU 7.2"})
        with tempfile.TemporaryDirectory() as d:
            old = (bench.RESULTS, run.OUT)
            bench.RESULTS, run.OUT = d, d
            try:
                path = os.path.join(d, "bench-icount.jsonl")
                with open(path, "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
                with contextlib.redirect_stdout(io.StringIO()):
                    self.assertEqual(bench.report(path), 0)      # dispatched by its phases
                md = open(os.path.join(d, "bench-icount.md")).read()
            finally:
                bench.RESULTS, run.OUT = old
        self.assertIn("# Benchmarks under instruction counting (2026-12-06, 4000 s)", md)
        self.assertIn(benchicount.METHOD_NET.splitlines()[0], md)
        self.assertIn(benchicount.METHOD_FASTPATH.splitlines()[0], md)
        self.assertIn(benchicount.METHOD_WALL.splitlines()[0], md)
        self.assertIn("| 1024 | 2300.50 | 0.04% | 2302.50 | 0.04% | +0.09% | gain |", md)
        self.assertIn("**UDP, nbd attached (memalloc sockets exist)**", md)
        self.assertIn("| 1024 | 1100.00 | 0.00% | 1090.00 | 0.00% | -0.91% | **cost** |", md)
        # the wall-clock view: the same runs' spreads swallow the difference
        self.assertIn("| 1024 | 2300.00 | 26.09% | 2300.00 | 17.39% | +0.00% | - |", md)
        self.assertIn("| kmem_cache_alloc | 64 | alloc | 30.0 | 0.00% | 30.0 | 0.00% | +0.0 | +0.00% | - |", md)
        self.assertIn("| net-icount | stock | 0 | 1 | completed | 200.0 | hpet | 0 | - |", md)
        # the jump-label kernels in a table of their own, after the rig's
        jl = md.index("## The same with jump labels")
        self.assertGreater(jl, md.index("## Per-call cost of the fast paths"))
        self.assertIn("| kmem_cache_alloc | 64 | alloc | 25.0 | 0.00% | 27.0 | 0.00% | +2.0 | +8.00% | **cost** |",
                      md[jl:])
        self.assertIn("`bench-icount.jsonl`", md)


if __name__ == "__main__":
    unittest.main()
