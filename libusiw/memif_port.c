/* usiw's own memif port (memif_port.h).
 *
 * Why not DPDK's net_memif, which speaks the same protocol: its receive
 * copies every frame out of the shared ring into an mbuf, and the engine
 * then copies the payload again into the memory region it belongs to.  At
 * 64 KiB over memif the receiver is the bound, and perf split its time
 * into memif's copy (37%), ours (36%) and everything else (docs/bench.md).
 * Here a received frame is an mbuf attached to the ring's buffer itself
 * (an external buffer), so the receiver copies each byte once, into its
 * place; the sender copies each byte once too, into the ring.  Besides,
 * net_memif handles its peer's departure in EAL's interrupt thread by
 * unmapping the rings under the application's bursts (memif_link.c), where
 * here the mapping lives until the last frame that points into it is
 * freed.
 *
 * Threads: the control channel (accept or connect, the handshake, the
 * peer's departure) runs in a thread of the port's own that sleeps in
 * poll(2); the rings are used only by the caller of rx and tx (the engine,
 * under its lock).  A connection passes from the control thread to the
 * bursts through `pending`; its end, through `gone`.  Each connection holds
 * two references, the control thread's and the bursts', and is unmapped
 * when both are dropped, the bursts' once no received frame points into it.
 *
 * Slots go back to the peer in ring order: each freed frame marks its slots
 * done, and the release cursor moves over the done ones; the next rx burst
 * tells the peer (one store per burst, as net_memif makes). */
#define _GNU_SOURCE
#include "memif_port.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>

#include "memif_wire.h"
#include "ring_copy.h"

RTE_LOG_REGISTER(usiw_memif_logtype, usiw.memif, NOTICE);
#define MEMIF_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, usiw_memif_logtype, "usiw: memif: " fmt "\n", ##__VA_ARGS__)

#define REGIONS_MAX 8u
#define LOG2_RING_MIN 4u
#define LOG2_RING_MAX 14u
#define DEFAULT_BSIZE 9216u
#define DEFAULT_LOG2_RING 10u
#define RING_HDR_BYTES offsetof(struct memif_wire_ring, desc)
/* Received frames hold at most a ring's slots; the rest covers the
 * per-thread caches of the pool. */
#define RX_POOL_MBUFS ((1u << LOG2_RING_MAX) + 2048u)
#define RX_POOL_CACHE 64u
/* A handshake message that takes longer than this ends the attempt. */
#define HANDSHAKE_TIMEOUT_MS 3000
/* A client with no server tries again this often. */
#define CONNECT_RETRY_MS 20
#define OUR_NAME "usiw"

struct region {
	uint8_t *addr;
	uint64_t size;
	int fd;
};

struct rx_slot {
	struct rte_mbuf_ext_shared_info shinfo;
	struct memif_conn *conn;
	bool done;                    /* freed, waiting for the release cursor */
};

struct ring_at {                      /* where the peer says a ring is */
	bool set;
	uint16_t region;
	uint32_t offset;
	uint8_t log2;
};

struct memif_conn {
	atomic_uint refs;
	atomic_bool gone;             /* the control channel closed */
	bool server;
	unsigned n_regions;
	struct region regions[REGIONS_MAX];
	struct memif_wire_ring *rx_ring, *tx_ring;
	uint16_t rx_mask, tx_mask;
	int rx_intr_fd, tx_intr_fd;   /* eventfds: the peer's to signal us, ours to signal it */
	/* A client's own buffers (region 0): descriptors' offsets are not
	 * trusted from the shared ring. */
	uint32_t bsize;
	uint32_t rx_bufs_off, tx_bufs_off;
	/* the bursts' side */
	uint16_t rx_next;             /* next slot to receive */
	uint16_t rx_release;          /* first slot not yet given back */
	uint16_t rx_published;        /* rx_release as the peer was last told */
	uint16_t tx_pos;              /* next slot to fill */
	unsigned outstanding;         /* received mbufs not yet freed */
	bool retired;
	struct rx_slot *slots;
};

struct usiw_memif_port {
	struct usiw_memif_port_args args;
	uint16_t max_frame;
	uint64_t *link_downs;
	struct rte_mempool *rx_pool;
	struct memif_conn *cur;       /* the bursts' connection */
	_Atomic(struct memif_conn *) pending;
	int listen_fd;
	int stop_fd;
	pthread_t thread;
	bool thread_started;
	atomic_bool connected;        /* the control thread's view */
	struct ring_copy_chooser copy;  /* the bursts': how bulk bytes go into the ring */
};

/* ---- connections ---- */

static void conn_destroy(struct memif_conn *c)
{
	for (unsigned i = 0; i < c->n_regions; i++) {
		if (c->regions[i].addr)
			munmap(c->regions[i].addr, c->regions[i].size);
		if (c->regions[i].fd >= 0)
			close(c->regions[i].fd);
	}
	if (c->rx_intr_fd >= 0)
		close(c->rx_intr_fd);
	if (c->tx_intr_fd >= 0)
		close(c->tx_intr_fd);
	free(c->slots);
	free(c);
}

