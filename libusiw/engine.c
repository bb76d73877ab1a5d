/* The engine's life cycle (get/put), the progress loop and the counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "engine_priv.h"

RTE_LOG_REGISTER(usiw_logtype, usiw.engine, NOTICE);

/* One engine per process; get/put and the telemetry reader take this. */
static pthread_mutex_t engine_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct usiw_engine *the_engine;

static _Thread_local char last_error[1024];

void usiw_engine_set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	USIW_LOG(DEBUG, "%s", last_error);
}

const char *usiw_engine_last_error(void)
{
	return last_error;
}

const struct usiw_port_attr *usiw_engine_port_attr(const struct usiw_engine *engine)
{
	struct usiw_engine *e = (struct usiw_engine *)engine;
	e->attr.link_up = usiw_port_link(&e->port, &e->attr.speed_mbps);
	return &e->attr;
}

static void engine_free(struct usiw_engine *e)
{
	if (e->thread_running)
		usiw_engine_thread_stop(e);
	usiw_demux_fini(&e->demux);
	if (e->arp.table)
		usiw_arp_fini(e);
	if (e->loopback) {
		struct rte_mbuf *m;
		while (rte_ring_dequeue(e->loopback, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(e->loopback);
	}
	usiw_memif_link_release(&e->memif_link);
	/* The port's last flush may still put refused frames in the backlog. */
	usiw_port_close(&e->port);
	usiw_tx_backlog_fini(&e->tx_backlog);
	free(e);
}

/* Frames wait in the tx buffer for the end of the progress pass, so that
 * small ones leave in bursts (one af_packet burst is one system call).  Large
 * ones leave once this many bytes wait: a message of several segments then
 * reaches the peer while its later segments are still being built, instead
 * of all at once after the last (64 KiB over memif is 8 segments). */
#define TX_FLUSH_BYTES (16 * 1024)

/* The frames that wait for a full tx queue go first; while some still wait,
 * the buffered ones go behind them, so that frames leave in the order they
 * were sent. */
static unsigned tx_flush(struct usiw_engine *e)
{
	struct rte_eth_dev_tx_buffer *txb = e->port.txb;

	e->tx_buffered_bytes = 0;
	e->tx_bundle_tail = NULL;
	e->tx_flushes++;
	/* The backlog is nearly always empty, and its peek at its ring costs
	 * ~30 instructions even then: most polls of a busy-polling side have
	 * nothing to send, and most flushes only the buffered frames. */
	if (usiw_tx_backlog_empty(&e->tx_backlog))
		return usiw_port_tx_flush(&e->port);
	unsigned sent = usiw_tx_backlog_send(&e->tx_backlog, &e->port, 0);
	if (txb->length && !usiw_tx_backlog_empty(&e->tx_backlog)) {
		usiw_tx_backlog_add(&e->tx_backlog, txb->pkts, txb->length);
		txb->length = 0;
	} else {
		sent += usiw_port_tx_flush(&e->port);
	}
	return sent;
}

static int engine_start(struct usiw_engine *e)
{
	char err[1024];
	int rc;

	rc = usiw_eal_start(&e->cfg);
	if (rc)
		return rc;
	rc = usiw_clock_init();
	if (rc)
		return rc;
	usiw_udp_engine_init(e);
	rc = usiw_port_open(&e->port, &e->cfg, &e->stats.drop_tx_full, &e->stats.link_downs, err,
			    sizeof(err));
	if (rc) {
		usiw_engine_set_error("%s", err);
		return rc;
	}
	rc = usiw_tx_backlog_init(&e->tx_backlog, e->port.id, &e->stats.drop_tx_full);
	if (rc) {
		usiw_engine_set_error("%s: out of EAL memory for the tx backlog: give EAL more "
				      "memory ([eal] args -m)", e->cfg.path);
		return rc;
	}
	rte_eth_tx_buffer_set_err_callback(e->port.txb, usiw_tx_backlog_refused, &e->tx_backlog);
	if (e->port.is_memif &&
	    usiw_memif_link_init(&e->memif_link, &e->port, &e->lock, e->cfg.device,
				 &e->stats.link_downs) != 0) {
		usiw_engine_set_error("%s: out of file descriptors for the memif link's eventfd",
				      e->cfg.path);
		return -EMFILE;
	}
	memcpy(e->attr.mac, e->port.mac.addr_bytes, 6);
	e->attr.ipv4 = e->cfg.ipv4;
	e->attr.prefix_len = e->cfg.prefix_len;
	e->attr.mtu = e->cfg.mtu;
	e->attr.link_up = usiw_port_link(&e->port, &e->attr.speed_mbps);

	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "usiw_lo_%u", e->port.id);
	e->loopback = rte_ring_create(name, USIW_LOOPBACK_RING_SIZE, (int)rte_socket_id(),
				      RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!e->loopback || usiw_arp_init(e) != 0 ||
	    usiw_demux_init(&e->demux, e->port.id, e->attr.ipv4, e->port.nb_queues) != 0) {
		usiw_engine_set_error("%s: out of EAL memory for the engine's tables: give EAL "
				      "more memory ([eal] args -m)", e->cfg.path);
		return -ENOMEM;
	}
	usiw_rlock_init(&e->lock);
	if (e->cfg.gratuitous_arp) {
		usiw_engine_lock(e);
		usiw_arp_announce(e);
		tx_flush(e);
		usiw_engine_unlock(e);
	}
	if (e->cfg.progress == USIW_PROGRESS_THREAD) {
		rc = usiw_engine_thread_start(e);
		if (rc)
			return rc;
	}
	usiw_engine_telemetry_register();
	return 0;
}

int usiw_engine_get(struct usiw_engine **engine)
{
	char err[1024];
	int rc = 0;

	pthread_mutex_lock(&engine_mutex);
	if (the_engine) {
		the_engine->refs++;
		*engine = the_engine;
		goto out;
	}
	struct usiw_engine *e = calloc(1, sizeof(*e));
	if (!e) {
		usiw_engine_set_error("out of memory");
		rc = -ENOMEM;
		goto out;
	}
	const char *path = usiw_config_path(err, sizeof(err));
	if (!path) {
		usiw_engine_set_error("%s", err);
		free(e);
		rc = -EINVAL;
		goto out;
	}
	rc = usiw_config_parse(path, &e->cfg, err, sizeof(err));
	if (rc) {
		usiw_engine_set_error("%s", err);
		free(e);
		rc = -EINVAL;
		goto out;
	}
	rc = engine_start(e);
	if (rc) {
		engine_free(e);
		goto out;
	}
	e->refs = 1;
	the_engine = e;
	*engine = e;
out:
	pthread_mutex_unlock(&engine_mutex);
	return rc;
}

void usiw_engine_put(struct usiw_engine *engine)
{
	pthread_mutex_lock(&engine_mutex);
	if (engine && engine == the_engine && --engine->refs == 0) {
		the_engine = NULL;
		engine_free(engine);
	}
	pthread_mutex_unlock(&engine_mutex);
}

void usiw_engine_tx_frame(struct usiw_engine *e, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct rte_eth_dev_tx_buffer *txb = e->port.txb;

	e->stats.tx_packets++;
	e->stats.tx_bytes += len;
	e->tx_bundle_tail = NULL;
	/* Not rte_eth_tx_buffer: its flush of a full buffer would pass frames
	 * waiting in the backlog. */
	txb->pkts[txb->length++] = m;
	if (txb->length == txb->size || (e->tx_buffered_bytes += len) >= TX_FLUSH_BYTES)
		tx_flush(e);
}

void usiw_engine_tx_frame_grew(struct usiw_engine *e, uint32_t len)
{
	e->stats.tx_bytes += len;
	if ((e->tx_buffered_bytes += len) >= TX_FLUSH_BYTES)
		tx_flush(e);
}

static void input(struct usiw_engine *e, struct rte_mbuf *m)
{
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr)) {
		e->stats.drop_malformed++;
		rte_pktmbuf_free(m);
		return;
	}
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	switch (eth->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		usiw_udp_input(e, m);
		break;
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		usiw_arp_input(e, m);
		break;
	default:
		e->stats.drop_not_for_us++;
		rte_pktmbuf_free(m);
	}
}

