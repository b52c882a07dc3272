"""A shaped host link for the guest: nbd-server and QEMU run in a private
network namespace that the rig creates (`unshare -n`), whose loopback carries
a tc tbf rate limit. QEMU's user-mode networking still maps the guest's
10.0.2.2 to 127.0.0.1 and nbd-server still listens on 127.0.0.1 - the
namespace's own loopback - so no other address is ever used and the host's
interfaces are untouched. The namespace ends with the rig process."""

import os
import subprocess
import sys

from .procs import RigError

ENV = "NETSWAP_NETNS_RATE"
# lo's MTU is 64 KiB and tbf drops a packet larger than its bucket. With lo
# at 64 KiB and a 64 KiB bucket the guest's nbd connections were closed under
# load; with an Ethernet MTU and a 256 KiB bucket they never were.
BURST = "256k"
LATENCY = "500ms"


def qdisc_args(rate):
    return ["tbf", "rate", rate, "burst", BURST, "latency", LATENCY]


def inside(rate):
    """Is this process already in the namespace shaped at `rate`? Raises
    RigError if it was started as such but lo carries no tbf (never re-exec
    twice)."""
    if os.environ.get(ENV) != rate:
        return False
    shown = describe()
    if "qdisc tbf" not in shown:
        raise RigError(f"shaped namespace expected, but lo shows: {shown or 'nothing'}")
    return True


def describe():
    """tc's view of lo in this process's namespace (recorded with each run)."""
    try:
        return subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def reexec(rate, args):
    """Replace this process by `python3 -m netswap ARGS` in a new shaped namespace."""
    script = ('{ ip link set lo mtu 1500 up && tc qdisc add dev lo root '
              + " ".join(qdisc_args(rate)) + '; } || '
              '{ echo "netswap: error: cannot shape lo in the new namespace" >&2; exit 3; }; '
              'exec "$@"')
    os.environ[ENV] = rate
    cmd = ["unshare", "--net", "sh", "-c", script, "sh", sys.executable, "-m", "netswap"] + args
    print(f"[netswap] host link: private network namespace, lo {' '.join(qdisc_args(rate))}",
          flush=True)
    # exec, not a child: signals (make's, the CI's) reach the runner directly
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:
        print(f"netswap: error: cannot create the shaped namespace: {e}", file=sys.stderr)
        return 3
