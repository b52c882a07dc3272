"""Declarative scenario files.

A scenario is a small text file of ``key = value`` lines (``#`` starts a
comment). Every key has a type, a default and a check; an unknown key, a bad
value or a duplicate key is an error that names the file and line.
"""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ScenarioError(Exception):
    pass


def _size_mb(v):
    m = re.fullmatch(r"(\d+)\s*([MG]?)", v.strip(), re.I)
    if not m:
        raise ValueError("expected a size like 256M or 1G")
    n = int(m.group(1))
    return n * 1024 if m.group(2).upper() == "G" else n


def _int_range(lo, hi):
    def conv(v):
        n = int(v)
        if not lo <= n <= hi:
            raise ValueError(f"expected an integer in {lo}..{hi}")
        return n
    return conv


def _float_range(lo, hi):
    def conv(v):
        n = float(v)
        if not lo <= n <= hi:
            raise ValueError(f"expected a number in {lo}..{hi}")
        return n
    return conv


def _choice(*choices):
    def conv(v):
        if v not in choices:
            raise ValueError("expected one of " + ", ".join(choices))
        return v
    return conv


def _variant(v):
    # a generated variant (mutations, per-patch checks) is a file under the
    # output folder, given by its absolute path
    name_ok = re.fullmatch(r"[A-Za-z0-9_.-]+", os.path.basename(v))
    if os.path.isabs(v) and os.path.isfile(v) and name_ok:
        return v
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", v) or not os.path.isfile(
            os.path.join(ROOT, "rig", "variants", v)):
        known = sorted(os.listdir(os.path.join(ROOT, "rig", "variants")))
        raise ValueError("unknown kernel variant; known: " + ", ".join(known))
    return v


def _mfk(v):
    if v == "default":
        return None
    n = int(v)
    if not 128 <= n <= 1048576:
        raise ValueError("expected 'default' or kilobytes in 128..1048576")
    return n


def _procs(v):
    if v == "auto":
        return None
    return _int_range(1, 4096)(v)


def _wsize(v):
    if not re.fullmatch(r"(\d+(\.\d+)?x|\d+[KMG]?)", v, re.I):
        raise ValueError("expected Nx (times guest RAM) or a size like 512M")
    return v


def _export(v):
    if v == "auto":
        return None
    if not os.path.isabs(v):
        raise ValueError("expected 'auto' or an absolute path")
    return v


def _port(v):
    if v == "auto":
        return None
    return _int_range(1024, 65535)(v)


def _str(v):
    return v


def _words(v):
    return v.split()


def _rate(v):
    if v in ("", "none"):
        return ""
    if not re.fullmatch(r"[1-9][0-9]{0,5}(kbit|mbit|gbit)", v):
        raise ValueError("expected 'none' or a tc rate such as 80mbit")
    return v


def _pause(v):
    if v in ("", "none"):
        return None
    m = re.fullmatch(r"([0-9]{1,4}):([1-9][0-9]{0,3})", v)
    if not m:
        raise ValueError("expected 'none' or AT:SECONDS, e.g. 20:30")
    return (int(m.group(1)), int(m.group(2)))


def _env(v):
    words = v.split()
    for w in words:
        if not re.fullmatch(r"NS_[A-Z0-9_]+=[^'\"\\$`]*", w):
            raise ValueError("expected NS_NAME=VALUE words")
    return words


def _kinds(v):
    from .kmsg import BY_NAME
    words = v.replace(",", " ").split()
    for w in words:
        if w not in BY_NAME or not BY_NAME[w].fatal:
            raise ValueError("expected fatal kernel report kinds, from: "
                             + ", ".join(k for k in BY_NAME if BY_NAME[k].fatal))
    return words


def _bool(v):
    if v in ("yes", "true", "1", "on"):
        return True
    if v in ("no", "false", "0", "off"):
        return False
    raise ValueError("expected yes or no")


