#!/bin/bash
# Bad input gives a clear message, a non-zero exit and leaves nothing running:
# unknown scenario key, bad value, missing export file, nbd-server not startable.
# TIMEOUT: 1800
. "$(dirname "$0")/../lib.sh"
out=$(case_out)

expect_error() { # DESCRIPTION WANT_RC MESSAGE_REGEX -- ARGS
	local desc=$1 want=$2 re=$3; shift 4
	local msg rc
	msg=$(timeout 900 "$RUN" "$@" --out "$out" --quiet 2>&1); rc=$?
	[ "$rc" -eq "$want" ] || fail "$desc: exit $rc, want $want; output: $(echo "$msg" | tail -3)"
	echo "$msg" | grep -Eq -- "$re" || fail "$desc: message does not match /$re/: $(echo "$msg" | tail -3)"
	assert_nothing_left "$out"
	ok "$desc # exit $rc: $(echo "$msg" | grep -E -- "$re" | head -1 | tr -d "#")"
}

expect_error "unknown scenario key" 2 "test/scenarios/bad-key.scn:3: unknown key 'swappiness'" \
	-- run test/scenarios/bad-key.scn
expect_error "bad value" 2 "bad value 'lots' for ram" -- run smoke --set ram=lots
expect_error "unknown variant" 2 "unknown kernel variant" -- run smoke --set variant=nosuch
expect_error "missing scenario file" 2 "no scenario file" -- run /nonexistent.scn
expect_error "missing export" 3 "nbd export /nonexistent/swap.img does not exist" \
	-- run smoke --set export=/nonexistent/swap.img

# nbd-server not startable: its port is taken
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(600)' "$port" &
holder=$!
trap 'kill $holder 2>/dev/null' EXIT
sleep 0.5
expect_error "nbd-server port in use" 3 "cannot start nbd-server: 127.0.0.1:$port is already in use" \
	-- run smoke --set nbd_port="$port"
kill $holder

# nbd-server that cannot run at all
expect_error "nbd-server binary missing" 3 "cannot start nbd-server" \
	-- run smoke --set nbd_server=/nonexistent/nbd-server
pass "bad input is refused cleanly"
