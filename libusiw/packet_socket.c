/* usiw's own AF_PACKET port (packet_socket.h).
 *
 * Why not DPDK's net_af_packet, which does the same job: DPDK 22.11 joins
 * each of its sockets to a PACKET_FANOUT group (hash, with rollover and
 * defragmentation; no option turns it off, and later releases only let the
 * mode be chosen) and sends through a mapped TX ring.  Over a veth pair the
 * kernel hands a frame to the receiving socket inside the sender's system
 * call, and there the fanout hashes the frame's flow and looks a quarter of
 * the receive ring ahead for room, on a line the receiving CPU wrote last;
 * and the TX ring's frames are pages of the ring, which the veth copies
 * into pages of their own (skb_copy_ubufs).  A 64 B ping-pong over a veth
 * pair between two namespaces, both sides pinned, half round trip median,
 * three runs of each: 1.53-1.84 us with the fanout and the TX ring, 1.38-1.85
 * with the TX ring alone, 1.06-1.10 us with neither, as here.  For usiw over
 * af_packet that crossing is most of a half round trip (docs/bench.md).
 *
 * Frames arrive in a TPACKET_V2 ring mapped from the kernel, so a poll that
 * finds nothing makes no system call; each is copied into an mbuf (the
 * engine frees frames in any order, and the ring's frames go back in order).
 * Frames leave with sendmmsg, a burst per call, each copied by the kernel
 * into a buffer of its own before the call returns. */
#define _GNU_SOURCE
#include "packet_socket.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_log.h>

RTE_LOG_REGISTER(usiw_packet_logtype, usiw.packet, NOTICE);
#define PACKET_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, usiw_packet_logtype, "usiw: " fmt "\n", ##__VA_ARGS__)

/* One sendmmsg call sends at most this many frames, each of at most
 * TX_SEGS_MAX segments in place (the engine's have one or two: headers,
 * then data it references); a frame of more is first gathered into one
 * buffer and sent alone. */
#define TX_BURST_MAX 32u
#define TX_SEGS_MAX 4u
/* Ring blocks of this many frames at least (whole pages). */
#define FRAMES_PER_BLOCK_MIN 8u

struct usiw_packet_socket {
	int fd;
	uint16_t max_frame;
	struct rte_ether_addr mac;
	char ifname[IF_NAMESIZE];
	uint8_t *ring;
	size_t ring_len;
	struct tpacket2_hdr **frame; /* frame_count frames, in ring order */
	unsigned frame_count;
	unsigned next;               /* the frame the kernel fills next */
	struct rte_mempool *pool;
	uint64_t *tx_drops;
	uint8_t *gather;             /* max_frame bytes: a frame of many segments */
	bool warned_rx_long, warned_tx_error;
};

const char *usiw_packet_socket_iface(const char *device)
{
	const size_t n = strlen(USIW_PACKET_SOCKET_PREFIX);
	return strncmp(device, USIW_PACKET_SOCKET_PREFIX, n) == 0 ? device + n : NULL;
}

static int interface_request(const struct usiw_packet_socket *s, unsigned long request,
			     struct ifreq *ifr)
{
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", s->ifname);
	return ioctl(s->fd, request, ifr) == 0 ? 0 : -errno;
}

/* The receive ring: frames that hold max_frame bytes after the header the
 * kernel writes before each (struct tpacket2_hdr, then the link header
 * aligned as the kernel aligns it), in blocks of whole pages. */
static int map_ring(struct usiw_packet_socket *s, unsigned frames, char *err, size_t errlen)
{
	const unsigned page = (unsigned)sysconf(_SC_PAGESIZE);
	const unsigned frame_size = TPACKET_ALIGN(TPACKET2_HDRLEN + 16 + s->max_frame);
	const unsigned block_size = RTE_ALIGN_CEIL(frame_size * FRAMES_PER_BLOCK_MIN, page);
	const unsigned per_block = block_size / frame_size;
	const unsigned blocks = (frames + per_block - 1) / per_block;
	struct tpacket_req req = {
		.tp_block_size = block_size,
		.tp_block_nr = blocks,
		.tp_frame_size = frame_size,
		.tp_frame_nr = blocks * per_block,
	};
	int version = TPACKET_V2;

	if (setsockopt(s->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) != 0 ||
	    setsockopt(s->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) != 0) {
		const int e = errno;
		snprintf(err, errlen, "%s: cannot set up a receive ring of %u frames of %u bytes "
			 "(%s): lower [port] rx-ring or mtu", s->ifname, req.tp_frame_nr,
			 frame_size, strerror(e));
		return -e;
	}
	s->ring_len = (size_t)block_size * blocks;
	s->ring = mmap(NULL, s->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       s->fd, 0);
	if (s->ring == MAP_FAILED) {
		s->ring = NULL;
		snprintf(err, errlen, "%s: cannot map the receive ring (%zu bytes): %s", s->ifname,
			 s->ring_len, strerror(errno));
		return -ENOMEM;
	}
	s->frame_count = req.tp_frame_nr;
	s->frame = calloc(s->frame_count, sizeof(*s->frame));
	if (!s->frame) {
		snprintf(err, errlen, "%s: out of memory", s->ifname);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < s->frame_count; i++)
		s->frame[i] = (struct tpacket2_hdr *)(s->ring + (size_t)(i / per_block) * block_size +
						      (size_t)(i % per_block) * frame_size);
	return 0;
}

