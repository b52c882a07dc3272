#!/bin/bash
# Host unit tests of the C tools (swapstress patterns and exit codes, vmwatch).
# TIMEOUT: 600
. "$(dirname "$0")/../lib.sh"
make -s -C tools test || fail "tools unit tests"
pass "tools unit tests"
