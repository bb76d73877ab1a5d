/* rsockets: stream sockets over our CM and RDMA Sends.
 *
 * A simple but real implementation.  Each connected rsocket has one RC QP
 * and two rings of RS_BUFS buffers of RS_BUF_SIZE bytes in one MR: the
 * receive ring, always posted, and the send ring.  A message is a 4-byte
 * header (the receive credits the sender returns) and up to
 * RS_BUF_SIZE - 4 bytes of stream data.  Flow control is by credits: a side
 * may send only as many messages as the peer has receives posted; it
 * starts with RS_BUFS and learns of reposted ones from the header.  The last
 * credit is kept for credit-only messages (no data), sent once half the
 * ring waits to be returned, so that two sides blocked on each other always
 * make progress.
 *
 * The socket numbers are eventfds: real descriptors, so they never collide
 * with the application's own and close-on-exec behaves.  Readiness comes
 * from the QP's CQs, polled (which is also inline progress); rpoll and
 * rselect poll them and the application's ordinary descriptors in turn.
 * riomap, riounmap and riowrite (RDMA writes into a mapped window) fail
 * with ENOSYS. */
#include <rdma/rsocket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "usiw/byteorder.h"

#define RS_BUFS 32
#define RS_BUF_SIZE 16384
#define RS_HDR 4
#define RS_PAYLOAD (RS_BUF_SIZE - RS_HDR)
#define RS_MAX_FD 65536
/* Resolution and connection timeouts of rconnect. */
#define RS_RESOLVE_MS 2000
/* How long rclose waits for its sends to complete. */
#define RS_LINGER_MS 5000

enum rs_state { RS_IDLE, RS_LISTENING, RS_CONNECTED, RS_CLOSED };

struct rsock {
	int fd;
	enum rs_state state;
	bool nonblocking;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	unsigned char *bufs;            /* RS_BUFS receive, then RS_BUFS send */
	bool send_busy[RS_BUFS];
	unsigned send_next;
	unsigned credits;               /* messages the peer can take */
	unsigned to_return;             /* receives reposted, not yet told */
	/* The receive being read: its ring index, bytes left and offset. */
	int rx_buf;
	uint32_t rx_left, rx_off;
	bool eof;                       /* the peer closed or the QP failed */
	struct sockaddr_in bound;       /* rbind before rlisten/rconnect */
	bool has_bound;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rsock *table[RS_MAX_FD];

static struct rsock *lookup(int fd)
{
	if (fd < 0 || fd >= RS_MAX_FD) {
		errno = EBADF;
		return NULL;
	}
	pthread_mutex_lock(&table_lock);
	struct rsock *rs = table[fd];
	pthread_mutex_unlock(&table_lock);
	if (!rs)
		errno = EBADF;
	return rs;
}

static struct rsock *new_rsock(void)
{
	struct rsock *rs = calloc(1, sizeof(*rs));

	if (!rs) {
		errno = ENOMEM;
		return NULL;
	}
	rs->fd = eventfd(0, EFD_CLOEXEC);
	if (rs->fd < 0 || rs->fd >= RS_MAX_FD) {
		if (rs->fd >= 0)
			close(rs->fd);
		free(rs);
		errno = EMFILE;
		return NULL;
	}
	rs->rx_buf = -1;
	pthread_mutex_lock(&table_lock);
	table[rs->fd] = rs;
	pthread_mutex_unlock(&table_lock);
	return rs;
}

static void free_rsock(struct rsock *rs)
{
	pthread_mutex_lock(&table_lock);
	table[rs->fd] = NULL;
	pthread_mutex_unlock(&table_lock);
	if (rs->id) {
		if (rs->id->qp)
			rdma_destroy_qp(rs->id);
		if (rs->mr)
			ibv_dereg_mr(rs->mr);
		rdma_destroy_ep(rs->id);
	}
	free(rs->bufs);
	close(rs->fd);
	free(rs);
}

static unsigned char *rx_buf(struct rsock *rs, unsigned i)
{
	return rs->bufs + (size_t)i * RS_BUF_SIZE;
}

static unsigned char *tx_buf(struct rsock *rs, unsigned i)
{
	return rs->bufs + (size_t)(RS_BUFS + i) * RS_BUF_SIZE;
}

static int post_recv(struct rsock *rs, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)rx_buf(rs, i), RS_BUF_SIZE, rs->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(rs->id->qp, &wr, &bad);
}

