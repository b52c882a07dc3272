#!/bin/bash
# KUnit suites of the series, built into the guest kernel and run at boot in
# QEMU; the KTAP on the console is parsed with the tree's own KUnit parser,
# each case is one result here, and the boot must leave a clean kernel.
# TIMEOUT: 1500
. "$(dirname "$0")/../lib.sh"
run_scenario kunit "$@"
verify kunit,kernel_clean || fail "KUnit"
pass "KUnit suites pass on a clean kernel"
