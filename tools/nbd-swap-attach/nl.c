// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side: nbd's generic netlink family (include/uapi/linux/nbd-netlink.h,
 * drivers/block/nbd.c). Every request waits for the kernel's answer and keeps
 * the kernel's own errno, so that EBUSY, EPERM and EINVAL can be told apart.
 */
#include "nl.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* State of one request: the kernel's errno, and what the reply carried. */
struct req {
	int done;
	int err;		/* positive errno from NLMSG_ERROR, 0 if none */
	struct nbd_family *fam;	/* CTRL_CMD_GETFAMILY */
	int index;		/* NBD_CMD_STATUS: device asked about; NBD_CMD_CONNECT: reply */
	int found, connected;	/* NBD_CMD_STATUS */
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct req *r = arg;

	(void)nla;
	r->err = -e->error;
	r->done = 1;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;

	(void)msg;
	r->done = 1;
	return NL_STOP;
}

static int on_family(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct nlattr *tb[CTRL_ATTR_MAX + 1], *grp;
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, CTRL_ATTR_MAX, NULL) < 0)
		return NL_SKIP;
	if (tb[CTRL_ATTR_FAMILY_ID])
		r->fam->id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_MAXATTR])
		r->fam->maxattr = nla_get_u32(tb[CTRL_ATTR_MAXATTR]);
	if (tb[CTRL_ATTR_VERSION])
		r->fam->version = nla_get_u32(tb[CTRL_ATTR_VERSION]);
	if (tb[CTRL_ATTR_MCAST_GROUPS]) {
		nla_for_each_nested(grp, tb[CTRL_ATTR_MCAST_GROUPS], rem) {
			struct nlattr *g[CTRL_ATTR_MCAST_GRP_MAX + 1];

			if (nla_parse_nested(g, CTRL_ATTR_MCAST_GRP_MAX, grp, NULL) < 0)
				continue;
			if (g[CTRL_ATTR_MCAST_GRP_NAME] && g[CTRL_ATTR_MCAST_GRP_ID] &&
			    !strcmp(nla_get_string(g[CTRL_ATTR_MCAST_GRP_NAME]), NBD_GENL_MCAST_GROUP_NAME))
				r->fam->mcast_group = nla_get_u32(g[CTRL_ATTR_MCAST_GRP_ID]);
		}
	}
	return NL_OK;
}

static int on_status(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct nlattr *tb[NBD_ATTR_MAX + 1], *item;
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, NBD_ATTR_MAX, NULL) < 0 || !tb[NBD_ATTR_DEVICE_LIST])
		return NL_SKIP;
	nla_for_each_nested(item, tb[NBD_ATTR_DEVICE_LIST], rem) {
		struct nlattr *d[NBD_DEVICE_ATTR_MAX + 1];

		if (nla_parse_nested(d, NBD_DEVICE_ATTR_MAX, item, NULL) < 0 ||
		    !d[NBD_DEVICE_INDEX] || (int)nla_get_u32(d[NBD_DEVICE_INDEX]) != r->index)
			continue;
		r->found = 1;
		r->connected = d[NBD_DEVICE_CONNECTED] && nla_get_u8(d[NBD_DEVICE_CONNECTED]);
	}
	return NL_OK;
}

static int on_connect(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct nlattr *tb[NBD_ATTR_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, NBD_ATTR_MAX, NULL) >= 0 && tb[NBD_ATTR_INDEX])
		r->index = nla_get_u32(tb[NBD_ATTR_INDEX]);
	return NL_OK;
}

/*
 * Send msg (freed here) and read until the kernel's ACK or error. Returns 0
 * or a positive errno; a failure of the netlink socket itself is EIO.
 */
static int transact(struct nl_sock *sk, struct nl_msg *msg, nl_recvmsg_msg_cb_t valid, struct req *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	if (!cb) {
		nlmsg_free(msg);
		return ENOMEM;
	}
	if (valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		nl_cb_put(cb);
		return EIO;
	}
	while (!r->done) {
		ret = nl_recvmsgs(sk, cb);
		if (ret < 0 && !r->done) {
			nl_cb_put(cb);
			return EIO;
		}
	}
	nl_cb_put(cb);
	return r->err;
}

struct nl_sock *nbdnl_open(void)
{
	struct nl_sock *sk;

	if (getenv("NBD_SWAP_ATTACH_NO_NETLINK")) {
		fprintf(stderr, PROG ": error: NBD_SWAP_ATTACH_NO_NETLINK is set: not talking to the kernel\n");
		return NULL;
	}
	sk = nl_socket_alloc();
	if (!sk) {
		fprintf(stderr, PROG ": error: out of memory\n");
		return NULL;
	}
	if (genl_connect(sk) < 0) {
		fprintf(stderr, PROG ": error: cannot open a generic netlink socket: %s\n", strerror(errno));
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

void nbdnl_close(struct nl_sock *sk)
{
	if (sk)
		nl_socket_free(sk);
}

int nbdnl_family(struct nl_sock *sk, struct nbd_family *fam)
{
	struct req r = { .fam = fam };
	struct nl_msg *msg = nlmsg_alloc();

	memset(fam, 0, sizeof(*fam));
	if (!msg)
		return ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0, CTRL_CMD_GETFAMILY, 1) ||
	    nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME) < 0) {
		nlmsg_free(msg);
		return ENOMEM;
	}
	int err = transact(sk, msg, on_family, &r);

	if (!err && !fam->id)
		err = ENOENT;
	return err;
}

