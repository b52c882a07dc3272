#!/bin/bash
# nbd's kernel reconnect uapi in the guest: the family's maxattr covers
# NBD_ATTR_EXPORT_NAME; a name without addresses, addresses without a name,
# either without a dead connection timeout, an address on one socket of two,
# a non-inet, short-port, wrong-length or IPv6 address (no IPv6 in the guest)
# and an over-long name are refused with the documented errno and extack
# message, leaving nbd0 unconfigured (tools/nbd-uapi-check; KTAP from the
# guest). Seen failing: all of it on the stock kernel.
# TIMEOUT: 900
. "$(dirname "$0")/../lib.sh"
run_scenario nbd-uapi "$@"
verify guest_ktap,completed,kernel_clean || fail "reconnect uapi"
pass "partial or malformed reconnect information refused with errno and extack"
