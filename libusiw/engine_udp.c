/* UDP over IPv4 on the engine's port: endpoints, building frames to send,
 * and checking and delivering received ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "engine_priv.h"
#include "ipv4_sum.h"

#define HDRS_LEN (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + \
		  sizeof(struct rte_udp_hdr))
#define USIW_IP_TTL 64
/* Below this, copying the data costs less than a second mbuf. */
#define REFERENCE_MIN_BYTES 1024
/* A bundling endpoint that streams (usiw_udp_set_streaming) copies data
 * below this size instead of referencing it, so that the datagram can join
 * a bundle and begin the next: ib_write_bw over memif, 1 KiB 1.56-1.75 ->
 * 3.30 M msg/s, 2 KiB 1.72 -> 2.49; 3000 B the same either way, 4000 B
 * slower copied (6.7 against 8.1 GB/s).  A lone datagram (a ping-pong's)
 * is still referenced: copied, ib_send_lat 2 KiB took ~0.1 us longer. */
#define BUNDLE_COPY_MAX_BYTES 3072

static void referenced_data_released(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

void usiw_udp_engine_init(struct usiw_engine *e)
{
	e->tx_ref_shinfo.free_cb = referenced_data_released;
	e->tx_ref_shinfo.fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(&e->tx_ref_shinfo, 1);
}

int usiw_udp_open(struct usiw_engine *e, uint16_t port, usiw_udp_rx_fn rx, void *ctx,
		  struct usiw_udp_endpoint **out)
{
	if (!e || !rx || !out)
		return -EINVAL;
	struct usiw_udp_endpoint *ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->engine = e;
	ep->rx = rx;
	ep->ctx = ctx;
	usiw_engine_lock(e);
	int rc = usiw_demux_add(&e->demux, port, ep, &ep->rule, &ep->port);
	usiw_engine_unlock(e);
	if (rc) {
		free(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

void usiw_udp_close(struct usiw_udp_endpoint *ep)
{
	if (!ep)
		return;
	struct usiw_engine *e = ep->engine;
	usiw_engine_lock(e);
	usiw_demux_del(&e->demux, ep->port, &ep->rule);
	usiw_engine_unlock(e);
	free(ep);
}

uint16_t usiw_udp_port(const struct usiw_udp_endpoint *ep)
{
	return ep->port;
}

void usiw_udp_skip_checksum(struct usiw_udp_endpoint *ep)
{
	ep->skip_checksum = true;
}

void usiw_udp_reference_data(struct usiw_udp_endpoint *ep)
{
	ep->reference_data = true;
}

void usiw_udp_bundle(struct usiw_udp_endpoint *ep)
{
	ep->bundle = true;
}

void usiw_udp_set_streaming(struct usiw_udp_endpoint *ep, bool streaming)
{
	ep->streaming = streaming;
}

size_t usiw_udp_max_payload(const struct usiw_engine *e)
{
	return e->cfg.mtu - sizeof(struct rte_ipv4_hdr) - sizeof(struct rte_udp_hdr);
}

static bool on_link(const struct usiw_engine *e, uint32_t ipv4)
{
	uint32_t mask = e->attr.prefix_len ? rte_cpu_to_be_32(~0u << (32 - e->attr.prefix_len)) : 0;
	return (ipv4 & mask) == (e->attr.ipv4 & mask);
}

/* A second segment for m that references data (usiw_udp_reference_data).
 * The driver only reads it, so the const is cast away for the mbuf API. */
static int chain_reference(struct usiw_engine *e, struct rte_mbuf *m, const void *data,
			   size_t data_len)
{
	struct rte_mbuf *d = rte_pktmbuf_alloc(e->port.ref_pool);

	if (!d)
		return -EAGAIN;
	rte_mbuf_ext_refcnt_update(&e->tx_ref_shinfo, 1);
	rte_pktmbuf_attach_extbuf(d, (void *)(uintptr_t)data, RTE_BAD_IOVA, (uint16_t)data_len,
				  &e->tx_ref_shinfo);
	rte_pktmbuf_append(d, (uint16_t)data_len);
	return rte_pktmbuf_chain(m, d);
}

/* The IPv4 and UDP lengths of a frame whose UDP payload is payload bytes,
 * and its checksums (or, with the port's offload, the pseudo-header sum the
 * offload starts from). */
static void set_lengths_and_checksums(struct usiw_engine *e, struct rte_mbuf *m, size_t payload,
				      bool udp_checksum)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*udp) + payload));
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + payload));
	ip->hdr_checksum = 0;
	udp->dgram_cksum = 0;
	if (e->port.tx_cksum_offload) {
		udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
		return;
	}
	ip->hdr_checksum = (uint16_t)~usiw_ipv4_header_sum(ip);
	if (udp_checksum)
		udp->dgram_cksum = rte_pktmbuf_is_contiguous(m) ?
			rte_ipv4_udptcp_cksum(ip, udp) :
			rte_ipv4_udptcp_cksum_mbuf(m, ip, sizeof(struct rte_ether_hdr) + sizeof(*ip));
}

