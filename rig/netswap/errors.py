"""Errors of the rig. A RigError is a problem on the host side (build,
nbd-server, QEMU, namespaces): it is never a verdict about the guest, and the
command line turns it into exit status 3."""


class RigError(Exception):
    """A problem on the host side (not a verdict about the guest)."""
