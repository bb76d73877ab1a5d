/* ARP for the engine's one IPv4 address: answers requests for it, and
 * resolves peers into a cache (rte_hash), queueing a few frames per peer
 * while a request is outstanding. */
#ifndef USIW_ARP_H
#define USIW_ARP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_mbuf.h>

struct usiw_engine;

#define USIW_ARP_ENTRIES 1024
#define USIW_ARP_PENDING 8            /* frames queued per unresolved peer */
#define USIW_ARP_HOLDOFF_MS 1000      /* after a failure, sends fail at once this long */

enum usiw_arp_state {
	USIW_ARP_INCOMPLETE,
	USIW_ARP_RESOLVED,
	USIW_ARP_FAILED,
};

struct usiw_arp_entry {
	uint32_t ipv4;                    /* network order */
	enum usiw_arp_state state;
	struct rte_ether_addr mac;
	uint32_t requests;                /* sent for the current resolution */
	uint64_t next_tsc;                /* next request, or end of the hold-off */
	uint16_t npending;
	struct rte_mbuf *pending[USIW_ARP_PENDING];
};

struct usiw_arp {
	struct rte_hash *table;           /* ipv4 -> index into entries */
	struct usiw_arp_entry *entries;
	unsigned incomplete;              /* entries waiting for a reply */
	uint64_t next_timer_tsc;
	/* The entry the last frame went to: a QP's frames all go to one peer,
	 * and a hash lookup per frame was a tenth of the send path. */
	struct usiw_arp_entry *last;
};

int usiw_arp_init(struct usiw_engine *e);
void usiw_arp_fini(struct usiw_engine *e);

/* Sends the frame m (whose Ethernet source is set) to next hop ipv4: now if
 * its MAC is known, else after resolution.  Takes m in every case (frees it
 * on error).  Returns 0, -EAGAIN or -EHOSTUNREACH as usiw_udp_send does. */
int usiw_arp_output(struct usiw_engine *e, uint32_t ipv4, struct rte_mbuf *m);

/* Starts resolution of ipv4 if needed; returns its current state, or -ENOSPC
 * when the cache is full. */
int usiw_arp_state(struct usiw_engine *e, uint32_t ipv4);

/* Handles a received ARP frame (takes m). */
void usiw_arp_input(struct usiw_engine *e, struct rte_mbuf *m);

/* Retransmits outstanding requests and gives up on silent peers.  From
 * each progress pass: a compare, and the clock is read only while a
 * request is outstanding. */
void usiw_arp_timer(struct usiw_engine *e);

/* Announces our address (a gratuitous ARP request). */
void usiw_arp_announce(struct usiw_engine *e);

#endif