/* The 16-bit ones' complement sum `sum` with the word `old` in it replaced
 * by `new` (RFC 1624, eqn. 3), all three in the same byte order.
 * Hand-written: DPDK 22.11 has no incremental update, and recomputing the
 * IPv4 header's checksum at every datagram bundled was ~70 of the ~1500
 * instructions of a 64 B ib_send_bw post. */
static uint16_t ones_sum_replace(uint16_t sum, uint16_t old, uint16_t new)
{
	uint32_t s = (uint32_t)sum + (uint16_t)~old + new;

	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)((s & 0xffff) + (s >> 16));
}

/* A bundle frame's IPv4 and UDP lengths after `len` bytes more of UDP
 * payload, and the sums that cover them: the IPv4 header's checksum (a
 * complemented sum) or, with the port's offload, the UDP pseudo-header sum
 * the offload starts from (set_lengths_and_checksums; a bundle's UDP
 * checksum is otherwise 0). */
static void lengths_grew(const struct usiw_engine *e, struct rte_mbuf *m, uint16_t len)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	const uint16_t ip_len = ip->total_length, udp_len = udp->dgram_len;

	ip->total_length = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(ip_len) + len));
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(udp_len) + len));
	if (e->port.tx_cksum_offload)
		udp->dgram_cksum = ones_sum_replace(udp->dgram_cksum, udp_len, udp->dgram_len);
	else
		ip->hdr_checksum = (uint16_t)~ones_sum_replace((uint16_t)~ip->hdr_checksum, ip_len,
							       ip->total_length);
}

/* A frame that carries datagrams of several endpoints to one peer: UDP
 * ports 0 to 0 (a port no endpoint can own, usiw_demux_add), and a UDP
 * payload of records, each a mux_record and then that datagram.  It lets
 * the QPs that an application posts to in turn share frames, as one QP's
 * datagrams share a frame in a bundle, and the peer's ACKs to them share
 * its frames (docs/bench.md, Many QPs).  Only a frame that already holds a
 * bundling endpoint's datagram and is still the last one waiting for the
 * flush becomes one, so a large or lone datagram keeps its own ports,
 * which a NIC can steer by (docs/protocol.md). */
#define MUX_PORT 0

struct mux_record {
	rte_be16_t src_port, dst_port;
	rte_be16_t len;                 /* of the datagram after the record */
	rte_be16_t reserved;            /* 0; keeps the first packet's DDP header
					 * 8-byte aligned (docs/protocol.md) */
};

/* A small message's datagram: TRP and DDP headers and up to ~180 bytes. */
#define BUNDLE_MIN_ROOM 256
/* A bundle stays within a frame of MTU 9000 when the MTU is larger: the
 * longer a bundle, the later its first messages reach the receiver.
 * ib_send_bw 64 B over MTU 65000 made 2.25-3.07 M msg/s with bundles up to
 * the MTU and 3.09-3.40 with this cap (3.02-3.63 at MTU 9000). */
