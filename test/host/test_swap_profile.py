"""Unit tests of make bench-swap-profile's host side (rig/netswap/swapprofile.py):
tools/kprof's console lines, a function's object file from a build tree,
the layer of a sample (self and by caller), the per-layer table and
rebuilding the page from the raw JSON lines without touching the text
around the generated part."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from netswap import swapprofile as sp

OBJS = {
    "tcp_sendmsg_locked": "net/ipv4/tcp.o", "tcp_sendmsg": "net/ipv4/tcp.o",
    "sock_sendmsg": "net/socket.o", "sock_xmit": "drivers/block/nbd.o",
    "nbd_queue_rq": "drivers/block/nbd.o",
    "read_hpet": "arch/x86/kernel/hpet.o", "ktime_get": "kernel/time/timekeeping.o",
    "blk_mq_rq_ctx_init": "block/blk-mq.o", "blk_mq_submit_bio": "block/blk-mq.o",
    "vp_notify": "drivers/virtio/virtio_pci_common.o",
    "virtqueue_notify": "drivers/virtio/virtio_ring.o",
    "start_xmit": "drivers/net/virtio_net.o", "virtio_queue_rqs": "drivers/block/virtio_blk.o",
    "_raw_spin_unlock_irqrestore": "kernel/locking/spinlock.o",
    "__wake_up_common_lock": "kernel/sched/wait.o",
    "memcpy": "arch/x86/lib/memcpy_64.o", "_copy_from_iter": "lib/iov_iter.o",
    "xas_load": "lib/xarray.o", "xas_find": "lib/xarray.o",
    "amd_e400_idle": "arch/x86/kernel/process.o", "do_idle": "kernel/sched/idle.o",
    "tick_nohz_idle_enter": "kernel/time/tick-sched.o",
    "shrink_folio_list": "mm/vmscan.o", "exc_page_fault": "arch/x86/mm/fault.o",
    "finish_task_switch.isra.0": "kernel/sched/core.o", "schedule": "kernel/sched/core.o",
    "ext4_foo": "fs/ext4/inode.o",
}

CONSOLE = """[    5.000000] some kernel line
NETSWAP: phase=done rc=0 uptime=9.0
NETSWAP: info kprof_hz=1000 kprof_cpus=2 kprof_depth=3 kprof_secs=5.00 kprof_samples=100 \
kprof_kernel=90 kprof_user=10 kprof_lost=0 kprof_throttle=0 kprof_unknown=1 kprof_full=0 \
kprof_chains=4
NETSWAP: info kprof_n=40 kprof_f=tcp_sendmsg_locked<tcp_sendmsg<sock_sendmsg<sock_xmit
NETSWAP: info kprof_n=30 kprof_f=read_hpet<ktime_get<blk_mq_rq_ctx_init<blk_mq_submit_bio
NETSWAP: info kprof_n=19 kprof_f=amd_e400_idle<default_idle_call<do_idle<cpu_startup_entry
noise NETSWAP: info kprof_n=1 kprof_f=?
NETSWAP: info kprof_end=1 kprof_printed=4
"""


class ParseTest(unittest.TestCase):
    def test_summary_chains_and_the_user_bucket(self):
        summary, chains = sp.parse(CONSOLE)
        self.assertEqual(summary["hz"], 1000)
        self.assertEqual(summary["samples"], 100)
        self.assertEqual(summary["printed"], 4)
        self.assertEqual(chains["tcp_sendmsg_locked<tcp_sendmsg<sock_sendmsg<sock_xmit"], 40)
        self.assertEqual(chains["?"], 1)             # a line with text before the mark
        self.assertEqual(chains["user"], 10)          # user samples: kprof_user
        self.assertEqual(sum(chains.values()), 100)   # every sample in some chain

    def test_a_chain_printed_twice_adds_up(self):
        text = ("NETSWAP: info kprof_n=2 kprof_f=a<b\n"
                "NETSWAP: info kprof_n=3 kprof_f=a<b\n")
        self.assertEqual(sp.parse(text)[1], {"a<b": 5})


class ClassifyTest(unittest.TestCase):
    def c(self, chain):
        return sp.classify(chain, OBJS)

    def test_layers_by_object_path(self):
        self.assertEqual(self.c("tcp_sendmsg_locked<tcp_sendmsg"), ("net", "net"))
        self.assertEqual(self.c("nbd_queue_rq"), ("nbd", "nbd"))
        self.assertEqual(self.c("blk_mq_submit_bio"), ("block", "block"))
        self.assertEqual(self.c("virtio_queue_rqs"), ("block", "block"))   # virtio_blk
        self.assertEqual(self.c("start_xmit"), ("net", "net"))             # virtio_net
        self.assertEqual(self.c("exc_page_fault"), ("mm", "mm"))           # arch/x86/mm
        self.assertEqual(self.c("memcpy<tcp_sendmsg"), ("copy", "copy"))   # arch/x86/lib
        self.assertEqual(self.c("finish_task_switch.isra.0<schedule"), ("core", "core"))
        self.assertEqual(self.c("ext4_foo"), ("other", "other"))
        self.assertEqual(self.c("not_in_any_object"), ("other", "other"))
        self.assertEqual(self.c("__sched_text_start<schedule"), ("core", "core"))
        self.assertEqual(self.c("user"), ("user", "user"))

    def test_shared_services_go_to_their_first_caller_that_is_not_one(self):
        # a clock read for the block layer: self in the kernel core, by caller block
        self.assertEqual(self.c("read_hpet<ktime_get<blk_mq_rq_ctx_init<blk_mq_submit_bio"),
                         ("core", "block"))
        # the virtio ring's doorbell for the NIC and for the disk
        self.assertEqual(self.c("vp_notify<virtqueue_notify<start_xmit"), ("virtio", "net"))
        self.assertEqual(self.c("vp_notify<virtqueue_notify<virtio_queue_rqs"),
                         ("virtio", "block"))
        # lib/ helpers: the swap cache's xarray is mm's
        self.assertEqual(self.c("xas_load<xas_find<shrink_folio_list"), ("other", "mm"))
        # iov_iter is copying, not a shared service
        self.assertEqual(self.c("_copy_from_iter<tcp_sendmsg"), ("copy", "copy"))
        # a lock released for the scheduler's wait queue: the scheduler's
        self.assertEqual(self.c("_raw_spin_unlock_irqrestore<__wake_up_common_lock<sock_xmit"),
                         ("core", "core"))
        # nothing but shared services in the chain: the leaf's own layer
        self.assertEqual(self.c("read_hpet<ktime_get"), ("core", "core"))

    def test_idle(self):
        self.assertEqual(self.c("amd_e400_idle<default_idle_call<do_idle"), ("idle", "idle"))
        self.assertEqual(self.c("tick_nohz_idle_enter<do_idle<cpu_startup_entry"),
                         ("idle", "idle"))
        # the same timer code outside the idle loop is not idle
        self.assertEqual(self.c("tick_nohz_idle_enter<schedule"), ("core", "core"))

    def test_layer_samples_add_up(self):
        _, chains = sp.parse(CONSOLE)
        own, by = sp.layer_samples(chains, OBJS)
        self.assertEqual(own, {"net": 40, "core": 30, "idle": 19, "other": 1, "user": 10})
        self.assertEqual(by, {"net": 40, "block": 30, "idle": 19, "other": 1, "user": 10})


class ObjectMapTest(unittest.TestCase):
    @unittest.skipUnless(shutil.which("gcc") and shutil.which("nm"), "needs gcc and nm")
    def test_names_from_a_build_tree(self):
        with tempfile.TemporaryDirectory() as d:
            for path, src in (("mm/a.o", "int f_mm(void){return 1;} static int s(void){return 2;}"
                                         " int g(void){return s();}"),
                              ("net/ipv4/b.o", "int f_net(void){return 3;}"),
                              ("vmlinux.o", "int f_mm(void){return 1;} int f_only_vmlinux(void)"
                                            "{return 4;}")):
                os.makedirs(os.path.dirname(os.path.join(d, path)) or d, exist_ok=True)
                subprocess.run(["gcc", "-O0", "-c", "-x", "c", "-", "-o", os.path.join(d, path)],
                               input=src, text=True, check=True)
            m = sp.object_map(d, {"f_mm", "f_net", "s", "f_only_vmlinux", "absent"})
        self.assertEqual(m, {"f_mm": "mm/a.o", "f_net": "net/ipv4/b.o", "s": "mm/a.o"})


def row(config, rep, chains, pages, profile=True, verdict="completed", secs=1.0):
    r = {"phase": "swapprofile", "config": config, "sets": [], "rep": rep,
         "profile_hz": 1000 if profile else 0, "verdict": verdict, "wall_s": 10.0 + rep,
         "pswpin": pages // 2, "pswpout": pages - pages // 2, "run_s": 20.0,
         "run_id": f"r{rep}-{config}", "dev": "nbd0",
         "cpu_user": 10, "cpu_nice": 0, "cpu_system": 60, "cpu_idle": 10, "cpu_iowait": 10,
         "cpu_irq": 0, "cpu_softirq": 10}
    if profile:
        r.update({"kprof": {"hz": 1000, "cpus": 2, "secs": secs, "samples": sum(chains.values()),
                            "lost": 0},
                  "chains": chains, "objs": OBJS})
    return r


LOCAL, TAP = sp.CONFIGS[0][0], sp.CONFIGS[1][0]


class TableTest(unittest.TestCase):
    def rows(self):
        return [
            # local: mm 60 / 100 and 80 / 100 samples -> median 70%
            row(LOCAL, 1, {"shrink_folio_list": 60, "blk_mq_submit_bio": 40}, 1000),
            row(LOCAL, 2, {"shrink_folio_list": 80, "blk_mq_submit_bio": 20}, 1000),
            row(LOCAL, 3, {"shrink_folio_list": 70, "read_hpet<ktime_get<blk_mq_submit_bio": 30},
                1000),
            # NBD: net samples, one hung run left out, a control run off the table
            # NBD: 2 s windows (4000 vCPU ms) for the same pages
            row(TAP, 1, {"shrink_folio_list": 60, "tcp_sendmsg": 100,
                         "vp_notify<virtqueue_notify<start_xmit": 40}, 1000, secs=2.0),
            row(TAP, 2, {"shrink_folio_list": 60, "tcp_sendmsg": 140}, 1000, secs=2.0),
            row(TAP, 3, {"tcp_sendmsg": 1}, 1000, verdict="hung"),
            row(TAP + sp.CONTROL, 1, {}, 1000, profile=False),
        ]

    def cells(self, table, label):
        line = next(ln for ln in table.splitlines() if ln.startswith(f"| {label} |"))
        return [c.strip() for c in line.split("|")[1:-1]]

    def test_shares_per_page_and_difference(self):
        layers, hot, runs, wall, tops = sp.tables(self.rows())
        by, own = layers.split("\n\n")
        # only the configurations that have rows: local, NBD, one difference
        self.assertIn("| NBD, tap, -C 1 - local, ms per 1000 pages |", by)
        self.assertNotIn(sp.CONFIGS[2][0], by)
        mm = self.cells(by, sp.LABEL["mm"])
        # shares times the window's vCPU ms (2000 local, 4000 NBD), per 1000 pages
        self.assertEqual(mm[1:3], ["70.0%", "1400.0"])              # local: median of 60/70/80
        self.assertEqual(mm[3:5], ["30.0%", "1200.0"])              # NBD: 60 of 200 both runs
        self.assertEqual(mm[5], "-200.0")
        # self: the clock read is the core's; by caller: the block layer's
        self.assertEqual(self.cells(own, sp.LABEL["block"])[1], "20.0%")
        self.assertEqual(self.cells(by, sp.LABEL["block"])[1], "30.0%")
        net = self.cells(by, sp.LABEL["net"])
        # NBD by caller: (100 + 40) / 200 and 140 / 200; self only tcp_sendmsg: 50% and 70%
        self.assertEqual(net[3:6], ["70.0%", "2800.0", "+2800.0"])
        self.assertEqual(self.cells(own, sp.LABEL["net"])[2], "60.0%")
        self.assertEqual(self.cells(own, sp.LABEL["virtio"])[2], "10.0%")   # median of 20%, 0%
        self.assertEqual(self.cells(by, sp.LABEL["virtio"])[3], "0.0%")
        total = self.cells(by, "all samples")
        self.assertEqual(total[1:], ["100%", "2000.0", "100%", "4000.0", "+2000.0"])
        # NBD run 1: 40 of 200 samples ring the NIC's doorbell, run 2 none
        door = self.cells(hot, sp.HOTSPOTS[0][0])
        self.assertEqual(door[1:], ["0.0%", "0.0", "10.0%", "400.0", "+400.0"])
        own = self.cells(hot, "TCP/IP, net core, virtio_net functions themselves (self)")
        self.assertEqual(own[3:], ["60.0%", "2400.0", "+2400.0"])  # median of 100 and 140
        # every run has its line, the hung one too; the control run has no shares
        self.assertEqual(len(runs.splitlines()), 2 + 7)
        self.assertIn("| r1-" + TAP + sp.CONTROL + " |", runs)
        self.assertEqual(self.cells(wall, TAP)[1], "3 (2)")
        self.assertEqual(self.cells(wall, TAP + sp.CONTROL)[1], "1 (1)")
        # top functions pooled over the runs: tcp_sendmsg 240 of 400 NBD samples
        nbd_top = tops.split("#### " + TAP)[1]
        self.assertIn("| 1 | `tcp_sendmsg` | net/ipv4/tcp.o | net | 60.0% |", nbd_top)
        self.assertIn("| 3 | `vp_notify` | drivers/virtio/virtio_pci_common.o | virtio | 10.0% |",
                      nbd_top)

    def test_report_rebuilds_only_the_generated_part(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "swap-profile.jsonl")
            md = os.path.join(d, "swap-profile.md")
            with open(path, "w") as f:
                for r in self.rows():
                    f.write(json.dumps(r) + "\n")
            with open(md, "w") as f:
                f.write("# Title\n\nreading before\n\n" + sp.BEGIN + "\nold tables, 123 s); raw lines"
                        + "\n" + sp.END + "\n\n## After\n\nreading after\n")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(sp.report(path, md), 0)
            with open(md) as f:
                page = f.read()
        self.assertTrue(page.startswith("# Title\n\nreading before\n\n" + sp.BEGIN))
        self.assertTrue(page.endswith(sp.END + "\n## After\n\nreading after\n"))
        self.assertNotIn("old tables", page)
        self.assertIn("Method:", page)
        self.assertIn(f"| {sp.LABEL['mm']} | 70.0% | 1400.0 |", page)


if __name__ == "__main__":
    unittest.main()
