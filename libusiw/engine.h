/* The boundary between the verbs provider (libusiw/verbs) and the DPDK engine
 * (libusiw/engine*.c).  The verbs side sees no DPDK type through it. */
#ifndef USIW_ENGINE_H
#define USIW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct usiw_engine;
struct usiw_config;

/* What the one Ethernet port of an engine looks like to the verbs layer. */
struct usiw_port_attr {
	uint8_t mac[6];
	uint32_t ipv4;        /* network byte order */
	uint8_t prefix_len;
	uint16_t mtu;         /* IP MTU of the link, bytes */
	bool link_up;
	uint32_t speed_mbps;
};

/* Starts the engine on first use (EAL, port, queues, mempools) from the
 * configuration file (USIW_CONFIG or the default path), and takes a reference.
 * Returns 0, or a negative errno with a message for a person in
 * usiw_engine_last_error(). */
int usiw_engine_get(struct usiw_engine **engine);
void usiw_engine_put(struct usiw_engine *engine);
const char *usiw_engine_last_error(void);
const struct usiw_port_attr *usiw_engine_port_attr(const struct usiw_engine *engine);

/* ---- Datagram API: what the QP layer sends and receives through. ----
 *
 * Byte order: IPv4 addresses are in network byte order (as in
 * usiw_port_attr.ipv4); UDP port numbers are in host byte order.
 *
 * Threads: every function below may be called from any application thread;
 * the engine serializes them internally.  Receive callbacks run inside
 * usiw_engine_progress (or the engine's thread in thread mode) and may call
 * usiw_udp_send, usiw_udp_open and usiw_udp_close themselves. */

struct usiw_udp_endpoint;

/* Called once per received datagram.  data is valid only during the call
 * (it points into the receive buffer); copy what must be kept. */
typedef void (*usiw_udp_rx_fn)(void *ctx, uint32_t src_ipv4, uint16_t src_port,
			       const void *data, size_t len);

/* Binds a UDP port (0 = a free port from 49152-65535).  Returns 0, -EADDRINUSE,
 * -ENOMEM, or -EINVAL. */
int usiw_udp_open(struct usiw_engine *engine, uint16_t port, usiw_udp_rx_fn rx, void *ctx,
		  struct usiw_udp_endpoint **out);
void usiw_udp_close(struct usiw_udp_endpoint *ep);
uint16_t usiw_udp_port(const struct usiw_udp_endpoint *ep);

/* Datagrams sent from ep carry no UDP checksum (0: none, which IPv4 allows)
 * when the port cannot compute it in hardware.  For a ULP that checks its
 * own data end to end (TRP's CRC32C covers header and payload): it saves the
 * sum over every byte on both sides.  Received datagrams with a checksum are
 * still verified. */
void usiw_udp_skip_checksum(struct usiw_udp_endpoint *ep);

/* Datagrams sent from ep may reference their data instead of copying it,
 * where the port's driver copies each frame into its own ring when it
 * transmits (memif in copy mode, af_packet): data must then stay valid until
 * the end of the progress call that sends the frame.  For a ULP that keeps
 * its data until acknowledged anyway (TRP): it saves a copy of every large
 * datagram. */
void usiw_udp_reference_data(struct usiw_udp_endpoint *ep);

/* Datagrams sent from ep may be bundled: a datagram to the same peer port
 * as the frame built just before it, still waiting for the flush, is
 * appended to that frame's UDP payload if it fits the MTU, instead of
 * becoming a frame of its own.  For a ULP whose packets carry their own
 * length and can be split again by the receiver (TRP,
 * docs/protocol-trp.md 1.4): small messages then share the per-frame cost.
 * Only datagrams whose data is copied are bundled, and only with
 * usiw_udp_skip_checksum (a UDP checksum would have to be summed again). */
void usiw_udp_bundle(struct usiw_udp_endpoint *ep);
/* A bundling endpoint's sender says whether it streams (more datagrams to
 * the same peer are about to follow): while it does, data of 1 to 3 KiB is
 * copied rather than referenced, so that such datagrams bundle too. */
