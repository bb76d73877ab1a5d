/* See tx_backlog.h. */
#include "tx_backlog.h"

#include <errno.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_ring_peek.h>

#define SEND_BURST 32

int usiw_tx_backlog_init(struct usiw_tx_backlog *b, uint16_t port_id, uint64_t *drops)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "usiw_txq_%u", port_id);
	/* One consumer and one producer at a time: the engine's lock. */
	b->ring = rte_ring_create(name, USIW_TX_BACKLOG_FRAMES, (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	b->drops = drops;
	return b->ring ? 0 : -ENOMEM;
}

void usiw_tx_backlog_fini(struct usiw_tx_backlog *b)
{
	struct rte_mbuf *m;

	if (!b->ring)
		return;
	while (rte_ring_dequeue(b->ring, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(b->ring);
	b->ring = NULL;
}

void usiw_tx_backlog_add(struct usiw_tx_backlog *b, struct rte_mbuf **pkts, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if ((rte_pktmbuf_is_contiguous(m) || rte_pktmbuf_linearize(m) == 0) &&
		    rte_ring_enqueue(b->ring, m) == 0)
			continue;
		rte_pktmbuf_free(m);
		(*b->drops)++;
	}
}

void usiw_tx_backlog_refused(struct rte_mbuf **pkts, uint16_t unsent, void *userdata)
{
	usiw_tx_backlog_add(userdata, pkts, unsent);
}

unsigned usiw_tx_backlog_send(struct usiw_tx_backlog *b, struct usiw_port *port, uint16_t queue)
{
	struct rte_mbuf *pkts[SEND_BURST];
	unsigned sent = 0;

	for (;;) {
		/* Peeked, and taken off only as far as the queue took them, so
		 * the rest keep their place at the head. */
		unsigned n = rte_ring_dequeue_burst_start(b->ring, (void **)pkts, SEND_BURST, NULL);
		if (n == 0)
			return sent;
		uint16_t taken = usiw_port_tx_burst(port, queue, pkts, (uint16_t)n);
		rte_ring_dequeue_finish(b->ring, taken);
		sent += taken;
		if (taken < n)
			return sent;
	}
}
