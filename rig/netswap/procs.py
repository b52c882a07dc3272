"""Host processes the rig starts: Debian's nbd-server and QEMU. Both run in their
own process group so that stopping them also stops anything they forked."""

import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from .errors import RigError
from .qmp import Qmp, QmpError, opt_escape, sysrq_keys


def _killpg(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_process(proc, grace=5.0):
    if proc is None:
        return
    if proc.poll() is None:
        _killpg(proc, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    # the group may outlive its leader (nbd-server forks one child per client)
    _killpg(proc, signal.SIGKILL)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening(port, addr="0100007F"):
    """Is something listening on 127.0.0.1:port? (reads /proc/net/tcp, no connect)"""
    want = f"{addr}:{port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if parts[1] == want and parts[3] == "0A":
                    return True
    except OSError:
        pass
    return False


class NbdServer:
    """Debian's nbd-server (or, with binary nbdkit, Debian's nbdkit and its
    file plugin) on 127.0.0.1 exporting one file as 'netswap'."""

    EXPORT_NAME = "netswap"

    def __init__(self, rundir, export=None, size_mb=4096, port=None,
                 binary="nbd-server"):
        self.rundir = rundir
        self.auto_export = export is None
        self.export = export or os.path.join(rundir, "export.img")
        self.size_mb = size_mb
        self.port = port
        self.binary = binary
        self.proc = None
        self.pid = None
        self.pidfile = None
        self.conf = None
        self.log = os.path.join(rundir, "nbd-server.log")

    @staticmethod
    def preflight(export=None, port=None, binary="nbd-server"):
        """What start() would refuse, checked before a kernel is built: a
        missing export or server, or a taken port, fails in a second
        instead of after a cold build."""
        if export is not None:
            if not os.path.isfile(export):
                raise RigError(f"nbd export {export} does not exist")
            if not os.access(export, os.R_OK | os.W_OK):
                raise RigError(f"nbd export {export} is not readable and writable")
        if port and listening(port):
            raise RigError(f"cannot start nbd-server: 127.0.0.1:{port} is already in use")
        if not shutil.which(binary):
            raise RigError(f"cannot start nbd-server ({binary}): not found or not executable")

    def start(self, timeout=10.0, keep_export=False):
        if self.auto_export and not keep_export:
            with open(self.export, "wb") as f:
                f.truncate(self.size_mb << 20)   # sparse
        elif not os.path.isfile(self.export):
            raise RigError(f"nbd export {self.export} does not exist")
        elif not os.access(self.export, os.R_OK | os.W_OK):
            raise RigError(f"nbd export {self.export} is not readable and writable")
        port = self.port or free_port()
        if self.port and listening(port):
            raise RigError(f"cannot start nbd-server: 127.0.0.1:{port} is already in use")
        self.pidfile = os.path.abspath(os.path.join(self.rundir, "nbd-server.pid"))
        if self._nbdkit():
            return self._start_nbdkit(port, timeout)
        conf = os.path.abspath(os.path.join(self.rundir, "nbd-server.conf"))
        self.conf = conf
        with open(conf, "w") as f:
            f.write("[generic]\n"
                    "    listenaddr = 127.0.0.1\n"
                    f"    port = {port}\n"
                    "    allowlist = false\n"
                    f"[{self.EXPORT_NAME}]\n"
                    f"    exportname = {os.path.abspath(self.export)}\n")
        # nbd-server runs as a daemon: with -d (no fork) it would serve one
        # client at a time, and nbd-client -C N needs N at once. The daemon
        # is a session leader; its pid file names the group to stop.
        # absolute paths: the daemon changes to / before it writes its pid
        try:
            starter = subprocess.run(
                [self.binary, "-C", conf, "-p", self.pidfile], stdin=subprocess.DEVNULL,
                stdout=open(self.log, "wb"), stderr=subprocess.STDOUT, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RigError(f"cannot start nbd-server ({self.binary}): {e}") from None
        if starter.returncode != 0:
            msg = open(self.log, errors="replace").read().strip().splitlines()
            self.stop()
            raise RigError(f"nbd-server exited at start (rc={starter.returncode}): "
                           + (" | ".join(msg[-3:]) or "no output"))
        return self._wait_listening(port, timeout)

    def _nbdkit(self):
        return os.path.basename(self.binary) == "nbdkit"

    def _start_nbdkit(self, port, timeout):
        """nbdkit in the foreground (-f) as the leader of its own session, so
        that stopping its group stops it; its pid file names this run (the
        string _is_ours() looks for). One process, a thread per request."""
        self.conf = self.pidfile
        try:
            os.unlink(self.pidfile)      # a stale one would name a dead server
        except OSError:
            pass
        try:
            self.proc = subprocess.Popen(
                [self.binary, "-f", "-i", "127.0.0.1", "-p", str(port), "-e", self.EXPORT_NAME,
                 "--pidfile", self.pidfile, "file", os.path.abspath(self.export)],
                stdin=subprocess.DEVNULL, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT,
                start_new_session=True)
        except OSError as e:
            raise RigError(f"cannot start nbdkit: {e}") from None
        return self._wait_listening(port, timeout)

    def _wait_listening(self, port, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                msg = open(self.log, errors="replace").read().strip().splitlines()
                raise RigError(f"{self.binary} exited at start (rc={self.proc.returncode}): "
                               + (" | ".join(msg[-3:]) or "no output"))
            self.pid = self._read_pid()
            if self.pid and not os.path.exists(f"/proc/{self.pid}"):
                msg = open(self.log, errors="replace").read().strip().splitlines()
                self.stop()
                raise RigError("nbd-server exited after start: " + (" | ".join(msg[-3:]) or "no output"))
            if self.pid and listening(port):
                self.port = port
                return port
            time.sleep(0.1)
        self.stop()
        raise RigError(f"nbd-server did not listen on 127.0.0.1:{port} within {timeout:.0f}s")

    def _read_pid(self):
        if not self.pidfile:
            return None
        try:
            with open(self.pidfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return self._find_pid()

    def _find_pid(self):
        """The daemon by its command line, should its pid file be missing."""
        if not self.conf:
            return None
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/cmdline", "rb") as f:
                        cmd = f.read().split(b"\0")
                except OSError:
                    continue
                if (cmd and cmd[0].endswith(os.path.basename(self.binary).encode())
                        and self.conf.encode() in cmd):
                    if os.getpgid(int(d)) == int(d):     # the session leader
                        return int(d)
        return None

    def signal_group(self, sig):
        """Send sig to the daemon and its per-client children (pause/resume)."""
        pid = self.pid or self._read_pid()
        if not (pid and self._is_ours(pid)):
            raise RigError("nbd-server is not running: cannot signal it")
        os.killpg(pid, sig)

    def _is_ours(self, pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            return (os.path.basename(self.binary).encode() in cmd
                    and (self.conf or "").encode() in cmd)
        except OSError:
            return False

    def kill(self):
        """Kill the daemon and its per-client children at once (a crash, not
        a shutdown), keeping the export for a restart with start(keep_export=True)."""
        pid = self.pid or self._read_pid()
        if not (pid and self._is_ours(pid)):
            raise RigError("nbd-server is not running: cannot kill it")
        os.killpg(pid, signal.SIGKILL)
        self._wait_gone(pid, 5.0)
        self.pid = None
        try:
            os.unlink(self.pidfile)
        except OSError:
            pass

    def _wait_gone(self, pid, wait):
        """Until pid has exited (reaped, when it is our child: nbdkit), or wait s."""
        if self.proc is not None and self.proc.pid == pid:
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                pass
            return
        end = time.monotonic() + wait
        while time.monotonic() < end and os.path.exists(f"/proc/{pid}"):
            time.sleep(0.05)

    def stop(self):
        pid = self.pid or self._read_pid()
        if pid and self._is_ours(pid):
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
                try:
                    os.killpg(pid, sig)      # the daemon and its per-client children
                except (ProcessLookupError, PermissionError):
                    try:
                        os.kill(pid, sig)
                    except (ProcessLookupError, PermissionError):
                        pass
                self._wait_gone(pid, wait)
        if self.auto_export and os.path.exists(self.export):
            os.unlink(self.export)


NIC_DEVICES = {"virtio-net": "virtio-net-pci", "e1000": "e1000", "e1000e": "e1000e"}

# QEMU's accelerator per scenario `accel`. icount: TCG with instruction
# counting, so that guest time is a function of the instructions executed
# (shift=0: 1 ns a guest instruction; sleep=off: an idle guest's clock jumps
# to its next timer instead of waiting for the host). Every vCPU runs in one
# host thread, round robin on the virtual clock; the CPU has no RDRAND/RDSEED
# and the RTC starts at a fixed date on the virtual clock, so that no host
# randomness or wall-clock time reaches the guest.
ACCEL_ARGS = {
    "tcg": ["-accel", "tcg,thread=multi", "-cpu", "max"],
    "kvm": ["-accel", "kvm", "-cpu", "host"],
    "icount": ["-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off",
               "-cpu", "max,-rdrand,-rdseed", "-rtc", "base=2026-01-01T00:00:00,clock=vm"],
}


class Qemu:
    """A QEMU guest with its serial console on a pipe and QMP on a unix
    socket. Console lines arrive on self.lines (a queue)."""

    def __init__(self, rundir, kernel, initrd, ram_mb, cpus, nic, accel="tcg",
                 append="", disk=None, hostfwd=(), tap=None):
        self.rundir = rundir
        # unix socket paths are limited to 107 bytes: keep the socket short
        self.sockdir = tempfile.mkdtemp(prefix="netswap-")
        self.qmp_path = os.path.join(self.sockdir, "qmp.sock")
        self.console_path = os.path.join(rundir, "console.log")
        self.lines = queue.Queue()
        self.first_lines = []
        self.proc = None
        self.exited = threading.Event()
        accel_args = ACCEL_ARGS[accel]
        if tap:
            netdev = f"tap,id=n0,ifname={opt_escape(tap)},script=no,downscript=no"
        else:
            netdev = ",".join(["user,id=n0"] + [f"hostfwd={opt_escape(h)}" for h in hostfwd])
        # -kernel, -initrd and -append take their argument whole; values inside
        # option strings (key=value,...) have their commas doubled
        self.cmd = ["qemu-system-x86_64", *accel_args,
                    "-m", str(ram_mb), "-smp", str(cpus),
                    "-kernel", kernel, "-initrd", initrd,
                    "-append", append,
                    "-display", "none", "-vga", "none", "-no-reboot",
                    "-chardev", "stdio,id=ser0,signal=off", "-serial", "chardev:ser0",
                    "-chardev", f"socket,id=qmp0,path={opt_escape(self.qmp_path)},server=on,wait=off",
                    "-mon", "chardev=qmp0,mode=control",
                    "-netdev", netdev,
                    "-device", f"{NIC_DEVICES[nic]},netdev=n0"]
        if disk:
            self.cmd += ["-drive", f"file={opt_escape(disk)},format=raw,if=virtio,cache=unsafe"]
        if os.environ.get("NETSWAP_PCAP"):
            # debugging aid: every frame between the guest's NIC and the
            # netdev, headers only (the first 128 bytes), in RUNDIR/net.pcap
            pcap = os.path.join(rundir, "net.pcap")
            self.cmd += ["-object", f"filter-dump,id=fd0,netdev=n0,file={opt_escape(pcap)},maxlen=128"]

    def start(self):
        with open(os.path.join(self.rundir, "qemu.cmd"), "w") as f:
            f.write(" ".join(repr(a) if " " in a else a for a in self.cmd) + "\n")
        try:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        except OSError as e:
            raise RigError(f"cannot start QEMU: {e}") from None
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        with open(self.console_path, "wb") as log:
            buf = b""
            while True:
                chunk = self.proc.stdout.read1(65536)
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if len(self.first_lines) < 5:
                        self.first_lines.append(line.decode("utf-8", "replace"))
                    self.lines.put(line.decode("utf-8", "replace").rstrip("\r"))
            if buf:
                self.lines.put(buf.decode("utf-8", "replace"))
        self.proc.wait()
        self.exited.set()
        self.lines.put(None)

    def qmp(self, command, arguments=None, timeout=5.0):
        """One QMP command; its reply is checked (QmpError if QEMU refused)."""
        with Qmp(self.qmp_path, timeout) as q:
            return q.execute(command, arguments)

    def sysrq(self, key):
        """alt-sysrq-KEY on the guest's keyboard; False if QEMU did not take it."""
        try:
            self.qmp("send-key", sysrq_keys(key))
            return True
        except QmpError:
            return False

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.running():
            try:
                self.qmp("quit")
            except QmpError:
                pass          # it may have exited between the check and the command
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        stop_process(self.proc)
        shutil.rmtree(self.sockdir, ignore_errors=True)


class UdpFlood:
    """Datagrams from the host to a guest port (through QEMU's hostfwd on
    127.0.0.1, or over the tap) at a steady rate, in a thread, until stopped."""

    def __init__(self, dest, rate, size):
        self.dest, self.rate, self.size = dest, rate, size
        self.sent = 0
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        payload = b"x" * self.size
        batch = max(1, self.rate // 100)
        next_t = time.monotonic()
        while not self._stop.is_set():
            for _ in range(batch):
                try:
                    s.sendto(payload, self.dest)
                    self.sent += 1
                except OSError:
                    pass
            next_t += batch / self.rate
            delay = next_t - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            else:
                next_t = time.monotonic()
        s.close()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)
