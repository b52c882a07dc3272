#!/bin/bash
# Host tests of nbd-swap-attach: options, --dry-run against Debian's nbd-server
# and nbdkit on 127.0.0.1, and every error a broken or hostile server can cause
# (hostile-server.py): the right exit code and message, never a crash or a hang.
# Usage: test_attach.sh PATH/TO/nbd-swap-attach   (prints TAP, exits non-zero on failure)
#
# Nothing here talks to the host kernel's nbd: every attach runs with --dry-run,
# and NBD_SWAP_ATTACH_NO_NETLINK makes the tool refuse netlink should a run
# ever get that far.
set -u
B=$(realpath "${1:?usage: test_attach.sh BINARY}")
HERE=$(cd "$(dirname "$0")" && pwd)
export NBD_SWAP_ATTACH_NO_NETLINK=1
TMP=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -f "$TMP/nbd-server.pid" ] && kill "$(cat "$TMP/nbd-server.pid")" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
n=0; fail=0

for need in python3 nbdkit nbd-server; do
	command -v "$need" >/dev/null || { echo "not ok - $need is missing (run: make deps)"; exit 1; }
done

t() { # DESCRIPTION EXPECTED_RC GREP_PATTERN -- ARGS   (a pattern of "" matches anything)
	local desc=$1 want=$2 pat=$3 out rc
	shift 4
	out=$(timeout 60 "$B" "$@" 2>&1); rc=$?
	n=$((n + 1))
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || printf '%s\n' "$out" | grep -q -- "$pat"; }; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc (rc=$rc want=$want, pattern '$pat')"
		printf '%s\n' "$out" | sed 's/^/# /' | tail -6
		fail=$((fail + 1))
	fi
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_listen() { # PORT
	for _ in $(seq 100); do
		python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),1).close()' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# nbdkit ARGS...: starts nbdkit on 127.0.0.1, sets PORT
nbdkit_up() {
	PORT=$(free_port)
	nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$PORT" "$@" >"$TMP/nbdkit.log" 2>&1 &
	pids+=($!)
	wait_listen "$PORT" || { echo "# nbdkit $* did not start"; sed 's/^/# /' "$TMP/nbdkit.log"; }
}
nbdkit_down() { kill "${pids[-1]}" 2>/dev/null; wait "${pids[-1]}" 2>/dev/null; unset 'pids[-1]'; }

# hostile MODE: starts hostile-server.py, sets PORT
hostile() {
	coproc HS { exec python3 "$HERE/hostile-server.py" "$1"; }
	pids+=("$HS_PID")
	read -r PORT <&"${HS[0]}"
}
hostile_down() { kill "${pids[-1]}" 2>/dev/null; wait "${pids[-1]}" 2>/dev/null; unset 'pids[-1]'; }

# --- arguments
t "--help lists the options and exit codes" 0 "12  -d: the device is not connected" -- --help
t "no arguments is a usage error" 2 "expected HOST PORT DEVICE" --
t "unknown option is a usage error" 2 "unknown option --bogus" -- --bogus 127.0.0.1 1 nbd0
t "missing option argument is a usage error" 2 "needs an argument" -- 127.0.0.1 1 nbd0 -C
t "zero connections" 2 "bad number of connections" -- -n -C 0 127.0.0.1 1 nbd0
t "too many connections" 2 "bad number of connections" -- -n -C 65 127.0.0.1 1 nbd0
t "block size not a power of two" 2 "bad block size" -- -n -b 3000 127.0.0.1 1 nbd0
t "block size above a page" 2 "bad block size" -- -n -b 8192 127.0.0.1 1 nbd0
t "negative timeout" 2 "bad timeout" -- -n -t -1 127.0.0.1 1 nbd0
t "timeout with trailing junk" 2 "bad timeout" -- -n -t 5s 127.0.0.1 1 nbd0
t "dead-conn-timeout 0 without --no-reconnect" 2 "in-kernel reconnect needs it > 0" -- -n -D 0 127.0.0.1 1 nbd0
t "bad port" 2 "bad port" -- -n 127.0.0.1 70000 nbd0
t "host name instead of an address" 2 "give an IPv4 or IPv6 address" -- -n localhost 10809 nbd0
t "bad device" 2 "bad device" -- -n 127.0.0.1 10809 /dev/sda
t "bad device for -d" 2 "bad device" -- -d nbdx
t "export name over 4096 bytes" 2 "longer than 4096" -- -n -N "$(printf '%4097s' '' | tr ' ' x)" 127.0.0.1 1 nbd0
t "--force without -d" 2 "--force goes with -d only" -- --force 127.0.0.1 1 nbd0
t "--wait with --dry-run" 2 "do not go together" -- -n -w 127.0.0.1 1 nbd0
t "without --dry-run the tool goes to netlink first (refused here by the guard)" 1 "not talking to the kernel" -- 127.0.0.1 1 nbd0
t "-d goes to netlink (refused here by the guard)" 1 "not talking to the kernel" -- -d /dev/nbd0

