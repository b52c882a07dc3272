"""The guest's settings: one table, the only place they and their defaults
live. The host writes every one of them into /etc/netswap/run.conf (a second
cpio appended to the initramfs); guest/init and the guest test scripts read
them from there and define no defaults of their own.

Each entry: guest variable, where its value comes from (a scenario key, or a
value only the run knows, such as the port nbd-server got), and what it does.
"""

from .procs import NbdServer

GUEST_HOST = "10.0.2.2"      # the host, as QEMU's user-mode network and the tap show it

# (variable, scenario key | None for run-time values, meaning)
TABLE = (
    ("NS_SWAP", "swap", "swap device: nbd, vblk, none, nbd-manual (a test attaches)"),
    ("NS_NBD_HOST", None, "address of the nbd server as the guest sees it"),
    ("NS_NBD_PORT", None, "port of the nbd server (chosen per run)"),
    ("NS_NBD_EXPORT", None, "export name"),
    ("NS_NBD_CONNS", "nbd_connections", "connections per device (-C)"),
    ("NS_NBD_BS", "nbd_blocksize", "block size (-b)"),
    ("NS_NBD_TIMEOUT", "nbd_timeout", "request timeout in seconds (0 = the client's default)"),
    ("NS_NBD_CLIENT", "nbd_client", "attach (tools/nbd-swap-attach) or nbd-client (Debian's)"),
    ("NS_NBD_RECONNECT", "nbd_reconnect", "nbd-swap-attach: kernel reconnect auto, yes or no"),
    ("NS_NBD_DEAD_CONN_TIMEOUT", "nbd_dead_conn_timeout", "nbd-swap-attach -D in seconds"),
    ("NS_MIN_FREE_KBYTES", "min_free_kbytes", "vm.min_free_kbytes ('' = the kernel's)"),
    ("NS_HUNG_TASK_TIMEOUT", "hung_task_timeout", "kernel.hung_task_timeout_secs"),
    ("NS_VMWATCH_INTERVAL", "vmwatch_interval", "seconds between counter samples (0 = off)"),
    ("NS_PROFILE", "profile", "tools/kprof's samples per second per CPU during the workload (0 = off)"),
    ("NS_SYSCTL", "sysctl", "extra sysctls, key=value words (commas in vectors)"),
    ("NS_RUN", "workload", "the workload command line"),
    ("NS_MTU", "mtu", "eth0's MTU"),
    ("NS_UDP_PORT", None, "UDP port the host floods ('' = no flood)"),
    ("NS_SQUEEZE_SECONDS", "squeeze_seconds", "rx-squeeze.sh: seconds the fixture holds"),
    ("NS_SQUEEZE_PERMILLE", "squeeze_permille", "rx-squeeze.sh: free memory held at this/1000 of min"),
    ("NS_SQUEEZE_EXTRA", "squeeze_extra", "rx-squeeze.sh: the fixture's top-up budget (pages)"),
    ("NS_BENCH_NBD", "bench_nbd", "bench-net.sh: attach an nbd device first (1)"),
    ("NS_BENCH_SECONDS", "bench_seconds", "bench-net.sh: seconds per iperf3 run"),
    ("NS_BENCH_SIZES", "bench_sizes", "bench-net.sh: message sizes, comma-separated"),
)


def _value(v):
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return " ".join(str(x) for x in v)
    return str(v)


def conf(sc, nbd_port="", udp_port=""):
    """run.conf as a dict: every variable of TABLE, then the scenario's
    `env` words (a test script's own NS_* settings)."""
    runtime = {"NS_NBD_HOST": GUEST_HOST, "NS_NBD_PORT": nbd_port,
               "NS_NBD_EXPORT": NbdServer.EXPORT_NAME, "NS_UDP_PORT": udp_port}
    out = {}
    for var, key, _ in TABLE:
        out[var] = _value(runtime[var] if key is None else getattr(sc, key))
    for w in sc.env:
        k, v = w.split("=", 1)
        out[k] = v
    return out


def describe():
    return "\n".join(f"  {var:22} {key or '(run)':18} {what}" for var, key, what in TABLE)
