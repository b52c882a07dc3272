"""A small QMP client: QEMU's machine protocol on a unix socket, one command
at a time, every reply checked (docs/interop/qmp-spec in QEMU's tree).

    with Qmp(path) as q:
        q.execute("send-key", {"keys": [...]})

A reply with "error" raises QmpError naming the command and QEMU's message;
asynchronous events that arrive in between are kept in `events`.
"""

import json
import socket
import time

from .errors import RigError


class QmpError(RigError):
    """QEMU refused a command, or its monitor did not answer."""


class Qmp:
    def __init__(self, path, timeout=5.0):
        self.path, self.timeout = path, timeout
        self.sock = None
        self.buf = b""
        self.events = []

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc):
        self.close()

    def connect(self):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(self.timeout)
                s.connect(self.path)
                break
            except OSError as e:
                s.close()
                if time.monotonic() > deadline:
                    raise QmpError(f"QMP socket {self.path}: {e}") from None
                time.sleep(0.1)
        self.sock = s
        greeting = self._read()
        if "QMP" not in greeting:
            raise QmpError(f"QMP: unexpected greeting {greeting!r}")
        self.execute("qmp_capabilities")

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def _read(self):
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(65536)
            except OSError as e:
                raise QmpError(f"QMP: no answer: {e}") from None
            if not chunk:
                raise QmpError("QMP: connection closed by QEMU")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise QmpError(f"QMP: not JSON: {line[:200]!r}") from None

    def execute(self, command, arguments=None):
        msg = {"execute": command}
        if arguments is not None:
            msg["arguments"] = arguments
        try:
            self.sock.sendall(json.dumps(msg).encode() + b"\n")
        except OSError as e:
            raise QmpError(f"QMP {command}: cannot send: {e}") from None
        while True:
            reply = self._read()
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                err = reply["error"]
                raise QmpError(f"QMP {command}: {err.get('class')}: {err.get('desc')}")
            if "return" in reply:
                return reply["return"]
            raise QmpError(f"QMP {command}: unexpected reply {reply!r}")


def sysrq_keys(key):
    """The send-key argument for alt-sysrq-KEY (a letter or digit)."""
    if len(key) != 1 or not key.isalnum():
        raise ValueError(f"sysrq key must be one letter or digit, got {key!r}")
    return {"keys": [{"type": "qcode", "data": "alt"},
                     {"type": "qcode", "data": "sysrq"},
                     {"type": "qcode", "data": key.lower()}]}


def opt_escape(value):
    """A value inside a QEMU option string (key=value,key=value): commas are
    doubled, so that a path with a comma stays one value."""
    return str(value).replace(",", ",,")
