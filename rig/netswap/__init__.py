"""netswap rig: build, boot and judge swap-over-NBD guests in QEMU."""
