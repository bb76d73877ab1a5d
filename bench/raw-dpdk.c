/* raw-dpdk: the limit of a link for bench/run.  Plain Ethernet frames, no
 * protocol: rte_eth_rx_burst / rte_eth_tx_burst (or, for [port] device =
 * af_packet:IF, the bursts of usiw's own packet socket, as the engine's),
 * busy polling, one thread per side.  It runs on exactly the link
 * tools/usiw-pair builds for usiw (the [eal] args, [port] device and mtu of
 * the USIW_CONFIG file), so usiw's figures can be divided by these.
 *
 *   raw-dpdk [--config FILE] server [--place]
 *       echoes ping messages and counts streamed frames (prints one 'stream'
 *       line per streamed size) until the client says quit.  --place: also
 *       copies each received frame's payload once, to its place in a buffer
 *       of the message's size, as any receiver that puts data in memory
 *       (an RDMA receiver into its memory region) must.
 *   raw-dpdk [--config FILE] client pingpong|stream --sizes S1,S2,...
 *            [--iters N] [--warmup N] [--seconds T] [--place]
 *       pingpong: a message of S bytes goes as ceil(S / mtu) frames; the
 *       server echoes it once all its frames are in; one line per size with
 *       the half round trip (median, p99, mean).  --place (with a server
 *       --place): each side places the frames it receives, as above, so
 *       that the payload crosses to the other side; without it neither side
 *       reads more of a frame than its headers.
 *       stream: frames of min(S, mtu) bytes of payload as fast as the link
 *       takes them for T seconds; the server prints what arrived.
 *
 * Built as gnu11: DPDK's headers use GNU extensions (asm, typeof, named
 * variadic macros) that strict -std=c11 rejects. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_byteorder.h>
#include <rte_cfgfile.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "config.h"
#include "memif_port.h"
#include "packet_socket.h"

#define ETHERTYPE_BENCH 0x88B5          /* IEEE 802 local experimental */
#define BENCH_MAGIC 0x72617764u         /* "rawd" */
#define BURST 32
#define RING_SIZE 1024
/* The mbuf pool: 8191 frames up to MTU 9000, and above it as many as fit in
 * their bytes (at least POOL_MIN), which is what usiw-pair's EAL -m 256
 * holds besides the rest (libusiw's default [port] mbufs shrinks likewise). */
#define POOL_SIZE 8191u
#define POOL_MIN 1023u
#define MIN_FRAME 60                    /* Ethernet minimum without FCS */
#define MAX_SIZES 64
#define MAX_EAL_ARGS 64
#define PING_TIMEOUT_MS 200             /* a lost frame: resend the message */
#define MAX_LOST 50

enum frame_kind { KIND_PING = 1, KIND_PONG, KIND_STREAM, KIND_STREAM_END, KIND_QUIT };

/* The first bytes of every frame's payload (after the Ethernet header). */
struct bench_hdr {
	rte_be32_t magic;
	uint8_t kind;
	uint8_t pad;
	rte_be16_t index;       /* frame index within the message */
	rte_be32_t nframes;     /* frames in the message */
	rte_be32_t seq;         /* message (ping) number */
	rte_be32_t size;        /* message size in bytes */
} __rte_packed;