# key: (converter, default, help)
KEYS = {
    "description": (_str, "", "one line shown in reports"),
    "variant": (_variant, "series", "kernel variant (rig/variants/NAME)"),
    "ram": (_size_mb, 256, "guest RAM, e.g. 256M"),
    "cpus": (_int_range(1, 8), 2, "guest vCPUs"),
    "nic": (_choice("virtio-net", "e1000", "e1000e"), "virtio-net", "guest NIC model"),
    "accel": (_choice("tcg", "kvm", "icount"), "tcg",
              "QEMU accelerator (kvm only when asked; icount: TCG counting instructions, "
              "guest time = instructions executed, for benchmarks)"),
    "swap": (_choice("nbd", "nbd-manual", "vblk", "none"), "nbd",
             "swap device: NBD (attached with nbd_client), local virtio-blk, none; "
             "nbd-manual: server up, the test attaches"),
    "nbd_client": (_choice("attach", "nbd-client", "nbd-client-persist"), "attach",
                   "who attaches NBD in the guest: tools/nbd-swap-attach, Debian's nbd-client "
                   "(netlink, its defaults), or Debian's nbd-client on its ioctl path with "
                   "-persist -swap (one connection; it reconnects from user space)"),
    "nbd_reconnect": (_choice("auto", "yes", "no"), "auto",
                      "nbd-swap-attach: kernel reconnect when the kernel has it (auto), required "
                      "(yes), or --no-reconnect (no)"),
    "nbd_dead_conn_timeout": (_int_range(0, 86400), 120,
                              "nbd-swap-attach -D: seconds the kernel keeps I/O waiting for a dead "
                              "connection to come back"),
    "export": (_export, None, "'auto' (sparse file per run) or an existing file to export"),
    "export_size": (_size_mb, 4096, "size of the automatic export / local disk"),
    "nbd_port": (_port, None, "'auto' or a fixed host port for nbd-server"),
    "nbd_server": (_str, "nbd-server", "nbd-server binary (Debian's, from PATH), or nbdkit "
                   "(Debian's, its file plugin)"),
    "nbd_connections": (_int_range(1, 16), 1, "nbd-client -C"),
    "nbd_blocksize": (_choice("512", "1024", "2048", "4096"), "4096", "nbd-client -b"),
    "net": (_choice("user", "tap"), "user",
            "guest link: QEMU user-mode networking, or a tap in a private network namespace "
            "(real kernel TCP peer; nbd-server still on that namespace's 127.0.0.1)"),
    "mtu": (_int_range(576, 9000), 1500, "guest and tap MTU (other than 1500 needs net = tap)"),
    "tap_rate": (_rate, "", "'none', or a tc tbf rate for both directions of the tap (needs net = tap)"),
    "tap_queue_ms": (_int_range(1, 10000), 500, "tbf latency of tap_rate: how long the link may queue"),
    "tap_loss": (_int_range(0, 500), 0, "packets per thousand dropped at random, each direction of the tap"),
    "host_lo_rate": (_rate, "", "'none', or run nbd-server and QEMU in a private network namespace "
                     "whose loopback is limited to this rate (tc tbf, e.g. 80mbit)"),
    "server_pause": (_pause, None, "'AT:SECONDS': stop nbd-server (SIGSTOP) AT seconds into the "
                     "workload, let it go on (SIGCONT) SECONDS later; 'none' = never"),
    "server_restart": (_pause, None, "'AT:DOWN': kill nbd-server (its whole process group) AT "
                       "seconds into the workload, start a fresh one on the same port and export "
                       "DOWN seconds later; 'none' = never"),
    "link_outage": (_pause, None, "'AT:DOWN': take the tap link down (net = tap) AT seconds into "
                    "the workload and up again DOWN seconds later; nbd-server keeps running"),
    "server_clock": (_choice("run", "squeeze", "verify"), "run",
                     "what server_pause/server_restart's AT counts from: the workload's start, "
                     "the start of the squeeze fixture's hold (guest/tests/rx-squeeze.sh), or the "
                     "moment swapstress has written every page once (from then on its processes "
                     "only read their pages back)"),
    "nbd_timeout": (_int_range(0, 86400), 0, "request timeout (-t) in seconds (0 = the client's default)"),
    "min_free_kbytes": (_mfk, None, "'default' or a value for vm.min_free_kbytes"),
    "sysctl": (_words, [], "extra guest sysctls, key=value separated by spaces; "
               "commas separate a vector's fields (net.ipv4.tcp_wmem=4096,16384,4194304)"),
    "procs": (_procs, None, "swapstress processes ('auto' = 16 x cpus)"),
    "size": (_wsize, "4x", "swapstress total size (Nx guest RAM or absolute)"),
    "loops": (_int_range(0, 100000), 2, "swapstress verifying passes"),
    "duration": (_int_range(0, 86400), 0, "swapstress duration in seconds (0 = use loops)"),
    "write_frac": (_float_range(0, 1), 0.0, "swapstress write fraction"),
    "command": (_str, "", "guest command instead of swapstress (must print progress lines)"),
    "test_script": (_str, "", "guest shell script (repo path) run instead of the workload"),
    "env": (_env, [], "NAME=VALUE words exported to the guest test script"),
    "squeeze_seconds": (_int_range(1, 3600), 20,
                        "guest/tests/rx-squeeze.sh: how long the fixture holds free memory down"),
    "squeeze_permille": (_int_range(1, 1000), 250,
                         "guest/tests/rx-squeeze.sh: free memory held at this many thousandths of min"),
    "squeeze_extra": (_int_range(0, 1000000), 16384,
                      "guest/tests/rx-squeeze.sh: the fixture's top-up budget in pages"),
    "bench_nbd": (_choice("0", "1"), "0", "guest/tests/bench-net.sh: attach an nbd device first (1)"),
    "bench_seconds": (_int_range(1, 600), 3, "guest/tests/bench-net.sh: seconds per iperf3 run"),
    "bench_sizes": (_str, "64,128,256,1024,2048,3312,4096,8192,16384",
                    "guest/tests/bench-net.sh: message sizes, comma-separated"),
    "udp_flood_port": (_int_range(0, 65535), 0, "guest UDP port the host floods during the run (0 = off)"),
    "udp_flood_rate": (_int_range(1, 100000), 2000, "datagrams per second of the flood"),
    "udp_flood_size": (_int_range(1, 1472), 1200, "payload bytes per datagram"),
    "hang_after": (_int_range(5, 3600), 90, "seconds without progress before 'hung'"),
    "boot_timeout": (_int_range(10, 3600), 300, "seconds from start to the workload's first line"),
    "max_time": (_int_range(30, 86400), 1800, "seconds for the whole run before 'timeout'"),
    "hung_task_timeout": (_int_range(0, 3600), 60, "guest kernel.hung_task_timeout_secs"),
    "vmwatch_interval": (_int_range(0, 3600), 5, "guest counter sampling interval (0 = off)"),
    "profile": (_int_range(0, 10000), 0, "sample the guest kernel with tools/kprof at this many Hz "
                "per CPU from the workload's start to its end, functions and callers on the console "
                "(0 = off; make bench-swap-profile)"),
    "sysrq_dump": (_str, "wm", "sysrq keys sent when hung (w = blocked tasks, m = memory, t = all tasks)"),
    "kernel_args": (_str, "", "extra kernel command line"),
    "kunit": (_bool, False, "run the kernel's built-in KUnit suites at boot (kernels that have "
              "them; off: kunit.enable=0, so that other runs neither wait for nor are "
              "disturbed by the suites)"),
    "kernel_allow": (_kinds, [], "fatal kernel report kinds this scenario provokes on purpose "
                     "(e.g. hung_task for a hang); any other fails a run that expects a verdict"),
    "kernel_allow_reason": (_str, "", "why kernel_allow is needed (required with it)"),
    "runs": (_int_range(1, 1000), 1, "repetitions"),
    "expect": (_choice("any", "completed", "hung"), "any", "verdict a test requires"),
}


