#!/bin/bash
# Build the guest's base initramfs: busybox, Debian's nbd-client with the
# shared libraries ldd lists, our tools, and init. Output path on stdout.
set -euo pipefail
. "$(dirname "$0")/../rig/common.sh"

out="$NETSWAP_CACHE/initramfs"
img="$out/base.cpio.gz"
tools="$NETSWAP_ROOT/tools/bin"
make -s -C "$NETSWAP_ROOT/tools" >&2

# dynamically linked Debian programs the guest runs, copied with the libraries ldd lists
DYN_BINS="$(command -v nbd-client || echo /sbin/nbd-client) $(command -v iperf3 || echo /usr/bin/iperf3)"
inputs="$NETSWAP_ROOT/guest/init $NETSWAP_ROOT/guest/lib.sh $(command -v busybox) $DYN_BINS $(ls "$tools"/*)"
for f in $inputs; do [ -e "$f" ] || die "initramfs input missing: $f (run: make deps)"; done
sum=$( { cat "$0"; for f in $inputs; do echo "$f"; sha256sum < "$f"; done; } | sha256sum | cut -d' ' -f1)
if [ -f "$img" ] && [ "$(cat "$out/.sum" 2>/dev/null)" = "$sum" ]; then
	echo "$img"; exit 0
fi
log "building initramfs"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc/netswap,proc,sys,dev,tmp,run,lib,lib64}
cp "$(command -v busybox)" "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done
for bin in $DYN_BINS; do
	cp "$bin" "$root/usr/bin/$(basename "$bin")"
	# shared libraries, at the paths the dynamic loader expects
	for lib in $(ldd "$bin" | awk '/=>/ {print $3} /^[[:space:]]*\// {print $1}'); do
		mkdir -p "$root$(dirname "$lib")"
		[ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
	done
done
cp "$tools"/* "$root/bin/"
# PID 1 is nsinit (locked in memory); it runs guest/init as /init.sh
mv "$root/bin/nsinit" "$root/init"
cp "$NETSWAP_ROOT/guest/init" "$root/init.sh"
cp "$NETSWAP_ROOT/guest/lib.sh" "$root/lib/netswap.sh"
mknod "$root/dev/console" c 5 1 2>/dev/null || true
mkdir -p "$out"
# a temporary file of this build's own: two builds at once (parallel runs)
# must not write into one file
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -9 > "$img.tmp.$$"
mv "$img.tmp.$$" "$img"
echo "$sum" > "$out/.sum"
log "initramfs: $img ($(du -h "$img" | cut -f1))"
echo "$img"
