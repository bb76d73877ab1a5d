/* Demultiplexing received datagrams to endpoints by UDP destination port.
 *
 * The software table always decides which endpoint gets a datagram.  On a
 * port with several rx queues whose driver accepts rte_flow rules, each
 * endpoint's UDP port is also steered to one queue, so that a queue can
 * later be polled for its own QPs; no vdev of this machine supports
 * rte_flow, so there the table alone is used. */
#ifndef USIW_DEMUX_H
#define USIW_DEMUX_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_flow.h>

struct usiw_demux {
	/* UDP port (host order) -> endpoint, NULL where none is bound.  A
	 * 16-bit key indexes an array: one load, where rte_hash's lookup took
	 * ~180 instructions a datagram and, with 1024 QPs, two dependent cache
	 * misses (its bucket, then its key) that cost qp-lat 0.1-0.3 us of each
	 * half round trip.  512 KiB of address space, of which only the pages
	 * of bound ports are ever touched (calloc maps it on demand). */
	void **by_port;
	uint16_t port_id;
	uint32_t ipv4;                /* network order */
	uint16_t nb_queues;
	bool flow_steering;           /* rte_flow rules are accepted by the port */
	uint16_t next_queue;
	uint16_t next_ephemeral;      /* host order */
};

/* What an endpoint's steering rule is made of (kept by the endpoint so that
 * the rule's memory lives as long as the rule). */
struct usiw_demux_rule {
	struct rte_flow_attr attr;
	struct rte_flow_item pattern[4];
	struct rte_flow_item_ipv4 ipv4_spec, ipv4_mask;
	struct rte_flow_item_udp udp_spec, udp_mask;
	struct rte_flow_action actions[2];
	struct rte_flow_action_queue queue;
	struct rte_flow *flow;        /* NULL: not steered */
};

#define USIW_EPHEMERAL_FIRST 49152

int usiw_demux_init(struct usiw_demux *d, uint16_t port_id, uint32_t ipv4, uint16_t nb_queues);
void usiw_demux_fini(struct usiw_demux *d);

/* Fills rule with "IPv4 dst = ipv4, UDP dst = udp_port -> rx queue". */
void usiw_demux_rule_build(struct usiw_demux_rule *rule, uint32_t ipv4, uint16_t udp_port,
			   uint16_t queue);

/* Binds udp_port (host order; 0 = a free ephemeral port, returned in
 * *bound) to ep.  Returns 0, -EADDRINUSE or -ENOSPC. */
int usiw_demux_add(struct usiw_demux *d, uint16_t udp_port, void *ep,
		   struct usiw_demux_rule *rule, uint16_t *bound);
void usiw_demux_del(struct usiw_demux *d, uint16_t udp_port, struct usiw_demux_rule *rule);

static inline void *usiw_demux_lookup(const struct usiw_demux *d, uint16_t udp_port_be)
{
	return d->by_port[rte_be_to_cpu_16(udp_port_be)];
}

#endif