/* The QP, its buffers and the receives, on an id that has none yet. */
static int set_up_qp(struct rsock *rs)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = RS_BUFS, .max_recv_wr = RS_BUFS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	if (rdma_create_qp(rs->id, NULL, &attr))
		return -1;
	rs->bufs = calloc(2 * RS_BUFS, RS_BUF_SIZE);
	if (!rs->bufs) {
		errno = ENOMEM;
		return -1;
	}
	rs->mr = ibv_reg_mr(rs->id->pd, rs->bufs, 2 * RS_BUFS * RS_BUF_SIZE,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!rs->mr)
		return -1;
	for (unsigned i = 0; i < RS_BUFS; i++)
		if (post_recv(rs, i))
			return -1;
	rs->credits = RS_BUFS;
	return 0;
}

/* ---- completions ---------------------------------------------------- */

/* Send completions free their buffers. */
static void reap_sends(struct rsock *rs)
{
	struct ibv_wc wc[RS_BUFS];
	int n = ibv_poll_cq(rs->id->send_cq, RS_BUFS, wc);

	for (int i = 0; i < n; i++) {
		rs->send_busy[wc[i].wr_id] = false;
		if (wc[i].status != IBV_WC_SUCCESS)
			rs->eof = true;
	}
}

/* The next received message, if none is being read: its credits are
 * taken, an empty one is reposted at once.  True if data is waiting. */
static bool fill_rx(struct rsock *rs)
{
	struct ibv_wc wc;

	while (rs->rx_buf < 0 && !rs->eof) {
		int n = ibv_poll_cq(rs->id->recv_cq, 1, &wc);
		if (n <= 0)
			return false;
		if (wc.status != IBV_WC_SUCCESS || wc.byte_len < RS_HDR) {
			rs->eof = true;   /* flushed: the connection is gone */
			return false;
		}
		unsigned i = (unsigned)wc.wr_id;
		rs->credits += get_be32(rx_buf(rs, i));
		if (wc.byte_len == RS_HDR) {
			post_recv(rs, i);
			rs->to_return++;
			continue;
		}
		rs->rx_buf = (int)i;
		rs->rx_off = RS_HDR;
		rs->rx_left = wc.byte_len - RS_HDR;
	}
	return rs->rx_buf >= 0;
}

static int free_send_buf(struct rsock *rs)
{
	for (unsigned k = 0; k < RS_BUFS; k++) {
		unsigned i = (rs->send_next + k) % RS_BUFS;
		if (!rs->send_busy[i]) {
			rs->send_next = (i + 1) % RS_BUFS;
			return (int)i;
		}
	}
	return -1;
}

/* One message: the credits to return, then len bytes of data. */
static int send_msg(struct rsock *rs, const void *data, size_t len)
{
	int i = free_send_buf(rs);

	if (i < 0) {
		/* A side that only receives reaps its send completions nowhere
		 * else: its credit messages would use up the ring. */
		reap_sends(rs);
		i = free_send_buf(rs);
	}
	if (i < 0)
		return EAGAIN;
	unsigned char *b = tx_buf(rs, (unsigned)i);
	put_be32(b, rs->to_return);
	if (len) /* a credit message has no data (and data may be NULL) */
		memcpy(b + RS_HDR, data, len);
	struct ibv_sge sge = { (uintptr_t)b, (uint32_t)(RS_HDR + len), rs->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int rc = ibv_post_send(rs->id->qp, &wr, &bad);
	if (rc)
		return rc;
	rs->send_busy[i] = true;
	rs->credits--;
	rs->to_return = 0;
	return 0;
}

/* Returns credits once half the ring waits, with the credit kept for it.
 * Called after each receive is reposted and again by a reader that finds
 * nothing to read: credits held back then (no send buffer free yet) must
 * still go, or a peer that has run out of them waits for ever. */
static void return_credits(struct rsock *rs)
{
	if (rs->to_return >= RS_BUFS / 2 && rs->credits > 0)
		send_msg(rs, NULL, 0);
}

static bool can_send(struct rsock *rs)
{
	reap_sends(rs);
	fill_rx(rs);   /* takes the credits the peer sent */
	return rs->credits > 1 && free_send_buf(rs) >= 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A short pause between polls of a blocking call: the poll itself is the
 * progress, so the pause only gives the other side's process the core. */
static void pause_briefly(void)
{
	sched_yield();
}

/* ---- socket calls ---------------------------------------------------- */

int rsocket(int domain, int type, int protocol)
{
	if (domain != AF_INET)
		return errno = EAFNOSUPPORT, -1;
	if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_STREAM ||
	    (protocol != 0 && protocol != IPPROTO_TCP))
		return errno = EPROTONOSUPPORT, -1;
	struct rsock *rs = new_rsock();
	if (!rs)
		return -1;
	rs->nonblocking = type & SOCK_NONBLOCK;
	return rs->fd;
}

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (!addr || addrlen < sizeof(struct sockaddr_in) || addr->sa_family != AF_INET)
		return errno = EINVAL, -1;
	if (rs->state != RS_IDLE || rs->has_bound)
		return errno = EINVAL, -1;
	memcpy(&rs->bound, addr, sizeof(rs->bound));
	rs->has_bound = true;
	return 0;
}