struct link {
	uint16_t port;
	/* [port] device = af_packet:IF: usiw's own packet socket, as the
	 * engine's port uses it (libusiw/packet_socket.h), and no ethdev */
	struct usiw_packet_socket *packet;
	/* [port] device = memif:...: usiw's own memif port, as the engine's
	 * port uses it (libusiw/memif_port.h), and no ethdev */
	struct usiw_memif_port *memif;
	uint64_t tx_drops;
	unsigned int mtu;       /* IP MTU: the most payload one frame carries */
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	atomic_bool closed;     /* set by the interrupt thread (close_link) */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("raw-dpdk: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static uint64_t now_cycles(void)
{
	return rte_rdtsc();
}

static double cycles_to_us(uint64_t c)
{
	return (double)c * 1e6 / (double)rte_get_tsc_hz();
}

static unsigned int frame_payload(const struct link *l, uint32_t size)
{
	unsigned int p = size < l->mtu ? size : l->mtu;
	return p < sizeof(struct bench_hdr) ? (unsigned int)sizeof(struct bench_hdr) : p;
}

/* What a streamed frame counts for: message bytes, not our header (which a
 * frame of a message shorter than the header carries anyway) nor padding. */
static unsigned int message_bytes_per_frame(const struct link *l, uint32_t size)
{
	return size < l->mtu ? size : l->mtu;
}

static uint32_t frames_for(const struct link *l, uint32_t size)
{
	return size <= l->mtu ? 1 : (size + l->mtu - 1) / l->mtu;
}

/* The bytes of message frame 'index' of a message of 'size' bytes. */
static unsigned int message_frame_payload(const struct link *l, uint32_t size, uint32_t index)
{
	uint32_t n = frames_for(l, size);
	if (index + 1 < n)
		return l->mtu;
	return frame_payload(l, size - (n - 1) * l->mtu);
}

static void fill_frame(const struct link *l, struct rte_mbuf *m, enum frame_kind kind,
		       uint32_t index, uint32_t nframes, uint32_t seq, uint32_t size,
		       unsigned int payload)
{
	unsigned int len = RTE_ETHER_HDR_LEN + payload;
	if (len < MIN_FRAME)
		len = MIN_FRAME;
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	eth->src_addr = l->mac;
	eth->ether_type = rte_cpu_to_be_16(ETHERTYPE_BENCH);
	struct bench_hdr *h = (struct bench_hdr *)(eth + 1);
	h->magic = rte_cpu_to_be_32(BENCH_MAGIC);
	h->kind = (uint8_t)kind;
	h->pad = 0;
	h->index = rte_cpu_to_be_16((uint16_t)index);
	h->nframes = rte_cpu_to_be_32(nframes);
	h->seq = rte_cpu_to_be_32(seq);
	h->size = rte_cpu_to_be_32(size);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
}

/* The header of a frame of ours, or NULL. */
static const struct bench_hdr *frame_hdr(struct rte_mbuf *m)
{
	if (m->data_len < RTE_ETHER_HDR_LEN + sizeof(struct bench_hdr))
		return NULL;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type != rte_cpu_to_be_16(ETHERTYPE_BENCH))
		return NULL;
	const struct bench_hdr *h = (const struct bench_hdr *)(eth + 1);
	return h->magic == rte_cpu_to_be_32(BENCH_MAGIC) ? h : NULL;
}

static uint16_t link_rx(const struct link *l, struct rte_mbuf **frames, uint16_t n)
{
	if (l->packet)
		return usiw_packet_socket_rx(l->packet, frames, n);
	if (l->memif)
		return usiw_memif_port_rx(l->memif, frames, n);
	return rte_eth_rx_burst(l->port, 0, frames, n);
}

static uint16_t link_tx(const struct link *l, struct rte_mbuf **frames, uint16_t n)
{
	if (l->packet)
		return usiw_packet_socket_tx(l->packet, frames, n);
	if (l->memif)
		return usiw_memif_port_tx(l->memif, frames, n);
	return rte_eth_tx_burst(l->port, 0, frames, n);
}

/* Sends all n frames, spinning while the link is full. */
static void send_all(const struct link *l, struct rte_mbuf **frames, uint16_t n)
{
	uint16_t sent = 0;
	while (sent < n)
		sent += link_tx(l, frames + sent, n - sent);
}

/* Sends the frames of one message (ping or pong), BURST at a time. */
static void send_message(const struct link *l, enum frame_kind kind, uint32_t seq, uint32_t size)
{
	uint32_t n = frames_for(l, size);
	struct rte_mbuf *frames[BURST];
	for (uint32_t first = 0; first < n; first += BURST) {
		uint16_t count = (uint16_t)RTE_MIN((uint32_t)BURST, n - first);
		if (rte_pktmbuf_alloc_bulk(l->pool, frames, count) != 0)
			die("mbuf pool exhausted");
		for (uint16_t i = 0; i < count; i++)
			fill_frame(l, frames[i], kind, first + i, n, seq, size,
				   message_frame_payload(l, size, first + i));
		send_all(l, frames, count);
	}
}

/* Control frames (stream end, quit) go a few times: the receiver may be
 * dropping frames while it drains a stream.  Duplicates are ignored.  Each
 * is offered once and dropped if the link does not take it: after the first
 * quit the server is gone, and a memif with no peer never takes a frame. */
static void send_control(const struct link *l, enum frame_kind kind, uint32_t size)
{
	for (int i = 0; i < 5; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(l->pool);
		if (!m)
			die("mbuf pool exhausted");
		fill_frame(l, m, kind, 0, 1, 0, size, sizeof(struct bench_hdr));
		if (link_tx(l, &m, 1) == 0)
			rte_pktmbuf_free(m);
		rte_delay_us_block(2000);
	}
}

/* ---------------------------------------------------------------- server */

struct stream_count {
	uint32_t size;
	uint64_t frames, bytes, first, last;
};

/* --place: where received messages are put, one message's size. */
struct placement {
	uint8_t *buf;
	uint32_t size;
};

/* Copies the frame's payload (after the Ethernet header, message_bytes_per_frame
 * bytes) to where frame number 'frame' belongs in a message: a stream is
 * messages of frames_for(size) frames back to back, and a ping or pong
 * message's frame says its index. */
static void place_frame(const struct link *l, struct placement *p, struct rte_mbuf *m,
			uint32_t size, uint64_t frame)
{
	if (p->size != size) {
		free(p->buf);
		p->buf = malloc(size);
		p->size = size;
		if (!p->buf)
			die("out of memory for a %" PRIu32 " B placement buffer", size);
	}
	uint32_t at = (uint32_t)(frame % frames_for(l, size)) * l->mtu;
	uint32_t left = message_bytes_per_frame(l, size);
	if (left > size - at)
		left = size - at;
	uint32_t off = RTE_ETHER_HDR_LEN;
	for (const struct rte_mbuf *seg = m; seg && left; seg = seg->next) {
		if (off >= seg->data_len) {
			off -= seg->data_len;
			continue;
		}
		uint32_t n = seg->data_len - off < left ? seg->data_len - off : left;
		/* the copy usiw places with (libusiw/payload_copy.c) */
		rte_memcpy(p->buf + at, rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), n);
		at += n;
		left -= n;
		off = 0;
	}
}

