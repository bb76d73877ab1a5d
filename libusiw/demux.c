/* UDP port demultiplexing: the table of endpoints by port, and rte_flow
 * steering where the port has it. */
#include "demux.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#define DEMUX_PORTS 65536

void usiw_demux_rule_build(struct usiw_demux_rule *r, uint32_t ipv4, uint16_t udp_port,
			   uint16_t queue)
{
	memset(r, 0, sizeof(*r));
	r->attr.ingress = 1;
	r->ipv4_spec.hdr.dst_addr = ipv4;
	r->ipv4_mask.hdr.dst_addr = RTE_BE32(0xffffffff);
	r->udp_spec.hdr.dst_port = rte_cpu_to_be_16(udp_port);
	r->udp_mask.hdr.dst_port = RTE_BE16(0xffff);
	r->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	r->pattern[1].spec = &r->ipv4_spec;
	r->pattern[1].mask = &r->ipv4_mask;
	r->pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
	r->pattern[2].spec = &r->udp_spec;
	r->pattern[2].mask = &r->udp_mask;
	r->pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
	r->queue.index = queue;
	r->actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
	r->actions[0].conf = &r->queue;
	r->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

int usiw_demux_init(struct usiw_demux *d, uint16_t port_id, uint32_t ipv4, uint16_t nb_queues)
{
	memset(d, 0, sizeof(*d));
	d->by_port = calloc(DEMUX_PORTS, sizeof(*d->by_port));
	if (!d->by_port)
		return -ENOMEM;
	d->port_id = port_id;
	d->ipv4 = ipv4;
	d->nb_queues = nb_queues;
	d->next_ephemeral = USIW_EPHEMERAL_FIRST +
		(uint16_t)(rte_get_tsc_cycles() % (65536 - USIW_EPHEMERAL_FIRST));

	/* Steering only matters with several queues; whether the port takes
	 * such rules at all is asked once, with a rule for port 0 on queue 1. */
	if (nb_queues > 1) {
		struct usiw_demux_rule probe;
		struct rte_flow_error error;
		usiw_demux_rule_build(&probe, ipv4, 0, 1);
		d->flow_steering = rte_flow_validate(port_id, &probe.attr, probe.pattern,
						     probe.actions, &error) == 0;
	}
	return 0;
}

void usiw_demux_fini(struct usiw_demux *d)
{
	free(d->by_port);
	memset(d, 0, sizeof(*d));
}

static bool bound(const struct usiw_demux *d, uint16_t port)
{
	return d->by_port[port] != NULL;
}

int usiw_demux_add(struct usiw_demux *d, uint16_t udp_port, void *ep,
		   struct usiw_demux_rule *rule, uint16_t *out)
{
	if (udp_port == 0) {
		for (unsigned tries = 0; tries < 65536 - USIW_EPHEMERAL_FIRST; tries++) {
			uint16_t p = d->next_ephemeral;
			d->next_ephemeral = p == 65535 ? USIW_EPHEMERAL_FIRST : p + 1;
			if (!bound(d, p)) {
				udp_port = p;
				break;
			}
		}
		if (udp_port == 0)
			return -ENOSPC;
	} else if (bound(d, udp_port)) {
		return -EADDRINUSE;
	}
	d->by_port[udp_port] = ep;

	memset(rule, 0, sizeof(*rule));
	if (d->flow_steering) {
		struct rte_flow_error error;
		uint16_t q = d->next_queue;
		d->next_queue = (uint16_t)((q + 1) % d->nb_queues);
		usiw_demux_rule_build(rule, d->ipv4, udp_port, q);
		/* A rule the port refuses only costs the steering: the table
		 * still delivers whatever queue the datagram arrives on. */
		if (rte_flow_validate(d->port_id, &rule->attr, rule->pattern, rule->actions,
				      &error) == 0)
			rule->flow = rte_flow_create(d->port_id, &rule->attr, rule->pattern,
						     rule->actions, &error);
	}
	*out = udp_port;
	return 0;
}

void usiw_demux_del(struct usiw_demux *d, uint16_t udp_port, struct usiw_demux_rule *rule)
{
	if (rule->flow) {
		struct rte_flow_error error;
		rte_flow_destroy(d->port_id, rule->flow, &error);
		rule->flow = NULL;
	}
	d->by_port[udp_port] = NULL;
}
