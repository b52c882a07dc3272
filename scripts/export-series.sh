#!/bin/bash
# Developer helper: export a branch of a kernel git tree as patches/ (series +
# NNNN-*.patch, git format-patch form).
#   [SUBJECT_PREFIX="PATCH v2"] [RFC_FROM=N] scripts/export-series.sh KERNEL_GIT_DIR BASE BRANCH
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 3 ] || { echo "usage: scripts/export-series.sh KERNEL_GIT_DIR BASE BRANCH" >&2; exit 2; }
# the cover letter (0000-cover-letter.patch) is written by hand and kept
find patches -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name 0000-cover-letter.patch -delete
git -C "$1" format-patch -q --no-signature ${SUBJECT_PREFIX:+--subject-prefix="$SUBJECT_PREFIX"} -o "$PWD/patches" "$2..$3"
# Blank context lines as empty lines, not a lone space: git apply reads them
# the same (the tree after the series is identical), and checkpatch run on the
# patch file from outside a kernel tree then sees no trailing whitespace.
sed -i 's/^ $//' patches/[0-9][0-9][0-9][0-9]-*.patch
(cd patches && for p in [0-9][0-9][0-9][0-9]-*.patch; do [ "$p" = "${p#0000-}" ] && echo "$p"; done > series)
cat patches/series
# RFC_FROM=N: patches N and later are an RFC part ("[RFC PATCH ...]")
if [ -n "${RFC_FROM:-}" ]; then
	for p in patches/[0-9][0-9][0-9][0-9]-*.patch; do
		n=$(basename "$p"); n=$((10#${n%%-*}))
		if [ "$n" -ge "$RFC_FROM" ]; then
			sed -i '0,/^Subject: \[PATCH/s//Subject: [RFC PATCH/' "$p"
		fi
	done
fi
