#!/bin/bash
# A server hiccup: nbd-server is stopped (SIGSTOP) 15 s into the seed workload
# on the series kernel and goes on 30 s later. The guest must make progress
# again once the server is back, complete, and lose no page. Silence while the
# server is stopped is not judged; hang_after counts from SIGCONT.
. "$(dirname "$0")/../lib.sh"
run_scenario server-pause
verdict=$(result_field "$RESULTS" verdict)
corrupt=$(result_field "$RESULTS" corrupt)
stopped_for=$(result_field "$RESULTS" server_pause.stopped_for_s)
again=$(result_field "$RESULTS" server_pause.progress_after_resume_s)
w_stop=$(result_field "$RESULTS" server_pause.work_at_stop)
w_resume=$(result_field "$RESULTS" server_pause.work_at_resume)
echo "verdict=$verdict corrupt=$corrupt stopped_for=${stopped_for}s progress_again_after=${again}s work_at_stop=$w_stop work_at_resume=$w_resume"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 29 else 1)" "$stopped_for" ||
	fail "the server was stopped for ${stopped_for}s, want 30"
[ "$again" != None ] || fail "no progress after the server went on"
[ "$verdict" = completed ] || fail "verdict $verdict, want completed"
[ "$corrupt" = 0 ] || fail "$corrupt corrupt pages"
pass "the guest went on ${again}s after a 30 s server stop and lost no page"
