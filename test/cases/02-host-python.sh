#!/bin/bash
# Host unit tests of the rig's Python side: scenario parser, console parser, reports.
# TIMEOUT: 600
. "$(dirname "$0")/../lib.sh"
PYTHONPATH=rig python3 -m unittest discover -s test/host -v 2>&1 || fail "python unit tests"
pass "python unit tests"