int rlisten(int socket, int backlog)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->state != RS_IDLE)
		return errno = EINVAL, -1;
	struct sockaddr_in any = { .sin_family = AF_INET };
	if (rdma_create_id(NULL, &rs->id, rs, RDMA_PS_TCP))
		return -1;
	if (rdma_bind_addr(rs->id, (struct sockaddr *)(rs->has_bound ? &rs->bound : &any)) ||
	    rdma_listen(rs->id, backlog)) {
		int err = errno;
		rdma_destroy_id(rs->id);
		rs->id = NULL;
		return errno = err, -1;
	}
	rs->state = RS_LISTENING;
	return 0;
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *ls = lookup(socket);

	if (!ls)
		return -1;
	if (ls->state != RS_LISTENING)
		return errno = EINVAL, -1;
	if (ls->nonblocking) {
		/* Nothing waits: the listener's channel has no event. */
		struct pollfd pfd = { .fd = ls->id->channel->fd, .events = POLLIN };
		if (poll(&pfd, 1, 0) != 1)
			return errno = EAGAIN, -1;
	}
	struct rdma_cm_id *id;
	if (rdma_get_request(ls->id, &id))
		return -1;
	struct rsock *rs = new_rsock();
	if (!rs) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	rs->id = id;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	if (set_up_qp(rs) || rdma_accept(id, &param)) {
		int err = errno;
		free_rsock(rs);
		return errno = err, -1;
	}
	rs->state = RS_CONNECTED;
	if (addr && addrlen)
		rgetpeername(rs->fd, addr, addrlen);
	return rs->fd;
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (!addr || addrlen < sizeof(struct sockaddr_in) || addr->sa_family != AF_INET)
		return errno = EINVAL, -1;
	if (rs->state != RS_IDLE)
		return errno = EISCONN, -1;
	if (rdma_create_id(NULL, &rs->id, rs, RDMA_PS_TCP))
		return -1;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7 };
	if (rdma_resolve_addr(rs->id, rs->has_bound ? (struct sockaddr *)&rs->bound : NULL,
			      (struct sockaddr *)addr, RS_RESOLVE_MS) ||
	    rdma_resolve_route(rs->id, RS_RESOLVE_MS) || set_up_qp(rs) ||
	    rdma_connect(rs->id, &param)) {
		int err = errno;
		if (rs->id->qp)
			rdma_destroy_qp(rs->id);
		if (rs->mr)
			ibv_dereg_mr(rs->mr);
		rs->mr = NULL;
		rdma_destroy_ep(rs->id);
		rs->id = NULL;
		return errno = err == ETIMEDOUT || err == ECONNREFUSED ? err : ECONNREFUSED, -1;
	}
	rs->state = RS_CONNECTED;
	return 0;
}

/* Like TCP's close, what was sent arrives first: the QP goes when its
 * sends have completed (or the connection failed, or RS_LINGER_MS passed). */
static void drain_sends(struct rsock *rs)
{
	uint64_t deadline = now_ms() + RS_LINGER_MS;

	for (;;) {
		reap_sends(rs);
		bool busy = false;
		for (unsigned i = 0; i < RS_BUFS; i++)
			busy |= rs->send_busy[i];
		if (!busy || rs->eof || now_ms() >= deadline)
			return;
		pause_briefly();
	}
}

int rshutdown(int socket, int how)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->state != RS_CONNECTED)
		return errno = ENOTCONN, -1;
	/* A TRP connection closes both directions at once. */
	if (how == SHUT_WR || how == SHUT_RDWR) {
		drain_sends(rs);
		rdma_disconnect(rs->id);
	}
	return 0;
}

