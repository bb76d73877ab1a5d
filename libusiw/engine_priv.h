/* The engine's own state, shared by the engine*.c, port.c, arp.c and demux.c
 * files.  Nothing outside libusiw/ (and the engine's tests) includes this. */
#ifndef USIW_ENGINE_PRIV_H
#define USIW_ENGINE_PRIV_H

#include <stdarg.h>
#include <stdatomic.h>

#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "arp.h"
#include "config.h"
#include "demux.h"
#include "engine.h"
#include "memif_link.h"
#include "port.h"
#include "rlock.h"
#include "tx_backlog.h"

extern int usiw_logtype;
#define USIW_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, usiw_logtype, "usiw: " fmt "\n", ##__VA_ARGS__)

/* Frames addressed to our own IPv4 go through this ring instead of the port,
 * and are delivered by the next progress call (never inside the send). */
#define USIW_LOOPBACK_RING_SIZE 256
#define USIW_RX_BURST 32

struct usiw_engine {
	struct usiw_config cfg;
	int refs;

	/* Serializes everything that touches the port, the ARP cache and the
	 * demux table (usiw_engine_lock).  Recursive because rx callbacks run
	 * under it and may send or open endpoints. */
	struct usiw_rlock lock;

	struct usiw_port port;
	struct usiw_memif_link memif_link;
	struct usiw_port_attr attr;
	struct usiw_arp arp;
	struct usiw_demux demux;
	struct rte_ring *loopback;
	uint32_t tx_buffered_bytes;   /* in port.txb (usiw_engine_tx_frame) */
	uint64_t tx_flushes;          /* usiw_engine_tx_flushes */
	/* The last frame in port.txb if a bundling endpoint built it (and
	 * may append to it), else NULL (usiw_udp_bundle). */
	struct rte_mbuf *tx_bundle_tail;
	struct usiw_tx_backlog tx_backlog;  /* frames the tx queue refused */
	/* Shared by every frame that references a sender's data: a count that
	 * never reaches 0 (the data is not ours to free). */
	struct rte_mbuf_ext_shared_info tx_ref_shinfo;
	uint16_t ip_id;
	/* Where the last record of tx_bundle_tail starts if that is a mux
	 * frame, in bytes from its UDP header (engine_udp.c). */
	uint16_t tx_mux_record;
	usiw_udp_closed_port_fn closed_port_answer;

	struct usiw_engine_stats stats;

	/* thread mode */
	_Atomic(usiw_engine_poll_fn) thread_poll;  /* NULL: the engine's own pass */
	unsigned thread_lcore;
	atomic_bool thread_stop;
	bool thread_running;

	/* Holds a datagram received in several mbuf segments, so that the rx
	 * callback always sees contiguous data. */
	uint8_t rx_scratch[RTE_ETHER_MAX_JUMBO_FRAME_LEN];
};

struct usiw_udp_endpoint {
	struct usiw_engine *engine;
	uint16_t port;          /* host order */
	bool skip_checksum;     /* usiw_udp_skip_checksum */
	bool reference_data;    /* usiw_udp_reference_data */
	bool bundle;            /* usiw_udp_bundle */
	bool streaming;         /* usiw_udp_set_streaming */
	usiw_udp_rx_fn rx;
	void *ctx;
	struct usiw_demux_rule rule;
};

/* Sets the calling thread's last error message. */
void usiw_engine_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* EAL: started once per process (engine_eal.c). */
int usiw_eal_start(const struct usiw_config *cfg);

/* Registers the calling thread as a DPDK lcore (for a mempool cache) on its
 * first packet work; engine_lcore.c says why. */
void usiw_engine_lcore_slow(void);
extern _Thread_local bool usiw_engine_lcore_tried;
static inline void usiw_engine_lcore_ensure(void)
{
	if (__builtin_expect(!usiw_engine_lcore_tried, 0))
		usiw_engine_lcore_slow();
}

/* One progress pass under the lock; returns the number of frames handled. */
unsigned usiw_engine_poll(struct usiw_engine *e);
/* clock.c: scales usiw_clock_ns once EAL has calibrated the TSC (and by
 * USIW_CLOCK_SLOWDOWN); a bad value of that is an engine error. */
int usiw_clock_init(void);

/* Hands a complete Ethernet frame (dst MAC already set) to the port. */
void usiw_engine_tx_frame(struct usiw_engine *e, struct rte_mbuf *m);
/* The last frame waiting for the flush is a bundle with room for another
 * small datagram (engine_udp.c). */
bool usiw_udp_bundle_has_room(const struct usiw_engine *e);
/* The last frame handed to the port grew by len bytes (a bundle). */
void usiw_engine_tx_frame_grew(struct usiw_engine *e, uint32_t len);

/* At engine start: what usiw_udp_reference_data needs (engine_udp.c). */
void usiw_udp_engine_init(struct usiw_engine *e);

/* IPv4/UDP receive path (engine_udp.c).  Never inlined: bench/run counts
 * the receive path's instructions from its entry (callgrind's
 * --toggle-collect), and link-time optimization could inline it. */
void usiw_udp_input(struct usiw_engine *e, struct rte_mbuf *m) __attribute__((noinline));

/* thread mode (engine_thread.c) */
int usiw_engine_thread_start(struct usiw_engine *e);
void usiw_engine_thread_stop(struct usiw_engine *e);

/* rte_telemetry /usiw/stats (engine_telemetry.c) */
void usiw_engine_telemetry_register(void);
/* A snapshot of the current engine's counters, or -ENODEV if there is none. */
int usiw_engine_stats_current(struct usiw_engine_stats *out);

#endif