unsigned usiw_engine_poll(struct usiw_engine *e)
{
	struct rte_mbuf *burst[USIW_RX_BURST];
	unsigned handled = 0;

	for (uint16_t q = 0; q < e->port.nb_queues; q++) {
		uint16_t n = usiw_port_rx_burst(&e->port, q, burst, USIW_RX_BURST);
		for (uint16_t i = 0; i < n; i++) {
			e->stats.rx_packets++;
			e->stats.rx_bytes += rte_pktmbuf_pkt_len(burst[i]);
			input(e, burst[i]);
		}
		handled += n;
	}
	/* Datagrams to ourselves are rare, and the ring's emptiness test is
	 * cheaper than the dequeue from an empty ring that every poll made. */
	if (!rte_ring_empty(e->loopback)) {
		unsigned n = rte_ring_dequeue_burst(e->loopback, (void **)burst, USIW_RX_BURST,
						    NULL);
		for (unsigned i = 0; i < n; i++)
			usiw_udp_input(e, burst[i]);
		handled += n;
	}

	/* Each reads the clock only when it has something to time: the TSC
	 * takes ~23 ns to read here, and most polls of a busy-polling side
	 * find nothing. */
	usiw_arp_timer(e);
	usiw_memif_link_check(&e->memif_link);
	handled += tx_flush(e);
	return handled;
}

