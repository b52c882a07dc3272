#!/bin/bash
# Check out the kernel source of one variant, outside the repo.
#
#   rig/tree.sh VARIANT            check the variant out; print the tree's path
#   rig/tree.sh --list VARIANT KIND    list the variant's patches or configs
#   rig/tree.sh --tree-hash VARIANT    the git tree the variant builds from
#                                      (its branch prepared, nothing checked out)
#   rig/tree.sh --prepared-tree-hash VARIANT   the same without writing anything:
#                                      fails if the branch is not prepared and current
#
# All variants share one source path, $NETSWAP_CACHE/linux: a git repository
# holding Debian's linux-source-6.1 as unpacked from its tarball (commit tagged
# "pristine") and one branch per variant (v/VARIANT: pristine + its patches,
# one commit each). Sharing the path lets ccache reuse objects across variants;
# git checkout rewrites exactly the files that differ, so make (out of tree, one
# O= folder per variant) rebuilds what changed and nothing else.
# Callers hold $NETSWAP_CACHE/linux.lock while they use the tree (rig/kernel.sh).
#
# A variant is described by rig/variants/VARIANT: one entry per line,
#   series FILE      every patch listed in FILE (a quilt-style series), in order
#   patch FILE       one patch
#   config FILE      an extra kconfig fragment (used by rig/kernel.sh)
#   include VARIANT  everything of another variant
#   builddir NAME    build in $NETSWAP_CACHE/build/NAME, shared with the
#                    variants of that name (rig/kernel.sh): a variant that
#                    differs from another by a file or two rebuilds only those
# Paths are relative to the repo root. A generated variant (mutations, per-patch
# checks) is a file under the output folder, named by its absolute path; its
# branch and build folder take the file's name.
set -euo pipefail
. "$(dirname "$0")/common.sh"

TREE="$NETSWAP_CACHE/linux"
G() { git -C "$TREE" -c user.name=netswap -c user.email=netswap@localhost -c advice.detachedHead=false "$@"; }

variant_lines() { # VARIANT KIND -> paths of that kind, includes resolved
	local v=$1 kind=$2 f="$NETSWAP_ROOT/rig/variants/$1"
	case "$v" in /*) f=$v ;; esac
	[ -f "$f" ] || die "unknown kernel variant '$v' (no rig/variants/$v); known: $(cd "$NETSWAP_ROOT/rig/variants" && printf '%s ' *)"
	local k a
	while read -r k a; do
		case "$k" in
		''|'#'*) ;;
		include) variant_lines "$a" "$kind" ;;
		series)
			[ "$kind" = patch ] || continue
			[ -f "$NETSWAP_ROOT/$a" ] || die "variant $v: missing series file $a"
			local d p
			d=$(dirname "$a")
			while read -r p _; do
				case "$p" in ''|'#'*) continue ;; esac
				echo "$d/$p"
			done < "$NETSWAP_ROOT/$a" ;;
		patch|config|builddir)
			if [ "$kind" = "$k" ]; then echo "$a"; fi ;;
		*) die "variant $v: unknown entry '$k'" ;;
		esac
	done < "$f"
}

ensure_repo() {
	[ -f "$NETSWAP_TARBALL" ] || die "no kernel tarball at $NETSWAP_TARBALL (run: make deps)"
	local want
	want="$(stat -c '%s' "$NETSWAP_TARBALL") $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)"
	if [ -d "$TREE/.git" ] && [ "$(G config --get netswap.tarball || true)" = "$want" ]; then
		return
	fi
	log "unpacking $NETSWAP_TARBALL into $TREE and recording it in git (a few minutes, once)"
	rm -rf "$TREE" "$NETSWAP_CACHE/build"
	mkdir -p "$TREE"
	tar -xJf "$NETSWAP_TARBALL" -C "$TREE" --strip-components=1
	G init -q
	# Debian's tarball ignores every top-level path (its packaging repo's rule)
	G add -A -f .
	G commit -q -m "Linux $(sed -n 's/^SUBLEVEL = //p' "$TREE/Makefile" | sed 's/^/6.1./') as shipped in Debian's linux-source-6.1 $want"
	G tag -f pristine >/dev/null
	G config netswap.tarball "$want"
}

patch_stamp() { # patches... -> hash of their names and contents
	local p
	{ G rev-parse pristine; for p in "$@"; do
		[ -f "$NETSWAP_ROOT/$p" ] || die "missing patch $p"
		echo "$p"; sha256sum < "$NETSWAP_ROOT/$p"; done; } | sha256sum | cut -d' ' -f1
}

# Create or update the variant's branch (pristine + its patches, one commit
# each) without touching the work tree; prints the branch name.
prepare_branch() {
	local v=$1 p name
	name=$(basename "$v")
	local patches; patches=$(variant_lines "$v" patch)
	ensure_repo
	local stamp
	# shellcheck disable=SC2086  # one patch per word
	stamp=$(patch_stamp $patches)
	local br="v/$name"
	if [ "$(G config --get "netswap.stamp.$name" || true)" = "$stamp" ] && G rev-parse -q --verify "$br" >/dev/null; then
		echo "$br"
		return
	fi
	log "preparing branch $br ($(echo "$patches" | grep -c . || true) patches)"
	# Build the branch's commits in a scratch index, without touching the
	# work tree: a checkout then rewrites only the files whose content
	# differs, so make rebuilds no more than needed.
	local idx="$TREE/.git/netswap-index.$$" parent
	parent=$(G rev-parse pristine)
	for p in $patches; do
		if ! GIT_INDEX_FILE="$idx" G read-tree "$parent" ||
		   ! GIT_INDEX_FILE="$idx" G apply --cached -p1 "$NETSWAP_ROOT/$p"; then
			rm -f "$idx"
			G config --unset "netswap.stamp.$name" || true
			die "variant $v: patch $p does not apply"
		fi
		parent=$(G commit-tree "$(GIT_INDEX_FILE="$idx" G write-tree)" -p "$parent" -m "$(basename "$p")")
	done
	rm -f "$idx"
	G update-ref "refs/heads/$br" "$parent"
	G config "netswap.stamp.$name" "$stamp"
	echo "$br"
}

checkout_variant() {
	local br
	br=$(prepare_branch "$1")
	G checkout -q -f "$br"
	[ -z "$(G status --porcelain --untracked-files=no)" ] || die "$TREE has local changes; refusing to build"
	echo "$TREE"
}

case "${1:-}" in
--list) [ $# -eq 3 ] || die "usage: rig/tree.sh --list VARIANT patch|config"; variant_lines "$2" "$3" ;;
--tree-hash) [ $# -eq 2 ] || die "usage: rig/tree.sh --tree-hash VARIANT"
	G rev-parse "$(prepare_branch "$2")^{tree}" ;;
--prepared-tree-hash) # the same, read-only: fails unless the branch is prepared and current
	[ $# -eq 2 ] || die "usage: rig/tree.sh --prepared-tree-hash VARIANT"
	[ -d "$TREE/.git" ] || exit 1
	name=$(basename "$2")
	# shellcheck disable=SC2046  # one patch per word
	[ "$(G config --get "netswap.stamp.$name" || true)" = "$(patch_stamp $(variant_lines "$2" patch))" ] || exit 1
	G rev-parse -q --verify "v/$name^{tree}" ;;
''|-*) die "usage: rig/tree.sh VARIANT" ;;
*) checkout_variant "$1" ;;
esac
