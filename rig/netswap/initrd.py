"""The guest's initramfs: the base image (busybox, nbd tools, our guest
tools, init; built by guest/build-initramfs.sh and cached) and, per run, a
second archive holding /etc/netswap/run.conf and the test script."""

import os
import shlex
import shutil
import subprocess
import tempfile

from .errors import RigError
from .scenario import ROOT


def build_initramfs():
    r = subprocess.run([os.path.join(ROOT, "guest", "build-initramfs.sh")],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RigError("initramfs build failed")
    return r.stdout.strip().splitlines()[-1]


def make_run_initrd(base, rundir, conf, script=None):
    """base initramfs + a second cpio holding /etc/netswap/run.conf (and test.sh)."""
    tmp = tempfile.mkdtemp(dir=rundir)
    try:
        d = os.path.join(tmp, "etc", "netswap")
        os.makedirs(d)
        with open(os.path.join(d, "run.conf"), "w") as f:
            for k, v in conf.items():
                f.write(f"{k}={shlex.quote(str(v))}\n")
        if script:
            shutil.copy(script, os.path.join(d, "test.sh"))
            os.chmod(os.path.join(d, "test.sh"), 0o755)
        files = subprocess.run("find etc | LC_ALL=C sort", shell=True, cwd=tmp,
                               stdout=subprocess.PIPE, check=True).stdout
        extra = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"],
                               cwd=tmp, input=files, stdout=subprocess.PIPE,
                               check=True).stdout
    finally:
        shutil.rmtree(tmp)
    path = os.path.join(rundir, "initrd.img")
    with open(path, "wb") as out, open(base, "rb") as b:
        shutil.copyfileobj(b, out)
        # the kernel unpacks concatenated archives in order; an uncompressed
        # one must start 4-byte aligned (zero padding is skipped)
        out.write(b"\0" * (-out.tell() % 4))
        out.write(extra)
    return path
