/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nbd-swap-attach: attach an NBD device for swap, safely.
 * Shared declarations: exit codes, messages, the negotiated export.
 */
#ifndef NBD_SWAP_ATTACH_H
#define NBD_SWAP_ATTACH_H

#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

/* Exit codes; --help lists them and docs/admin-guide.md explains them. */
enum {
	XC_OK = 0,
	XC_ERROR = 1,		/* anything not listed below (out of memory, ...) */
	XC_USAGE = 2,		/* bad arguments */
	XC_UNREACHABLE = 3,	/* server unreachable: refused, timed out, no route */
	XC_NOEXPORT = 4,	/* the server has no such export */
	XC_PROTOCOL = 5,	/* the server broke the NBD protocol */
	XC_REFUSED = 6,		/* the server refused, or the export is unfit for swap */
	XC_NOKERNEL = 7,	/* no nbd generic netlink family in this kernel */
	XC_NORECONNECT = 8,	/* kernel cannot reconnect by itself, no --no-reconnect */
	XC_BUSY = 9,		/* device already connected or in use */
	XC_PERM = 10,		/* not permitted (needs root / CAP_SYS_ADMIN) */
	XC_KERNEL = 11,		/* the kernel refused the configuration otherwise */
	XC_NOTCONN = 12,	/* -d: the device is not connected */
};

#define PROG "nbd-swap-attach"

/* Print "nbd-swap-attach: error: ..." and return code. */
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the server told us about the export on one connection. */
struct nbd_export {
	uint64_t size;
	uint16_t flags;		/* transmission flags (NBD_ATTR_SERVER_FLAGS) */
	uint16_t hs_flags;	/* handshake flags */
	int used_go;		/* 1: NBD_OPT_GO, 0: fell back to NBD_OPT_EXPORT_NAME */
	int has_bs;		/* the server sent NBD_INFO_BLOCK_SIZE */
	uint32_t min_bs, pref_bs, max_bs;
};

struct server {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char text[80];		/* "10.0.2.2:10809" or "[::1]:10809" */
};

/* negotiate.c */
int server_parse(struct server *s, const char *host, const char *port);
int nbd_open_export(const struct server *s, const char *name, int timeout_s,
		    int conn, struct nbd_export *ex, int *fd_out);
int nbd_ready_for_kernel(int fd);
void nbd_say_goodbye(int fd);
void describe_flags(uint16_t flags, char *buf, size_t len);

#endif
