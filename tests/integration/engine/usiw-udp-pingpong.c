/* UDP ping-pong between two usiw engines, through the engine's datagram API
 * only (no TRP, no verbs): the server echoes every datagram, the client
 * resolves the server with ARP, sends datagrams of several sizes up to the
 * MTU one at a time, checks every byte of every echo, and reports the RTT.
 *
 *   usiw-udp-pingpong server [-p PORT] [-t SECONDS] [-k] [-c CLIENTS]
 *   usiw-udp-pingpong client SERVER_IPV4 [-p PORT] [-n COUNT] [-s SIZES] [-t SECONDS] [-r]
 *                            [-w WINDOW] [-b] [-m] [-g MS]
 *
 * -r: the client's endpoint references the data it sends instead of copying
 * it (usiw_udp_reference_data), and its first datagram, of the largest size,
 * goes before the server's MAC is known: it waits in the ARP queue, so the
 * client overwrites its buffer right after the send, and the echo must still
 * bring back what was sent.
 *
 * -w: after the ping-pongs, the client streams COUNT datagrams of the largest
 * size with up to WINDOW of them not yet echoed, more than the link's queue
 * holds (1024 frames): the frames its tx queue cannot take yet must wait,
 * not be lost (a loss-free link loses nothing), and every echo is checked.
 *
 * -b: after the ping-pongs, a second client endpoint, which bundles
 * (usiw_udp_bundle), sends COUNT datagrams of 63 bytes back to back with no
 * progress between them: they must leave several to a frame (at least 4 on
 * average), and the server's echo of each frame's payload must split again
 * into exactly those datagrams, each checked.
 *
 * -m: the same from MUX_ENDPOINTS bundling client endpoints in turn, each
 * datagram to one of the server's two bundling ports (PORT+1, PORT+2, which
 * echo through themselves): frames that take several endpoints' datagrams
 * (mux frames) must carry them out, at least 4 to a frame, and the echoes
 * must come back in mux frames too (more datagrams delivered than frames
 * received), each to the endpoint that sent it.
 *
 * -g MS: after the server's goodbye echo (the server then exits, and a new
 * server process takes its place), the client keeps polling its engine
 * across the server's exit until its link is down, at most MS milliseconds,
 * and then until it is up again with the new server, at most MS more, and
 * runs its ping-pongs again with that one; it fails if the link never went
 * down or never came back.  memif handles a peer's disconnect by unmapping
 * the shared rings, unlocked against a burst in progress: polling through
 * the unmap is what used to crash, and the engine pauses the port for it
 * and connects again (libusiw/memif_link.c).
 *
 * -k: the server keeps serving after the client's goodbye until SIGTERM or
 * SIGINT (a signal before the goodbye ends it at the goodbye), so that its
 * counters can be read however fast the client was.
 *
 * -c CLIENTS: the server serves until the goodbye of the CLIENTS-th client
 * (one after the other, each a process of its own: a memif server's link
 * goes down with each and comes up with the next); the last must have
 * found its link down (link_downs) CLIENTS - 1 times.
 *
 * The engine reads its configuration from USIW_CONFIG. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

#define DEFAULT_PORT 7471
#define BYE_SEQ UINT32_MAX
#define RESEND_NS (200 * 1000000LL)
#define MAX_RESENDS 10
#define LINGER_NS (RESEND_NS + RESEND_NS / 2)
#define MAX_SIZES 16
#define WARMUP 200

struct ping {
	uint32_t seq;
	uint32_t len;   /* whole payload, this header included */
};

/* The rx callbacks fill these in the thread that runs progress: with
 * progress = thread that is the engine's lcore, not main, so what main
 * waits on is atomic (got is set after the echo it announces). */
struct state {
	struct usiw_udp_endpoint *ep;
	uint8_t buf[9216];
	size_t len;
	uint32_t src_ip;
	uint16_t src_port;
	atomic_bool got;
	_Atomic uint64_t echoed;
	atomic_uint byes;
	/* -w: echoes of the stream, checked as they come (client_rx) */
	uint8_t *stream_seen;         /* by seq - STREAM_SEQ0 */
	uint32_t stream_count;
	_Atomic uint32_t stream_echoes;
	size_t stream_size;
	atomic_bool stream_bad;
};

