#!/bin/bash
# The series' KUnit suites on the debug kernel (series-debug: lockdep,
# DEBUG_ATOMIC_SLEEP, DEBUG_VM, DEBUG_LIST, DEBUG_OBJECTS_WORK, KASAN, UBSAN):
# every case passes and no debug check reports anything.
# TIMEOUT: 2400
. "$(dirname "$0")/../lib.sh"
run_scenario kunit "${DEBUG_SETS[@]}" --set max_time=1200
verify kunit,kernel_clean || fail "KUnit on the debug kernel"
pass "KUnit suites pass on the debug kernel, nothing reported"
