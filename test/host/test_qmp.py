"""QMP client against a fake QEMU monitor on a unix socket: the handshake,
a checked reply, an error reply, events in between, and option escaping."""

import json
import os
import socket
import tempfile
import threading
import unittest

from netswap import qmp


class FakeMonitor(threading.Thread):
    """Speaks QMP for one connection: greeting, then a scripted reply per
    command (a dict keyed by command name; default {"return": {}})."""

    def __init__(self, path, replies=None, events=0):
        super().__init__(daemon=True)
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(path)
        self.srv.listen(1)
        self.replies = replies or {}
        self.events = events
        self.got = []

    def run(self):
        c, _ = self.srv.accept()
        f = c.makefile("rwb")
        f.write(b'{"QMP": {"version": {}, "capabilities": []}}\n')
        f.flush()
        for line in f:
            msg = json.loads(line)
            self.got.append(msg)
            for _ in range(self.events):
                f.write(b'{"event": "RESET", "timestamp": {}}\n')
            f.write(json.dumps(self.replies.get(msg["execute"], {"return": {}})).encode() + b"\n")
            f.flush()
        c.close()


class QmpTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "q.sock")

    def tearDown(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        os.rmdir(self.dir)

    def test_sendkey_is_checked(self):
        m = FakeMonitor(self.path, events=1)
        m.start()
        with qmp.Qmp(self.path) as q:
            self.assertEqual(q.execute("send-key", qmp.sysrq_keys("w")), {})
            self.assertEqual(len(q.events), 2)
        self.assertEqual([g["execute"] for g in m.got], ["qmp_capabilities", "send-key"])
        self.assertEqual([k["data"] for k in m.got[1]["arguments"]["keys"]], ["alt", "sysrq", "w"])

    def test_error_reply_raises(self):
        err = {"error": {"class": "GenericError", "desc": "Invalid parameter"}}
        m = FakeMonitor(self.path, {"send-key": err})
        m.start()
        with qmp.Qmp(self.path) as q:
            with self.assertRaisesRegex(qmp.QmpError, "send-key: GenericError: Invalid parameter"):
                q.execute("send-key", qmp.sysrq_keys("m"))

    def test_no_monitor(self):
        with self.assertRaisesRegex(qmp.QmpError, "QMP socket"):
            qmp.Qmp(self.path, timeout=0.3).connect()

    def test_bad_sysrq_key(self):
        with self.assertRaises(ValueError):
            qmp.sysrq_keys("ww")

    def test_option_escape(self):
        self.assertEqual(qmp.opt_escape("/tmp/a,b/swap.img"), "/tmp/a,,b/swap.img")
        self.assertEqual(qmp.opt_escape("plain"), "plain")