static void conn_put(struct memif_conn *c)
{
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
		conn_destroy(c);
}

static struct memif_conn *conn_new(bool server)
{
	struct memif_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	atomic_init(&c->refs, 2);
	atomic_init(&c->gone, false);
	c->server = server;
	c->rx_intr_fd = -1;
	c->tx_intr_fd = -1;
	return c;
}

static void release_done_slots(struct memif_conn *c)
{
	while (c->rx_release != c->rx_next) {
		const uint16_t s = c->rx_release & c->rx_mask;
		if (!c->slots[s].done)
			break;
		c->slots[s].done = false;
		if (!c->server) {
			/* an empty buffer for the server again: ours, whole */
			struct memif_wire_desc *d = &c->rx_ring->desc[s];
			d->flags = 0;
			d->region = 0;
			d->offset = c->rx_bufs_off + (uint32_t)s * c->bsize;
			d->length = c->bsize;
		}
		c->rx_release++;
	}
}

static void rx_slot_freed(void *addr, void *opaque)
{
	struct rx_slot *rs = opaque;
	struct memif_conn *c = rs->conn;

	RTE_SET_USED(addr);
	rs->done = true;
	release_done_slots(c);
	if (--c->outstanding == 0 && c->retired)
		conn_put(c);
}

static int conn_slots(struct memif_conn *c)
{
	const unsigned n = c->rx_mask + 1u;
	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->slots)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		c->slots[i].conn = c;
		c->slots[i].shinfo.free_cb = rx_slot_freed;
		c->slots[i].shinfo.fcb_opaque = &c->slots[i];
	}
	return 0;
}

/* The bursts stop using c; it is unmapped once its frames are freed. */
static void conn_retire(struct memif_conn *c)
{
	c->retired = true;
	if (c->outstanding == 0)
		conn_put(c);
}

/* Page tables for the whole region now, off the data path: otherwise the
 * first pass through the ring takes a fault per buffer on each side
 * (memif_prefault.c; a raw system call for the reason given there). */
static void prefault(const struct region *r)
{
	if (syscall(SYS_madvise, r->addr, r->size, MADV_POPULATE_WRITE) != 0)
		MEMIF_LOG(DEBUG, "region not prefaulted: %s", strerror(errno));
}

/* ---- the control channel ---- */

static int send_msg(int fd, const struct memif_wire_msg *msg, int pass_fd)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (pass_fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*msg) ? 0 : -errno;
}

static void send_disconnect(int fd, const char *reason)
{
	struct memif_wire_msg msg = { .type = MEMIF_MSG_DISCONNECT };
	snprintf((char *)msg.disconnect.reason, sizeof(msg.disconnect.reason), "%s", reason);
	send_msg(fd, &msg, -1);
}

/* Waits up to timeout_ms (-1: for ever) for fd or the port's stop.
 * Returns 1 when fd is ready, 0 on timeout, -ECANCELED on stop. */
static int wait_fd(const struct usiw_memif_port *p, int fd, int timeout_ms)
{
	struct pollfd fds[2] = { { .fd = p->stop_fd, .events = POLLIN },
				 { .fd = fd, .events = POLLIN } };
	int n;
	while ((n = poll(fds, fd >= 0 ? 2 : 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (fds[0].revents)
		return -ECANCELED;
	return n > 0 ? 1 : 0;
}

/* The next message, with the descriptor passed beside it (or -1) in
 * *passed.  Returns 0, -ECANCELED (stop), -ETIMEDOUT, -ECONNRESET (the
 * peer closed) or -EPROTO. */
static int recv_msg(const struct usiw_memif_port *p, int fd, struct memif_wire_msg *msg,
		    int *passed, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };

	*passed = -1;
	int rc = wait_fd(p, fd, timeout_ms);
	if (rc <= 0)
		return rc == 0 ? -ETIMEDOUT : rc;
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n <= 0)
		return n == 0 ? -ECONNRESET : -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		const size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int f;
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*passed < 0)
				*passed = f;
			else
				close(f);
		}
	}
	if (n != (ssize_t)sizeof(*msg) || (mh.msg_flags & MSG_TRUNC)) {
		if (*passed >= 0)
			close(*passed);
		*passed = -1;
		return -EPROTO;
	}
	if (msg->type == MEMIF_MSG_DISCONNECT)
		MEMIF_LOG(NOTICE, "the peer disconnected: %.96s", msg->disconnect.reason);
	return 0;
}

/* Receives a message of type want; anything else ends the handshake. */
static int expect_msg(const struct usiw_memif_port *p, int fd, struct memif_wire_msg *msg,
		      uint16_t want)
{
	int passed;
	int rc = recv_msg(p, fd, msg, &passed, HANDSHAKE_TIMEOUT_MS);
	if (passed >= 0)
		close(passed);
	if (rc)
		return rc;
	return msg->type == want ? 0 : -EPROTO;
}