static void stream_report(const struct link *l, struct stream_count *s)
{
	if (s->frames < 2)
		return;
	double seconds = cycles_to_us(s->last - s->first) / 1e6;
	/* The first frame's arrival starts the clock: it is not counted. */
	double frames = (double)(s->frames - 1);
	double bytes = (double)s->bytes * frames / (double)s->frames;
	printf("stream size=%" PRIu32 " message_bytes_per_frame=%u frames=%" PRIu64
	       " seconds=%.6f gbps=%.4f mpps=%.4f\n",
	       s->size, message_bytes_per_frame(l, s->size), s->frames, seconds,
	       bytes * 8 / seconds / 1e9, frames / seconds / 1e6);
	fflush(stdout);
	*s = (struct stream_count){0};
}

static void run_server(const struct link *l, bool place)
{
	struct rte_mbuf *rx[BURST];
	uint32_t ping_seq = UINT32_MAX, ping_frames = 0;
	struct stream_count stream = {0};
	struct placement placement = {0};
	for (;;) {
		uint16_t n = link_rx(l, rx, BURST);
		for (uint16_t i = 0; i < n; i++) {
			const struct bench_hdr *h = frame_hdr(rx[i]);
			if (!h) {
				rte_pktmbuf_free(rx[i]);
				continue;
			}
			uint32_t seq = rte_be_to_cpu_32(h->seq), size = rte_be_to_cpu_32(h->size);
			uint32_t nframes = rte_be_to_cpu_32(h->nframes);
			enum frame_kind kind = h->kind;
			if (place && kind == KIND_STREAM)
				place_frame(l, &placement, rx[i], size, stream.frames);
			if (place && kind == KIND_PING)
				place_frame(l, &placement, rx[i], size, rte_be_to_cpu_16(h->index));
			rte_pktmbuf_free(rx[i]);
			switch (kind) {
			case KIND_PING:
				/* A new seq starts a new message; the client resends a
				 * message whose frames were lost under a new seq. */
				if (seq != ping_seq) {
					ping_seq = seq;
					ping_frames = 0;
				}
				if (++ping_frames == nframes)
					send_message(l, KIND_PONG, seq, size);
				break;
			case KIND_STREAM: {
				uint64_t t = now_cycles();
				if (stream.frames == 0) {
					stream.size = size;
					stream.first = t;
				}
				stream.frames++;
				stream.bytes += message_bytes_per_frame(l, size);
				stream.last = t;
				break;
			}
			case KIND_STREAM_END:
				stream_report(l, &stream);
				break;
			case KIND_QUIT:
				free(placement.buf);
				return;
			default:
				break;
			}
		}
	}
}