#define BUNDLE_MAX_PAYLOAD 8972u

/* The frame m's UDP header (m starts with its Ethernet header). */
static struct rte_udp_hdr *frame_udp(const struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *,
				       sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr));
}

/* The UDP payload length of the frame m. */
static size_t frame_udp_payload(const struct rte_mbuf *m)
{
	return rte_be_to_cpu_16(frame_udp(m)->dgram_len) - sizeof(struct rte_udp_hdr);
}

/* Whether len more bytes fit in the bundle frame m: under the MTU and
 * BUNDLE_MAX_PAYLOAD, and in its one mbuf. */
static bool bundle_fits(const struct usiw_engine *e, const struct rte_mbuf *m, size_t len)
{
	return frame_udp_payload(m) + len <= RTE_MIN(usiw_udp_max_payload(e), BUNDLE_MAX_PAYLOAD) &&
	       rte_pktmbuf_tailroom(m) >= len;
}

bool usiw_udp_bundle_has_room(const struct usiw_engine *e)
{
	return e->tx_bundle_tail && bundle_fits(e, e->tx_bundle_tail, BUNDLE_MIN_ROOM);
}

/* Turns the bundle frame m into a mux frame whose first record is the
 * datagram it holds; the caller adds the record's bytes to the IPv4 and
 * UDP lengths (lengths_grew).  The headers move into the headroom, 8 bytes
 * earlier, so that the datagram stays where it is and the record takes
 * their place. */
static void mux_convert(struct usiw_engine *e, struct rte_mbuf *m)
{
	const uint8_t *hdrs = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t *moved = (uint8_t *)rte_pktmbuf_prepend(m, sizeof(struct mux_record));

	memmove(moved, hdrs, HDRS_LEN);
	struct rte_udp_hdr *udp = frame_udp(m);
	const struct mux_record rec = {
		.src_port = udp->src_port,
		.dst_port = udp->dst_port,
		.len = rte_cpu_to_be_16((uint16_t)frame_udp_payload(m)),
	};
	memcpy(udp + 1, &rec, sizeof(rec));
	udp->src_port = RTE_BE16(MUX_PORT);
	udp->dst_port = RTE_BE16(MUX_PORT);
	e->tx_mux_record = sizeof(*udp);
	e->stats.tx_mux_frames++;
}

/* usiw_udp_bundle: appends the datagram to the last frame waiting for the
 * flush if a bundling endpoint built that frame to the same peer and the
 * datagram fits: to the same UDP payload if the frame (in a mux frame, its
 * last record) is from the same port to the same port, else as a new
 * record of a mux frame.  Returns true if it did. */
static bool bundle_append(struct usiw_engine *e, uint16_t src_port, uint32_t dst_ipv4,
			  uint16_t dst_port, const void *hdr, size_t hdr_len, const void *data,
			  size_t data_len)
{
	struct rte_mbuf *m = e->tx_bundle_tail;
	const size_t len = hdr_len + data_len;

	if (!m)
		return false;
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
								sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = frame_udp(m);
	const rte_be16_t src = rte_cpu_to_be_16(src_port), dst = rte_cpu_to_be_16(dst_port);

	if (ip->dst_addr != dst_ipv4)
		return false;
	const bool muxed = udp->dst_port == RTE_BE16(MUX_PORT);
	/* A record follows a datagram of any length, so it may start at an odd
	 * address: it is read and written through a copy. */
	uint8_t *last_at = (uint8_t *)udp + e->tx_mux_record;
	struct mux_record last = { 0 };

	if (muxed)
		memcpy(&last, last_at, sizeof(last));
	const bool same = muxed ? last.src_port == src && last.dst_port == dst
				: udp->src_port == src && udp->dst_port == dst;
	/* Another endpoint's datagram takes a record, and a frame that becomes
	 * a mux frame one more for the datagram it holds. */
	const size_t records = same ? 0 : muxed ? 1 : 2;
	size_t grown = len;

	if (!bundle_fits(e, m, len + records * sizeof(struct mux_record)) ||
	    (records == 2 && rte_pktmbuf_headroom(m) < sizeof(struct mux_record)))
		return false;
	if (same && muxed) {
		last.len = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(last.len) + len));
		memcpy(last_at, &last, sizeof(last));
	} else if (!same) {
		if (!muxed)
			mux_convert(e, m);
		const struct mux_record rec = { .src_port = src, .dst_port = dst,
						.len = rte_cpu_to_be_16((uint16_t)len) };
		/* The new record starts where the frame ends now. */
		e->tx_mux_record = (uint16_t)(rte_pktmbuf_data_len(m) - sizeof(struct rte_ether_hdr) -
					      sizeof(struct rte_ipv4_hdr));
		memcpy(rte_pktmbuf_append(m, sizeof(rec)), &rec, sizeof(rec));
		grown += records * sizeof(rec);
	}
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	memcpy(p, hdr, hdr_len);
	if (data_len)
		memcpy(p + hdr_len, data, data_len);
	lengths_grew(e, m, (uint16_t)grown);
	e->stats.tx_datagrams++;
	e->stats.tx_bundled++;
	/* Last: it may flush m. */
	usiw_engine_tx_frame_grew(e, (uint32_t)grown);
	return true;
}

