"""Unit tests of make bench-swap's host side (rig/netswap/benchswap.py): the
guest's begin/end cost snapshots, the table's derived columns, and rebuilding
the page from the raw JSON lines (bench --report)."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from netswap import bench, benchswap

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def row(config, rep, wall, wr, wr_ms, rd, rd_ms, verdict="completed"):
    return {"phase": "swapcost", "config": config, "sets": [], "rep": rep, "verdict": verdict,
            "wall_s": wall, "pswpin": 1000, "pswpout": 1000, "run_s": 100.0, "host_cpu_s": 150.0,
            "run_id": f"r{rep}-{config}", "dev": "nbd0",
            "cpu_user": 10, "cpu_nice": 0, "cpu_system": 50, "cpu_idle": 20, "cpu_iowait": 10,
            "cpu_irq": 0, "cpu_softirq": 10,
            "blk_wr": wr, "blk_wr_ms": wr_ms, "blk_wr_sectors": wr * 200,
            "blk_rd": rd, "blk_rd_ms": rd_ms, "blk_rd_sectors": rd * 8}


LOCAL, TAP = benchswap.CONFIGS[0][0], benchswap.CONFIGS[2][0]


class CostsTest(unittest.TestCase):
    def test_snapshots_of_a_real_console(self):
        with open(os.path.join(DATA, "bench-swap-nbd-tap.log")) as f:
            text = f.read()
        c = benchswap.costs(text)
        self.assertEqual(c["dev"], "nbd0")
        # end minus begin, field by field (the lines in the file)
        self.assertEqual(c["cpu_system"], 2454 - 304)
        self.assertEqual(c["cpu_softirq"], 697 - 9)
        self.assertEqual(c["blk_wr"], 4919 - 1)
        self.assertEqual(c["blk_wr_ms"], 1476216 - 14)
        self.assertEqual(c["blk_rd_sectors"], 973032 - 16)

    def test_missing_or_cut_snapshot_gives_no_difference(self):
        text = ("NETSWAP: info cost_begin_cpu=1,2,3,4,5,6,7 cost_begin_blk=NA cost_dev=none\n"
                "NETSWAP: info cost_end_cpu=1,2,3\n")
        c = benchswap.costs(text)
        self.assertNotIn("blk_wr", c)
        self.assertEqual(c["cpu_user"], 0)      # only the fields both lines have
        self.assertNotIn("cpu_idle", c)
        self.assertEqual(benchswap.costs("nothing here\n"), {"dev": None})


class TableTest(unittest.TestCase):
    def rows(self):
        return [row(LOCAL, 1, 10.0, 100, 1000, 100, 100), row(LOCAL, 2, 12.0, 100, 1000, 100, 100),
                row(TAP, 1, 20.0, 100, 30000, 100, 2000), row(TAP, 2, 30.0, 100, 30000, 100, 2000),
                row(TAP, 3, None, 0, 0, 0, 0, verdict="hung")]

    def line(self, table, label):
        return next(ln for ln in table.splitlines() if ln.startswith(f"| {label} |"))

    def test_ratio_latency_and_sizes(self):
        summary, raw = benchswap.tables(self.rows())
        cells = [c.strip() for c in self.line(summary, TAP).split("|")[1:-1]]
        self.assertEqual(cells[1], "3 (2)")          # runs (completed): the hung one not timed
        self.assertEqual(cells[2], "25.0")           # median wall of the completed runs
        self.assertEqual(cells[4], "2.27x")          # 25 / median(10, 12)
        self.assertEqual(cells[10], "300.0")         # write ms per request
        self.assertEqual(cells[11], "20.0")          # read ms per request
        self.assertEqual(cells[12], "100.0")         # 200 sectors per write = 100 KB
        self.assertEqual(cells[13], "4.0")
        self.assertEqual(cells[14], "1.50")          # 150 CPU s over 100 s
        self.assertEqual(cells[6], "10.0%")          # user share of the CPU ticks
        self.assertEqual(cells[9], "30.0%")          # idle + iowait
        self.assertEqual(len(raw.splitlines()), 2 + 5)

    def test_report_rebuilds_the_page(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench-swap.jsonl")
            with open(path, "w") as f:
                for r in self.rows():
                    f.write(json.dumps(r) + "\n")
            old = benchswap.RESULTS
            benchswap.RESULTS = d
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    self.assertEqual(bench.report(path), 0)
            finally:
                benchswap.RESULTS = old
            page = open(os.path.join(d, "bench-swap.md")).read()
        self.assertIn("Method:", page)
        self.assertIn("| " + TAP + " | 3 (2) | 25.0 |", page)


if __name__ == "__main__":
    unittest.main()


class SelectedTest(unittest.TestCase):
    def test_default_set_leaves_out_the_extra_rows(self):
        labels = [label for label, _ in benchswap.selected("")]
        self.assertEqual(labels, list(benchswap.DEFAULT))
        self.assertNotIn("NBD, tap, -C 8", labels)
        self.assertIn(LOCAL, labels)

    def test_only_keeps_the_table_order_and_refuses_unknown_labels(self):
        labels = [label for label, _ in benchswap.selected(f"NBD, tap, -C 8; {LOCAL}")]
        self.assertEqual(labels, [LOCAL, "NBD, tap, -C 8"])
        with self.assertRaises(SystemExit):
            benchswap.selected("NBD, tap, -C 99")