/* ---------------------------------------------------------------- client */

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* One round trip of a message of 'size' bytes: cycles, or 0 if a frame was
 * lost (PING_TIMEOUT_MS without the whole echo).  placement: where the
 * echo's frames are placed (--place), or NULL. */
static uint64_t round_trip(const struct link *l, uint32_t seq, uint32_t size,
			   struct placement *placement)
{
	uint32_t want = frames_for(l, size), got = 0;
	struct rte_mbuf *rx[BURST];
	uint64_t start = now_cycles();
	uint64_t deadline = start + rte_get_tsc_hz() / 1000 * PING_TIMEOUT_MS;
	send_message(l, KIND_PING, seq, size);
	while (got < want) {
		uint16_t n = link_rx(l, rx, BURST);
		for (uint16_t i = 0; i < n; i++) {
			const struct bench_hdr *h = frame_hdr(rx[i]);
			if (h && h->kind == KIND_PONG && rte_be_to_cpu_32(h->seq) == seq) {
				if (placement)
					place_frame(l, placement, rx[i], size, rte_be_to_cpu_16(h->index));
				got++;
			}
			rte_pktmbuf_free(rx[i]);
		}
		if (n == 0 && now_cycles() > deadline)
			return 0;
	}
	return now_cycles() - start;
}

static void run_pingpong(const struct link *l, const uint32_t *sizes, int nsizes,
			 unsigned int iters, unsigned int warmup, bool place)
{
	struct placement placement = {0};
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	if (!rtt)
		die("out of memory");
	uint32_t seq = 0;
	for (int s = 0; s < nsizes; s++) {
		unsigned int lost = 0, done = 0;
		for (unsigned int i = 0; i < warmup + iters && lost <= MAX_LOST; i++) {
			uint64_t c = round_trip(l, seq++, sizes[s], place ? &placement : NULL);
			if (c == 0) {
				lost++;
				i--;
				continue;
			}
			if (i >= warmup)
				rtt[done++] = c;
		}
		if (done < iters) {
			printf("pingpong size=%" PRIu32 " error=lost_%u_messages\n", sizes[s], lost);
			fflush(stdout);
			continue;
		}
		qsort(rtt, iters, sizeof(*rtt), compare_u64);
		double sum = 0;
		for (unsigned int i = 0; i < iters; i++)
			sum += (double)rtt[i];
		/* Half round trips, like perftest's and sockperf's latencies. */
		printf("pingpong size=%" PRIu32 " frames=%" PRIu32 " iters=%u lost=%u "
		       "half_rtt_median_us=%.4f half_rtt_p99_us=%.4f half_rtt_avg_us=%.4f\n",
		       sizes[s], frames_for(l, sizes[s]), iters, lost,
		       cycles_to_us(rtt[iters / 2]) / 2, cycles_to_us(rtt[(iters * 99) / 100]) / 2,
		       cycles_to_us((uint64_t)(sum / iters)) / 2);
		fflush(stdout);
	}
	free(rtt);
	free(placement.buf);
}