class Scenario(dict):
    """A parsed scenario: a dict of every key (defaults filled in) + name/path."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k)

    @property
    def workload(self):
        if self.test_script:
            return self.test_script
        if self.command:
            return self.command
        procs = self.procs if self.procs is not None else 16 * self.cpus
        cmd = f"swapstress -p {procs} -s {self.size} -l {self.loops}"
        if self.duration:
            cmd += f" -d {self.duration}"
        if self.write_frac:
            cmd += f" -w {self.write_frac}"
        return cmd


def parse_text(text, name="<scenario>", overrides=(), where=None):
    where = where or name
    values = {}
    seen = {}
    lines = [(i + 1, l) for i, l in enumerate(text.splitlines())]
    lines += [(f"--set {o}", o) for o in overrides]
    for lineno, raw in lines:
        line = raw.split("#", 1)[0].strip() if not isinstance(lineno, str) else raw.strip()
        if not line:
            continue
        if "=" not in line:
            raise ScenarioError(f"{where}:{lineno}: expected 'key = value', got {raw.strip()!r}")
        key, val = (p.strip() for p in line.split("=", 1))
        if key not in KEYS:
            raise ScenarioError(f"{where}:{lineno}: unknown key {key!r} "
                                f"(known: {', '.join(sorted(KEYS))})")
        if key in seen and not isinstance(lineno, str):
            raise ScenarioError(f"{where}:{lineno}: duplicate key {key!r} (first at line {seen[key]})")
        seen[key] = lineno
        conv = KEYS[key][0]
        try:
            values[key] = conv(val)
        except ValueError as e:
            raise ScenarioError(f"{where}:{lineno}: bad value {val!r} for {key}: {e}") from None
    sc = Scenario({k: v[1] for k, v in KEYS.items()})
    sc.update(values)
    sc["name"] = name
    if sc["test_script"]:
        p = os.path.join(ROOT, sc["test_script"])
        if not os.path.isfile(p):
            raise ScenarioError(f"{where}: test_script {sc['test_script']} does not exist")
    if sc["net"] != "tap":
        for k, default in (("mtu", 1500), ("tap_rate", ""), ("tap_queue_ms", 500), ("tap_loss", 0)):
            if sc[k] != default:
                raise ScenarioError(f"{where}: {k} needs net = tap")
    elif sc["host_lo_rate"]:
        raise ScenarioError(f"{where}: host_lo_rate shapes the user-mode link; with net = tap "
                            "use tap_rate")
    if sum(1 for k in ("server_pause", "server_restart", "link_outage") if sc[k]) > 1:
        raise ScenarioError(f"{where}: server_pause, server_restart and link_outage exclude each other")
    if sc["link_outage"] and sc["net"] != "tap":
        raise ScenarioError(f"{where}: link_outage needs net = tap")
    if sc["kernel_allow"] and not sc["kernel_allow_reason"].strip():
        raise ScenarioError(f"{where}: kernel_allow needs kernel_allow_reason: say why the "
                            "scenario provokes these reports")
    if sc["expect"] == "hung" and sc["hang_after"] >= sc["max_time"]:
        raise ScenarioError(f"{where}: hang_after must be below max_time")
    return sc


# the scenarios test cases run, and those of experiments and benchmarks
SCENARIO_DIRS = (os.path.join(ROOT, "test", "scenarios"), os.path.join(ROOT, "rig", "scenarios"))


def find(name):
    """A scenario file by path, or by name in SCENARIO_DIRS (.scn optional)."""
    if os.path.isfile(name):
        return name
    for d in SCENARIO_DIRS:
        for c in (os.path.join(d, name), os.path.join(d, name + ".scn")):
            if os.path.isfile(c):
                return c
    raise ScenarioError(f"no scenario file {name!r}")


def load(path, overrides=()):
    given = path
    path = find(path)
    with open(path) as f:
        text = f.read()
    name = os.path.splitext(os.path.basename(path))[0]
    sc = parse_text(text, name, overrides, where=given)
    sc["path"] = path
    return sc


def describe_keys():
    return "\n".join(f"  {k:18} default {v[1]!r:12} {v[2]}" for k, v in KEYS.items())