#define STREAM_SEQ0 0x40000000u
#define BUNDLE_SEQ0 0x60000000u
/* Odd, so that in a mux frame every record after the first starts at an
 * odd offset: the sender must neither read nor write one in place as an
 * aligned struct (the sanitizer builds check). */
#define BUNDLE_DATAGRAM 63
#define MUX_ENDPOINTS 4

/* -b, -m: the bundling endpoints' echoes, checked as they come (bundle_rx). */
struct bundle_state {
	uint8_t *seen;                /* by seq - BUNDLE_SEQ0 */
	unsigned count;
	unsigned endpoints;           /* datagram i is sent by endpoint i % endpoints */
	atomic_uint echoed;
	atomic_bool bad;
};

/* One of the bundling endpoints: the echoes it receives must be its own. */
struct bundle_endpoint {
	struct bundle_state *b;
	unsigned index;
	struct usiw_udp_endpoint *ep;
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31u + i * 7u + 1u);
}

static void server_rx(void *ctx, uint32_t src_ip, uint16_t src_port, const void *data, size_t len)
{
	struct state *s = ctx;
	struct ping p;
	if (len < sizeof(p))
		return;
	memcpy(&p, data, sizeof(p));
	/* Echo from inside the callback: the engine allows sending here. */
	int rc = usiw_udp_send(s->ep, src_ip, src_port, data, sizeof(p),
			       (const uint8_t *)data + sizeof(p), len - sizeof(p));
	if (rc)
		fprintf(stderr, "server: echo of seq %u failed: %s\n", p.seq, strerror(-rc));
	else
		s->echoed++;
	if (p.seq == BYE_SEQ)
		s->byes++;
}

static bool stream_echo_ok(struct state *s, const uint8_t *data, size_t len)
{
	struct ping p;

	memcpy(&p, data, sizeof(p));
	uint32_t i = p.seq - STREAM_SEQ0;
	if (i >= s->stream_count || s->stream_seen[i] || len != s->stream_size || p.len != len) {
		fprintf(stderr, "client: stream: unexpected echo seq %u, %zu bytes\n", p.seq, len);
		return false;
	}
	for (size_t b = sizeof(p); b < len; b++)
		if (data[b] != pattern(p.seq, b)) {
			fprintf(stderr, "client: stream: seq %u: byte %zu is %#x, expected %#x\n",
				p.seq, b, data[b], pattern(p.seq, b));
			return false;
		}
	s->stream_seen[i] = 1;
	return true;
}

static void client_rx(void *ctx, uint32_t src_ip, uint16_t src_port, const void *data, size_t len)
{
	struct state *s = ctx;

	if (s->stream_seen && len >= sizeof(struct ping)) {
		if (stream_echo_ok(s, data, len))
			s->stream_echoes++;
		else
			s->stream_bad = true;
		return;
	}
	if (len > sizeof(s->buf))
		len = sizeof(s->buf);
	memcpy(s->buf, data, len);
	s->len = len;
	s->src_ip = src_ip;
	s->src_port = src_port;
	s->got = true;
}

static void print_stats(const char *who, struct usiw_engine *e)
{
	struct usiw_engine_stats st;
	usiw_engine_stats(e, &st);
	printf("%s: stats rx %lu pkts %lu B, tx %lu pkts %lu B, datagrams rx %lu tx %lu, "
	       "drops: no-endpoint %lu bad-cksum %lu not-for-us %lu malformed %lu no-mbuf %lu "
	       "tx-full %lu arp %lu; arp req %lu rep %lu rx %lu\n", who,
	       st.rx_packets, st.rx_bytes, st.tx_packets, st.tx_bytes, st.rx_datagrams,
	       st.tx_datagrams, st.drop_no_endpoint, st.drop_bad_checksum, st.drop_not_for_us,
	       st.drop_malformed, st.drop_no_mbuf, st.drop_tx_full, st.drop_arp,
	       st.arp_requests_sent, st.arp_replies_sent, st.arp_received);
}

/* The server's endpoint on port (and its state), echoing through itself;
 * bundle: a bundling one (-m's ports).  NULL if it cannot open. */
static struct state *serve_port(struct usiw_engine *e, uint16_t port, bool bundle)
{
	struct state *s = calloc(1, sizeof(*s));
	int rc = s ? usiw_udp_open(e, port, server_rx, s, &s->ep) : -ENOMEM;

