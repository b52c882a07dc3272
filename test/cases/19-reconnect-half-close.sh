#!/bin/bash
# A server that stops reading and then closes its side of the connection (a
# FIN) while keeping it half open: nbd's receive worker sees the end at once,
# but a sender holds the connection's transmit lock while it waits for send
# space on that half-open connection, which never comes. The kernel must
# mark the connection dead when it ended, not a request timeout (60 s) later,
# reconnect (the fixture serves a new connection correctly), lose no page
# and stay clean. Seen failing: the series without its last patch marked the
# connection dead 54 s after the FIN (docs/results/reconnect.md).
# TIMEOUT: 1500
. "$(dirname "$0")/../lib.sh"
NETSWAP_HOSTILE=half-close NETSWAP_HOSTILE_AFTER=${NETSWAP_HOSTILE_AFTER:-300} \
	run_scenario smoke --set nbd_server="$NETSWAP_ROOT/test/fixtures/hostile-nbd-server.py" \
	--set nbd_client=attach --set nbd_reconnect=yes --set nbd_timeout=60 \
	--set nbd_dead_conn_timeout=90 "$@"
verify reconnect_prompt,completed,no_loss,kernel_clean || fail "reconnect after a half-close"
[ "$RUN_RC" -eq 0 ] || fail "runner exit $RUN_RC"
pass "a connection the server half-closed was marked dead at once and reconnected; no page lost"
