#!/bin/bash
# Prepare the kernel source tree of one variant, outside the repo.
#
#   rig/tree.sh VARIANT     print the path of the variant's patched tree
#
# The pristine tree is unpacked once from Debian's linux-source-6.1 tarball into
# $NETSWAP_CACHE/src. A variant tree is a hard-linked copy of it with the
# variant's patches applied (patching breaks the links of the files it touches,
# so the pristine tree is never modified). A variant is described by
# rig/variants/VARIANT: one entry per line,
#   series FILE      every patch listed in FILE (a quilt-style series), in order
#   patch FILE       one patch
#   config FILE      an extra kconfig fragment (used by rig/kernel.sh)
#   include VARIANT  everything of another variant
# Paths are relative to the repo root.
set -euo pipefail
. "$(dirname "$0")/common.sh"

variant_lines() { # VARIANT KIND -> paths of that kind, includes resolved
	local v=$1 kind=$2 f="$NETSWAP_ROOT/rig/variants/$1"
	[ -f "$f" ] || die "unknown kernel variant '$v' (no rig/variants/$v); known: $(ls "$NETSWAP_ROOT/rig/variants" | tr '\n' ' ')"
	local k a
	while read -r k a; do
		case "$k" in
		''|'#'*) ;;
		include) variant_lines "$a" "$kind" ;;
		series)
			[ "$kind" = patch ] || continue
			[ -f "$NETSWAP_ROOT/$a" ] || die "variant $v: missing series file $a"
			local d; d=$(dirname "$a")
			local p
			while read -r p _; do
				case "$p" in ''|'#'*) continue ;; esac
				echo "$d/$p"
			done < "$NETSWAP_ROOT/$a" ;;
		patch|config)
			[ "$kind" = "$k" ] && echo "$a" ;;
		*) die "variant $v: unknown entry '$k'" ;;
		esac
	done < "$f"
}

ensure_pristine() {
	[ -f "$NETSWAP_TARBALL" ] || die "no kernel tarball at $NETSWAP_TARBALL (run: make deps)"
	local want; want="$(stat -c '%s %Y' "$NETSWAP_TARBALL") $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)"
	PRISTINE="$NETSWAP_CACHE/src/linux-source-6.1"
	if [ -f "$PRISTINE/.netswap-pristine" ] && [ "$(cat "$PRISTINE/.netswap-pristine")" = "$want" ]; then
		return
	fi
	log "unpacking $NETSWAP_TARBALL into $NETSWAP_CACHE/src (about a minute)"
	mkdir -p "$NETSWAP_CACHE/src"
	local tmp="$NETSWAP_CACHE/src/.unpack.$$"
	rm -rf "$tmp" "$PRISTINE"
	mkdir -p "$tmp"
	tar -xJf "$NETSWAP_TARBALL" -C "$tmp"
	mv "$tmp/linux-source-6.1" "$PRISTINE"
	rmdir "$tmp"
	echo "$want" > "$PRISTINE/.netswap-pristine"
}

patch_files_touched() { # patch file -> paths it touches
	sed -n -e 's#^+++ b/\([^[:space:]]*\).*#\1#p' -e 's#^--- a/\([^[:space:]]*\).*#\1#p' "$1" | sort -u
}

main() {
	[ $# -eq 1 ] || die "usage: rig/tree.sh VARIANT"
	local v=$1
	local patches; patches=$(variant_lines "$v" patch)
	ensure_pristine
	local tree="$NETSWAP_CACHE/trees/$v"
	local stamp; stamp=$( { cat "$PRISTINE/.netswap-pristine"; for p in $patches; do
		[ -f "$NETSWAP_ROOT/$p" ] || die "variant $v: missing patch $p"
		echo "$p"; sha256sum < "$NETSWAP_ROOT/$p"; done; } | sha256sum | cut -d' ' -f1)
	if [ -f "$tree/.netswap-stamp" ] && [ "$(cat "$tree/.netswap-stamp")" = "$stamp" ]; then
		echo "$tree"; return
	fi
	local oldfiles=""
	[ -f "$tree/.netswap-files" ] && oldfiles=$(cat "$tree/.netswap-files")
	log "preparing tree for variant '$v' ($(echo "$patches" | grep -c . || true) patches)"
	rm -rf "$tree"
	mkdir -p "$NETSWAP_CACHE/trees"
	cp -al "$PRISTINE" "$tree"
	rm -f "$tree/.netswap-pristine"
	local newfiles=""
	for p in $patches; do
		log "  applying $p"
		if ! (cd "$tree" && patch -p1 -F0 -s -N --no-backup-if-mismatch -r - < "$NETSWAP_ROOT/$p"); then
			rm -rf "$tree"
			die "variant $v: patch $p does not apply"
		fi
		newfiles="$newfiles $(patch_files_touched "$NETSWAP_ROOT/$p")"
	done
	# Files this variant or its previous patch set touched must look newer than
	# any object in the build folder, and must not share an inode with the
	# pristine tree (so touching them cannot disturb other variants).
	local f
	for f in $(printf '%s\n' $oldfiles $newfiles | sort -u); do
		[ -e "$tree/$f" ] || continue
		cp -p "$tree/$f" "$tree/$f.netswap-tmp" && mv -f "$tree/$f.netswap-tmp" "$tree/$f"
		touch "$tree/$f"
	done
	printf '%s\n' $newfiles | sort -u > "$tree/.netswap-files"
	echo "$stamp" > "$tree/.netswap-stamp"
	echo "$tree"
}

if [ "${1:-}" = "--list" ]; then variant_lines "$2" "$3"; exit 0; fi
main "$@"