int rclose(int socket)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->state == RS_CONNECTED) {
		drain_sends(rs);
		rdma_disconnect(rs->id);
	}
	free_rsock(rs);
	return 0;
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->state != RS_CONNECTED)
		return errno = ENOTCONN, -1;
	if (len == 0)
		return 0;
	bool nonblocking = rs->nonblocking || (flags & MSG_DONTWAIT);
	while (!fill_rx(rs)) {
		if (rs->eof)
			return 0;
		reap_sends(rs);
		return_credits(rs);
		if (nonblocking)
			return errno = EAGAIN, -1;
		pause_briefly();
	}
	size_t n = len < rs->rx_left ? len : rs->rx_left;
	memcpy(buf, rx_buf(rs, (unsigned)rs->rx_buf) + rs->rx_off, n);
	if (!(flags & MSG_PEEK)) {
		rs->rx_off += (uint32_t)n;
		rs->rx_left -= (uint32_t)n;
		if (rs->rx_left == 0) {
			post_recv(rs, (unsigned)rs->rx_buf);
			rs->rx_buf = -1;
			rs->to_return++;
			return_credits(rs);
		}
	}
	return (ssize_t)n;
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->state != RS_CONNECTED)
		return errno = ENOTCONN, -1;
	bool nonblocking = rs->nonblocking || (flags & MSG_DONTWAIT);
	size_t sent = 0;
	while (sent < len) {
		if (rs->eof)
			return sent ? (ssize_t)sent : (errno = EPIPE, -1);
		if (!can_send(rs)) {
			if (nonblocking)
				return sent ? (ssize_t)sent : (errno = EAGAIN, -1);
			pause_briefly();
			continue;
		}
		size_t n = len - sent < RS_PAYLOAD ? len - sent : RS_PAYLOAD;
		int rc = send_msg(rs, (const char *)buf + sent, n);
		if (rc)
			return sent ? (ssize_t)sent : (errno = rc, -1);
		sent += n;
	}
	return (ssize_t)sent;
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen)
{
	ssize_t n = rrecv(socket, buf, len, flags);

	if (n >= 0 && src_addr && addrlen)
		rgetpeername(socket, src_addr, addrlen);
	return n;
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	/* A connected stream ignores the address, as TCP does. */
	(void)dest_addr;
	(void)addrlen;
	return rsend(socket, buf, len, flags);
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	ssize_t total = 0;

	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = rrecv(socket, iov[i].iov_base, iov[i].iov_len, total ? MSG_DONTWAIT : 0);
		if (n < 0)
			return total ? total : n;
		total += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return total;
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	ssize_t total = 0;

	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = rsend(socket, iov[i].iov_base, iov[i].iov_len, 0);
		if (n < 0)
			return total ? total : n;
		total += n;
	}
	return total;
}

ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)flags;
	return rreadv(socket, msg->msg_iov, (int)msg->msg_iovlen);
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)flags;
	return rwritev(socket, msg->msg_iov, (int)msg->msg_iovlen);
}

ssize_t rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

/* ---- readiness ------------------------------------------------------- */

static short rs_revents(struct rsock *rs, short events)
{
	short revents = 0;

	if (rs->state == RS_LISTENING) {
		struct pollfd pfd = { .fd = rs->id->channel->fd, .events = POLLIN };
		if ((events & POLLIN) && poll(&pfd, 1, 0) == 1)
			revents |= POLLIN;
		return revents;
	}
	if (rs->state != RS_CONNECTED)
		return POLLHUP;
	if ((events & POLLIN) && (fill_rx(rs) || rs->eof))
		revents |= POLLIN;
	else if (events & POLLIN)
		return_credits(rs);
	if ((events & POLLOUT) && can_send(rs))
		revents |= POLLOUT;
	if (rs->eof)
		revents |= POLLHUP;
	return revents;
}