static int send_and_ack(const struct usiw_memif_port *p, int fd, const struct memif_wire_msg *msg,
			int pass_fd)
{
	struct memif_wire_msg ack;
	int rc = send_msg(fd, msg, pass_fd);
	return rc ? rc : expect_msg(p, fd, &ack, MEMIF_MSG_ACK);
}

static void publish(struct usiw_memif_port *p, struct memif_conn *c)
{
	struct memif_conn *old = atomic_exchange_explicit(&p->pending, c, memory_order_acq_rel);
	/* Never taken up by a burst: its bursts' reference is ours to drop. */
	if (old)
		conn_put(old);
	atomic_store(&p->connected, true);
}

/* Sleeps until the peer closes the channel or the port stops; then marks
 * the connection gone and drops the control thread's reference.  A server
 * turns away clients that come meanwhile. */
static int watch(struct usiw_memif_port *p, struct memif_conn *c, int fd)
{
	struct pollfd fds[3] = { { .fd = p->stop_fd, .events = POLLIN },
				 { .fd = fd, .events = POLLIN },
				 { .fd = p->listen_fd, .events = POLLIN } };
	int rc = 0;

	for (;;) {
		if (poll(fds, p->args.server ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (fds[0].revents) {
			rc = -ECANCELED;
			break;
		}
		if (fds[1].revents) {
			struct memif_wire_msg msg;
			int passed;
			int r = recv_msg(p, fd, &msg, &passed, 0);
			if (passed >= 0)
				close(passed);
			if (r == -ETIMEDOUT)
				continue;
			if (r == 0)
				send_disconnect(fd, "unexpected message while connected");
			MEMIF_LOG(INFO, "the peer left");
			break;
		}
		if (fds[2].revents) {
			int other = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (other >= 0) {
				send_disconnect(other, "already connected");
				close(other);
			}
		}
	}
	atomic_store(&p->connected, false);
	atomic_store_explicit(&c->gone, true, memory_order_release);
	conn_put(c);
	close(fd);
	return rc;
}

/* ---- the client ---- */

static int client_region(struct memif_conn *c, unsigned log2, uint32_t bsize)
{
	const unsigned n = 1u << log2;
	const uint64_t ring_bytes = RING_HDR_BYTES + (uint64_t)n * sizeof(struct memif_wire_desc);
	const uint64_t bufs_off = 2 * ring_bytes;
	struct region *r = &c->regions[0];

	c->n_regions = 1;
	r->size = bufs_off + 2ull * n * bsize;
	r->fd = memfd_create("usiw_memif_region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0)
		return -errno;
	if (fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0 || ftruncate(r->fd, (off_t)r->size) != 0)
		return -errno;
	void *a = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (a == MAP_FAILED)
		return -errno;
	r->addr = a;
	prefault(r);

	c->bsize = bsize;
	c->tx_ring = (struct memif_wire_ring *)r->addr;                 /* C2S, ring 0 */
	c->rx_ring = (struct memif_wire_ring *)(r->addr + ring_bytes);  /* S2C, ring 0 */
	c->tx_bufs_off = (uint32_t)bufs_off;
	c->rx_bufs_off = (uint32_t)(bufs_off + (uint64_t)n * bsize);
	c->tx_mask = c->rx_mask = (uint16_t)(n - 1);
	struct memif_wire_ring *rings[2] = { c->tx_ring, c->rx_ring };
	const uint32_t offs[2] = { c->tx_bufs_off, c->rx_bufs_off };
	for (unsigned k = 0; k < 2; k++) {
		rings[k]->cookie = MEMIF_WIRE_COOKIE;
		for (unsigned i = 0; i < n; i++) {
			rings[k]->desc[i].region = 0;
			rings[k]->desc[i].offset = offs[k] + i * bsize;
			rings[k]->desc[i].length = bsize;
		}
	}
	c->tx_intr_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->rx_intr_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->tx_intr_fd < 0 || c->rx_intr_fd < 0)
		return -errno;
	return conn_slots(c);
}

static int client_handshake(struct usiw_memif_port *p, int fd, struct memif_conn **out)
{
	struct memif_wire_msg msg;
	int rc = expect_msg(p, fd, &msg, MEMIF_MSG_HELLO);
	if (rc)
		return rc;
	const struct memif_wire_hello h = msg.hello;
	if (h.min_version > MEMIF_WIRE_VERSION || h.max_version < MEMIF_WIRE_VERSION) {
		send_disconnect(fd, "incompatible memif version");
		MEMIF_LOG(ERR, "the server speaks memif %#x..%#x, not 2.0", h.min_version,
			  h.max_version);
		return -EPROTO;
	}
	const unsigned log2 = RTE_MIN((unsigned)p->args.log2_ring, (unsigned)h.max_log2_ring_size);
	if (log2 < LOG2_RING_MIN) {
		send_disconnect(fd, "rings too small");
		return -EPROTO;
	}
	struct memif_conn *c = conn_new(false);
	if (!c)
		return -ENOMEM;
	rc = client_region(c, log2, p->args.bsize);
	if (rc)
		goto fail;

	memset(&msg, 0, sizeof(msg));
	msg.type = MEMIF_MSG_INIT;
	msg.init.version = MEMIF_WIRE_VERSION;
	msg.init.id = 0;
	msg.init.mode = MEMIF_WIRE_MODE_ETHERNET;
	snprintf((char *)msg.init.name, sizeof(msg.init.name), "%s", OUR_NAME);
	rc = send_and_ack(p, fd, &msg, -1);
	if (rc)
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.type = MEMIF_MSG_ADD_REGION;
	msg.add_region.index = 0;
	msg.add_region.size = c->regions[0].size;
	rc = send_and_ack(p, fd, &msg, c->regions[0].fd);
	if (rc)
		goto fail;
	for (unsigned k = 0; k < 2; k++) {
		const bool c2s = k == 0;
		memset(&msg, 0, sizeof(msg));
		msg.type = MEMIF_MSG_ADD_RING;
		msg.add_ring.flags = c2s ? MEMIF_WIRE_RING_C2S : 0;
		msg.add_ring.index = 0;
		msg.add_ring.region = 0;
		msg.add_ring.offset = (uint32_t)((uint8_t *)(c2s ? c->tx_ring : c->rx_ring) -
						 c->regions[0].addr);
		msg.add_ring.log2_ring_size = (uint8_t)log2;
		rc = send_and_ack(p, fd, &msg, c2s ? c->tx_intr_fd : c->rx_intr_fd);
		if (rc)
			goto fail;
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = MEMIF_MSG_CONNECT;
	snprintf((char *)msg.connect.if_name, sizeof(msg.connect.if_name), "%s", OUR_NAME);
	rc = send_msg(fd, &msg, -1);
	if (rc == 0)
		rc = expect_msg(p, fd, &msg, MEMIF_MSG_CONNECTED);
	if (rc)
		goto fail;

	/* The server reset both rings when it took the connection; now we poll
	 * and hand it every buffer of ours. */
	c->rx_ring->flags = MEMIF_WIRE_RING_NO_INTERRUPT;
	__atomic_store_n(&c->rx_ring->head, (uint16_t)(c->rx_mask + 1u), __ATOMIC_RELEASE);
	*out = c;
	return 0;
fail:
	c->refs = 1;
	conn_put(c);
	return rc;
}

static void *client_thread(void *arg)
{
	struct usiw_memif_port *p = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->args.socket);

	for (;;) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int rc = fd < 0 ? -errno : 0;
		if (rc == 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			rc = -errno;
		struct memif_conn *c = NULL;
		if (rc == 0)
			rc = client_handshake(p, fd, &c);
		if (rc == 0) {
			MEMIF_LOG(INFO, "connected to %s", p->args.socket);
			publish(p, c);
			if (watch(p, c, fd) == -ECANCELED)
				return NULL;
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (rc == -ECANCELED || wait_fd(p, -1, CONNECT_RETRY_MS) == -ECANCELED)
			return NULL;
	}
}

/* ---- the server ---- */

static int server_ring(struct memif_conn *c, const struct ring_at *at, bool rx)
{
	if (!at->set || at->region >= c->n_regions || at->log2 < LOG2_RING_MIN ||
	    at->log2 > LOG2_RING_MAX)
		return -EPROTO;
	const struct region *r = &c->regions[at->region];
	const uint64_t bytes = RING_HDR_BYTES + ((uint64_t)1 << at->log2) *
			       sizeof(struct memif_wire_desc);
	if ((uint64_t)at->offset + bytes > r->size || at->offset % 64)
		return -EPROTO;
	struct memif_wire_ring *ring = (struct memif_wire_ring *)(r->addr + at->offset);
	if (ring->cookie != MEMIF_WIRE_COOKIE)
		return -EPROTO;
	__atomic_store_n(&ring->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ring->tail, 0, __ATOMIC_RELAXED);
	const uint16_t mask = (uint16_t)((1u << at->log2) - 1);
	if (rx) {
		c->rx_ring = ring;
		c->rx_mask = mask;
		ring->flags = MEMIF_WIRE_RING_NO_INTERRUPT;
	} else {
		c->tx_ring = ring;
		c->tx_mask = mask;
	}
	return 0;
}

static int server_map(struct memif_conn *c)
{
	for (unsigned i = 0; i < c->n_regions; i++) {
		struct region *r = &c->regions[i];
		void *a = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (a == MAP_FAILED)
			return -errno;
		r->addr = a;
		prefault(r);
	}
	return 0;
}

static int server_handshake(struct usiw_memif_port *p, int fd, struct memif_conn **out)
{
	struct memif_wire_msg msg = { .type = MEMIF_MSG_HELLO };
	struct ring_at c2s = { 0 }, s2c = { 0 };
	const char *why = "unexpected message";
	int passed = -1;

	snprintf((char *)msg.hello.name, sizeof(msg.hello.name), "%s", OUR_NAME);
	msg.hello.min_version = MEMIF_WIRE_VERSION;
	msg.hello.max_version = MEMIF_WIRE_VERSION;
	msg.hello.max_region = REGIONS_MAX - 1;
	msg.hello.max_c2s_ring = 0;
	msg.hello.max_s2c_ring = 0;
	msg.hello.max_log2_ring_size = LOG2_RING_MAX;
	int rc = send_msg(fd, &msg, -1);
	if (rc == 0)
		rc = expect_msg(p, fd, &msg, MEMIF_MSG_INIT);
	if (rc)
		return rc;
	if (msg.init.version != MEMIF_WIRE_VERSION || msg.init.mode != MEMIF_WIRE_MODE_ETHERNET ||
	    msg.init.id != 0) {
		send_disconnect(fd, msg.init.version != MEMIF_WIRE_VERSION ?
				"incompatible memif version" : msg.init.id != 0 ?
				"ID not found" : "only ethernet mode is supported");
		return -EPROTO;
	}
	struct memif_conn *c = conn_new(true);
	if (!c)
		return -ENOMEM;
	const struct memif_wire_msg ack = { .type = MEMIF_MSG_ACK };
	rc = send_msg(fd, &ack, -1);
	while (rc == 0) {
		rc = recv_msg(p, fd, &msg, &passed, HANDSHAKE_TIMEOUT_MS);
		if (rc)
			break;
		if (msg.type == MEMIF_MSG_ADD_REGION) {
			why = "invalid region";
			if (passed < 0 || msg.add_region.index != c->n_regions ||
			    c->n_regions == REGIONS_MAX || msg.add_region.size == 0)
				goto refuse;
			c->regions[c->n_regions].fd = passed;
			c->regions[c->n_regions].size = msg.add_region.size;
			c->n_regions++;
			passed = -1;
		} else if (msg.type == MEMIF_MSG_ADD_RING) {
			const struct memif_wire_add_ring *ar = &msg.add_ring;
			struct ring_at *at = (ar->flags & MEMIF_WIRE_RING_C2S) ? &c2s : &s2c;
			why = "invalid ring";
			if (passed < 0 || ar->index != 0 || at->set || ar->private_hdr_size)
				goto refuse;
			*at = (struct ring_at){ .set = true, .region = ar->region,
						.offset = ar->offset, .log2 = ar->log2_ring_size };
			int *intr = (ar->flags & MEMIF_WIRE_RING_C2S) ? &c->rx_intr_fd : &c->tx_intr_fd;
			*intr = passed;
			passed = -1;
		} else if (msg.type == MEMIF_MSG_CONNECT) {
			why = "cannot map the regions";
			if (server_map(c) != 0)
				goto refuse;
			why = "invalid ring";
			if (server_ring(c, &c2s, true) != 0 || server_ring(c, &s2c, false) != 0 ||
			    conn_slots(c) != 0)
				goto refuse;
			memset(&msg, 0, sizeof(msg));
			msg.type = MEMIF_MSG_CONNECTED;
			snprintf((char *)msg.connect.if_name, sizeof(msg.connect.if_name), "%s",
				 OUR_NAME);
			rc = send_msg(fd, &msg, -1);
			if (rc)
				break;
			*out = c;
			return 0;
		} else {
			goto refuse;
		}
		rc = send_msg(fd, &ack, -1);
	}
	if (passed >= 0)
		close(passed);
	c->refs = 1;
	conn_put(c);
	return rc;
refuse:
	MEMIF_LOG(ERR, "refused a client: %s", why);
	send_disconnect(fd, why);
	rc = -EPROTO;
	if (passed >= 0)
		close(passed);
	c->refs = 1;
	conn_put(c);
	return rc;
}

static void *server_thread(void *arg)
{
	struct usiw_memif_port *p = arg;

	for (;;) {
		int rc = wait_fd(p, p->listen_fd, -1);
		if (rc == -ECANCELED)
			return NULL;
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct memif_conn *c = NULL;
		rc = server_handshake(p, fd, &c);
		if (rc == 0) {
			MEMIF_LOG(INFO, "a client connected on %s", p->args.socket);
			publish(p, c);
			if (watch(p, c, fd) == -ECANCELED)
				return NULL;
			continue;
		}
		close(fd);
		if (rc == -ECANCELED)
			return NULL;
	}
}

/* ---- the bursts ---- */

/* The bursts' connection: the one they have, unless its peer left, or a
 * new one the control thread connected. */
static struct memif_conn *take_up(struct usiw_memif_port *p)
{
	struct memif_conn *c = p->cur;

	if (c && atomic_load_explicit(&c->gone, memory_order_acquire)) {
		p->cur = NULL;
		conn_retire(c);
		if (p->link_downs)
			(*p->link_downs)++;
		c = NULL;
	}
	if (!c && atomic_load_explicit(&p->pending, memory_order_relaxed))
		p->cur = c = atomic_exchange_explicit(&p->pending, NULL, memory_order_acq_rel);
	return c;
}

static inline struct memif_conn *conn_of(struct usiw_memif_port *p)
{
	struct memif_conn *c = p->cur;
	if (unlikely(!c || atomic_load_explicit(&c->gone, memory_order_relaxed)))
		c = take_up(p);
	return c;
}

/* The buffer of a received descriptor, or NULL if it lies outside what
 * the peer shared with us. */
static uint8_t *rx_buffer(const struct memif_conn *c, const struct memif_wire_desc *d,
			  uint16_t slot, uint32_t len)
{
	if (len == 0 || len > UINT16_MAX)
		return NULL;
	if (!c->server)
		return len <= c->bsize ?
		       c->regions[0].addr + c->rx_bufs_off + (uint64_t)slot * c->bsize : NULL;
	const uint16_t region = d->region;
	const uint32_t off = d->offset;
	if (region >= c->n_regions || (uint64_t)off + len > c->regions[region].size)
		return NULL;
	return c->regions[region].addr + off;
}

uint16_t usiw_memif_port_rx(struct usiw_memif_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct memif_conn *c = conn_of(p);
	if (!c)
		return 0;
	struct memif_wire_ring *ring = c->rx_ring;

	if (c->rx_release != c->rx_published) {
		c->rx_published = c->rx_release;
		if (c->server)
			__atomic_store_n(&ring->tail, c->rx_release, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&ring->head, (uint16_t)(c->rx_release + c->rx_mask + 1u),
					 __ATOMIC_RELEASE);
	}
	const uint16_t last = c->server ? __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) :
					  __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	const uint16_t held = (uint16_t)(last - c->rx_release);
	if (held > c->rx_mask + 1u || (uint16_t)(last - c->rx_next) > held)
		return 0;   /* the peer moved the ring where it may not: ignore it */
	uint16_t got = 0;
	while (got < n && c->rx_next != last) {
		struct rte_mbuf *head = NULL, *prev = NULL;
		bool bad = false, more;
		do {
			if (c->rx_next == last) {   /* the frame's rest is not there */
				bad = true;
				break;
			}
			const uint16_t s = c->rx_next & c->rx_mask;
			const struct memif_wire_desc *d = &ring->desc[s];
			const uint32_t len = d->length;
			more = d->flags & MEMIF_WIRE_DESC_NEXT;
			c->rx_next++;
			uint8_t *buf = rx_buffer(c, d, s, len);
			struct rte_mbuf *m = buf && !bad ? rte_pktmbuf_alloc(p->rx_pool) : NULL;
			if (!m) {
				bad = true;
				c->slots[s].done = true;
				release_done_slots(c);
				continue;
			}
			struct rx_slot *rs = &c->slots[s];
			rte_mbuf_ext_refcnt_set(&rs->shinfo, 1);
			rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, (uint16_t)len, &rs->shinfo);
			m->data_len = (uint16_t)len;
			m->pkt_len = len;
			c->outstanding++;
			if (!head) {
				head = m;
			} else {
				prev->next = m;
				head->nb_segs++;
				head->pkt_len += len;
			}
			prev = m;
		} while (more);
		if (bad) {
			if (head)
				rte_pktmbuf_free(head);
			continue;
		}
		pkts[got++] = head;
	}
	return got;
}

/* The buffer of a slot to send into and its room, or NULL. */
static uint8_t *tx_buffer(const struct memif_conn *c, uint16_t slot, uint32_t *room)
{
	if (!c->server) {
		*room = c->bsize;
		return c->regions[0].addr + c->tx_bufs_off + (uint64_t)slot * c->bsize;
	}
	const struct memif_wire_desc *d = &c->tx_ring->desc[slot];
	const uint16_t region = d->region;
	const uint32_t off = d->offset, len = d->length;
	if (region >= c->n_regions || (uint64_t)off + len > c->regions[region].size)
		return NULL;
	*room = len;
	return c->regions[region].addr + off;
}

/* A piece of RING_COPY_BULK_MIN bytes or more into the ring, the way the
 * port's chooser says (libusiw/ring_copy.h). */
static void copy_bulk_piece(struct ring_copy_chooser *chooser, uint8_t *dst, const uint8_t *src,
			    uint32_t len)
{
	switch (ring_copy_next_piece(chooser)) {
	case RING_COPY_PIECE_CACHED:
		rte_memcpy(dst, src, len);
		break;
	case RING_COPY_PIECE_STREAMING:
		ring_copy_streaming(dst, src, len);
		break;
	case RING_COPY_PIECE_TIMED: {
		const uint64_t t = rte_rdtsc();
		ring_copy_streaming(dst, src, len);
		ring_copy_sampled(chooser, rte_rdtsc() - t, len);
		break;
	}
	}
}

uint16_t usiw_memif_port_tx(struct usiw_memif_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct memif_conn *c = conn_of(p);
	if (!c)
		return 0;
	struct memif_wire_ring *ring = c->tx_ring;
	uint16_t slot = c->tx_pos;
	uint16_t free_slots = c->server ?
		(uint16_t)(__atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) - slot) :
		(uint16_t)(c->tx_mask + 1u - (uint16_t)(slot -
					__atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE)));
	uint16_t sent = 0;
	uint64_t bulk = 0, bulk_start = 0;

	if (free_slots > c->tx_mask + 1u)
		free_slots = 0;   /* the peer moved the ring where it may not */
	while (sent < n && free_slots) {
		const uint16_t first = slot, first_free = free_slots;
		const uint64_t first_bulk = bulk;
		struct memif_wire_desc *d = &ring->desc[slot & c->tx_mask];
		uint32_t room = 0, used = 0;
		uint8_t *buf = tx_buffer(c, slot & c->tx_mask, &room);
		bool fits = true;
		d->flags = 0;
		for (const struct rte_mbuf *m = pkts[sent]; m && fits; m = m->next) {
			const uint8_t *src = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t left = m->data_len;
			while (left) {
				if (!buf || used == room) {
					/* on to the next slot, if there is one */
					d->length = used;
					if (--free_slots == 0) {
						fits = false;
						break;
					}
					d->flags = MEMIF_WIRE_DESC_NEXT;
					slot++;
					d = &ring->desc[slot & c->tx_mask];
					d->flags = 0;
					buf = tx_buffer(c, slot & c->tx_mask, &room);
					used = 0;
					continue;
				}
				const uint32_t k = RTE_MIN(left, room - used);
				/* Not memcpy: a payload lands in the slot after the
				 * headers, and glibc's copy is slow when the two ends
				 * differ in alignment (the figures are in
				 * libusiw/payload_copy.c, the receiver's copy). */
				if (k < RING_COPY_BULK_MIN) {
					rte_memcpy(buf + used, src, k);
				} else {
					if (!bulk)
						bulk_start = rte_rdtsc();
					copy_bulk_piece(&p->copy, buf + used, src, k);
					bulk += k;
				}
				used += k;
				src += k;
				left -= k;
			}
		}
		if (!fits) {
			slot = first;
			free_slots = first_free;
			bulk = first_bulk;   /* copied again when there is room */
			break;
		}
		d->length = used;
		slot++;
		free_slots--;
		sent++;
	}
	if (slot != c->tx_pos) {
		c->tx_pos = slot;
		if (c->server)
			__atomic_store_n(&ring->tail, slot, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&ring->head, slot, __ATOMIC_RELEASE);
		if (!(ring->flags & MEMIF_WIRE_RING_NO_INTERRUPT)) {
			const uint64_t one = 1;
			if (write(c->tx_intr_fd, &one, sizeof(one)) < 0)
				MEMIF_LOG(DEBUG, "the peer's eventfd: %s", strerror(errno));
		}
	}
	if (bulk) {
		const uint64_t now = rte_rdtsc();
		ring_copy_account(&p->copy, now, bulk, now - bulk_start);
	}
	rte_pktmbuf_free_bulk(pkts, sent);
	return sent;
}

