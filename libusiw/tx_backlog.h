/* The frames the port's tx queue refused, kept in their order until it has
 * room again, instead of being dropped: a full tx queue is congestion on our
 * own side of the link, which the reliability layer would otherwise take
 * for loss on the wire and repair only after its retransmission timeout. */
#ifndef USIW_TX_BACKLOG_H
#define USIW_TX_BACKLOG_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "port.h"

/* Frames that can wait; beyond them, refused frames are dropped.  Leaves
 * most of the mbuf pool ([port] mbufs, 8191 by default) to receiving. */
#define USIW_TX_BACKLOG_FRAMES 2048

struct usiw_tx_backlog {
	struct rte_ring *ring;
	uint64_t *drops;              /* frames dropped: the backlog was full */
};

/* Returns 0, or -ENOMEM. */
int usiw_tx_backlog_init(struct usiw_tx_backlog *b, uint16_t port_id, uint64_t *drops);
/* Frees the frames still waiting. */
void usiw_tx_backlog_fini(struct usiw_tx_backlog *b);

static inline bool usiw_tx_backlog_empty(const struct usiw_tx_backlog *b)
{
	return rte_ring_empty(b->ring);
}

/* Whether n more frames could be refused and still wait. */
static inline bool usiw_tx_backlog_has_room(const struct usiw_tx_backlog *b, unsigned n)
{
	return rte_ring_free_count(b->ring) >= n;
}

/* Puts n refused frames behind those waiting.  A frame that references
 * memory it does not own (usiw_udp_reference_data) gets its own copy: it
 * may now outlive that memory. */
void usiw_tx_backlog_add(struct usiw_tx_backlog *b, struct rte_mbuf **pkts, unsigned n);
/* rte_eth_tx_buffer's error callback: the frames its flush could not send
 * (userdata: the backlog). */
void usiw_tx_backlog_refused(struct rte_mbuf **pkts, uint16_t unsent, void *userdata);
/* Offers the waiting frames to tx queue `queue` of the port, oldest first,
 * until it refuses one.  Returns how many it took. */
unsigned usiw_tx_backlog_send(struct usiw_tx_backlog *b, struct usiw_port *port, uint16_t queue);

#endif