/* The interface's index, MAC (in s) and MTU. */
static int query_interface(struct usiw_packet_socket *s, int *ifindex, unsigned *mtu, char *err,
			   size_t errlen)
{
	struct ifreq ifr;
	int rc = interface_request(s, SIOCGIFINDEX, &ifr);
	if (rc) {
		snprintf(err, errlen, "[port] device: no interface %s in this network namespace (%s)",
			 s->ifname, strerror(-rc));
		return rc;
	}
	*ifindex = ifr.ifr_ifindex;
	if ((rc = interface_request(s, SIOCGIFHWADDR, &ifr)) != 0 ||
	    ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		snprintf(err, errlen, "[port] device = %s%s: %s is not an Ethernet interface",
			 USIW_PACKET_SOCKET_PREFIX, s->ifname, s->ifname);
		return rc ? rc : -EINVAL;
	}
	memcpy(s->mac.addr_bytes, ifr.ifr_hwaddr.sa_data, RTE_ETHER_ADDR_LEN);
	if ((rc = interface_request(s, SIOCGIFMTU, &ifr)) != 0) {
		snprintf(err, errlen, "%s: cannot read its MTU (%s)", s->ifname, strerror(-rc));
		return rc;
	}
	*mtu = (unsigned)ifr.ifr_mtu;
	return 0;
}

/* Bound last, once the ring is there: the socket (opened for no protocol)
 * receives nothing before. */