static void run_stream(const struct link *l, const uint32_t *sizes, int nsizes, double seconds)
{
	for (int s = 0; s < nsizes; s++) {
		uint32_t size = sizes[s];
		unsigned int payload = frame_payload(l, size);
		uint64_t end = now_cycles() + (uint64_t)(seconds * (double)rte_get_tsc_hz());
		uint64_t sent = 0;
		struct rte_mbuf *frames[BURST];
		while (now_cycles() < end) {
			if (rte_pktmbuf_alloc_bulk(l->pool, frames, BURST) != 0)
				continue;       /* the port still holds mbufs: they come back */
			for (int i = 0; i < BURST; i++)
				fill_frame(l, frames[i], KIND_STREAM, 0, 1, 0, size, payload);
			send_all(l, frames, BURST);
			sent += BURST;
		}
		send_control(l, KIND_STREAM_END, size);
		printf("stream-tx size=%" PRIu32 " frame_payload=%u frames=%" PRIu64 " seconds=%.3f\n",
		       size, payload, sent, seconds);
		fflush(stdout);
	}
}

/* ------------------------------------------------------------ link setup */

static const char *config_value(struct rte_cfgfile *cfg, const char *path,
				const char *section, const char *key, bool required)
{
	const char *v = rte_cfgfile_get_entry(cfg, section, key);
	if (!v && required)
		die("%s: no '%s' in [%s]", path, key, section);
	return v;
}

/* EAL pins the calling thread to its main lcore; two raw-dpdk processes
 * would then share one core.  The thread gets its own affinity back. */
static void start_eal(const char *args)
{
	static char buf[1024];
	static char *argv[MAX_EAL_ARGS];
	int argc = 0;
	argv[argc++] = "raw-dpdk";
	if (snprintf(buf, sizeof(buf), "%s", args) >= (int)sizeof(buf))
		die("[eal] args too long");
	for (char *save, *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (argc >= MAX_EAL_ARGS - 2)
			die("too many [eal] args");
		argv[argc++] = tok;
	}
	argv[argc++] = "--log-level=lib.*:error";
	cpu_set_t cpus;
	if (pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) != 0)
		die("pthread_getaffinity_np failed");
	if (rte_eal_init(argc, argv) < 0)
		die("rte_eal_init failed (%s)", rte_strerror(rte_errno));
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
}

/* Frames to the interface's own MAC, as over DPDK's af_packet: no
 * promiscuous mode (a veth hands a packet socket every frame anyway). */
static void open_packet_link(struct link *l, const char *ifname)
{
	char err[512];
	if (usiw_packet_socket_open(&l->packet, ifname, (uint16_t)(l->mtu + RTE_ETHER_HDR_LEN),
				    RING_SIZE, false, l->pool, &l->tx_drops, err, sizeof(err)) != 0)
		die("%s", err);
	l->mac = usiw_packet_socket_mac(l->packet);
	uint64_t give_up = now_cycles() + 10 * rte_get_tsc_hz();
	while (!usiw_packet_socket_link_up(l->packet)) {
		if (now_cycles() > give_up)
			die("link of %s did not come up within 10 s", ifname);
		rte_delay_us_sleep(10000);
	}
}