# --- unreachable
p=$(free_port)
t "nothing listening: unreachable" 3 "cannot reach server 127.0.0.1:$p: Connection refused" -- -n 127.0.0.1 "$p" nbd0

# --- Debian's nbd-server
dd if=/dev/zero of="$TMP/export.img" bs=1M count=0 seek=64 2>/dev/null
NP=$(free_port)
cat > "$TMP/nbd-server.conf" <<EOF
[generic]
    listenaddr = 127.0.0.1
    port = $NP
    allowlist = false
[netswap]
    exportname = $TMP/export.img
[ro]
    exportname = $TMP/export.img
    readonly = true
EOF
if nbd-server -C "$TMP/nbd-server.conf" -p "$TMP/nbd-server.pid" >"$TMP/nbd-server.log" 2>&1 && wait_listen "$NP"; then
	t "nbd-server: dry run with -C 2 negotiates with NBD_OPT_GO" 0 "negotiation=NBD_OPT_GO" -- -n -C 2 -N netswap 127.0.0.1 "$NP" /dev/nbd0
	t "nbd-server: dry run prints the size" 0 "size=67108864" -- -n -N netswap 127.0.0.1 "$NP" nbd1
	t "nbd-server: dry run names the reconnect attributes" 0 "reconnect=in-kernel: NBD_ATTR_EXPORT_NAME and NBD_SOCK_ADDR on 2 sockets" -- -n -C 2 -N netswap 127.0.0.1 "$NP" nbd0
	t "nbd-server: --no-reconnect" 0 "reconnect=off (--no-reconnect)" -- -n -R -N netswap 127.0.0.1 "$NP" nbd0
	t "nbd-server: missing export" 4 "has no export 'nope'" -- -n -N nope 127.0.0.1 "$NP" nbd0
	t "nbd-server: read-only export is refused" 6 "is read-only" -- -n -N ro 127.0.0.1 "$NP" nbd0
else
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - nbd-server did not start"; sed 's/^/# /' "$TMP/nbd-server.log"
fi