/* No mbuf for a datagram: counted (under the lock, as every counter is
 * written), and the sender is told to try again. */
static int drop_no_mbuf(struct usiw_engine *e)
{
	usiw_engine_lock(e);
	e->stats.drop_no_mbuf++;
	usiw_engine_unlock(e);
	return -EAGAIN;
}

/* One datagram from our src_port: usiw_udp_send, and the answers for closed
 * ports (always checksummed: their receiver is anybody).  Data is referenced
 * (reference: the endpoint allows it) in a large datagram, except to
 * ourselves: the loopback ring keeps frames beyond the progress call (so does
 * the ARP queue, which copies what it keeps). */
static int send_datagram(struct usiw_engine *e, uint16_t src_port, bool udp_checksum,
			 bool reference, bool bundle, bool streaming, uint32_t dst_ipv4,
			 uint16_t dst_port, const void *hdr, size_t hdr_len, const void *data,
			 size_t data_len)
{
	const size_t payload = hdr_len + data_len;

	if (payload > usiw_udp_max_payload(e))
		return -EMSGSIZE;
	if (!on_link(e, dst_ipv4))
		return -ENETUNREACH;
	usiw_engine_lcore_ensure();
	reference = reference && e->port.ref_pool && data_len >= REFERENCE_MIN_BYTES &&
		    dst_ipv4 != e->attr.ipv4;
	bundle = bundle && !udp_checksum;
	if (bundle && streaming && data_len < BUNDLE_COPY_MAX_BYTES)
		reference = false;
	bundle = bundle && !reference;
	if (bundle) {
		usiw_engine_lock(e);
		bool appended = bundle_append(e, src_port, dst_ipv4, dst_port, hdr, hdr_len, data,
					      data_len);
		usiw_engine_unlock(e);
		if (appended)
			return 0;
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(e->port.pool);
	if (!m)
		return drop_no_mbuf(e);
	/* The pool's data room holds a full frame (port.c), so this cannot fail. */
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)rte_pktmbuf_append(
		m, HDRS_LEN + (reference ? hdr_len : payload));
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *p = (uint8_t *)(udp + 1);

	memcpy(p, hdr, hdr_len);
	if (reference) {
		if (chain_reference(e, m, data, data_len) != 0) {
			rte_pktmbuf_free(m);
			return drop_no_mbuf(e);
		}
	} else if (data_len) {
		memcpy(p + hdr_len, data, data_len);
	}

	eth->src_addr = e->port.mac;
	eth->dst_addr = e->port.mac;   /* until ARP says where */
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);

	usiw_engine_lock(e);
	/* The frames buffered for the next flush and this one must be able to
	 * wait if the tx queue refuses them: the sender is told to wait instead
	 * of having its frame dropped.  Under the lock: another thread may be
	 * flushing. */
	if (!usiw_tx_backlog_has_room(&e->tx_backlog, e->port.txb->length + 1u)) {
		usiw_engine_unlock(e);
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->packet_id = rte_cpu_to_be_16(e->ip_id++);
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = USIW_IP_TTL;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = e->attr.ipv4;
	ip->dst_addr = dst_ipv4;
	udp->src_port = rte_cpu_to_be_16(src_port);
	udp->dst_port = rte_cpu_to_be_16(dst_port);
	if (e->port.tx_cksum_offload) {
		m->l2_len = sizeof(*eth);
		m->l3_len = sizeof(*ip);
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
	}
	set_lengths_and_checksums(e, m, payload, udp_checksum);

	int rc;
	if (dst_ipv4 == e->attr.ipv4) {
		rc = rte_ring_enqueue(e->loopback, m) == 0 ? 0 : -EAGAIN;
		if (rc)
			rte_pktmbuf_free(m);
	} else {
		rc = usiw_arp_output(e, dst_ipv4, m);
		struct rte_eth_dev_tx_buffer *txb = e->port.txb;
		if (rc == 0 && bundle && !reference && txb->length && txb->pkts[txb->length - 1] == m)
			e->tx_bundle_tail = m;
	}
	if (rc == 0)
		e->stats.tx_datagrams++;
	usiw_engine_unlock(e);
	return rc;
}

