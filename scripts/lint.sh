#!/bin/bash
# make lint: shellcheck on every shell file of the repo (by name or by its #!
# line), flake8 (Debian's) on the rig's Python and the host tests. Settings:
# .shellcheckrc and setup.cfg at the repo root. Exit 1 when either complains.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
for t in shellcheck flake8; do
	command -v "$t" >/dev/null || { echo "lint: $t missing (run: make deps)" >&2; exit 2; }
done
mapfile -t sh < <(git ls-files --cached --others --exclude-standard | while read -r f; do
	[ -f "$f" ] || continue
	case "$f" in
	docs/*|*.patch|*.md|*.py|*.c|*.h|*.json*|*.png) continue ;;
	*.sh) echo "$f" ;;
	*) head -1 "$f" | grep -qE '^#!.*/(ba|da)?sh( |$)' && echo "$f" ;;
	esac
done)
rc=0
echo "lint: shellcheck ${#sh[@]} shell files"
shellcheck -x "${sh[@]}" || rc=1
echo "lint: flake8 rig/ test/host/"
flake8 rig/ test/host/ || rc=1
[ $rc -eq 0 ] && echo "lint: clean"
exit $rc