bool usiw_memif_port_connected(const struct usiw_memif_port *p)
{
	return atomic_load(&p->connected);
}

/* ---- open, close, arguments ---- */

bool usiw_memif_port_named(const char *device)
{
	return !strncmp(device, USIW_MEMIF_PORT_PREFIX, strlen(USIW_MEMIF_PORT_PREFIX));
}

static int parse_arg(const char *key, const char *value, void *opaque)
{
	struct usiw_memif_port_args *a = opaque;
	char *end;

	if (!strcmp(key, "role")) {
		if (strcmp(value, "server") && strcmp(value, "client"))
			return -1;
		a->server = !strcmp(value, "server");
	} else if (!strcmp(key, "socket")) {
		if (!*value || strlen(value) >= sizeof(a->socket))
			return -1;
		snprintf(a->socket, sizeof(a->socket), "%s", value);
	} else if (!strcmp(key, "bsize")) {
		unsigned long v = strtoul(value, &end, 10);
		/* Buffers follow each other in the region: a multiple of a
		 * cache line keeps every frame's headers aligned. */
		if (*end || v < 1024 || v > UINT16_MAX || v % RTE_CACHE_LINE_SIZE)
			return -1;
		a->bsize = (uint32_t)v;
	} else if (!strcmp(key, "rsize")) {
		unsigned long v = strtoul(value, &end, 10);
		if (*end || v < LOG2_RING_MIN || v > LOG2_RING_MAX)
			return -1;
		a->log2_ring = (uint8_t)v;
	}
	return 0;
}

