#!/bin/sh
# Install the Debian packages netswap needs. Idempotent: installs only what is missing.
# Usage: scripts/deps.sh [--check]   (--check: list what is missing, exit 1 if anything is)
set -eu

PKGS="linux-source-6.1 qemu-system-x86 qemu-utils busybox-static nbd-server nbd-client
ccache build-essential flex bison bc cpio xz-utils kmod libelf-dev libssl-dev dwarves git
python3 python3-ply python3-git iperf3 gnuplot-nox iproute2 procps socat nftables
libnl-3-dev libnl-genl-3-dev nbdkit"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ "${1:-}" = "--check" ]; then
	[ -z "$missing" ] && { echo "deps: all present"; exit 0; }
	echo "deps: missing:$missing"; exit 1
fi

[ -z "$missing" ] && { echo "deps: all packages present"; exit 0; }

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# Never let package scripts start daemons (nbd-server would listen on all addresses);
# the rig starts its own servers on 127.0.0.1 only.
POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=0
if [ ! -e "$POLICY" ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
	$SUDO chmod +x "$POLICY"
	CREATED_POLICY=1
fi
cleanup() { [ "$CREATED_POLICY" = 1 ] && $SUDO rm -f "$POLICY"; true; }
trap cleanup EXIT
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
# A package may still have started a daemon on a machine with systemd: stop it.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
	$SUDO systemctl disable --now nbd-server.service 2>/dev/null || true
	$SUDO systemctl disable --now iperf3.service 2>/dev/null || true
fi
echo "deps: done"
