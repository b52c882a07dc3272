#!/bin/bash
# make lint is clean: shellcheck on every shell file, flake8 on the rig's
# Python and the host tests (scripts/lint.sh; settings in .shellcheckrc and
# setup.cfg).
# TIMEOUT: 300
. "$(dirname "$0")/../lib.sh"
scripts/lint.sh || fail "make lint"
pass "make lint is clean"