# --- nbdkit
nbdkit_up memory 64M
t "nbdkit: dry run with -C 4" 0 "connections=4" -- -n -C 4 127.0.0.1 "$PORT" nbd0
t "nbdkit: server flags are reported" 0 "server_flags=0x.* HAS_FLAGS.*CAN_MULTI_CONN" -- -n 127.0.0.1 "$PORT" nbd0
t "nbdkit: IPv4 address kept for the kernel" 0 "server=127.0.0.1:$PORT" -- -n -T 2 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up --filter=exportname memory 64M exportname=netswap exportname-strict=true
t "nbdkit: unknown export with a strict export list" 4 "has no export 'other'" -- -n -N other 127.0.0.1 "$PORT" nbd0
t "nbdkit: the listed export" 0 "export=netswap" -- -n -N netswap 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up -r memory 64M
t "nbdkit: read-only server is refused" 6 "is read-only" -- -n 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up memory 4K
t "nbdkit: a 4 KiB export is too small for swap" 6 "too small for swap" -- -n 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up --mask-handshake=0 memory 64M
t "nbdkit: not fixed newstyle -> NBD_OPT_EXPORT_NAME" 0 "negotiation=NBD_OPT_EXPORT_NAME" -- -n -C 2 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up --oldstyle memory 64M
t "nbdkit: oldstyle server" 5 "oldstyle protocol" -- -n 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up --filter=blocksize-policy memory 64M blocksize-minimum=512 blocksize-preferred=4096 blocksize-maximum=1M
t "nbdkit: server block sizes are reported" 0 "server_block_sizes=min:512,preferred:4096,max:1048576" -- -n 127.0.0.1 "$PORT" nbd0
t "nbdkit: a small maximum request is warned about" 0 "accepts at most 1048576 bytes per request" -- -n 127.0.0.1 "$PORT" nbd0
nbdkit_down
nbdkit_up --filter=blocksize-policy memory 64M blocksize-minimum=8192 blocksize-preferred=8192
t "nbdkit: minimum block size above a page is refused" 6 "needs a block size of at least 8192" -- -n 127.0.0.1 "$PORT" nbd0
nbdkit_down
printf 'netswap:%s\n' "$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')" > "$TMP/psk"
nbdkit_up --tls=require --tls-psk="$TMP/psk" memory 64M
t "nbdkit: TLS required is refused clearly" 6 "requires TLS" -- -n 127.0.0.1 "$PORT" nbd0
nbdkit_down

# --- hostile server: every step broken once
h() { # MODE RC PATTERN [ARGS...]
	local mode=$1 rc=$2 pat=$3
	shift 3
	hostile "$mode"
	t "hostile $mode" "$rc" "$pat" -- -n -T 3 "$@" 127.0.0.1 "$PORT" nbd0
	hostile_down
}
h garbage 5 "is not an NBD server"
h close 5 "closed the connection while sending its greeting (0 of 16 bytes)"
h silent 5 "did not finish the negotiation within 3 s"
h drip 5 "did not finish the negotiation within 3 s"
h oldstyle 5 "oldstyle protocol"
h bad-opts-magic 5 "bad magic 0x1122334455667788 after NBDMAGIC"
h trunc-greeting 5 "closed the connection while sending its greeting (12 of 16 bytes)"
h reply-bad-magic 5 "bad reply magic 0x00000000deadbeef"
h reply-wrong-option 5 "replied to option 5, not to NBD_OPT_GO"
h reply-huge 5 "reply of 4294967295 bytes"
h reply-trunc 5 "closed the connection while sending the data of a reply to NBD_OPT_GO (5 of 12 bytes)"
h info-bad-length 5 "NBD_INFO_EXPORT of 10 bytes (12 expected)"
h ack-without-info 5 "without sending NBD_INFO_EXPORT"
h info-flood 5 "more than 64 NBD_REP_INFO replies"
h reply-type 5 "unexpected reply type 0x00000002"
h unknown 4 "has no export 'x' (server says: no such export\\\\x01\\\\x0a)" -N x
h policy 6 "refused export '' with NBD_REP_ERR_POLICY (0x80000002) (server says: not for you)"
h tls 6 "requires TLS"
h unsup 0 "negotiation=NBD_OPT_EXPORT_NAME"
h unsup-close 4 "closed the connection after NBD_OPT_EXPORT_NAME"
h unsup-trunc 5 "(5 of 10 bytes)"
h readonly 6 "is read-only"
h tiny 6 "too small for swap"
h block-size-big 6 "needs a block size of at least 65536"
h block-size-nonsense 5 "nonsensical block sizes min 3"
h differ 5 "connection 2 saw size 134217728" -C 2
h second-hangs-up 5 "connection 2: server .* closed the connection" -C 3
h good 0 "server_block_sizes=min:1,preferred:4096,max:33554432" -C 2

echo "1..$n"
echo "# nbd-swap-attach: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
