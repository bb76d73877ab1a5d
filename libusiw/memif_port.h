/* usiw's own memif port: [port] device = memif:role=server|client,socket=PATH
 * (docs/config.md).  It speaks memif 2.0 (memif_wire.h), so either end may be
 * DPDK's net_memif, and hands the engine frames that point into the shared
 * ring's buffers instead of copies of them: a received frame's bytes are
 * read where the peer wrote them, and its slot goes back to the peer when
 * the engine frees the mbuf.  The engine and bench/raw-dpdk use it where
 * they would use an ethdev port's bursts. */
#ifndef USIW_MEMIF_PORT_H
#define USIW_MEMIF_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#define USIW_MEMIF_PORT_PREFIX "memif:"

struct usiw_memif_port;

struct usiw_memif_port_args {
	bool server;
	char socket[108];             /* a socket file's path */
	uint32_t bsize;               /* bytes per buffer (a client's; default 9216) */
	uint8_t log2_ring;            /* slots per ring, as log2 (a client's; default 10) */
};

/* Whether device is one of ours (memif:...). */
bool usiw_memif_port_named(const char *device);

/* Parses memif:KEY=VALUE,...: role (server|client, required), socket
 * (required), bsize, rsize (log2 of the slots per ring).  Returns 0, or
 * -EINVAL with a message in err. */
int usiw_memif_port_parse(const char *device, struct usiw_memif_port_args *a, char *err,
			  size_t errlen);

/* Opens the port: a server listens on the socket (refusing a socket another
 * server listens on), a client starts connecting.  A thread of the port's
 * own answers the control channel, so that a peer can connect or go away
 * while the application polls nothing; it sleeps in poll(2) otherwise.
 * max_frame: the longest frame (Ethernet, no FCS) that will be sent; a
 * client's buffers must hold it.  link_downs (may be NULL) counts
 * connections that ended.  Returns 0, or a negative errno with a message in
 * err.  Needs EAL (the received frames' mbufs come from a pool of the
 * port's own). */
int usiw_memif_port_open(struct usiw_memif_port **out, const struct usiw_memif_port_args *a,
			 uint16_t max_frame, uint64_t *link_downs, char *err, size_t errlen);
void usiw_memif_port_close(struct usiw_memif_port *p);

/* As rte_eth_rx_burst: up to n frames, each an mbuf chain that references
 * the ring's buffers (read-only; free it to give the buffers back). */
uint16_t usiw_memif_port_rx(struct usiw_memif_port *p, struct rte_mbuf **pkts, uint16_t n);

/* As rte_eth_tx_burst: copies the first frames of pkts into the ring and
 * frees them; returns how many, fewer when the ring is full or no peer is
 * connected.  Frames may reference memory the caller reuses. */
uint16_t usiw_memif_port_tx(struct usiw_memif_port *p, struct rte_mbuf **pkts, uint16_t n);

/* Whether a peer is connected (the control thread's view: the next burst
 * takes up a new connection).  Any thread. */
bool usiw_memif_port_connected(const struct usiw_memif_port *p);

#endif