static int poll_once(struct pollfd *fds, nfds_t nfds)
{
	int ready = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rsock *rs = fds[i].fd >= 0 && fds[i].fd < RS_MAX_FD ? table[fds[i].fd] : NULL;
		if (rs) {
			fds[i].revents = rs_revents(rs, fds[i].events);
		} else {
			struct pollfd one = fds[i];
			fds[i].revents = poll(&one, 1, 0) == 1 ? one.revents : 0;
		}
		ready += fds[i].revents != 0;
	}
	return ready;
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	uint64_t deadline = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;

	for (;;) {
		int ready = poll_once(fds, nfds);
		if (ready || now_ms() >= deadline)
			return ready;
		pause_briefly();
	}
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	struct pollfd fds[FD_SETSIZE];
	nfds_t n = 0;

	if (nfds < 0 || nfds > FD_SETSIZE)
		return errno = EINVAL, -1;
	for (int fd = 0; fd < nfds; fd++) {
		short events = (readfds && FD_ISSET(fd, readfds) ? POLLIN : 0) |
			       (writefds && FD_ISSET(fd, writefds) ? POLLOUT : 0) |
			       (exceptfds && FD_ISSET(fd, exceptfds) ? POLLPRI : 0);
		if (events)
			fds[n++] = (struct pollfd){ .fd = fd, .events = events };
	}
	int ms = timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000) : -1;
	int ready = rpoll(fds, n, ms);
	if (ready < 0)
		return ready;
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	int count = 0;
	for (nfds_t i = 0; i < n; i++) {
		if (readfds && (fds[i].revents & (POLLIN | POLLHUP))) {
			FD_SET(fds[i].fd, readfds);
			count++;
		}
		if (writefds && (fds[i].revents & POLLOUT)) {
			FD_SET(fds[i].fd, writefds);
			count++;
		}
		if (exceptfds && (fds[i].revents & POLLPRI)) {
			FD_SET(fds[i].fd, exceptfds);
			count++;
		}
	}
	return count;
}

/* ---- names and options ------------------------------------------------ */

static int copy_addr(const struct sockaddr_in *sin, struct sockaddr *addr, socklen_t *addrlen)
{
	if (!addr || !addrlen)
		return errno = EFAULT, -1;
	socklen_t n = *addrlen < sizeof(*sin) ? *addrlen : sizeof(*sin);
	memcpy(addr, sin, n);
	*addrlen = sizeof(*sin);
	return 0;
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->state != RS_CONNECTED)
		return errno = ENOTCONN, -1;
	return copy_addr(&rs->id->route.addr.dst_sin, addr, addrlen);
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (rs->id)
		return copy_addr(&rs->id->route.addr.src_sin, addr, addrlen);
	struct sockaddr_in none = { .sin_family = AF_INET };
	return copy_addr(rs->has_bound ? &rs->bound : &none, addr, addrlen);
}

/* The usual socket options are accepted and have no effect: buffer sizes
 * (the rings are fixed), TCP_NODELAY (every send goes at once), keepalive
 * and linger (TRP keeps the connection alive and closes it in order).
 * rsockets' own SOL_RDMA options tune rdma-core's implementation, not ours. */
int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (!optval && optlen)
		return errno = EFAULT, -1;
	if (level == SOL_SOCKET || level == IPPROTO_TCP)
		return 0;
	(void)optname;
	return errno = ENOPROTOOPT, -1;
}

int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rsock *rs = lookup(socket);

	if (!rs)
		return -1;
	if (!optval || !optlen || *optlen < sizeof(int))
		return errno = EINVAL, -1;
	int value = 0;
	if (level == SOL_SOCKET && optname == SO_ERROR)
		value = 0;
	else if (level == SOL_SOCKET && (optname == SO_RCVBUF || optname == SO_SNDBUF))
		value = RS_BUFS * RS_PAYLOAD;
	else if (level != SOL_SOCKET && level != IPPROTO_TCP)
		return errno = ENOPROTOOPT, -1;
	memcpy(optval, &value, sizeof(value));
	*optlen = sizeof(value);
	return 0;
}

int rfcntl(int socket, int cmd, ...)
{
	struct rsock *rs = lookup(socket);
	va_list ap;

	if (!rs)
		return -1;
	switch (cmd) {
	case F_GETFL:
		return O_RDWR | (rs->nonblocking ? O_NONBLOCK : 0);
	case F_SETFL:
		va_start(ap, cmd);
		rs->nonblocking = va_arg(ap, int) & O_NONBLOCK;
		va_end(ap);
		return 0;
	default:
		return errno = ENOSYS, -1;
	}
}

/* ---- RDMA I/O mapping: not implemented ---------------------------------- */

off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket;
	(void)buf;
	(void)len;
	(void)prot;
	(void)flags;
	(void)offset;
	return errno = ENOSYS, -1;
}

int riounmap(int socket, void *buf, size_t len)
{
	(void)socket;
	(void)buf;
	(void)len;
	return errno = ENOSYS, -1;
}

size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket;
	(void)buf;
	(void)count;
	(void)offset;
	(void)flags;
	errno = ENOSYS;
	return 0;
}