int usiw_udp_send(struct usiw_udp_endpoint *ep, uint32_t dst_ipv4, uint16_t dst_port,
		  const void *hdr, size_t hdr_len, const void *data, size_t data_len)
{
	return send_datagram(ep->engine, ep->port, !ep->skip_checksum, ep->reference_data,
			     ep->bundle, ep->streaming, dst_ipv4, dst_port, hdr, hdr_len, data,
			     data_len);
}

void usiw_udp_set_closed_port_answer(struct usiw_engine *e, usiw_udp_closed_port_fn fn)
{
	usiw_engine_lock(e);
	e->closed_port_answer = fn;
	usiw_engine_unlock(e);
}

/* A datagram to a closed port, offered to the layer above for an answer.
 * Best effort, as a RST is: an answer that cannot be sent now is dropped
 * and the sender's retransmission draws another. */
static void answer_closed_port(struct usiw_engine *e, uint32_t src_ipv4, uint16_t src_port,
			       uint16_t dst_port, const void *data, size_t len)
{
	uint8_t reply[256];

	if (!e->closed_port_answer)
		return;
	size_t n = e->closed_port_answer(data, len, reply, sizeof(reply));
	if (n && send_datagram(e, dst_port, true, false, false, false, src_ipv4, src_port, reply, n,
				NULL, 0) == 0)
		e->stats.closed_port_answers++;
}