void usiw_udp_set_streaming(struct usiw_udp_endpoint *ep, bool streaming);

/* Largest hdr_len + data_len usiw_udp_send accepts: the IP MTU less the IPv4
 * and UDP headers. */
size_t usiw_udp_max_payload(const struct usiw_engine *engine);

/* Sends one datagram whose payload is hdr followed by data (both copied, but
 * see usiw_udp_reference_data).
 * The frame leaves at the end of the current or next progress call.
 * Returns:
 *   0             sent, or queued while the peer's MAC is being resolved (ARP);
 *   -EAGAIN       no buffer now (no mbuf, the ARP queue of that peer is full,
 *                 or so many frames wait for the port's full tx queue that
 *                 this one could not: tx_backlog.h): call progress and retry,
 *                 or let the reliability layer send it again;
 *   -EHOSTUNREACH the peer did not answer ARP (the queued datagrams to it were
 *                 dropped; a later send starts resolution again after a hold-off);
 *   -ENETUNREACH  the peer is not in the port's subnet (there is no router);
 *   -EMSGSIZE     hdr_len + data_len > usiw_udp_max_payload(). */
int usiw_udp_send(struct usiw_udp_endpoint *ep, uint32_t dst_ipv4, uint16_t dst_port,
		  const void *hdr, size_t hdr_len, const void *data, size_t data_len);

/* A datagram that reached a port nobody opened: the layer above may answer
 * it, as a kernel answers a TCP SYN to a closed port with a RST.  The
 * function writes its answer (at most reply_max bytes) to reply and returns
 * its length, or 0 to leave the datagram unanswered; the engine sends the
 * answer back to the datagram's sender from the port it reached.  It runs
 * like a receive callback, and must not call the engine.  NULL (the
 * default) answers nothing. */
typedef size_t (*usiw_udp_closed_port_fn)(const void *data, size_t len, void *reply,
					  size_t reply_max);
void usiw_udp_set_closed_port_answer(struct usiw_engine *engine, usiw_udp_closed_port_fn fn);

/* Receives a burst, answers ARP, delivers datagrams to their endpoints' rx
 * callbacks, retransmits ARP requests and flushes transmissions.  Never
 * blocks; returns at once (0) if another thread is already progressing.
 * Returns the number of frames it handled (received, looped back or sent).
 * In thread mode the engine's own thread calls it and applications need not. */
unsigned usiw_engine_progress(struct usiw_engine *engine);

/* Only the flush of buffered transmissions (what the last pass of
 * usiw_engine_progress does), for a caller that has just sent and expects
 * nothing yet: no receive, no timers.  Returns the frames sent; 0 at once if
 * another thread is progressing (it flushes). */
unsigned usiw_engine_flush(struct usiw_engine *engine);
/* usiw_engine_flush, unless the last frame waiting is a bundle that more
 * datagrams can join (usiw_udp_bundle): then nothing leaves now and it
 * returns false, for a caller that streams small datagrams and lets them
 * gather.  True if it flushed, or another thread is progressing (which
 * flushes). */
bool usiw_engine_flush_unless_bundling(struct usiw_engine *engine);
/* How many flushes of the frames waiting for the port there were: equal
 * counts with frames waiting at the second mean that what waited at the
 * first waits still (usiw_progress_post_clock). */
uint64_t usiw_engine_tx_flushes(const struct usiw_engine *engine);
/* Whether frames wait for the next flush. */
bool usiw_engine_tx_waiting(const struct usiw_engine *engine);

/* The engine's lock (recursive; a waiter yields the CPU), which every call
 * above takes for as long as it works the engine.  A layer above guards its
 * own state with it too (the verbs provider, its QP stacks): its receive
 * callbacks then run under the lock its calls hold, and a call that sends
 * takes one lock, not two (rlock.h says what this lock costs). */
void usiw_engine_lock(struct usiw_engine *engine);
bool usiw_engine_trylock(struct usiw_engine *engine);
void usiw_engine_unlock(struct usiw_engine *engine);