static int bind_to_interface(struct usiw_packet_socket *s, int ifindex, bool promiscuous,
			     char *err, size_t errlen)
{
	struct sockaddr_ll addr = {
		.sll_family = AF_PACKET,
		.sll_protocol = rte_cpu_to_be_16(ETH_P_ALL),
		.sll_ifindex = ifindex,
	};
	if (bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		const int e = errno;
		snprintf(err, errlen, "%s: cannot bind a packet socket to it (%s)", s->ifname,
			 strerror(e));
		return -e;
	}
	if (promiscuous) {
		struct packet_mreq mreq = { .mr_ifindex = ifindex, .mr_type = PACKET_MR_PROMISC };
		if (setsockopt(s->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
			const int e = errno;
			snprintf(err, errlen, "%s: cannot make it promiscuous (%s)", s->ifname,
				 strerror(e));
			return -e;
		}
	}
	return 0;
}

int usiw_packet_socket_open(struct usiw_packet_socket **out, const char *ifname,
			    uint16_t max_frame, unsigned frames, bool promiscuous,
			    struct rte_mempool *pool, uint64_t *tx_drops, char *err, size_t errlen)
{
	struct usiw_packet_socket *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (strlen(ifname) == 0 || strlen(ifname) >= sizeof(s->ifname)) {
		snprintf(err, errlen, "[port] device = %s%s: an interface name of 1 to %zu bytes "
			 "must follow '%s'", USIW_PACKET_SOCKET_PREFIX, ifname,
			 sizeof(s->ifname) - 1, USIW_PACKET_SOCKET_PREFIX);
		free(s);
		return -EINVAL;
	}
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	s->max_frame = max_frame;
	s->pool = pool;
	s->tx_drops = tx_drops;
	s->gather = malloc(max_frame);
	s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open a packet socket (%s)%s", ifname, strerror(-rc),
			 rc == -EPERM ? ": it takes CAP_NET_RAW" : "");
		free(s->gather);
		free(s);
		return rc;
	}
	/* Frames go straight to the driver, as DPDK's af_packet sends them:
	 * through no queueing discipline.  Only frames that arrive are
	 * received, not the ones this host sends on the interface (kernels
	 * before 4.20 lack the option and pass both: the engine drops frames
	 * not for its MAC). */
	int one = 1;
	setsockopt(s->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	setsockopt(s->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	int ifindex = 0;
	unsigned mtu = 0;
	rc = s->gather ? 0 : -ENOMEM;
	if (rc)
		snprintf(err, errlen, "out of memory");
	if (rc == 0)
		rc = query_interface(s, &ifindex, &mtu, err, errlen);
	if (rc == 0 && (unsigned)max_frame > mtu + RTE_ETHER_HDR_LEN) {
		snprintf(err, errlen, "[port] mtu %u is larger than the MTU of %s (%u): lower it, or "
			 "raise the interface's (ip link set %s mtu %u)",
			 max_frame - RTE_ETHER_HDR_LEN, ifname, mtu, ifname,
			 max_frame - RTE_ETHER_HDR_LEN);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = map_ring(s, frames, err, errlen);
	if (rc == 0)
		rc = bind_to_interface(s, ifindex, promiscuous, err, errlen);
	if (rc) {
		usiw_packet_socket_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void usiw_packet_socket_close(struct usiw_packet_socket *s)
{
	if (!s)
		return;
	if (s->ring)
		munmap(s->ring, s->ring_len);
	close(s->fd);
	free(s->frame);
	free(s->gather);
	free(s);
}

uint16_t usiw_packet_socket_rx(struct usiw_packet_socket *s, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t got = 0;

	while (got < n) {
		struct tpacket2_hdr *h = s->frame[s->next];
		const uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		if (!(status & TP_STATUS_USER))
			break;
		struct rte_mbuf *m = NULL;
		/* A frame longer than ours (the kernel cut it to the ring's
		 * frame) comes from a peer with a larger MTU, and no part of it
		 * is of use.  A frame that had a VLAN tag (the kernel took it
		 * off into the header) is for a VLAN interface, not for us. */
		const bool tagged = status & TP_STATUS_VLAN_VALID;
		const bool whole = h->tp_len <= s->max_frame && h->tp_snaplen == h->tp_len;
		if (!tagged && whole) {
			m = rte_pktmbuf_alloc(s->pool);
			if (!m)
				break;   /* the frame waits in the ring for an mbuf */
			memcpy(rte_pktmbuf_mtod(m, void *), (const uint8_t *)h + h->tp_mac, h->tp_len);
			m->data_len = (uint16_t)h->tp_len;
			m->pkt_len = h->tp_len;
		} else if (!tagged && !s->warned_rx_long) {
			s->warned_rx_long = true;
			PACKET_LOG(WARNING, "%s: dropped a frame of %u bytes, longer than [port] mtu "
				   "allows (%u): give both ends the same mtu", s->ifname, h->tp_len,
				   s->max_frame);
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		if (++s->next == s->frame_count)
			s->next = 0;
		if (m)
			pkts[got++] = m;
	}
	return got;
}

/* Points iov at m's segments; a frame of more than TX_SEGS_MAX is gathered
 * into s->gather first.  Returns the number of iovecs. */
static unsigned frame_iov(struct usiw_packet_socket *s, struct rte_mbuf *m, struct iovec *iov)
{
	if (m->nb_segs > TX_SEGS_MAX) {
		iov[0].iov_base = (void *)(uintptr_t)rte_pktmbuf_read(m, 0, m->pkt_len, s->gather);
		iov[0].iov_len = m->pkt_len;
		return 1;
	}
	unsigned k = 0;
	for (; m; m = m->next, k++) {
		iov[k].iov_base = rte_pktmbuf_mtod(m, void *);
		iov[k].iov_len = m->data_len;
	}
	return k;
}

uint16_t usiw_packet_socket_tx(struct usiw_packet_socket *s, struct rte_mbuf **pkts, uint16_t n)
{
	struct mmsghdr msgs[TX_BURST_MAX];
	struct iovec iov[TX_BURST_MAX][TX_SEGS_MAX];
	uint16_t done = 0;

	while (done < n) {
		unsigned k = 0;
		memset(msgs, 0, sizeof(msgs[0]) * RTE_MIN((unsigned)(n - done), TX_BURST_MAX));
		while (k < TX_BURST_MAX && done + k < n) {
			struct rte_mbuf *m = pkts[done + k];
			/* The gather buffer holds one frame: such a frame goes
			 * alone. */
			if (m->nb_segs > TX_SEGS_MAX && k > 0)
				break;
			if (m->pkt_len > s->max_frame)
				break;   /* dropped below, as the kernel would refuse it */
			msgs[k].msg_hdr.msg_iov = iov[k];
			msgs[k].msg_hdr.msg_iovlen = frame_iov(s, m, iov[k]);
			k++;
			if (m->nb_segs > TX_SEGS_MAX)
				break;
		}
		const int sent = k ? sendmmsg(s->fd, msgs, k, MSG_DONTWAIT) : -1;
		const int error = k ? errno : EMSGSIZE;
		if (sent > 0) {
			rte_pktmbuf_free_bulk(pkts + done, (unsigned)sent);
			done = (uint16_t)(done + sent);
			continue;
		}
		/* A full queue: the caller keeps the rest for later. */
		if (error == EAGAIN || error == ENOBUFS || error == EINTR)
			break;
		/* This frame can never go (the interface is down, or it is
		 * longer than the interface's MTU): dropped, as a wire would. */
		if (!s->warned_tx_error) {
			s->warned_tx_error = true;
			PACKET_LOG(WARNING, "%s: a frame of %u bytes could not be sent (%s); frames "
				   "that cannot be sent are dropped and counted", s->ifname,
				   pkts[done]->pkt_len, strerror(error));
		}
		(*s->tx_drops)++;
		rte_pktmbuf_free(pkts[done]);
		done++;
	}
	return done;
}

struct rte_ether_addr usiw_packet_socket_mac(const struct usiw_packet_socket *s)
{
	return s->mac;
}

bool usiw_packet_socket_link_up(const struct usiw_packet_socket *s)
{
	struct ifreq ifr;
	return interface_request(s, SIOCGIFFLAGS, &ifr) == 0 &&
	       (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}