int usiw_memif_port_parse(const char *device, struct usiw_memif_port_args *a, char *err,
			  size_t errlen)
{
	static const char *const keys[] = { "role", "socket", "bsize", "rsize", NULL };
	const char *usage = "memif:role=server|client,socket=PATH[,bsize=1024..65472, a multiple of 64]"
			    "[,rsize=4..14 (log2 of the slots per ring)]";

	memset(a, 0, sizeof(*a));
	a->bsize = DEFAULT_BSIZE;
	a->log2_ring = DEFAULT_LOG2_RING;
	int role = -1;
	struct rte_kvargs *kv = rte_kvargs_parse(device + strlen(USIW_MEMIF_PORT_PREFIX), keys);
	if (kv) {
		role = (int)rte_kvargs_count(kv, "role");
		if (rte_kvargs_process(kv, NULL, parse_arg, a) != 0)
			role = -1;
		if (rte_kvargs_count(kv, "socket") != 1)
			role = -1;
		rte_kvargs_free(kv);
	}
	if (role != 1) {
		snprintf(err, errlen, "[port] device = %s: expected %s", device, usage);
		return -EINVAL;
	}
	return 0;
}

static int server_listen(struct usiw_memif_port *p, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->args.socket);

	unlink(p->args.socket);   /* stale: the caller found nobody listening on it */
	p->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(p->listen_fd, 4) != 0) {
		snprintf(err, errlen, "memif socket %s: cannot listen on it (%s)", p->args.socket,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

int usiw_memif_port_open(struct usiw_memif_port **out, const struct usiw_memif_port_args *a,
			 uint16_t max_frame, uint64_t *link_downs, char *err, size_t errlen)
{
	static atomic_uint ports;
	struct usiw_memif_port *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		snprintf(err, errlen, "memif: out of memory");
		return -ENOMEM;
	}
	p->args = *a;
	p->max_frame = max_frame;
	p->link_downs = link_downs;
	p->listen_fd = -1;
	p->stop_fd = -1;
	atomic_init(&p->pending, NULL);
	/* 2 ms windows: five times the ~0.4 ms a full ring of 64 KiB frames
	 * takes to drain at 10 GB/s, so that a probe's figure is mostly its
	 * own mode's; a gap over 50 us between bulk bursts is the application
	 * pausing, not the ring being full. */
	ring_copy_chooser_init(&p->copy, rte_get_tsc_hz() / 500, rte_get_tsc_hz() / 20000);
	if (!a->server && a->bsize < max_frame) {
		snprintf(err, errlen, "memif: bsize=%u cannot hold a frame of the MTU (%u bytes)",
			 a->bsize, max_frame);
		rc = -EINVAL;
		goto fail;
	}
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "usiw_memif_rx%u", atomic_fetch_add(&ports, 1));
	p->rx_pool = rte_pktmbuf_pool_create(name, RX_POOL_MBUFS, RX_POOL_CACHE, 0, 0,
					     (int)rte_socket_id());
	if (!p->rx_pool) {
		snprintf(err, errlen, "memif: cannot create a pool of %u mbufs (%s): give EAL "
			 "more memory (-m)", RX_POOL_MBUFS, rte_strerror(rte_errno));
		rc = -ENOMEM;
		goto fail;
	}
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (p->stop_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "memif: eventfd: %s", strerror(errno));
		goto fail;
	}
	if (a->server && (rc = server_listen(p, err, errlen)) != 0)
		goto fail;
	rc = pthread_create(&p->thread, NULL, a->server ? server_thread : client_thread, p);
	if (rc) {
		snprintf(err, errlen, "memif: cannot start the control thread: %s", strerror(rc));
		rc = -rc;
		goto fail;
	}
	pthread_setname_np(p->thread, "usiw-memif");
	p->thread_started = true;
	*out = p;
	return 0;
fail:
	usiw_memif_port_close(p);
	return rc;
}

void usiw_memif_port_close(struct usiw_memif_port *p)
{
	if (!p)
		return;
	if (p->thread_started) {
		const uint64_t one = 1;
		if (write(p->stop_fd, &one, sizeof(one)) < 0)
			MEMIF_LOG(ERR, "cannot stop the control thread: %s", strerror(errno));
		pthread_join(p->thread, NULL);
	}
	/* The control thread is gone, and with it its references. */
	struct memif_conn *c = atomic_exchange(&p->pending, NULL);
	if (c)
		conn_put(c);
	const bool frames_held = p->cur && p->cur->outstanding;
	if (p->cur)
		conn_retire(p->cur);
	if (p->listen_fd >= 0) {
		close(p->listen_fd);
		unlink(p->args.socket);
	}
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	/* Frames still held keep their connection's mapping and the pool. */
	if (!frames_held)
		rte_mempool_free(p->rx_pool);
	free(p);
}
