"""Mutations of rig/netswap/swapprofile.py's classification and aggregation,
each seen to fail test/host/test_swap_profile.py (docs/results/swap-profile.md):
    python3 test/host/mutate_swap_profile.py
The module is restored afterwards; exit status 1 if a mutation survived."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOD = os.path.join(ROOT, "rig", "netswap", "swapprofile.py")
# name: (text of the module, what replaces it)
MUTATIONS = {
    "M1 by-caller walk off (shared services stay with the leaf)":
        ("        if n in NAME_LAYER or not is_shared(objs.get(n)):", "        if True:"),
    "M2 iov_iter exception dropped":
        ('NOT_SHARED = ("lib/iov_iter.o",)', "NOT_SHARED = ()"),
    "M3 prefixes tried shortest first":
        ("key=lambda x: -len(x[0]))", "key=lambda x: len(x[0]))"),
    "M4 idle only by leaf name":
        ('    if leaf in IDLE_LEAVES or ("do_idle" in names[1:] and',
         "    if leaf in IDLE_LEAVES or (False and"),
    "M5 by-caller sums counted from the self layer":
        ("        by[b] = by.get(b, 0) + n", "        by[a] = by.get(a, 0) + n"),
    "M6 pages = pswpout only":
        ('    return (r.get("pswpin") or 0) + (r.get("pswpout") or 0)',
         '    return (r.get("pswpout") or 0)'),
    "M7 user bucket not added":
        ('        chains["user"] = summary["user"]', "        pass"),
    "M8 ms per page ignores the CPU count":
        ('    ms = (s.get("secs") or 0) * (s.get("cpus") or 0) * 1000',
         '    ms = (s.get("secs") or 0) * 1000'),
    "M9 chain counts overwritten, not added":
        ('            chains[f["kprof_f"]] = chains.get(f["kprof_f"], 0) + n',
         '            chains[f["kprof_f"]] = n'),
    "M10 shared list without lib/":
        ('"arch/x86/kernel/apic/", "drivers/virtio/", "lib/")',
         '"arch/x86/kernel/apic/", "drivers/virtio/")'),
}
with open(MOD) as f:
    orig = f.read()
survived = 0
try:
    for name, (a, b) in MUTATIONS.items():
        assert a in orig, name
        with open(MOD, "w") as f:
            f.write(orig.replace(a, b, 1))
        r = subprocess.run([sys.executable, os.path.join(ROOT, "test", "host", "test_swap_profile.py")],
                           capture_output=True, text=True, cwd=ROOT,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "rig")))
        last = r.stderr.strip().splitlines()[-1]
        fails = [ln.split(" (")[0] for ln in r.stderr.splitlines()
                 if ln.startswith(("FAIL:", "ERROR:"))]
        survived += r.returncode == 0
        print(f"{name}: {'SURVIVED' if r.returncode == 0 else 'caught'} ({last}; {', '.join(fails)})")
finally:
    with open(MOD, "w") as f:
        f.write(orig)
sys.exit(1 if survived else 0)
