/* One Ethernet port: the device named by [port] device (a DPDK device, or
 * usiw's own packet socket on a Linux interface: packet_socket.h), its
 * mempool, queues and transmit buffer. */
#ifndef USIW_PORT_H
#define USIW_PORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#include "config.h"
#include "memif_port.h"
#include "packet_socket.h"

struct usiw_port {
	/* [port] device = af_packet:IF: usiw's own socket, and no ethdev */
	struct usiw_packet_socket *packet;
	/* [port] device = memif:...: usiw's own memif port, and no ethdev */
	struct usiw_memif_port *own_memif;
	uint16_t id;
	bool probed;                  /* we probed the device, so we remove it */
	bool started;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_mempool *pool;
	/* Data-less mbufs that reference a sender's memory (usiw_udp_reference_data);
	 * NULL where the driver does not copy frames when it transmits. */
	struct rte_mempool *ref_pool;
	struct rte_eth_dev_tx_buffer *txb;
	uint16_t nb_queues;
	bool tx_cksum_offload;        /* IPv4 and UDP checksums done by the port */
	bool rx_cksum_offload;        /* rx checksum status in mbuf ol_flags */
	struct rte_ether_addr mac;
	uint16_t max_frame;           /* Ethernet frame without FCS */
	bool is_memif;
	/* memif: enum usiw_port_pause, for its peer's comings and goings
	 * (memif_link.c). */
	_Atomic uint8_t pause;
	/* A memif server: its link is up for usiw once its socket listens (see
	 * usiw_port_link). */
	bool memif_server;
};

/* Probes, configures and starts the port, then waits for link up (bounded by
 * [port] link-timeout).  tx_drops counts frames the tx queue refused;
 * link_downs, links of usiw's own memif port that went down.
 * Returns 0 or a negative errno with a message in err. */
int usiw_port_open(struct usiw_port *port, const struct usiw_config *cfg, uint64_t *tx_drops,
		   uint64_t *link_downs, char *err, size_t errlen);
void usiw_port_close(struct usiw_port *port);

/* Link state without waiting. */
bool usiw_port_link(const struct usiw_port *port, uint32_t *speed_mbps);

/* A memif port is left alone while memif handles its peer's comings and
 * goings in EAL's interrupt thread (memif_link.c).  That thread asks for a
 * pause, which the next burst takes, so that it knows no burst is under
 * way. */
enum usiw_port_pause {
	USIW_PORT_RUNNING,
	USIW_PORT_PAUSE_ASKED,
	USIW_PORT_PAUSED,
};

/* Whether a burst may touch the port now; a pause asked for begins here. */
static inline bool usiw_port_running(struct usiw_port *port)
{
	const uint8_t p = atomic_load_explicit(&port->pause, memory_order_acquire);

	if (p == USIW_PORT_RUNNING)
		return true;
	if (p == USIW_PORT_PAUSE_ASKED)
		atomic_store_explicit(&port->pause, USIW_PORT_PAUSED, memory_order_release);
	return false;
}

/* rte_eth_rx_burst and rte_eth_tx_burst, for either kind of port. */
static inline uint16_t usiw_port_rx_burst(struct usiw_port *port, uint16_t queue,
					  struct rte_mbuf **pkts, uint16_t n)
{
	if (port->packet)
		return usiw_packet_socket_rx(port->packet, pkts, n);
	if (port->own_memif)
		return usiw_memif_port_rx(port->own_memif, pkts, n);
	if (!usiw_port_running(port))
		return 0;
	return rte_eth_rx_burst(port->id, queue, pkts, n);
}

static inline uint16_t usiw_port_tx_burst(struct usiw_port *port, uint16_t queue,
					  struct rte_mbuf **pkts, uint16_t n)
{
	if (port->packet)
		return usiw_packet_socket_tx(port->packet, pkts, n);
	if (port->own_memif)
		return usiw_memif_port_tx(port->own_memif, pkts, n);
	if (!usiw_port_running(port))
		return 0;
	return rte_eth_tx_burst(port->id, queue, pkts, n);
}

/* rte_eth_tx_buffer_flush of the port's transmit buffer to queue 0, through
 * usiw_port_tx_burst (DPDK's sends to an ethdev only): the frames the queue
 * refuses go to the buffer's error callback. */
static inline uint16_t usiw_port_tx_flush(struct usiw_port *port)
{
	struct rte_eth_dev_tx_buffer *txb = port->txb;
	const uint16_t n = txb->length;

	if (n == 0)
		return 0;
	const uint16_t sent = usiw_port_tx_burst(port, 0, txb->pkts, n);
	txb->length = 0;
	if (sent < n)
		txb->error_callback(&txb->pkts[sent], (uint16_t)(n - sent), txb->error_userdata);
	return sent;
}

/* A memif client that connects after its server's socket listens but before
 * the server's port starts never comes up, and memif's client does not try
 * again by itself: a client started beside its server (both ranks of an MPI
 * launch, a forwarder's two ports) waited out the whole link timeout for a
 * server that was up a moment later (test: memif client of a server that
 * starts late), and one whose server had restarted waited a second more than
 * it (1000 ms here then).  So a client whose link is not up this long after
 * a start connects anew, at its start (port.c) and later (memif_link.c),
 * unless its server has yet to answer the connection it has (a server
 * slow to accept; memif_sockets.c says why that one must stay open). */
#define USIW_MEMIF_RECONNECT_MS 250

/* memif devargs helpers, exposed for the config and error tests. */
struct usiw_memif_args {
	bool is_memif;
	/* memif: enum usiw_port_pause, for its peer's comings and goings
	 * (memif_link.c). */
	_Atomic uint8_t pause;
	bool bad_args;                /* an argument memif does not know */
	bool server;                  /* role=server (memif's default: client) */
	bool abstract;                /* socket-abstract=yes (memif's default) */
	bool zero_copy;               /* zero-copy=yes */
	char socket[USIW_CONFIG_VALUE_MAX]; /* as given: memif_prepare checks its length */
};
void usiw_memif_args_parse(const char *devargs, struct usiw_memif_args *out);

/* The longest path a unix socket may have: EAL's telemetry socket and
 * memif's fail with messages that name neither the path nor its length. */
#define USIW_SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* Whether a unix socket named path (abstract or not) is listening in this
 * network namespace, from /proc/net/unix (which does not disturb it, unlike
 * a test connection). */
bool usiw_unix_socket_listening(const char *path, bool abstract);

#endif