/* Thread mode: makes the engine's thread call poll(engine) in its loop
 * instead of usiw_engine_progress, for a layer above with work of its own in
 * every pass (the verbs provider: its QPs' timers), which takes the engine's
 * lock in poll.  poll calls usiw_engine_progress itself and returns what it
 * handled (0 = idle, which lets the thread back off).  NULL restores the
 * engine's own pass.  Returns false, changing nothing, when the engine has
 * no thread (progress = inline). */
typedef unsigned (*usiw_engine_poll_fn)(struct usiw_engine *engine);
bool usiw_engine_set_thread_poll(struct usiw_engine *engine, usiw_engine_poll_fn poll);

/* The configuration the engine runs with (libusiw/config.h), for the layers
 * above that follow its [engine] progress settings. */
const struct usiw_config *usiw_engine_config(const struct usiw_engine *engine);

/* The engine's clock in nanoseconds (the TSC, scaled; any origin), for the
 * layers above: it is cheaper to read than clock_gettime.  Valid once an
 * engine has started (usiw_engine_get). */
uint64_t usiw_clock_ns(void);

/* memcpy's contract, at the speed of DPDK's copy whatever the alignment of
 * the two ends (libusiw/payload_copy.c): for received payload. */
void *usiw_payload_copy(void *dst, const void *src, size_t len);

/* Resolves the MAC of dst_ipv4, running progress until it is known or
 * timeout_ms passes.  Returns 0, or -EHOSTUNREACH / -ENETUNREACH with a
 * message in usiw_engine_last_error(). */
int usiw_engine_resolve(struct usiw_engine *engine, uint32_t dst_ipv4, unsigned timeout_ms);

struct usiw_engine_stats {
	uint64_t rx_packets, rx_bytes;      /* frames received on the port */
	uint64_t tx_packets, tx_bytes;      /* frames handed to the port */
	uint64_t rx_datagrams;              /* delivered to an endpoint */
	uint64_t tx_datagrams;              /* accepted by usiw_udp_send */
	uint64_t tx_bundled;                /* of those, appended to a frame (usiw_udp_bundle) */
	uint64_t tx_mux_frames;             /* frames that took several endpoints' datagrams */
	uint64_t drop_no_endpoint;          /* UDP to a port nobody opened */
	uint64_t closed_port_answers;       /* of those, answered (usiw_udp_set_closed_port_answer) */
	uint64_t drop_bad_checksum;         /* IPv4 or UDP checksum wrong */
	uint64_t drop_not_for_us;           /* other MAC, IP, protocol or ethertype */
	uint64_t drop_malformed;            /* truncated, bad lengths, IP fragments */
	uint64_t drop_no_mbuf;              /* send found no mbuf */
	uint64_t drop_tx_full;              /* the port's tx queue was full */
	uint64_t drop_arp;                  /* queued for a peer that never answered ARP */
	uint64_t arp_requests_sent, arp_replies_sent, arp_received;
	uint64_t link_downs;                /* a memif link seen down after it was up */
};

/* Counters of the layers above the engine (the verbs provider's QPs), served
 * with the engine's as the rte_telemetry command /usiw/qps[,FIRST]: a dict
 * of objects (one per QP, by name), each a dict of named counters, a page at
 * a time.  The report function runs in DPDK's telemetry thread; it calls
 * usiw_counters_object for each QP whose number is at least `first`, in
 * order of QP number, and, if that returns true (the QP is on the page),
 * usiw_counters_value for each of its counters; it returns the number of
 * QPs in all. */
struct usiw_counters;
bool usiw_counters_object(struct usiw_counters *out, const char *name);
void usiw_counters_value(struct usiw_counters *out, const char *name, uint64_t value);
typedef unsigned (*usiw_counters_report_fn)(struct usiw_counters *out, uint32_t first);
/* At most one report function per process; NULL removes it. */
void usiw_engine_set_qp_report(usiw_counters_report_fn report);

/* A snapshot of the counters, taken under the engine's lock. */
void usiw_engine_stats(struct usiw_engine *engine, struct usiw_engine_stats *out);

#endif
