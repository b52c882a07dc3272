/* SPDX-License-Identifier: GPL-2.0 */
/* nbd's generic netlink family, as nbd-swap-attach uses it. */
#ifndef NBD_SWAP_ATTACH_NL_H
#define NBD_SWAP_ATTACH_NL_H

#include "attach.h"

#include <linux/nbd-netlink.h>
#include <stdint.h>

/*
 * In-kernel reconnect (new uAPI; Debian's header does not have it yet):
 * the export name on the device, and the server's address per socket. The
 * kernel reconnects by itself when both are given on every socket and
 * NBD_ATTR_DEAD_CONN_TIMEOUT > 0. A kernel whose family's maxattr is below
 * NBD_ATTR_EXPORT_NAME ignores them (nbd parses without strict validation),
 * so support is detected by maxattr, never by trying.
 */
#ifndef NBD_ATTR_EXPORT_NAME
#define NBD_ATTR_EXPORT_NAME	(NBD_ATTR_BACKEND_IDENTIFIER + 1)
#endif
#ifndef NBD_SOCK_ADDR
#define NBD_SOCK_ADDR		(NBD_SOCK_FD + 1)
#endif
#define NBD_EXPORT_NAME_MAX	4096

struct nl_sock;

struct nbd_family {
	int id;
	uint32_t maxattr;
	uint32_t version;
	uint32_t mcast_group;
};

struct nbd_config {
	int index;
	uint64_t size, block_size, server_flags, timeout, dead_conn_timeout;
	const char *export_name;	/* NULL: no in-kernel reconnect */
	const void *addr;		/* NULL: no NBD_SOCK_ADDR */
	uint32_t addrlen;
	int nsocks;
	const int *fds;
};

struct nl_sock *nbdnl_open(void);
void nbdnl_close(struct nl_sock *sk);
/* These return 0 or a positive errno (the kernel's own where it sent one). */
int nbdnl_family(struct nl_sock *sk, struct nbd_family *fam);
int nbdnl_status(struct nl_sock *sk, const struct nbd_family *fam, int index, int *connected);
int nbdnl_connect(struct nl_sock *sk, const struct nbd_family *fam, const struct nbd_config *cfg);
int nbdnl_disconnect(struct nl_sock *sk, const struct nbd_family *fam, int index);
int nbdnl_watch(struct nl_sock *ev, const struct nbd_family *fam);
int nbdnl_events(struct nl_sock *ev, int index, int ms, void (*on_dead)(int));

#endif
