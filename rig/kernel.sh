#!/bin/bash
# Build the guest kernel of one variant.
#
#   rig/kernel.sh VARIANT   -> prints the path of the variant's bzImage
#
# Output folder: $NETSWAP_CACHE/build/VARIANT (make O=...; NETSWAP_BUILD_DIR
# overrides it, so that scratch variants can share one folder and rebuild only
# what differs), config = tinyconfig +
# kconfig/guest.config + the variant's own `config` fragments. Rebuilds only
# what changed (make's own dependency tracking, plus ccache).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 1 ] || die "usage: rig/kernel.sh VARIANT"
v=$1
mkdir -p "$NETSWAP_CACHE"
name=$(basename "$v")
share=$("$NETSWAP_ROOT/rig/tree.sh" --list "$v" builddir | tail -1)
out="${NETSWAP_BUILD_DIR:-$NETSWAP_CACHE/build/${share:-$name}}"
img="$out/images/$name.bzImage"
frags="kconfig/guest.config $("$NETSWAP_ROOT/rig/tree.sh" --list "$v" config | tr '\n' ' ')"
confsum=$( { for f in $frags; do [ -f "$NETSWAP_ROOT/$f" ] || die "missing config fragment $f"; cat "$NETSWAP_ROOT/$f"; done; } | sha256sum | cut -d' ' -f1)
# A bzImage built from exactly this tree and config is reused without
# touching the tree, and without waiting for another variant's build: the
# check below only reads (the branch must already be prepared).
if [ -f "$img" ] && treehash=$("$NETSWAP_ROOT/rig/tree.sh" --prepared-tree-hash "$v" 2>/dev/null) &&
	[ "$(cat "$out/images/$name.built" 2>/dev/null)" = "$(echo "$confsum $treehash" | sha256sum | cut -d' ' -f1)" ]; then
	log "kernel $v: up to date ($img)"
	echo "$img"
	exit 0
fi
# one shared source tree: one build at a time
exec 9>"$NETSWAP_CACHE/linux.lock"
if ! flock -n 9; then
	log "waiting for another kernel build to finish"
	flock 9
fi
# Variants that differ by a few files share a build folder (a `builddir`
# entry): switching between them recompiles those files and relinks, where a
# folder of its own would take every object from ccache again (~3 min). Each
# variant keeps its own copy of the bzImage it built.
treehash=$("$NETSWAP_ROOT/rig/tree.sh" --tree-hash "$v")
cfgsum=$(echo "$confsum $treehash" | sha256sum | cut -d' ' -f1)
# The variants share one source tree; switching it to another variant gives
# the files that differ new mtimes, and make would then rebuild everything
# that includes them. A bzImage built from exactly this tree and config is
# reused without touching the tree.
if [ -f "$img" ] && [ "$(cat "$out/images/$name.built" 2>/dev/null)" = "$cfgsum" ]; then
	log "kernel $v: up to date ($img)"
	echo "$img"
	exit 0
fi
tree=$("$NETSWAP_ROOT/rig/tree.sh" "$v")
# after the tree: a first unpack empties $NETSWAP_CACHE/build
mkdir -p "$out/images"

CC="gcc"
command -v ccache >/dev/null && CC="ccache gcc"
mk() { make -C "$tree" O="$out" CC="$CC" HOSTCC="$CC" -j"$NETSWAP_JOBS" "$@"; }

# Every requested symbol must be in .config as asked (after olddefconfig).
frags_hold() {
	local bad=0 f line sym
	for f in $frags; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=n) sym=${line%%=*}
				if grep -q "^$sym=" "$out/.config"; then echo "  $sym: wanted n, got $(grep "^$sym=" "$out/.config")" >&2; bad=1; fi ;;
			CONFIG_*=*)
				if ! grep -qxF "$line" "$out/.config"; then
					sym=${line%%=*}
					echo "  $line: got '$(grep "^$sym=\|^# $sym is not set" "$out/.config" || echo absent)'" >&2; bad=1
				fi ;;
			esac
		done < "$NETSWAP_ROOT/$f"
	done
	return $bad
}

configure=0
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.netswap-cfgsum" 2>/dev/null)" != "$confsum" ]; then
	configure=1
elif [ -z "${NETSWAP_KCONFIG_LAX:-}" ]; then
	# A build folder shared by variants keeps its .config; a variant whose
	# tree lacks a symbol (fewer patches) drops it there, and the next one
	# would then build without it: check, and configure again if so (not
	# for the per-patch builds of check-patches, LAX: early patches lack
	# the symbols of later ones).
	mk -s olddefconfig >/dev/null
	if ! frags_hold 2>/dev/null; then
		log "$out/.config lost symbols of $frags since it was configured: configuring again"
		configure=1
	fi
fi
if [ $configure = 1 ]; then
	log "configuring $v: tinyconfig + $frags"
	mk -s tinyconfig >/dev/null
	args=()
	for f in $frags; do args+=("$NETSWAP_ROOT/$f"); done
	(cd "$out" && "$tree/scripts/kconfig/merge_config.sh" -m -O "$out" .config "${args[@]}" >/dev/null)
	mk -s olddefconfig >/dev/null
	frags_hold || [ -n "${NETSWAP_KCONFIG_LAX:-}" ] || die "config fragment symbols did not survive olddefconfig (see above)"
	echo "$confsum" > "$out/.netswap-cfgsum"
fi

log "building $v kernel in $out (first build 9-14 min on 2 cores; later builds are incremental)"
start=$(date +%s)
# Progress: one line per 200 compiled files, errors shown in full.
if ! { mk bzImage 2>"$out/build.err" | tee "$out/build.log" |
	awk -v v="$v" '/^  (CC|AS|LD|AR)/{n++; if (n%200==0) {printf "[netswap] %s: %d objects built\n", v, n; fflush()}}' >&2
	[ "${PIPESTATUS[0]}" -eq 0 ]; }; then
	cat "$out/build.err" >&2
	die "kernel build of $v failed (log: $out/build.log)"
fi
if [ -s "$out/build.err" ]; then
	grep -i 'warning\|error' "$out/build.err" | head -20 >&2
fi
log "built $v in $(( $(date +%s) - start ))s"
cp "$out/arch/x86/boot/bzImage" "$img.tmp"
mv "$img.tmp" "$img"
echo "$cfgsum" > "$out/images/$name.built"
echo "$img"
