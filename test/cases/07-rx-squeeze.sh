#!/bin/bash
# Issue 3 reproducer: swap over NBD is busy, then free memory is held below the
# GFP_ATOMIC floor for 20 s. With the series the NIC's receive path reaches the
# reserves, so NBD replies keep arriving and writebacks keep completing during
# the second half of the hold; stock (the same fixture without the series)
# receives nothing then. Afterwards the workload recovers with no page lost.
. "$(dirname "$0")/../lib.sh"
out=$(case_out)
nics=${RX_SQUEEZE_NICS:-virtio-net e1000}
matrix=$(echo "$nics" | tr ' ' ',')
"$RUN" run rx-squeeze --matrix variant=stock-squeeze,series-squeeze --matrix "nic=$matrix" \
	--out "$out" --results "$out/results.jsonl" 2>&1 | sed -u 's/^\[netswap/# [netswap/'
assert_nothing_left "$out"
[ -f "$out/results.jsonl" ] || fail "no result lines written"
python3 - "$out/results.jsonl" <<'PY'
import json, sys
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    w, rx = r.get("squeeze_written_late"), r.get("squeeze_rx_late")
    print(f"{r['variant']:15} {r['nic']:10} verdict={r['verdict']} hold={r.get('squeeze_seconds')}s "
          f"written_late={w} rx_late={rx} min_free={r.get('squeeze_min_free')} corrupt={r['corrupt']} "
          f"alloc_failures={r['kernel'].get('alloc_failure')}")
    if w is None:
        print("  FAIL: no squeeze report in the console"); bad += 1; continue
    if r["corrupt"]:
        print("  FAIL: corrupt pages"); bad += 1
    if r["variant"].startswith("series"):
        if r["verdict"] != "completed" or w <= 0 or rx <= 0:
            print("  FAIL: series must keep receiving and completing writeback under the squeeze, and recover"); bad += 1
    elif w > 0:
        print("  FAIL: stock completed writeback below the GFP_ATOMIC floor: the reproducer does not reproduce"); bad += 1
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "rx squeeze expectations"
pass "series receives through the reserves; stock does not"