static struct nl_msg *nbd_msg(const struct nbd_family *fam, int cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, fam->id, 0, 0, cmd, NBD_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

int nbdnl_status(struct nl_sock *sk, const struct nbd_family *fam, int index, int *connected)
{
	struct req r = { .index = index };
	struct nl_msg *msg = nbd_msg(fam, NBD_CMD_STATUS);
	int err;

	if (!msg)
		return ENOMEM;
	if (nla_put_u32(msg, NBD_ATTR_INDEX, index) < 0) {
		nlmsg_free(msg);
		return ENOMEM;
	}
	err = transact(sk, msg, on_status, &r);
	*connected = r.found && r.connected;
	return err;
}

int nbdnl_connect(struct nl_sock *sk, const struct nbd_family *fam, const struct nbd_config *cfg)
{
	struct req r = { .index = -1 };
	struct nl_msg *msg = nbd_msg(fam, NBD_CMD_CONNECT);
	struct nlattr *socks, *item;

	if (!msg)
		return ENOMEM;
	if (nla_put_u32(msg, NBD_ATTR_INDEX, cfg->index) < 0 ||
	    nla_put_u64(msg, NBD_ATTR_SIZE_BYTES, cfg->size) < 0 ||
	    nla_put_u64(msg, NBD_ATTR_BLOCK_SIZE_BYTES, cfg->block_size) < 0 ||
	    nla_put_u64(msg, NBD_ATTR_SERVER_FLAGS, cfg->server_flags) < 0 ||
	    nla_put_u64(msg, NBD_ATTR_TIMEOUT, cfg->timeout) < 0 ||
	    nla_put_u64(msg, NBD_ATTR_DEAD_CONN_TIMEOUT, cfg->dead_conn_timeout) < 0)
		goto nomem;
	if (cfg->export_name && nla_put_string(msg, NBD_ATTR_EXPORT_NAME, cfg->export_name) < 0)
		goto nomem;
	socks = nla_nest_start(msg, NBD_ATTR_SOCKETS);
	if (!socks)
		goto nomem;
	for (int i = 0; i < cfg->nsocks; i++) {
		item = nla_nest_start(msg, NBD_SOCK_ITEM);
		if (!item || nla_put_u32(msg, NBD_SOCK_FD, cfg->fds[i]) < 0)
			goto nomem;
		if (cfg->addr && nla_put(msg, NBD_SOCK_ADDR, cfg->addrlen, cfg->addr) < 0)
			goto nomem;
		nla_nest_end(msg, item);
	}
	nla_nest_end(msg, socks);
	int err = transact(sk, msg, on_connect, &r);

	if (!err && r.index >= 0 && r.index != cfg->index)
		fprintf(stderr, PROG ": warning: the kernel answered with nbd%d, not nbd%d\n", r.index, cfg->index);
	return err;
nomem:
	nlmsg_free(msg);
	return EMSGSIZE;
}

int nbdnl_disconnect(struct nl_sock *sk, const struct nbd_family *fam, int index)
{
	struct req r = { .index = index };
	struct nl_msg *msg = nbd_msg(fam, NBD_CMD_DISCONNECT);

	if (!msg)
		return ENOMEM;
	if (nla_put_u32(msg, NBD_ATTR_INDEX, index) < 0) {
		nlmsg_free(msg);
		return ENOMEM;
	}
	return transact(sk, msg, NULL, &r);
}

/* --wait: multicast events of the nbd family. */
struct watch {
	int index;
	void (*on_dead)(int index);
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct watch *w = arg;
	struct genlmsghdr *gh = genlmsg_hdr(nlmsg_hdr(msg));
	struct nlattr *tb[NBD_ATTR_MAX + 1];

	if (gh->cmd != NBD_CMD_LINK_DEAD)
		return NL_OK;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, NBD_ATTR_MAX, NULL) < 0 || !tb[NBD_ATTR_INDEX])
		return NL_OK;
	if ((int)nla_get_u32(tb[NBD_ATTR_INDEX]) == w->index)
		w->on_dead(w->index);
	return NL_OK;
}

int nbdnl_watch(struct nl_sock *ev, const struct nbd_family *fam)
{
	if (!fam->mcast_group)
		return ENOENT;
	nl_socket_disable_seq_check(ev);
	if (nl_socket_add_membership(ev, fam->mcast_group) < 0)
		return EIO;
	return 0;
}

/* Wait up to ms for events; call on_dead for each NBD_CMD_LINK_DEAD of index. */
int nbdnl_events(struct nl_sock *ev, int index, int ms, void (*on_dead)(int))
{
	struct watch w = { .index = index, .on_dead = on_dead };
	struct pollfd pfd = { .fd = nl_socket_get_fd(ev), .events = POLLIN };
	struct nl_cb *cb;
	int r = poll(&pfd, 1, ms);

	if (r <= 0)
		return r < 0 && errno != EINTR ? errno : 0;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_event, &w);
	nl_recvmsgs(ev, cb);
	nl_cb_put(cb);
	return 0;
}