static bool checksums_good(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
			   const struct rte_udp_hdr *udp, size_t l4_off)
{
	const uint64_t ipf = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	const uint64_t l4f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (ipf == RTE_MBUF_F_RX_IP_CKSUM_BAD || l4f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	if (ipf != RTE_MBUF_F_RX_IP_CKSUM_GOOD && usiw_ipv4_header_sum(ip) != 0xffff)
		return false;
	if (l4f == RTE_MBUF_F_RX_L4_CKSUM_GOOD || udp->dgram_cksum == 0)
		return true;
	if (rte_pktmbuf_is_contiguous(m))
		return rte_ipv4_udptcp_cksum_verify(ip, udp) == 0;
	return rte_ipv4_udptcp_cksum_mbuf_verify(m, ip, (uint16_t)l4_off) == 0;
}

/* One received datagram to its endpoint (ports in network order).  Inlined
 * in both callers: called, it was 25 more instructions per datagram of a
 * ping-pong (callgrind). */
static inline __attribute__((always_inline)) void
deliver(struct usiw_engine *e, uint32_t src_ipv4, rte_be16_t src_port, rte_be16_t dst_port,
	const void *data, size_t len)
{
	struct usiw_udp_endpoint *ep = usiw_demux_lookup(&e->demux, dst_port);

	if (!ep) {
		e->stats.drop_no_endpoint++;
		answer_closed_port(e, src_ipv4, rte_be_to_cpu_16(src_port),
				   rte_be_to_cpu_16(dst_port), data, len);
		return;
	}
	e->stats.rx_datagrams++;
	ep->rx(ep->ctx, src_ipv4, rte_be_to_cpu_16(src_port), data, len);
}

/* A mux frame's datagrams, each to its endpoint.  A record whose length
 * overruns the payload, whose reserved field is not 0 or that is to port 0
 * ends the frame (it was not built by a usiw sender, and where the next
 * one starts cannot be trusted); the records before it stand. */
static void deliver_records(struct usiw_engine *e, uint32_t src_ipv4, const uint8_t *data,
			    size_t len)
{
	struct mux_record rec;

	while (len) {
		if (len < sizeof(rec)) {
			e->stats.drop_malformed++;
			return;
		}
		memcpy(&rec, data, sizeof(rec));
		const size_t n = rte_be_to_cpu_16(rec.len);
		if (n > len - sizeof(rec) || rec.reserved != 0 || rec.dst_port == RTE_BE16(MUX_PORT)) {
			e->stats.drop_malformed++;
			return;
		}
		deliver(e, src_ipv4, rec.src_port, rec.dst_port, data + sizeof(rec), n);
		data += sizeof(rec) + n;
		len -= sizeof(rec) + n;
	}
}

void usiw_udp_input(struct usiw_engine *e, struct rte_mbuf *m)
{
	const size_t l3_off = sizeof(struct rte_ether_hdr);
	const size_t l4_off = l3_off + sizeof(struct rte_ipv4_hdr);
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (!rte_is_same_ether_addr(&eth->dst_addr, &e->port.mac) &&
	    !rte_is_broadcast_ether_addr(&eth->dst_addr)) {
		e->stats.drop_not_for_us++;
		goto drop;
	}
	if (rte_pktmbuf_data_len(m) < l4_off + sizeof(struct rte_udp_hdr)) {
		e->stats.drop_malformed++;
		goto drop;
	}
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	if (ip->dst_addr != e->attr.ipv4 || ip->next_proto_id != IPPROTO_UDP) {
		e->stats.drop_not_for_us++;
		goto drop;
	}
	const uint16_t ip_len = rte_be_to_cpu_16(ip->total_length);
	/* IP options are never sent by usiw peers; fragments are refused
	 * because datagrams never exceed the MTU (DF is set). */
	if (ip->version_ihl != RTE_IPV4_VHL_DEF || ip_len > rte_pktmbuf_pkt_len(m) - l3_off ||
	    ip_len < sizeof(*ip) + sizeof(struct rte_udp_hdr) ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))) {
		e->stats.drop_malformed++;
		goto drop;
	}
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
	const uint16_t udp_len = rte_be_to_cpu_16(udp->dgram_len);
	if (udp_len < sizeof(*udp) || udp_len > ip_len - sizeof(*ip)) {
		e->stats.drop_malformed++;
		goto drop;
	}
	/* Ethernet padding of short frames is not part of the datagram. */
	if (rte_pktmbuf_pkt_len(m) > l3_off + ip_len)
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - l3_off - ip_len));
	if (!checksums_good(m, ip, udp, l4_off)) {
		e->stats.drop_bad_checksum++;
		goto drop;
	}
	const size_t len = udp_len - sizeof(*udp);
	const void *data = rte_pktmbuf_read(m, (uint32_t)(l4_off + sizeof(*udp)), (uint32_t)len,
					    e->rx_scratch);
	if (udp->dst_port == RTE_BE16(MUX_PORT))
		deliver_records(e, ip->src_addr, data, len);
	else
		deliver(e, ip->src_addr, udp->src_port, udp->dst_port, data, len);
drop:
	rte_pktmbuf_free(m);
}