/* A server is ready once it listens; a client once connected. */
static void open_memif_link(struct link *l, const char *device)
{
	char err[512];
	struct usiw_memif_port_args a;
	if (usiw_memif_port_parse(device, &a, err, sizeof(err)) != 0 ||
	    usiw_memif_port_open(&l->memif, &a, (uint16_t)(l->mtu + RTE_ETHER_HDR_LEN), NULL, err,
				 sizeof(err)) != 0)
		die("%s", err);
	rte_eth_random_addr(l->mac.addr_bytes);
	uint64_t give_up = now_cycles() + 10 * rte_get_tsc_hz();
	while (!a.server && !usiw_memif_port_connected(l->memif)) {
		if (now_cycles() > give_up)
			die("memif link on %s did not come up within 10 s", a.socket);
		rte_delay_us_sleep(1000);
	}
}

static void open_link(struct link *l, const char *path)
{
	struct rte_cfgfile_parameters params = { .comment_character = '#' };
	struct rte_cfgfile *cfg = rte_cfgfile_load_with_params(path, 0, &params);
	if (!cfg)
		die("cannot read config %s", path);
	start_eal(config_value(cfg, path, "eal", "args", true));
	const char *device = config_value(cfg, path, "port", "device", true);
	const char *mtu = config_value(cfg, path, "port", "mtu", false);
	l->mtu = mtu ? (unsigned int)strtoul(mtu, NULL, 10) : 1500;
	if (l->mtu < 576 || l->mtu > USIW_MTU_MAX)
		die("%s: mtu %u out of 576..%u", path, l->mtu, USIW_MTU_MAX);

	unsigned int room = RTE_MAX(2048u, l->mtu + RTE_ETHER_HDR_LEN) + RTE_PKTMBUF_HEADROOM;
	unsigned int frames = l->mtu <= 9000 ? POOL_SIZE :
			      RTE_MAX(POOL_MIN, (unsigned int)((uint64_t)POOL_SIZE * 9000u / l->mtu));
	l->pool = rte_pktmbuf_pool_create("raw_dpdk", frames, 256, 0, (uint16_t)room,
					  (int)rte_socket_id());
	if (!l->pool)
		die("cannot create the mbuf pool (%s)", rte_strerror(rte_errno));
	const char *ifname = usiw_packet_socket_iface(device);
	if (ifname) {
		open_packet_link(l, ifname);
		rte_cfgfile_close(cfg);
		return;
	}
	if (usiw_memif_port_named(device)) {
		open_memif_link(l, device);
		rte_cfgfile_close(cfg);
		return;
	}
	if (rte_dev_probe(device) != 0)
		die("cannot probe '%s'", device);
	uint16_t port;
	bool found = false;
	RTE_ETH_FOREACH_DEV(port) {
		l->port = port;
		found = true;
	}
	if (!found)
		die("no port after probing '%s'", device);
	rte_cfgfile_close(cfg);

	struct rte_eth_conf conf = {0};
	if (rte_eth_dev_configure(l->port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(l->port, 0, RING_SIZE, (unsigned int)rte_socket_id(), NULL, l->pool) != 0 ||
	    rte_eth_tx_queue_setup(l->port, 0, RING_SIZE, (unsigned int)rte_socket_id(), NULL) != 0)
		die("cannot set up the port's queues");
	rte_eth_macaddr_get(l->port, &l->mac);

	/* A memif client connects once per start: restart until the server
	 * (started first) has answered, within 10 s. */
	uint64_t give_up = now_cycles() + 10 * rte_get_tsc_hz();
	for (;;) {
		if (rte_eth_dev_start(l->port) != 0)
			die("cannot start the port");
		uint64_t retry = now_cycles() + 2 * rte_get_tsc_hz();
		struct rte_eth_link link;
		do {
			rte_eth_link_get_nowait(l->port, &link);
			if (link.link_status == RTE_ETH_LINK_UP)
				return;
			rte_delay_us_sleep(10000);
		} while (now_cycles() < retry);
		if (now_cycles() > give_up)
			die("link did not come up within 10 s");
		rte_eth_dev_stop(l->port);
	}
}

static void stop_and_close(void *arg)
{
	struct link *l = arg;
	rte_eth_dev_stop(l->port);
	rte_eth_dev_close(l->port);
	atomic_store(&l->closed, true);
}

/* memif handles its peer's disconnect in EAL's interrupt thread with no lock
 * against our own stop and close, and both peers close at the same moment:
 * closing from an alarm, which that thread runs between memif's callbacks,
 * keeps the two apart (as usiw's port.c does; see there).  No
 * rte_eal_cleanup() after it: in DPDK 22.11 it frees the interrupt sources
 * while that thread still runs, which then faults in rte_intr_fd_get (the
 * memif server crashed in 1 of 4 runs); the process exits right after, and
 * usiw-pair removes the run's EAL files. */
static void close_link(struct link *l)
{
	if (l->packet) {
		usiw_packet_socket_close(l->packet);
		return;
	}
	if (l->memif) {
		usiw_memif_port_close(l->memif);
		return;
	}
	if (rte_eal_alarm_set(1, stop_and_close, l) != 0)
		stop_and_close(l);
	while (!atomic_load(&l->closed))
		rte_delay_us_sleep(1000);
}

static int parse_sizes(const char *arg, uint32_t *sizes)
{
	int n = 0;
	char *end;
	for (const char *p = arg; *p; p = end + (*end == ',')) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || v > (64u << 20) || n == MAX_SIZES || (*end && *end != ','))
			die("--sizes wants a list of sizes 1..64 MiB separated by commas");
		sizes[n++] = (uint32_t)v;
	}
	return n;
}

