"""Private network namespaces for the guest's host link.

Two shapes, both created by the rig with `unshare --net` and gone with the rig
process; the host's own interfaces are never touched:

- `host_lo_rate` (net = user): nbd-server and QEMU run in a namespace whose
  loopback carries a tc tbf rate limit. QEMU's user-mode networking still maps
  the guest's 10.0.2.2 to 127.0.0.1, and nbd-server still listens on
  127.0.0.1 - the namespace's own loopback.
- `net = tap`: the guest's NIC is a tap device (nstap0) in the namespace, so
  the guest's TCP peer is a real kernel stack instead of QEMU's user-mode one,
  and the link can carry jumbo frames (`mtu`). The tap holds 10.0.2.2, the
  address the guest already uses for its host; nf_tables rewrites what the
  guest sends there to 127.0.0.1 (route_localnet on the tap lets the replies
  leave), so nbd-server still listens on the namespace's 127.0.0.1 and on
  nothing else. `tap_rate` limits both directions with tbf: host to guest on
  the tap itself, guest to host on an ifb device that the tap's ingress is
  redirected to (a classic-BPF "accept all" filter, since this host has no
  cls_u32 or cls_matchall). `tap_queue_ms` is tbf's latency, i.e. how much
  the link may queue before it drops. `tap_loss` drops that many packets per
  thousand at random in each direction (nf_tables numgen; no sch_netem here).
"""

import os
import subprocess
import sys

from .errors import RigError

ENV = "NETSWAP_NETNS"
TAP = "nstap0"
IFB = "nsifb0"
HOST_ADDR = "10.0.2.2"
GUEST_ADDR = "10.0.2.15"
# lo's MTU is 64 KiB and tbf drops a packet larger than its bucket. With lo
# at 64 KiB and a 64 KiB bucket the guest's nbd connections were closed under
# load; with an Ethernet MTU and a 256 KiB bucket they never were.
BURST = "256k"
LATENCY = "500ms"


def nft_rules(loss=0):
    """The namespace's nf_tables ruleset: the guest's 10.0.2.2 goes to
    127.0.0.1; with `loss` (per mille) packets are dropped at random in each
    direction of the tap (this host has no sch_netem)."""
    rules = f"""table ip netswap {{
  chain prerouting {{
    type nat hook prerouting priority dstnat; policy accept;
    iifname "{TAP}" ip daddr {HOST_ADDR} dnat to 127.0.0.1
  }}
"""
    if loss:
        rules += f"""  chain lossy_in {{
    type filter hook prerouting priority raw; policy accept;
    iifname "{TAP}" numgen random mod 1000 < {loss} drop
  }}
  chain lossy_out {{
    type filter hook postrouting priority filter; policy accept;
    oifname "{TAP}" numgen random mod 1000 < {loss} drop
  }}
"""
    return rules + "}\n"


def qdisc_args(rate, latency=LATENCY):
    return ["tbf", "rate", rate, "burst", BURST, "latency", latency]


def key(sc):
    """The namespace a scenario needs, as a string ('' = none)."""
    if sc.net == "tap":
        return (f"tap mtu={sc.mtu} loss={sc.tap_loss} queue={sc.tap_queue_ms}ms "
                f"rate={sc.tap_rate or 'none'}")
    if sc.host_lo_rate:
        return f"lo rate={sc.host_lo_rate}"
    return ""


def _dev(k):
    return TAP if k.startswith("tap") else "lo"


def _fields(k):
    """'tap mtu=9000 loss=0 ...' -> {'mtu': '9000', 'loss': '0', ...}"""
    return dict(f.split("=", 1) for f in k.split()[1:])


def inside(k):
    """Is this process already in the namespace `k`? Raises RigError if it was
    started as such but the namespace is not what it should be (never re-exec
    twice)."""
    if os.environ.get(ENV) != k:
        return False
    shown = describe(_dev(k))
    rate = _fields(k)["rate"]
    if _dev(k) == TAP and not shown:
        raise RigError(f"tap namespace expected, but there is no {TAP}")
    if rate != "none" and _dev(k) == TAP:
        shown += "\n" + describe(IFB)
    if rate != "none" and shown.count("qdisc tbf") != (2 if _dev(k) == TAP else 1):
        raise RigError(f"shaped namespace expected, but {_dev(k)} shows: {shown or 'nothing'}")
    return True


def describe(dev="lo"):
    """tc's view of `dev` in this process's namespace (recorded with each run)."""
    try:
        return subprocess.run(["tc", "qdisc", "show", "dev", dev], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def setup_script(k):
    """The shell commands that build namespace `k` (run inside it)."""
    fields = _fields(k)
    rate = fields["rate"]
    if _dev(k) == "lo":
        return ("ip link set lo mtu 1500 up && tc qdisc add dev lo root "
                + " ".join(qdisc_args(rate)))
    cmds = ["ip link set lo up",
            f"ip tuntap add dev {TAP} mode tap",
            f"ip link set {TAP} mtu {fields['mtu']} up",
            f"ip addr add {HOST_ADDR}/24 dev {TAP}",
            f"echo 1 > /proc/sys/net/ipv4/conf/{TAP}/route_localnet",
            "printf '%s' \"$NETSWAP_NFT\" | nft -f -"]
    if rate != "none":
        tbf = " ".join(qdisc_args(rate, fields["queue"]))
        cmds += [f"tc qdisc add dev {TAP} root {tbf}",
                 f"ip link add {IFB} type ifb",
                 f"ip link set {IFB} up",
                 f"tc qdisc add dev {TAP} handle ffff: ingress",
                 f"tc filter add dev {TAP} parent ffff: protocol all prio 1 "
                 f"bpf bytecode '1,6 0 0 4294967295,' action mirred egress redirect dev {IFB}",
                 f"tc qdisc add dev {IFB} root {tbf}"]
    return " && ".join(cmds)


def reexec(k, args):
    """Replace this process by `python3 -m netswap ARGS` in a new namespace `k`."""
    script = ('{ ' + setup_script(k) + '; } || '
              '{ echo "netswap: error: cannot set up the network namespace" >&2; exit 3; }; '
              'exec "$@"')
    os.environ[ENV] = k
    os.environ["NETSWAP_NFT"] = nft_rules(int(_fields(k).get("loss", 0)))
    cmd = ["unshare", "--net", "sh", "-c", script, "sh", sys.executable, "-m", "netswap"] + args
    print(f"[netswap] host link: private network namespace ({k})", flush=True)
    # exec, not a child: signals (make's, the CI's) reach the runner directly
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:
        print(f"netswap: error: cannot create the network namespace: {e}", file=sys.stderr)
        return 3
