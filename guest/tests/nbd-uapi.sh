#!/bin/sh
# nbd's kernel reconnect uapi: partial or malformed reconnect information in
# NBD_CMD_CONNECT is refused with the documented errno and an extack message,
# and no device is left configured (tools/nbd-uapi-check).
nbd-uapi-check