	if (rc) {
		fprintf(stderr, "server: cannot open UDP port %u: %s\n", port, strerror(-rc));
		free(s);
		return NULL;
	}
	if (bundle) {
		usiw_udp_skip_checksum(s->ep);
		usiw_udp_bundle(s->ep);
	}
	return s;
}

static int run_server(struct usiw_engine *e, uint16_t port, int timeout_s, bool keep_serving,
		      unsigned clients)
{
	struct state *s = serve_port(e, port, false);
	struct state *mux[2] = { serve_port(e, (uint16_t)(port + 1), true),
				 serve_port(e, (uint16_t)(port + 2), true) };
	int ok = 0;

	if (!s || !mux[0] || !mux[1])
		goto out;
	char ip[INET_ADDRSTRLEN];
	uint32_t addr = usiw_engine_port_attr(e)->ipv4;
	inet_ntop(AF_INET, &addr, ip, sizeof(ip));
	printf("server: listening on %s:%u (and %u, %u bundling)\n", ip, usiw_udp_port(s->ep),
	       port + 1, port + 2);
	fflush(stdout);
	int64_t deadline = now_ns() + (int64_t)timeout_s * 1000000000;
	if (keep_serving) {
		struct sigaction sa = { .sa_handler = request_stop };
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	while (!(s->byes >= clients && (!keep_serving || stop_requested)) && now_ns() < deadline)
		usiw_engine_progress(e);
	/* Keep echoing for a while after the goodbye: over memif the echo is
	 * in a ring that the peer resets when this process exits, so a client
	 * not scheduled between the echo and the exit would lose it (seen in
	 * CI with both sides sharing a CPU); a resent goodbye is echoed too. */
	for (const int64_t linger_end = now_ns() + LINGER_NS; now_ns() < linger_end;)
		usiw_engine_progress(e);
	const bool all_came = s->byes >= clients;
	printf("server: echoed %lu datagrams (%lu on the bundling ports) to %u client(s)%s\n",
	       (unsigned long)(s->echoed + mux[0]->echoed + mux[1]->echoed),
	       (unsigned long)(mux[0]->echoed + mux[1]->echoed), s->byes,
	       all_came ? "" : " (timed out)");
	print_stats("server", e);
	struct usiw_engine_stats st;
	usiw_engine_stats(e, &st);
	ok = all_came && st.link_downs >= clients - 1;
	if (all_came && !ok)
		fprintf(stderr, "server: the link went down %lu times for %u clients one after "
			"the other\n", (unsigned long)st.link_downs, clients);
out:
	for (unsigned k = 0; k < 2; k++)
		if (mux[k]) {
			usiw_udp_close(mux[k]->ep);
			free(mux[k]);
		}
	if (s) {
		usiw_udp_close(s->ep);
		free(s);
	}
	return ok ? 0 : 1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* One datagram out and its echo back, resent after RESEND_NS.  scribble:
 * overwrite the sent buffer as soon as the send returns. */
static int ping(struct usiw_engine *e, struct state *s, uint32_t dst, uint16_t port, uint32_t seq,
		size_t size, bool scribble, int64_t *rtt)
{
	uint8_t out[9216];
	struct ping p = { seq, (uint32_t)size };
	memcpy(out, &p, sizeof(p));

	for (int attempt = 0; attempt <= MAX_RESENDS; attempt++) {
		for (size_t i = sizeof(p); i < size; i++)
			out[i] = pattern(seq, i);
		s->got = false;
		int64_t t0 = now_ns();
		int rc;
		while ((rc = usiw_udp_send(s->ep, dst, port, out, sizeof(p), out + sizeof(p),
					   size - sizeof(p))) == -EAGAIN)
			usiw_engine_progress(e);
		if (rc) {
			fprintf(stderr, "client: send of %zu bytes failed: %s\n", size, strerror(-rc));
			return -1;
		}
		if (scribble)
			memset(out + sizeof(p), 0xee, size - sizeof(p));
		while (!s->got && now_ns() - t0 < RESEND_NS)
			usiw_engine_progress(e);
		while (s->got) {
			int64_t t1 = now_ns();
			struct ping back;
			memcpy(&back, s->buf, sizeof(back));
			if (back.seq != seq) {   /* a late echo of an earlier resend */
				s->got = false;
				while (!s->got && now_ns() - t0 < RESEND_NS)
					usiw_engine_progress(e);
				continue;
			}
			if (s->len != size || back.len != size || s->src_ip != dst || s->src_port != port) {
				fprintf(stderr, "client: seq %u: echo of %zu bytes from port %u, "
					"expected %zu from %u\n", seq, s->len, s->src_port, size, port);
				return -1;
			}
			for (size_t i = sizeof(p); i < size; i++)
				if (s->buf[i] != pattern(seq, i)) {
					fprintf(stderr, "client: seq %u size %zu: byte %zu is %#x, "
						"expected %#x\n", seq, size, i, s->buf[i],
						pattern(seq, i));
					return -1;
				}
			*rtt = t1 - t0;
			return attempt;
		}
	}
	fprintf(stderr, "client: no echo for seq %u (%zu bytes) after %d sends\n", seq, size,
		MAX_RESENDS + 1);
	return -1;
}

/* -w: count datagrams of `size` with up to `window` not yet echoed; each
 * echo is checked (client_rx).  Returns 0 if every one came back. */
static int stream(struct usiw_engine *e, struct state *s, uint32_t dst, uint16_t port,
		  unsigned count, size_t size, unsigned window)
{
	uint8_t out[9216];
	unsigned sent = 0;

	s->stream_seen = calloc(count, 1);
	s->stream_count = count;
	s->stream_size = size;
	s->stream_echoes = 0;
	int64_t last_progress = now_ns();
	while (s->stream_echoes < count && !s->stream_bad &&
	       now_ns() - last_progress < RESEND_NS * MAX_RESENDS) {
		if (sent < count && sent - s->stream_echoes < window) {
			struct ping p = { STREAM_SEQ0 + sent, (uint32_t)size };
			memcpy(out, &p, sizeof(p));
			for (size_t b = sizeof(p); b < size; b++)
				out[b] = pattern(p.seq, b);
			int rc = usiw_udp_send(s->ep, dst, port, out, sizeof(p), out + sizeof(p),
					       size - sizeof(p));
			if (rc == 0) {
				sent++;
				continue;
			}
			if (rc != -EAGAIN) {
				fprintf(stderr, "client: stream: send failed: %s\n", strerror(-rc));
				break;
			}
		}
		unsigned before = s->stream_echoes;
		usiw_engine_progress(e);
		if (s->stream_echoes != before)
			last_progress = now_ns();
	}
	printf("client: stream of %u x %zu B, window %u: %u echoes\n", count, size, window,
	       s->stream_echoes);
	int ok = s->stream_echoes == count && !s->stream_bad;
	free(s->stream_seen);
	s->stream_seen = NULL;
	return ok ? 0 : -1;
}

static void bundle_rx(void *ctx, uint32_t src_ip, uint16_t src_port, const void *data,
		      size_t len)
{
	const struct bundle_endpoint *be = ctx;
	struct bundle_state *b = be->b;
	const uint8_t *d = data;

	(void)src_ip;
	(void)src_port;
	if (len % BUNDLE_DATAGRAM) {
		fprintf(stderr, "client: bundle: an echo of %zu bytes is not whole datagrams\n", len);
		b->bad = true;
		return;
	}
	for (size_t off = 0; off < len; off += BUNDLE_DATAGRAM) {
		struct ping p;
		memcpy(&p, d + off, sizeof(p));
		uint32_t i = p.seq - BUNDLE_SEQ0;
		if (i >= b->count || b->seen[i] || p.len != BUNDLE_DATAGRAM) {
			fprintf(stderr, "client: bundle: unexpected datagram seq %#x len %u\n", p.seq,
				p.len);
			b->bad = true;
			return;
		}
		if (i % b->endpoints != be->index) {
			fprintf(stderr, "client: bundle: endpoint %u received the echo of seq %#x, "
				"which endpoint %u sent\n", be->index, p.seq, i % b->endpoints);
			b->bad = true;
			return;
		}
		for (size_t k = sizeof(p); k < BUNDLE_DATAGRAM; k++)
			if (d[off + k] != pattern(p.seq, k)) {
				fprintf(stderr, "client: bundle: seq %#x: byte %zu is %#x, expected %#x\n",
					p.seq, k, d[off + k], pattern(p.seq, k));
				b->bad = true;
				return;
			}
		b->seen[i] = 1;
		b->echoed++;
	}
}

/* Polls until the link is up (or down), at most ms; returns the polls
 * made, or -1 if the link never got there. */
static long poll_until_link(struct usiw_engine *e, bool up, unsigned ms)
{
	const int64_t end = now_ns() + (int64_t)ms * 1000000;
	long polls = 0;

	while (usiw_engine_port_attr(e)->link_up != up) {
		if (now_ns() >= end)
			return -1;
		usiw_engine_progress(e);
		polls++;
	}
	return polls;
}

/* -g: see the top of the file.  Returns 0 if the link went down with the
 * server and came up again with the next. */
static int poll_past_peer_restart(struct usiw_engine *e, unsigned ms)
{
	int64_t t0 = now_ns();
	long polls = poll_until_link(e, false, ms);
	if (polls < 0) {
		fprintf(stderr, "client: the link stayed up for %u ms after the server's goodbye\n",
			ms);
		return -1;
	}
	printf("client: link down %.1f ms after the server's goodbye (%ld polls)\n",
	       (now_ns() - t0) / 1e6, polls);
	t0 = now_ns();
	polls = poll_until_link(e, true, ms);
	if (polls < 0) {
		fprintf(stderr, "client: the link did not come up again within %u ms\n", ms);
		return -1;
	}
	printf("client: link up again %.1f ms later (%ld polls)\n", (now_ns() - t0) / 1e6, polls);
	return 0;
}

/* -b, -m: see the top of the file; endpoints 1 is -b, more is -m.
 * Returns 0 if every datagram came back to the endpoint that sent it and
 * they left at least 4 to a frame on average. */
static int bundle_burst(struct usiw_engine *e, uint32_t dst, uint16_t port, unsigned count,
			unsigned endpoints)
{
	struct bundle_state b = { .seen = calloc(count, 1), .count = count,
				  .endpoints = endpoints };
	struct bundle_endpoint be[MUX_ENDPOINTS] = {0};
	struct usiw_engine_stats before, after;
	uint8_t out[BUNDLE_DATAGRAM];
	const char *what = endpoints > 1 ? "mux" : "bundle";
	int rc = 0;

	for (unsigned k = 0; k < endpoints && rc == 0; k++) {
		be[k] = (struct bundle_endpoint){ .b = &b, .index = k };
		rc = usiw_udp_open(e, 0, bundle_rx, &be[k], &be[k].ep);
		if (rc) {
			fprintf(stderr, "client: cannot open a UDP port: %s\n", strerror(-rc));
			break;
		}
		usiw_udp_skip_checksum(be[k].ep);
		usiw_udp_bundle(be[k].ep);
	}
	usiw_engine_stats(e, &before);
	for (unsigned i = 0; i < count && rc == 0;) {
		struct ping p = { BUNDLE_SEQ0 + i, BUNDLE_DATAGRAM };
		/* -m: every other datagram to the server's other bundling port. */
		const uint16_t to = endpoints > 1 ? (uint16_t)(port + 1 + i % 2) : port;
		memcpy(out, &p, sizeof(p));
		for (size_t k = sizeof(p); k < BUNDLE_DATAGRAM; k++)
			out[k] = pattern(p.seq, k);
		rc = usiw_udp_send(be[i % endpoints].ep, dst, to, out, sizeof(p), out + sizeof(p),
				   BUNDLE_DATAGRAM - sizeof(p));
		if (rc == 0) {
			i++;
		} else if (rc == -EAGAIN) {
			usiw_engine_progress(e);
			rc = 0;
		} else {
			fprintf(stderr, "client: %s: send failed: %s\n", what, strerror(-rc));
		}
	}
	int64_t t0 = now_ns();
	while (rc == 0 && b.echoed < count && !b.bad && now_ns() - t0 < RESEND_NS)
		usiw_engine_progress(e);
	usiw_engine_stats(e, &after);
	const uint64_t frames = after.tx_packets - before.tx_packets;
	const uint64_t bundled = after.tx_bundled - before.tx_bundled;
	const uint64_t muxed = after.tx_mux_frames - before.tx_mux_frames;
	const uint64_t frames_in = after.rx_packets - before.rx_packets;
	const uint64_t datagrams_in = after.rx_datagrams - before.rx_datagrams;
	printf("client: %s of %u x %u B over %u endpoint(s): %u echoed; sent in %lu frames "
	       "(%lu of them mux frames), %lu datagrams bundled into another's frame; echoes "
	       "in %lu frames, %lu datagrams\n", what, count, BUNDLE_DATAGRAM, endpoints,
	       b.echoed, frames, muxed, bundled, frames_in, datagrams_in);
	for (unsigned k = 0; k < endpoints; k++)
		usiw_udp_close(be[k].ep);
	free(b.seen);
	if (rc || b.echoed != count || b.bad)
		return -1;
	if (frames * 4 > count || bundled + frames < count) {
		fprintf(stderr, "client: %s: %u datagrams took %lu frames\n", what, count, frames);
		return -1;
	}
	if (endpoints > 1 && (muxed == 0 || datagrams_in <= frames_in)) {
		fprintf(stderr, "client: mux: %lu mux frames out, %lu datagrams in %lu frames in: "
			"the endpoints' datagrams did not share frames\n", muxed, datagrams_in,
			frames_in);
		return -1;
	}
	return 0;
}

/* WARMUP round trips, then count of each size, each echo checked and the
 * RTTs printed.  Returns 0 or 1 (an echo missing or wrong). */
static int pingpongs(struct usiw_engine *e, struct state *s, uint32_t dst, uint16_t port,
		     uint32_t *seq, unsigned count, const size_t *sizes, unsigned nsizes,
		     unsigned *resends)
{
	int64_t *rtts = calloc(count, sizeof(*rtts));
	int status = 0;

	/* Warm caches and both sides' spin loops before measuring. */
	for (unsigned i = 0; i < WARMUP && status == 0; i++)
		if (ping(e, s, dst, port, (*seq)++, sizes[0], false, &rtts[0]) < 0)
			status = 1;
	for (unsigned k = 0; k < nsizes && status == 0; k++) {
		for (unsigned i = 0; i < count; i++) {
			int r = ping(e, s, dst, port, (*seq)++, sizes[k], false, &rtts[i]);
			if (r < 0) {
				status = 1;
				break;
			}
			*resends += (unsigned)r;
		}
		if (status)
			break;
		qsort(rtts, count, sizeof(*rtts), cmp_i64);
		printf("client: %5zu B x %u: RTT min %.2f us, median %.2f us, p99 %.2f us\n",
		       sizes[k], count, rtts[0] / 1e3, rtts[count / 2] / 1e3,
		       rtts[(count * 99) / 100] / 1e3);
	}
	free(rtts);
	return status;
}

static int run_client(struct usiw_engine *e, const char *server, uint16_t port, unsigned count,
		      size_t *sizes, unsigned nsizes, bool reference, unsigned window, bool bundle,
		      bool mux, unsigned gone_ms)
{
	struct in_addr dst;
	if (inet_pton(AF_INET, server, &dst) != 1) {
		fprintf(stderr, "client: '%s' is not an IPv4 address\n", server);
		return 2;
	}
	struct state *s = calloc(1, sizeof(*s));
	int rc = usiw_udp_open(e, 0, client_rx, s, &s->ep);
	if (rc) {
		fprintf(stderr, "client: cannot open a UDP port: %s\n", strerror(-rc));
		return 1;
	}
	uint32_t seq = 1;
	if (reference) {
		int64_t rtt;
		usiw_udp_reference_data(s->ep);
		if (ping(e, s, dst.s_addr, port, seq++, usiw_udp_max_payload(e), true, &rtt) < 0) {
			fprintf(stderr, "client: the datagram sent before ARP resolved came back "
				"wrong or not at all\n");
			return 1;
		}
		printf("client: a datagram sent before ARP resolved was copied into the queue\n");
	}
	int64_t t0 = now_ns();
	rc = usiw_engine_resolve(e, dst.s_addr, 5000);
	if (rc) {
		fprintf(stderr, "client: %s\n", usiw_engine_last_error());
		return 1;
	}
	printf("client: ARP resolved %s in %.1f us; local port %u\n", server,
	       (now_ns() - t0) / 1e3, usiw_udp_port(s->ep));

	unsigned resends = 0;
	int status = pingpongs(e, s, dst.s_addr, port, &seq, count, sizes, nsizes, &resends);
	if (window && status == 0 &&
	    stream(e, s, dst.s_addr, port, count, sizes[nsizes - 1], window) < 0) {
		fprintf(stderr, "client: stream: datagrams lost\n");
		status = 1;
	}
	if (bundle && status == 0 && bundle_burst(e, dst.s_addr, port, count, 1) < 0)
		status = 1;
	if (mux && status == 0 && bundle_burst(e, dst.s_addr, port, count, MUX_ENDPOINTS) < 0)
		status = 1;
	int64_t bye_rtt;
	if (ping(e, s, dst.s_addr, port, BYE_SEQ, sizeof(struct ping), false, &bye_rtt) < 0)
		status = 1;
	if (gone_ms && status == 0) {
		if (poll_past_peer_restart(e, gone_ms) < 0 ||
		    pingpongs(e, s, dst.s_addr, port, &seq, count, sizes, nsizes, &resends) ||
		    ping(e, s, dst.s_addr, port, BYE_SEQ, sizeof(struct ping), false, &bye_rtt) < 0)
			status = 1;
		else
			printf("client: the server's next process echoed everything too\n");
	}
	printf("client: %s, %u resends\n", status ? "FAILED" : "all echoes correct", resends);
	print_stats("client", e);
	usiw_udp_close(s->ep);
	free(s);
	return status;
}

static void usage(void)
{
	fprintf(stderr, "usage: usiw-udp-pingpong server [-p PORT] [-t SECONDS] [-k] [-c CLIENTS]\n"
		"       usiw-udp-pingpong client SERVER_IPV4 [-p PORT] [-n COUNT] "
		"[-s SIZE,SIZE,...|max] [-t SECONDS] [-r] [-w WINDOW] [-b] [-m] [-g MS]\n");
}

int main(int argc, char **argv)
{
	uint16_t port = DEFAULT_PORT;
	unsigned count = 1000, window = 0, gone_ms = 0, clients = 1;
	int timeout_s = 30;
	const char *sizes_arg = "8,64,512,1024,max";
	bool reference = false, keep_serving = false, bundle = false, mux = false;
	int opt;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		usage();
		return 2;
	}
	const bool server = !strcmp(argv[1], "server");
	optind = 2;
	while ((opt = getopt(argc, argv, "p:n:s:t:rkw:bmg:c:")) != -1) {
		switch (opt) {
		case 'p': port = (uint16_t)atoi(optarg); break;
		case 'n': count = (unsigned)atoi(optarg); break;
		case 's': sizes_arg = optarg; break;
		case 't': timeout_s = atoi(optarg); break;
		case 'r': reference = true; break;
		case 'k': keep_serving = true; break;
		case 'w': window = (unsigned)atoi(optarg); break;
		case 'b': bundle = true; break;
		case 'm': mux = true; break;
		case 'g': gone_ms = (unsigned)atoi(optarg); break;
		case 'c': clients = (unsigned)atoi(optarg); break;
		default: usage(); return 2;
		}
	}
	if ((!server && optind != argc - 1) || (server && optind != argc) || count == 0 ||
	    clients == 0) {
		usage();
		return 2;
	}

	struct usiw_engine *e;
	int rc = usiw_engine_get(&e);
	if (rc) {
		fprintf(stderr, "%s: usiw engine: %s\n", argv[1], usiw_engine_last_error());
		return 1;
	}
	const struct usiw_port_attr *a = usiw_engine_port_attr(e);
	printf("%s: port %02x:%02x:%02x:%02x:%02x:%02x mtu %u link %s\n", argv[1], a->mac[0],
	       a->mac[1], a->mac[2], a->mac[3], a->mac[4], a->mac[5], a->mtu,
	       a->link_up ? "up" : "down");

	if (server) {
		rc = run_server(e, port, timeout_s, keep_serving, clients);
	} else {
		size_t sizes[MAX_SIZES];
		unsigned n = 0;
		char *list = strdup(sizes_arg), *save = NULL;
		for (char *t = strtok_r(list, ",", &save); t && n < MAX_SIZES;
		     t = strtok_r(NULL, ",", &save)) {
			size_t v = !strcmp(t, "max") ? usiw_udp_max_payload(e) : strtoul(t, NULL, 10);
			if (v < sizeof(struct ping) || v > usiw_udp_max_payload(e)) {
				fprintf(stderr, "client: size %s not in %zu..%zu\n", t,
					sizeof(struct ping), usiw_udp_max_payload(e));
				usiw_engine_put(e);
				return 2;
			}
			sizes[n++] = v;
		}
		free(list);
		rc = run_client(e, argv[optind], port, count, sizes, n, reference, window, bundle,
				mux, gone_ms);
	}
	fflush(stdout);
	usiw_engine_put(e);
	return rc;
}