void usiw_engine_lock(struct usiw_engine *e)
{
	usiw_rlock_lock(&e->lock);
}

bool usiw_engine_trylock(struct usiw_engine *e)
{
	return usiw_rlock_trylock(&e->lock);
}

void usiw_engine_unlock(struct usiw_engine *e)
{
	usiw_rlock_unlock(&e->lock);
}

/* Progress from several application threads at once would only make them
 * queue on the port: one thread works it and the others return, since the
 * one doing it delivers (and flushes) for all of them. */
static unsigned one_at_a_time(struct usiw_engine *e, unsigned (*pass)(struct usiw_engine *))
{
	usiw_engine_lcore_ensure();
	if (!usiw_engine_trylock(e))
		return 0;
	unsigned handled = pass(e);
	usiw_engine_unlock(e);
	return handled;
}

unsigned usiw_engine_progress(struct usiw_engine *e)
{
	return one_at_a_time(e, usiw_engine_poll);
}

unsigned usiw_engine_flush(struct usiw_engine *e)
{
	return one_at_a_time(e, tx_flush);
}

bool usiw_engine_flush_unless_bundling(struct usiw_engine *e)
{
	usiw_engine_lcore_ensure();
	if (!usiw_engine_trylock(e))
		return true;
	bool bundling = usiw_udp_bundle_has_room(e);
	if (!bundling)
		tx_flush(e);
	usiw_engine_unlock(e);
	return !bundling;
}

uint64_t usiw_engine_tx_flushes(const struct usiw_engine *e)
{
	return e->tx_flushes;
}

bool usiw_engine_tx_waiting(const struct usiw_engine *e)
{
	return e->port.txb->length != 0;
}

bool usiw_engine_set_thread_poll(struct usiw_engine *e, usiw_engine_poll_fn poll)
{
	if (e->cfg.progress != USIW_PROGRESS_THREAD)
		return false;
	atomic_store_explicit(&e->thread_poll, poll, memory_order_release);
	return true;
}

const struct usiw_config *usiw_engine_config(const struct usiw_engine *e)
{
	return &e->cfg;
}

int usiw_engine_resolve(struct usiw_engine *e, uint32_t ipv4, unsigned timeout_ms)
{
	char ip[INET_ADDRSTRLEN];
	uint32_t mask = e->attr.prefix_len ? rte_cpu_to_be_32(~0u << (32 - e->attr.prefix_len)) : 0;
	inet_ntop(AF_INET, &ipv4, ip, sizeof(ip));

	if ((ipv4 & mask) != (e->attr.ipv4 & mask)) {
		usiw_engine_set_error("%s is not in the port's subnet (%s: [port] ipv4)", ip,
				      e->cfg.path);
		return -ENETUNREACH;
	}
	if (ipv4 == e->attr.ipv4)
		return 0;
	uint64_t deadline = rte_get_tsc_cycles() + (uint64_t)timeout_ms * rte_get_tsc_hz() / 1000;
	for (;;) {
		usiw_engine_lock(e);
		int state = usiw_arp_state(e, ipv4);
		if (e->cfg.progress == USIW_PROGRESS_INLINE)
			usiw_engine_poll(e);
		usiw_engine_unlock(e);
		if (state == USIW_ARP_RESOLVED)
			return 0;
		if (state == -ENOSPC) {
			usiw_engine_set_error("ARP cache full (%d entries)", USIW_ARP_ENTRIES);
			return -EHOSTUNREACH;
		}
		if (state == USIW_ARP_FAILED || rte_get_tsc_cycles() >= deadline) {
			usiw_engine_set_error("peer %s did not answer ARP within %u ms (requests every "
					      "%u ms, at most %u: [port] arp-interval-ms, arp-retries "
					      "in %s)", ip, timeout_ms, e->cfg.arp_interval_ms,
					      e->cfg.arp_retries,
					      e->cfg.path);
			return -EHOSTUNREACH;
		}
		if (e->cfg.progress == USIW_PROGRESS_THREAD)
			rte_delay_us_sleep(100);
	}
}

void usiw_engine_stats(struct usiw_engine *e, struct usiw_engine_stats *out)
{
	usiw_engine_lock(e);
	*out = e->stats;
	usiw_engine_unlock(e);
}

int usiw_engine_stats_current(struct usiw_engine_stats *out)
{
	int rc = -ENODEV;
	pthread_mutex_lock(&engine_mutex);
	if (the_engine) {
		usiw_engine_stats(the_engine, out);
		rc = 0;
	}
	pthread_mutex_unlock(&engine_mutex);
	return rc;
}