static void usage(void)
{
	fputs("usage: raw-dpdk [--config FILE] server [--place]\n"
	      "       raw-dpdk [--config FILE] client pingpong|stream --sizes S1,S2,...\n"
	      "                [--iters N] [--warmup N] [--seconds T] [--place (pingpong)]\n"
	      "FILE (default: $USIW_CONFIG) is a usiw config: its [eal] args, [port] device\n"
	      "and [port] mtu are used.\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *config = getenv("USIW_CONFIG");
	const char *role = NULL, *mode = NULL;
	uint32_t sizes[MAX_SIZES];
	int nsizes = 0;
	unsigned int iters = 10000, warmup = 1000;
	double seconds = 1.0;
	bool place = false;
	for (int i = 1; i < argc; i++) {
		bool has_value = i + 1 < argc;
		if (!strcmp(argv[i], "--config") && has_value)
			config = argv[++i];
		else if (!strcmp(argv[i], "--sizes") && has_value)
			nsizes = parse_sizes(argv[++i], sizes);
		else if (!strcmp(argv[i], "--iters") && has_value)
			iters = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--warmup") && has_value)
			warmup = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seconds") && has_value)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--place"))
			place = true;
		else if (!role && argv[i][0] != '-')
			role = argv[i];
		else if (!mode && argv[i][0] != '-')
			mode = argv[i];
		else
			usage();
	}
	if (!config || !role)
		usage();
	bool server = !strcmp(role, "server");
	if (!server && (strcmp(role, "client") || !mode || nsizes == 0 || iters == 0 ||
			!(seconds > 0) || (strcmp(mode, "pingpong") && strcmp(mode, "stream")) ||
			(place && strcmp(mode, "pingpong"))))
		usage();

	struct link l = { 0 };
	open_link(&l, config);
	if (server) {
		run_server(&l, place);
	} else {
		if (!strcmp(mode, "pingpong"))
			run_pingpong(&l, sizes, nsizes, iters, warmup, place);
		else
			run_stream(&l, sizes, nsizes, seconds);
		send_control(&l, KIND_QUIT, 0);
	}
	close_link(&l);
	return 0;
}
